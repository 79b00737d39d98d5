"""The evaluation scripts read the benchmarks in the layout of the development slices (a
directory of one file per item) and in the layout the benchmarks publish (one file holding a
list: ``longmemeval_s.json``, ``locomo10.json``), with the same figures; a broken file is named
in a one-line error (on small data written here in those layouts; the real data is never copied
into the repository)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _conversation(topic: str, other: str) -> dict:
    return {
        "speaker_a": "Ana", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": f"I finally started learning {topic}."},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "That is great news!"}],
        "session_2_date_time": "3:00 pm on 20 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": f"My weekend was all about {other}."},
                      {"speaker": "Ana", "dia_id": "D2:2", "text": "Sounds relaxing.",
                       "blip_caption": f"a photo of {other}"}],
        "qa": [{"question": f"What did Ana start learning, {topic}?", "answer": topic,
                "evidence": ["D1:1"], "category": 4},
               {"question": f"What was Bo's weekend about, the {other}?", "answer": other,
                "evidence": ["D2:1; D2:2"], "category": 1},
               {"question": "What did Ana never say?", "adversarial_answer": "x",
                "evidence": ["D1:2"], "category": 5}],
    }


def _published(conversations: dict[str, dict]) -> list[dict]:
    """LoCoMo's ``locomo10.json`` layout: the turns under ``conversation``, ``qa`` beside them."""
    return [{"sample_id": name, "qa": conv["qa"],
             "conversation": {k: v for k, v in conv.items() if k != "qa"}}
            for name, conv in conversations.items()]


def _question(qid: str, word: str) -> dict:
    return {"question_id": qid, "question_type": "single-session-user",
            "question": f"What did I say about {word}?", "question_date": "2024/01/10 (Wed) 10:00",
            "answer_session_ids": [f"{qid}-a"], "haystack_session_ids": [f"{qid}-a", f"{qid}-b"],
            "haystack_dates": ["2023/05/20 (Sat) 00:31", "2023/05/21 (Sun) 14:21"],
            "haystack_sessions": [
                [{"role": "user", "content": f"I love {word} more than anything.", "has_answer": True},
                 {"role": "assistant", "content": "Noted."}],
                [{"role": "user", "content": "The weather was grey all week."},
                 {"role": "assistant", "content": "Sorry to hear that."}]]}


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


