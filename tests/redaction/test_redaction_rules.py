"""The rules: every planted kind found, nothing in the false-positive corpus touched."""

from __future__ import annotations

import json

import pytest
from redaction_corpus import HARMLESS, PLANTED

from hermes_store.redaction import MARKER, Redactor
from hermes_store.redaction.prefilter import Prefilter
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
