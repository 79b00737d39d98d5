"""The fact store's settings: ``memory.holographic_store.*`` in config.yaml.

Keys (strings from the setup wizard are coerced): ``default_trust`` (0.5),
``min_trust_threshold`` (0.3), ``hrr_dim`` (1024), ``hrr_weight`` (0.2, the share
of the vector term in search), ``auto_extract`` (false), ``half_life_days``
(0 = no decay; ``temporal_decay_half_life`` is accepted as the Hermes name),
``prefetch_limit`` (5). The Hermes section ``plugins.hermes-memory-store`` is read
as a fallback so an existing Hermes configuration carries over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_store.facts import trust
from hermes_store.facts.hrr import DEFAULT_DIM
from hermes_store.home import ConfigError, Home, coerce_bool, coerce_int, located

SECTION = "holographic_store"
#: Every key of ``memory.holographic_store`` read here (any other is a typo: ``status`` says so).
KEYS = frozenset({"default_trust", "min_trust_threshold", "hrr_dim", "hrr_weight", "auto_extract",
                  "half_life_days", "temporal_decay_half_life", "prefetch_limit"})


def _float(value: Any, default: float, name: str, low: float | None = None,
           high: float | None = None) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, bool):
        raise ConfigError(f"{name}: expected a number, got {value!r}")
    try:
        number = float(str(value).strip())
    except ValueError as exc:
        raise ConfigError(f"{name}: expected a number, got {value!r}") from exc
    if (low is not None and number < low) or (high is not None and number > high):
        raise ConfigError(f"{name}: must be between {low} and {high}, got {number}")
    return number


@dataclass(frozen=True)
class FactConfig:
    """Resolved fact-store settings."""

    default_trust: float = trust.DEFAULT_TRUST
    min_trust_threshold: float = trust.MIN_TRUST_THRESHOLD
    hrr_dim: int = DEFAULT_DIM
    hrr_weight: float = 0.2
    auto_extract: bool = False
    half_life_days: float = 0.0
    prefetch_limit: int = 5

    @classmethod
    def from_mapping(cls, section: Any, name: str = f"memory.{SECTION}") -> FactConfig:
        """Build from a parsed mapping (None -> defaults); errors name the key (``name.key``)."""
        if section is None:
            section = {}
        if not isinstance(section, dict):
            raise ConfigError(f"{name}: expected a mapping, got {type(section).__name__}")
        p = f"{name}."
        half_life = section.get("half_life_days", section.get("temporal_decay_half_life"))
        return cls(
            default_trust=trust.clamp(_float(section.get("default_trust"), trust.DEFAULT_TRUST,
                                             p + "default_trust", 0.0, 1.0)),
            min_trust_threshold=_float(section.get("min_trust_threshold"), trust.MIN_TRUST_THRESHOLD,
                                       p + "min_trust_threshold", 0.0, 1.0),
            hrr_dim=coerce_int(section.get("hrr_dim"), DEFAULT_DIM, name=p + "hrr_dim", minimum=16),
            hrr_weight=_float(section.get("hrr_weight"), 0.2, p + "hrr_weight", 0.0, 1.0),
            auto_extract=coerce_bool(section.get("auto_extract"), False, name=p + "auto_extract"),
            half_life_days=_float(half_life, 0.0, p + "half_life_days", 0.0, None),
            prefetch_limit=coerce_int(section.get("prefetch_limit"), 5, name=p + "prefetch_limit",
                                      minimum=1),
        )


def load_fact_config(home: Home) -> FactConfig:
    """Read ``memory.holographic_store`` (falling back to ``plugins.hermes-memory-store``)."""
    config = home.config()
    memory = config.get("memory") or {}
    section, name = (memory.get(SECTION) if isinstance(memory, dict) else None), f"memory.{SECTION}"
    if section is None:
        plugins = config.get("plugins") or {}
        section = plugins.get("hermes-memory-store") if isinstance(plugins, dict) else None
        name = "plugins.hermes-memory-store"
    try:
        return FactConfig.from_mapping(section, name)
    except ConfigError as exc:  # "hrr_dim: must be at least 16" named neither file nor line
        raise ConfigError(located(home.config_path, str(exc))) from exc
