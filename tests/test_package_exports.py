"""Every package ``__init__`` resolves every name it exports, lazy ones included."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import hermes_store


def _packages() -> list[str]:
    names = ["hermes_store"]
    for info in pkgutil.walk_packages(hermes_store.__path__, "hermes_store."):
        if info.ispkg:
            names.append(info.name)
    return sorted(names)


PACKAGES = _packages()


def test_packages_found() -> None:
    assert {"hermes_store.providers", "hermes_store.facts", "hermes_store.builtin",
            "hermes_store.sessions"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_export_resolves(package: str) -> None:
    module = importlib.import_module(package)
    names = list(getattr(module, "__all__", ())) + list(getattr(module, "_LAZY", {}))
    for name in names:
        value = getattr(module, name)  # raises AttributeError/ImportError when broken
        assert value is not None, f"{package}.{name} resolved to None"


def test_lazy_exports_come_from_the_named_module() -> None:
    providers = importlib.import_module("hermes_store.providers")
    for name, module_name in providers._LAZY.items():
        assert getattr(providers, name) is getattr(importlib.import_module(module_name), name), name


def test_unknown_lazy_name_is_an_attribute_error() -> None:
    providers = importlib.import_module("hermes_store.providers")
    with pytest.raises(AttributeError):
        providers.no_such_name  # noqa: B018


def test_the_cli_runs_as_a_module(tmp_path) -> None:
    """``python -m hermes_store.cli status`` (no console script on PATH, e.g. a bare checkout)
    failed: "No module named hermes_store.cli.__main__; 'hermes_store.cli' is a package and
    cannot be directly executed". It runs the same command line as ``hermes-store``."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "hermes_store.cli", "--home", str(tmp_path), "sessions", "list"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "No sessions indexed."
    usage = subprocess.run([sys.executable, "-m", "hermes_store.cli", "--color", "sometimes", "status"],
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "Usage: hermes-store" in usage.stderr
