"""Set one key in config.yaml without disturbing anything else.

A line-aware editor for block-style YAML mappings: it finds the line of a dotted key
(``memory.provider``), rewrites only its value (keeping an inline comment), or inserts
the missing key under its parent with the parent's indentation. Comments, blank lines,
key order, quoting and line endings elsewhere stay byte-identical. The result is parsed
back and compared with the original so an edit can never silently change another key;
the file is replaced atomically.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from hermes_store.fsutil import atomic_write_text
from hermes_store.home import ConfigError, load_yaml_text, yaml_problem

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "none", "~", "y", "n"}
_MISSING = object()


def format_scalar(value: Any) -> str:
    """Render a scalar as YAML: plain when safe, otherwise JSON-style double quotes."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


def _key_of(line: str) -> tuple[int, str, int] | None:
    """``(indent, key, index after the colon)`` for a ``key:`` line, else None."""
    match = re.match(r"^([ ]*)(\"[^\"]*\"|'[^']*'|[^\s#'\"][^:#]*?)[ \t]*:(?=\s|$)", line)
    if match is None:
        return None
    key = match.group(2)
    if key[:1] in ("'", '"'):
        key = key[1:-1]
    return len(match.group(1)), key.strip(), match.end()


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """First line after ``start`` whose content is indented ``<= indent`` (end of a block)."""
    index = start + 1
    last_content = start
    while index < len(lines):
        line = lines[index]
        if _is_content(line):
            if len(line) - len(line.lstrip(" ")) <= indent:
                break
            last_content = index
        index += 1
    return last_content + 1


def _split_comment(rest: str) -> tuple[str, str]:
    """Split the text after ``key:`` into value and inline comment (quotes respected)."""
    quote = ""
    for i, ch in enumerate(rest):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1] in " \t"):
            return rest[:i], rest[i:]
    return rest, ""


def _set_in_lines(lines: list[str], path: list[str], value: Any, source: str) -> list[str]:
    parent_start, parent_end, parent_indent = -1, len(lines), -1
    for depth, key in enumerate(path):
        child_indent = None
        found = None
        for index in range(parent_start + 1, parent_end):
            line = lines[index]
            if not _is_content(line):
                continue
            indent = len(line) - len(line.lstrip(" "))
            if child_indent is None:
                child_indent = indent
            if indent != child_indent:
                continue
            if line.lstrip().startswith("- "):
                raise ConfigError(f"{source}:{index + 1}: expected a mapping for "
                                  f"{'.'.join(path[:depth]) or 'the top level'}, found a list")
            parsed = _key_of(line)
            if parsed is not None and parsed[1] == key:
                found = (index, parsed)
                break
        if child_indent is None or child_indent <= parent_indent:
            child_indent = parent_indent + 2 if parent_indent >= 0 else 0
        last = depth == len(path) - 1
        if found is None:
            new = []
            for offset, name in enumerate(path[depth:]):
                pad = " " * (child_indent + 2 * offset)
                if depth + offset == len(path) - 1:
                    new.append(f"{pad}{name}: {format_scalar(value)}")
                else:
                    new.append(f"{pad}{name}:")
            insert_at = parent_end if parent_start >= 0 else len(lines)
            if parent_start < 0:
                while insert_at > 0 and not lines[insert_at - 1].strip():
                    insert_at -= 1
            return lines[:insert_at] + new + lines[insert_at:]
        index, (indent, _, colon_end) = found
        line = lines[index]
        rest = line[colon_end:]
        raw_value, comment = _split_comment(rest)
        block_end = _block_end(lines, index, indent)
        if last:
            if raw_value.strip().startswith(("|", ">", "&", "*", "!")):
                raise ConfigError(f"{source}:{index + 1}: cannot edit the {raw_value.strip()[0]!r} "
                                  f"value of {'.'.join(path)}; edit it by hand")
            spacing = raw_value[len(raw_value.rstrip()):] if comment else ""
            new_line = f"{line[:colon_end]} {format_scalar(value)}"
            if comment:
                new_line += (spacing or " ") + comment
            return lines[:index] + [new_line] + lines[block_end:]
        stripped = raw_value.strip()
        if stripped:
            if stripped.startswith("{") and stripped != "{}":
                raise ConfigError(f"{source}:{index + 1}: {'.'.join(path[:depth + 1])} is a flow-style "
                                  "mapping; rewrite it as a block mapping to edit it")
            if stripped not in ("null", "~", "{}"):
                raise ConfigError(f"{source}:{index + 1}: {'.'.join(path[:depth + 1])} is not a mapping "
                                  f"(value {stripped!r})")
            lines = lines[:index] + [f"{line[:colon_end]}{comment and ' ' + comment}"] + lines[index + 1:]
        parent_start, parent_end, parent_indent = index, block_end, indent
    return lines


def _get(data: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return _MISSING
        data = data[key]
    return data


def _without(data: Any, path: list[str]) -> Any:
    """A deep copy of ``data`` with ``path`` removed (and emptied parents dropped)."""
    if not path or not isinstance(data, dict):
        return data
    copy = {k: v for k, v in data.items()}
    head, rest = path[0], path[1:]
    if head in copy:
        if rest:
            reduced = _without(copy[head], rest)
            if reduced in ({}, None):
                copy.pop(head)
            else:
                copy[head] = reduced
        else:
            copy.pop(head)
    return copy


def set_yaml_text(text: str, dotted_key: str, value: Any, *, source: str = "config.yaml") -> str:
    """Return ``text`` with ``dotted_key`` set to ``value``; everything else is kept."""
    path = [part for part in dotted_key.split(".") if part]
    if not path:
        raise ConfigError("empty configuration key")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom):]
    newline = "\r\n" if "\r\n" in body else "\n"
    lines = body.replace("\r\n", "\n").split("\n")
    trailing_newline = body.endswith(("\n", "\r\n")) or not body
    if lines and lines[-1] == "":
        lines.pop()
    try:
        before = load_yaml_text(body, source) or {}  # budgeted: an alias bomb is refused fast
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_problem(source, exc)) from exc
    if not isinstance(before, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    if body.lstrip().startswith("{"):
        raise ConfigError(f"{source}: a flow-style top-level mapping cannot be edited in place")
    new_lines = _set_in_lines(lines, path, value, source)
    result = newline.join(new_lines) + (newline if trailing_newline else "")
    after = load_yaml_text(result, source) or {}
    expected = "" if value is None else value
    if _get(after, path) != expected or _without(after, path) != _without(before, path):
        raise ConfigError(f"{source}: could not set {dotted_key} without changing other settings; "
                          "edit the file by hand")
    return bom + result


def set_config_value(path: str | os.PathLike[str], dotted_key: str, value: Any) -> None:
    """Set ``dotted_key`` in the YAML file at ``path`` (created when missing), atomically."""
    set_config_values(path, {dotted_key: value})


def set_config_values(path: str | os.PathLike[str], values: dict[str, Any]) -> None:
    """Set several dotted keys in one atomic replace of the YAML file at ``path``."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")  # bytes: CRLF files keep their line endings
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        text, mode = "", 0o600
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    new_text = text
    for dotted_key, value in values.items():
        new_text = set_yaml_text(new_text, dotted_key, value, source=str(path))
    if new_text == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, new_text, mode=mode, prefix=".config.")
