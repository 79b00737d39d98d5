"""The Hermes plugin-catalog entry (plugin-catalog/hermes_store.yaml) matches the plugin it pins.

Schema from hermes-agent's plugin-catalog/README.md: name [a-z0-9_-]{1,64}, https repo, a full
40-hex sha, optional subdir, declared capabilities that must match what the plugin registers.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.providers.test_hermes_plugin import hermes_style_load

ROOT = Path(__file__).resolve().parents[2]
ENTRY = yaml.safe_load((ROOT / "plugin-catalog" / "hermes_store.yaml").read_text(encoding="utf-8"))
SCHEMA_KEYS = {"name", "repo", "sha", "subdir", "description", "maintainer", "tier", "category",
               "requires_hermes", "version", "docs_url", "homepage_url", "readme", "platforms",
               "components", "desktop_id", "capabilities"}


def test_entry_follows_the_catalog_schema():
    assert set(ENTRY) <= SCHEMA_KEYS
    assert re.fullmatch(r"[a-z0-9_-]{1,64}", ENTRY["name"])
    assert ENTRY["repo"].startswith("https://")
    assert re.fullmatch(r"[0-9a-f]{40}", ENTRY["sha"])
    assert ENTRY["tier"] in ("official", "community")
    assert set(ENTRY["components"]) <= {"agent", "desktop-ui"}
    assert set(ENTRY["capabilities"]) == {"provides_tools", "provides_hooks", "provides_middleware",
                                          "requires_env"}


def test_declared_capabilities_match_what_the_plugin_registers(tmp_path):
    plugin_dir = ROOT / ENTRY["subdir"]
    manifest = yaml.safe_load((plugin_dir / "plugin.yaml").read_text(encoding="utf-8"))
    assert manifest["name"] == ENTRY["name"]
    from hermes_store import __version__
    assert manifest["version"] == ENTRY["version"] == __version__
    provider = hermes_style_load(plugin_dir)
    assert provider is not None and provider.name == ENTRY["name"]
    tools = [s.get("function", s)["name"] for s in provider.get_tool_schemas()]
    assert tools == ENTRY["capabilities"]["provides_tools"]
    assert manifest["hooks"] == ENTRY["capabilities"]["provides_hooks"]
    assert ENTRY["capabilities"]["requires_env"] == []


def test_pinned_commit_holds_the_plugin_directory():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True)
    if shallow.stdout.strip() == "true":
        pytest.skip("shallow clone: the pinned commit may be outside its history")
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", ENTRY["sha"],
                             ENTRY["subdir"] + "/"], capture_output=True, text=True)
    assert listed.returncode == 0, f"pinned sha {ENTRY['sha']} is not in this repository: {listed.stderr}"
    assert {f"{ENTRY['subdir']}/plugin.yaml", f"{ENTRY['subdir']}/__init__.py"} <= set(listed.stdout.split())
