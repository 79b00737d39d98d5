"""Installable beside Hermes Agent's pinned dependency set.

Hermes pins every direct dependency exactly (its pyproject.toml); the one package we share
with a pin is ``numpy==2.4.3`` (its voice / wake / audio-io extras). click and PyYAML reach
Hermes only transitively (uvicorn[standard]), so any 8.x / 6.x resolves with them.
"""

from __future__ import annotations

import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HERMES_SHARED_PINS = {"numpy": "2.4.3"}
# A package we depend on -> the first major our code has not been checked against.
NEXT_MAJOR = {"apsw": 4, "click": 9, "filelock": 5, "sqlite-utils": 5, "pyyaml": 7, "numpy": 3, "zstandard": 1}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _dependencies() -> dict[str, list[tuple[str, str]]]:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out: dict[str, list[tuple[str, str]]] = {}
    for requirement in project["dependencies"]:
        name, spec = re.match(r"([A-Za-z0-9_.-]+)(.*)", requirement).groups()
        out[name.lower()] = re.findall(r"(>=|<=|==|<|>)\s*([\w.]+)", spec)
    return out


def _satisfies(version: str, spec: list[tuple[str, str]]) -> bool:
    ops = {">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
           ">": lambda a, b: a > b, "==": lambda a, b: a == b}
    return all(ops[op](_version(version), _version(bound)) for op, bound in spec)


def test_every_dependency_has_a_next_major_upper_bound():
    deps = _dependencies()
    assert set(deps) == set(NEXT_MAJOR)
    for name, spec in deps.items():
        uppers = [bound for op, bound in spec if op == "<"]
        assert uppers == [str(NEXT_MAJOR[name])], (name, spec)
        assert any(op == ">=" for op, _ in spec), (name, spec)


def test_hermes_pins_fall_inside_our_ranges():
    deps = _dependencies()
    for name, pinned in HERMES_SHARED_PINS.items():
        assert _satisfies(pinned, deps[name]), (name, pinned, deps[name])
    assert not _satisfies("3.0.0", deps["numpy"])  # the bound really excludes the next major


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_with_hermes_pins(tmp_path):
    """Build our wheel, install it into a new venv already holding Hermes' pins, and run it.

    Needs the package index (pip resolves our other dependencies); run with --slow or in CI.
    """
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("hermes_store-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    pins = [f"{name}=={version}" for name, version in HERMES_SHARED_PINS.items()]
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    first = subprocess.run([*pip, *pins], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    # Our wheel must resolve without moving a Hermes pin (pip fails rather than downgrade
    # with --no-deps off, so the constraint file pins them for the resolver).
    constraints = tmp_path / "hermes-pins.txt"
    constraints.write_text("\n".join(pins) + "\n")
    second = subprocess.run([*pip, "-c", str(constraints), str(wheel)], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    check = subprocess.run([str(python), "-c", (
        "import json, numpy, hermes_store\n"
        "from hermes_store.hermes_plugin import make_provider\n"
        "from hermes_store.tools import handle_tool_call\n"
        "import tempfile\n"
        "home = tempfile.mkdtemp()\n"
        "reply = json.loads(handle_tool_call('memory', {'action': 'add', 'target': 'memory', "
        "'content': 'installed beside Hermes'}, home=home))\n"
        "print(numpy.__version__, make_provider().name, reply['success'])\n")],
        capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == [HERMES_SHARED_PINS["numpy"], "hermes_store", "True"]
    cli = subprocess.run([str(env_dir / "bin" / "hermes-store"), "--help"], capture_output=True, text=True)
    assert cli.returncode == 0 and "memory" in cli.stdout
