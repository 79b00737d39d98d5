"""home.py: HERMES_HOME resolution, profiles and config.yaml coercion."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_store.home import ConfigError, Home, MemoryConfig, coerce_bool, coerce_int, resolve_home


def test_resolution_order(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "env"))
    assert resolve_home() == (tmp_path / "env").absolute()
    assert resolve_home(tmp_path / "arg") == (tmp_path / "arg").absolute()
    monkeypatch.delenv("HERMES_HOME")
    assert resolve_home() == Path.home() / ".hermes"


def test_profiles(tmp_path):
    assert Home(tmp_path, profile="work").root == tmp_path / "profiles" / "work"
    for bad in ("../x", "a/b", "", ".hidden"):
        if bad:
            with pytest.raises(ConfigError):
                resolve_home(tmp_path, bad)


def test_paths(tmp_path):
    home = Home(tmp_path)
    assert home.memory_file == tmp_path / "memories" / "MEMORY.md"
    assert home.user_file == tmp_path / "memories" / "USER.md"
    assert home.db_path == tmp_path / "hermes_store.db"


def test_defaults_without_config(tmp_path):
    cfg = Home(tmp_path).memory_config()
    assert (cfg.memory_enabled, cfg.user_profile_enabled) == (True, True)
    assert (cfg.memory_char_limit, cfg.user_char_limit) == (2200, 1375)
    assert cfg.provider == "" and cfg.write_approval is False and cfg.render == "hermes"


def test_string_values_are_coerced(tmp_path):
    (tmp_path / "config.yaml").write_text(
        "# my config\nmemory:\n  memory_enabled: 'false'\n  user_profile_enabled: \"no\"\n"
        "  memory_char_limit: \"2200\"\n  user_char_limit: '1,500'\n  provider: holographic_store\n"
        "  write_approval: 'true'\n  render: compact\n"
    )
    cfg = Home(tmp_path).memory_config()
    assert cfg.memory_enabled is False and cfg.user_profile_enabled is False
    assert cfg.memory_char_limit == 2200 and cfg.user_char_limit == 1500
    assert cfg.provider == "holographic_store" and cfg.write_approval is True and cfg.render == "compact"


def test_null_section_and_null_values(tmp_path):
    (tmp_path / "config.yaml").write_text("memory:\n  provider:\n  memory_char_limit:\n")
    cfg = Home(tmp_path).memory_config()
    assert cfg.provider == "" and cfg.memory_char_limit == 2200
    (tmp_path / "config.yaml").write_text("memory:\n")
    assert Home(tmp_path).memory_config() == MemoryConfig(raw={})


def test_bad_yaml_names_file_and_line(tmp_path):
    (tmp_path / "config.yaml").write_text("memory:\n  a: [1, 2\n  b: 3\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+"):
        Home(tmp_path).config()


def test_bad_values_name_the_field(tmp_path):
    (tmp_path / "config.yaml").write_text("memory:\n  memory_char_limit: lots\n")
    with pytest.raises(ConfigError, match="memory.memory_char_limit"):
        Home(tmp_path).memory_config()
    with pytest.raises(ConfigError):
        coerce_bool("maybe", True)
    assert coerce_int(2200.0, 1) == 2200
    with pytest.raises(ConfigError):
        coerce_int(True, 1)
