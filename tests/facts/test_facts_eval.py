"""The acceptance evaluation (scripts/eval_facts.py) meets its targets (slow: ~15 s)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "eval_facts.py"


def load_script():
    """Import scripts/eval_facts.py as a module (registered so its dataclasses work)."""
    if "eval_facts" in sys.modules:
        return sys.modules["eval_facts"]
    spec = importlib.util.spec_from_file_location("eval_facts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_facts"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_eval_targets():
    module = load_script()
    ours = module.evaluate(seed=3, dim=512)["hermes_store"]
    assert ours["probe_p@5"] >= 0.9
    assert ours["reason_p@3"] >= 0.9
    assert ours["related_p@5"] >= 0.9
    assert ours["contradict_recall"] >= 0.8
    assert ours["contradict_fp_share"] <= 0.10
    assert ours["hrr_presence_pos"] > ours["hrr_presence_neg"] + 0.3


def test_dataset_shape():
    module = load_script()
    data = module.build_dataset(5)
    assert len(data.facts) == 1000 and len(data.people) == 100 and len(data.contradictions) == 50
    assert len({f.content for f in data.facts}) == 1000