def _report(script: str, *args: str) -> dict:
    out = _run(script, *args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_locomo_in_both_layouts_gives_the_same_figures(tmp_path):
    conversations = {"conv-1": _conversation("pottery", "kayaking"),
                     "conv-2": _conversation("welding", "birdwatching")}
    split = tmp_path / "split"
    split.mkdir()
    for name, conv in conversations.items():
        (split / f"{name}.json").write_text(json.dumps(conv), encoding="utf-8")
    published = tmp_path / "locomo10.json"
    published.write_text(json.dumps(_published(conversations)), encoding="utf-8")

    totals = {}
    for level in ("session", "turn"):
        by_dir = _report("eval_locomo.py", "--level", level, "--data", str(split))
        by_file = _report("eval_locomo.py", "--level", level, "--data", str(published))
        assert by_dir["totals"] == by_file["totals"]
        totals[level] = by_file["totals"]
    # categories 1-4 of both conversations; category 5 is left out
    assert totals["session"]["0"]["n"] == 4
    assert totals["session"]["0"]["hit@1"] == 4.0
    assert totals["turn"]["hermes_store search"]["0"]["n"] == 4


def test_longmemeval_in_both_layouts_gives_the_same_figures(tmp_path):
    questions = [_question("q1", "sourdough"), _question("q2", "marathons"),
                 {**_question("q3_abs", "chess"), "question_id": "q3_abs"}]
    split = tmp_path / "split"
    split.mkdir()
    for q in questions:
        (split / f"2_{q['question_id']}.json").write_text(json.dumps(q), encoding="utf-8")
    published = tmp_path / "longmemeval_s.json"
    published.write_text(json.dumps(questions), encoding="utf-8")

    by_dir = _report("eval_longmemeval.py", "--data", str(split))
    by_file = _report("eval_longmemeval.py", "--data", str(published))
    strip = ("p50_ms", "p95_ms", "latency_ms")
    assert {k: v for k, v in by_dir.items() if k not in strip} == \
        {k: v for k, v in by_file.items() if k not in strip}
    assert by_file["types"]["all"]["n"] == 2  # the abstention question is skipped
    assert by_file["types"]["all"]["hit@1"] == 1.0


def test_a_broken_file_is_named_in_one_line(tmp_path):
    split = tmp_path / "split"
    split.mkdir()
    (split / "conv-1.json").write_text(json.dumps(_conversation("pottery", "kayaking")), encoding="utf-8")
    (split / "conv-2.json").write_text('{"speaker_a": "Ana", "session_1": [', encoding="utf-8")
    out = _run("eval_locomo.py", "--level", "session", "--data", str(split))
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: {split / 'conv-2.json'}: not a readable JSON file")
    assert "Traceback" not in out.stderr

    (split / "conv-2.json").write_text(json.dumps({"question": "not a conversation"}), encoding="utf-8")
    out = _run("eval_locomo.py", "--data", str(split))
    assert out.returncode == 2 and "not a LoCoMo conversation" in out.stderr

    wrong = tmp_path / "lme.json"
    wrong.write_text(json.dumps([_conversation("pottery", "kayaking")]), encoding="utf-8")
    out = _run("eval_longmemeval.py", "--data", str(wrong))
    assert out.returncode == 2 and "lme.json (lme[0]): not a LongMemEval question" in out.stderr

    out = _run("eval_longmemeval.py", "--data", str(tmp_path / "missing"))
    assert out.returncode == 2 and "no such file or directory" in out.stderr

    unreachable = f"postgresql://nobody@/x?host={tmp_path / 'no-server'}&connect_timeout=2"
    out = _run("eval_longmemeval.py", "--data", str(wrong.parent / "missing"), "--database-url", unreachable)
    assert out.returncode == 2 and "no such file or directory" in out.stderr
    (split / "conv-2.json").unlink()
    out = _run("eval_locomo.py", "--level", "session", "--data", str(split), "--database-url", unreachable)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {unreachable}") and "not reachable" in out.stderr


def test_the_session_level_evaluations_run_on_postgresql_too(tmp_path, pg_url):
    """``--database-url`` at session level: the same haystacks indexed into a schema of a
    PostgreSQL database and asked through session_search there; the schema is dropped at the end."""
    import psycopg

    split = tmp_path / "split"
    split.mkdir()
    (split / "conv-1.json").write_text(json.dumps(_conversation("pottery", "kayaking")), encoding="utf-8")
    on_pg = _report("eval_locomo.py", "--level", "session", "--data", str(split), "--database-url", pg_url)
    on_sqlite = _report("eval_locomo.py", "--level", "session", "--data", str(split))
    assert (on_pg["engine"], on_sqlite["engine"]) == ("postgresql", "sqlite")
    assert on_pg["totals"] == on_sqlite["totals"] and on_pg["totals"]["0"]["hit@1"] == 2.0

    published = tmp_path / "longmemeval_s.json"
    published.write_text(json.dumps([_question("q1", "sourdough"), _question("q2", "marathons")]),
                         encoding="utf-8")
    report = _report("eval_longmemeval.py", "--data", str(published), "--database-url", pg_url)
    assert report["engine"] == "postgresql"
    assert report["types"]["all"]["n"] == 2 and report["types"]["all"]["hit@1"] == 1.0
    out = _run("eval_longmemeval.py", "--data", str(published), "--database-url", pg_url)
    assert "engine: postgresql;" in out.stdout
    with psycopg.connect(pg_url) as conn:
        schemas = {row[0] for row in conn.execute("SELECT nspname FROM pg_namespace")}
    assert "hs_eval" not in schemas
