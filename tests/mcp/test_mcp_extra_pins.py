"""The ``mcp`` and ``browse`` extras resolve beside Hermes Agent's pins.

Hermes pins ``mcp==2.0.0`` (with ``httpx2==2.7.0`` and ``starlette==1.3.1``) in its ``mcp``
extra; the MCP tests were run against exactly that set as well as the newest 2.x.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERMES_MCP_PIN = "2.0.0"


def _extra(name: str) -> list[str]:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["optional-dependencies"][name]


def _bounds(requirement: str) -> list[tuple[str, tuple[int, ...]]]:
    return [(op, tuple(int(p) for p in v.split("."))) for op, v in re.findall(r"(>=|<)\s*([\d.]+)", requirement)]


def test_mcp_extra_admits_the_hermes_pin_and_stops_before_the_next_major():
    (requirement,) = [r for r in _extra("mcp") if r.startswith("mcp")]
    bounds = dict(_bounds(requirement))
    pin = tuple(int(p) for p in HERMES_MCP_PIN.split("."))
    assert bounds[">="] <= pin < bounds["<"] and bounds["<"] == (3,)


def test_test_extra_installs_the_front_end_extras():
    assert {"hermes_store[mcp]", "hermes_store[browse]"} <= set(_extra("test"))
    (datasette,) = _extra("browse")
    assert dict(_bounds(datasette))["<"] == (1, 0)
