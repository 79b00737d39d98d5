"""config.yaml edits keep comments, order, quoting and other keys."""

from __future__ import annotations

import os

import pytest
import yaml

from hermes_store.config_edit import format_scalar, set_config_value, set_yaml_text
from hermes_store.home import ConfigError

CONFIG = """\
# Hermes configuration — hand edited
model:
  default: "anthropic/claude"   # quoted on purpose
  provider: openrouter

memory:
  # built-in stores
  memory_enabled: true
  user_char_limit: 1375   # keep small
  provider: holographic   # chosen in the wizard
  holographic_store:
    auto_extract: false

# trailing comment
display:
  memory_notifications: on
"""


def test_replacing_the_value_changes_exactly_one_line():
    out = set_yaml_text(CONFIG, "memory.provider", "hermes_store")
    before, after = CONFIG.splitlines(), out.splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [("  provider: holographic   # chosen in the wizard",
                        "  provider: hermes_store   # chosen in the wizard")]
    assert yaml.safe_load(out)["model"]["provider"] == "openrouter"  # same key name elsewhere untouched


def test_off_writes_an_empty_string():
    out = set_yaml_text(CONFIG, "memory.provider", "")
    assert '  provider: ""   # chosen in the wizard' in out
    assert yaml.safe_load(out)["memory"]["provider"] == ""


def test_missing_key_is_inserted_under_its_section_with_its_indentation():
    text = "memory:\n    memory_enabled: false\n    nudge_interval: 5\n# about display\ndisplay:\n    x: 1\n"
    out = set_yaml_text(text, "memory.provider", "holographic_store")
    assert out == ("memory:\n    memory_enabled: false\n    nudge_interval: 5\n"
                   "    provider: holographic_store\n# about display\ndisplay:\n    x: 1\n")


def test_missing_section_is_appended():
    out = set_yaml_text("# only a comment\nmodel: x\n\n", "memory.provider", "acme")
    assert out == "# only a comment\nmodel: x\nmemory:\n  provider: acme\n\n"
    assert set_yaml_text("", "memory.provider", "acme") == "memory:\n  provider: acme\n"


def test_empty_or_null_sections_become_mappings():
    assert set_yaml_text("memory:\nother: 1\n", "memory.provider", "a") == "memory:\n  provider: a\nother: 1\n"
    assert set_yaml_text("memory: {}  # none yet\n", "memory.provider", "a") == \
        "memory: # none yet\n  provider: a\n"
    assert set_yaml_text("memory: ~\n", "memory.provider", "a") == "memory:\n  provider: a\n"


def test_crlf_and_bom_are_preserved():
    text = "\ufeffa: 1\r\nmemory:\r\n  provider: x\r\n"
    assert set_yaml_text(text, "memory.provider", "z") == "\ufeffa: 1\r\nmemory:\r\n  provider: z\r\n"


def test_values_needing_quotes_are_quoted():
    assert format_scalar("hermes_store") == "hermes_store"
    assert format_scalar("yes") == '"yes"'
    assert format_scalar("a: b") == '"a: b"'
    assert format_scalar("") == '""'
    out = set_yaml_text("memory:\n  provider: x\n", "memory.provider", "off")
    assert yaml.safe_load(out)["memory"]["provider"] == "off"


def test_nested_value_under_the_key_is_replaced():
    text = "memory:\n  provider:\n    nested: 1\n  other: 2\n"
    assert set_yaml_text(text, "memory.provider", "x") == "memory:\n  provider: x\n  other: 2\n"


@pytest.mark.parametrize("text,fragment", [
    ("memory: {provider: x}\n", "flow-style"),
    ("memory: 5\n", "is not a mapping"),
    ("memory:\n  - a\n", "found a list"),
    ("memory: [\n", "invalid YAML"),
    ("- a\n", "top level"),
])
def test_unsupported_shapes_raise_clear_errors(text, fragment):
    with pytest.raises(ConfigError, match=fragment):
        set_yaml_text(text, "memory.provider", "x", source="cfg.yaml")


def test_invalid_yaml_error_names_file_and_line():
    with pytest.raises(ConfigError, match=r"cfg\.yaml:2"):
        set_yaml_text("a: 1\nb: ]\nc: 2\n", "memory.provider", "x", source="cfg.yaml")


def test_set_config_value_is_atomic_and_keeps_mode(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG)
    os.chmod(path, 0o640)
    set_config_value(path, "memory.provider", "hermes_store")
    assert yaml.safe_load(path.read_text())["memory"]["provider"] == "hermes_store"
    assert "# trailing comment" in path.read_text()
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]  # no temp files left
    fresh = tmp_path / "sub" / "config.yaml"
    set_config_value(fresh, "memory.provider", "a")
    assert fresh.read_text() == "memory:\n  provider: a\n"


def test_failed_edit_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("memory: {provider: x}\n")
    with pytest.raises(ConfigError):
        set_config_value(path, "memory.provider", "y")
    assert path.read_text() == "memory: {provider: x}\n"
