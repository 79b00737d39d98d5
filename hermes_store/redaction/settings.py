"""The ``store:`` settings of redaction in config.yaml: on/off, extra patterns, an allowlist.

```yaml
store:
  redact: true                  # default; false stores text as it came
  redact_patterns:              # extra rules: kind -> regular expression
    employee_id: "EMP-[0-9]{6}"
  redact_allow:                 # regular expressions; a finding they match is kept
    - "AKIAIOSFODNN7EXAMPLE"
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

KIND = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


class RedactionConfigError(ValueError):
    """A ``store.redact*`` value of config.yaml that cannot be used (names the key)."""


@dataclass(frozen=True)
class RedactionSettings:
    """Whether to redact, the extra rules ``(kind, compiled)`` and the allowlist."""

    enabled: bool = True
    patterns: tuple[tuple[str, re.Pattern[str]], ...] = field(default=())
    allow: tuple[re.Pattern[str], ...] = field(default=())

    @classmethod
    def from_store_section(cls, section: Any, where: str = "config.yaml") -> RedactionSettings:
        """Settings from the ``store:`` mapping (None: defaults); bad values raise
        :class:`RedactionConfigError` naming ``where`` and the key."""
        if section is None:
            return cls()
        if not isinstance(section, dict):
            raise RedactionConfigError(f"{where}: store: expected a mapping, got {type(section).__name__}")
        enabled = section.get("redact", True)
        if not isinstance(enabled, bool):
            raise RedactionConfigError(f"{where}: store.redact: expected true or false, got {enabled!r}")
        return cls(enabled=enabled, patterns=_patterns(section.get("redact_patterns"), where),
                   allow=_allow(section.get("redact_allow"), where))


def _compile(expr: Any, key: str, where: str) -> re.Pattern[str]:
    if not isinstance(expr, str) or not expr:
        raise RedactionConfigError(f"{where}: {key}: expected a regular expression (a string)")
    try:
        return re.compile(expr)
    except re.error as exc:
        raise RedactionConfigError(f"{where}: {key}: not a valid regular expression: {exc}") from exc


def _patterns(value: Any, where: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    if value is None:
        return ()
    if isinstance(value, list):
        value = {f"custom{i + 1 if i else ''}": expr for i, expr in enumerate(value)}
    if not isinstance(value, dict):
        raise RedactionConfigError(f"{where}: store.redact_patterns: expected a mapping of kind to regex")
    out = []
    for kind, expr in value.items():
        if not isinstance(kind, str) or not KIND.match(kind):
            raise RedactionConfigError(f"{where}: store.redact_patterns: kind {kind!r} must be lower-case "
                                       "letters, digits, '_' or '-' (at most 40)")
        out.append((kind, _compile(expr, f"store.redact_patterns.{kind}", where)))
    return tuple(out)


def _allow(value: Any, where: str) -> tuple[re.Pattern[str], ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise RedactionConfigError(f"{where}: store.redact_allow: expected a list of regular expressions")
    return tuple(_compile(expr, f"store.redact_allow[{i}]", where) for i, expr in enumerate(value))
