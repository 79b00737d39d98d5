"""The rules: every planted kind found, nothing in the false-positive corpus touched."""

from __future__ import annotations

import json

import pytest
from redaction_corpus import HARMLESS, PLANTED

from hermes_store.redaction import MARKER, Redactor
from hermes_store.redaction.prefilter import Prefilter
from hermes_store.redaction.rules import ESCAPE_LITERAL
from hermes_store.redaction.settings import RedactionConfigError, RedactionSettings

R = Redactor(b"test-key")


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_every_planted_kind_is_redacted(kind) -> None:
    text, secret = PLANTED[kind]
    out = R.redact(text)
    assert secret not in out
    assert MARKER.search(out)
    assert R.redact(out) == out  # idempotent: a marker is never redacted again


@pytest.mark.parametrize("text", HARMLESS)
def test_false_positive_corpus_untouched(text) -> None:
    assert R.redact(text) == text


def test_url_keeps_user_and_host() -> None:
    out = R.redact("postgresql://deploy:Vq7xP2mm@db.internal:5432/app")
    assert out.startswith("postgresql://deploy:[REDACTED:url-password:") and out.endswith("@db.internal:5432/app")


def test_pem_block_redacted_whole() -> None:
    text, _ = PLANTED["pem"]
    out = R.redact(f"before\n{text}\nafter")
    assert out.startswith("before\n[REDACTED:private-key:") and out.endswith("]\nafter")
    assert "OPENSSH" not in out


def test_keyed_hash_differs_between_stores() -> None:
    text = PLANTED["github"][0]
    assert R.redact(text) == R.redact(text)
    assert Redactor(b"other-key").redact(text) != R.redact(text)


def test_fallback_prefilter_finds_the_same_rules(monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_hyperscan(name, *args, **kwargs):
        if name == "hyperscan":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_hyperscan)
    plain = Prefilter()
    assert plain.engine == "re"
    monkeypatch.undo()
    fast = Prefilter()
    for text, _ in PLANTED.values():
        assert set(plain.fired(text)) == set(fast.fired(text)), text
    for text in HARMLESS:
        assert set(plain.fired(text)) == set(fast.fired(text)), text


def test_settings_errors_name_the_key() -> None:
    with pytest.raises(RedactionConfigError, match="store.redact: expected true or false"):
        RedactionSettings.from_store_section({"redact": "maybe"})
    with pytest.raises(RedactionConfigError, match=r"store.redact_allow\[0\]"):
        RedactionSettings.from_store_section({"redact_allow": ["(["]})
    with pytest.raises(RedactionConfigError, match="kind 'Bad Kind'"):
        RedactionSettings.from_store_section({"redact_patterns": {"Bad Kind": "x"}})


def test_redaction_off() -> None:
    off = Redactor(b"k", RedactionSettings(enabled=False))
    assert off.redact(PLANTED["github"][0]) == PLANTED["github"][0]


def test_batch_redaction_finds_secrets_past_scan_chunks() -> None:
    rows = [(i, f"message {i} about token usage: {i}", None) for i in range(4500)]
    rows[2999] = (2999, PLANTED["github"][0], None)
    rows[4001] = (4001, "plain", json.dumps({"cmd": PLANTED["openai"][0]}))
    out = R.redact_rows(rows, (1, 2))
    assert PLANTED["github"][1] not in out[2999][1] and "[REDACTED:github-token:" in out[2999][1]
    assert PLANTED["openai"][1] not in out[4001][2]
    assert [row for i, row in enumerate(out) if i not in (2999, 4001)] == \
        [row for i, row in enumerate(rows) if i not in (2999, 4001)]


def _plain_prefilter(monkeypatch) -> Prefilter:
    import builtins

    real_import = builtins.__import__

    def no_hyperscan(name, *args, **kwargs):
        if name == "hyperscan":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_hyperscan)
    plain = Prefilter()
    monkeypatch.undo()
    assert plain.engine == "re"
    return plain


def _variants() -> list[str]:
    """Planted and harmless texts, upper/title-cased, wrapped in prose, with non-ASCII forms
    that re's IGNORECASE matches (the Kelvin sign for k, the long s for s)."""
    base = [text for text, _ in PLANTED.values()] + list(HARMLESS)
    out: list[str] = []
    for text in base:
        out += [text, text.upper(), text.title(), f"before {text} after", f"{text}\n" * 3]
        out.append(text.replace("k", "\u212a").replace("s", "\u017f"))
        out.append("中文 " + text)
    out += ["", "ſecret: Vq7xP2mmQ9zL", "TOKEN := 'Zq8vN3kkP1'", "aPi-KeY=Xk29dmQ0pl", "x" * 5000]
    return out


def test_re_prefilter_literal_check_is_exact(monkeypatch) -> None:
    """The pure-re prefilter's literal pre-check fires exactly the rules the triggers alone fire."""
    plain = _plain_prefilter(monkeypatch)
    for text in _variants():
        expected = {i for i, trigger in enumerate(plain._triggers) if trigger.search(text)}
        assert set(plain.fired(text)) == expected, text


def test_re_batch_candidates_match_hyperscan(monkeypatch) -> None:
    """Batch candidates without Hyperscan (joined, lower-cased ASCII chunks) are the texts
    whose triggers fire, past chunk boundaries too, and the same set Hyperscan finds."""
    plain = _plain_prefilter(monkeypatch)
    texts = _variants() * 5  # > CANDIDATE_CHUNK texts: several chunks
    expected = {i for i, text in enumerate(texts)  # a JSON \u00XX escape may hide a token: flagged too
                if any(trigger.search(text) for trigger in plain._triggers) or ESCAPE_LITERAL in text}
    assert expected and len(expected) < len(texts)
    assert plain.candidates(texts) == expected
    fast = Prefilter()
    if fast.engine == "hyperscan":  # its caseless mode is ASCII-only: compared on ASCII texts
        ascii_only = {i for i in expected if texts[i].isascii()}
        assert fast.candidates(texts) >= ascii_only  # it may add a cross-separator candidate
    plain_redactor = Redactor(b"test-key")
    rows = [(i, text) for i, text in enumerate(texts)]
    assert plain_redactor.redact_rows(rows, (1,)) == [(i, R.redact(text)) for i, text in rows]
