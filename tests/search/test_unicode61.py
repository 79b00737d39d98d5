"""hermes_store.unicode61 is SQLite's own unicode61 tokenizer (remove_diacritics 2) as tables:
checked against the tokenizer on every code point, and against the PostgreSQL migration that
embeds the same tables (schema/pg/0015)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from hermes_store import unicode61

SQL = Path(__file__).resolve().parents[2] / "schema" / "pg" / "0015_unicode_words.sql"
CODES = [c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]


@pytest.fixture(scope="module")
def sqlite_tokens():
    tokenizer = apsw.Connection(":memory:").fts5_tokenizer("unicode61", ["remove_diacritics", "2"])

    def spans(text: str) -> list[tuple[int, int]]:
        data = text.encode("utf-8")
        chars, at = {len(data): len(text)}, 0  # byte offset -> character offset
        for index, char in enumerate(text):
            chars[at] = index
            at += len(char.encode("utf-8"))
        return [(chars[s], chars[e]) for s, e, *_ in tokenizer(data, apsw.FTS5_TOKENIZE_DOCUMENT, None)]
    return spans


@pytest.mark.parametrize("shape", ["{} ", "a{} "], ids=["starts", "continues"])
def test_the_token_pattern_splits_every_code_point_as_sqlite(sqlite_tokens, shape):
    for first in range(0, len(CODES), 4096):
        text = "".join(shape.format(chr(c)) for c in CODES[first:first + 4096])
        assert [m.span() for m in unicode61.TOKEN.finditer(text)] == sqlite_tokens(text)


def test_the_fold_map_is_sqlite_folding():
    tokenizer = apsw.Connection(":memory:").fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
    for char, folded in unicode61.fold_map().items():
        text = char if folded else f"a{char}b"
        token = tokenizer(text.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)[0][2]
        assert token == (folded or "ab"), hex(ord(char))


def _uescape(char: str) -> str:
    code = ord(char)
    return f"\\{code:04x}" if code <= 0xFFFF else f"\\+{code:06x}"


def test_the_migration_embeds_the_same_tables():
    sql = SQL.read_text()
    folds = unicode61.fold_map()
    kept = [c for c, v in folds.items() if v]
    dropped = [c for c, v in folds.items() if not v]
    assert "U&'" + "".join(_uescape(c) for c in kept + dropped) + "'" in sql
    assert "U&'" + "".join(_uescape(folds[c]) for c in kept) + "'" in sql
    assert "[" + unicode61.regex_class(" ".join(f"{ord(c):x}" for c in sorted(folds))) + "]" in sql
    assert unicode61.regex_class(unicode61.SEPARATORS) + "]+" in sql
    assert sql.count("[" + unicode61.regex_class(unicode61.ESCAPED) + "]") == 2
    assert "[^" + unicode61.regex_class(unicode61.ESCAPED) + "]" in sql
