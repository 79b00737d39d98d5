"""How text becomes index tokens: the one definition shared by every full-text index.

A word is split the way SQLite's ``unicode61`` tokenizer splits text (letters, digits and
private-use characters are token characters; everything else separates). CJK text has no
spaces, so the index also stores a *projection* (:func:`cjk_projection`: bigrams and unigrams
of every CJK run, plus Latin glued to CJK, plus one word per emoji code point), which
:mod:`hermes_store.query` matches with the same form.
"""

from __future__ import annotations

import itertools
import re
import threading
import unicodedata

import apsw

# Han, Hiragana, Katakana, Hangul and CJK compatibility ranges: the one definition of "CJK".
CJK_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x1100, 0x11FF, "Hangul Jamo"),
    (0x3040, 0x30FF, "Hiragana, Katakana"),
    (0x3100, 0x312F, "Bopomofo"),
    (0x3130, 0x318F, "Hangul compatibility Jamo"),
    (0x3400, 0x4DBF, "CJK Extension A"),
    (0x4E00, 0x9FFF, "CJK Unified Ideographs"),
    (0xAC00, 0xD7AF, "Hangul syllables"),
    (0xF900, 0xFAFF, "CJK compatibility ideographs"),
    (0xFF66, 0xFF9F, "half-width Katakana"),
    (0x20000, 0x3FFFF, "CJK Extensions B.."),
)
CJK_CHARS = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi, _ in CJK_RANGES) + "]")


def is_cjk(char: str) -> bool:
    """True for Han, Hiragana, Katakana, Hangul and CJK compatibility characters."""
    return CJK_CHARS.match(char) is not None


def has_cjk(text: str) -> bool:
    """True when ``text`` holds any :func:`is_cjk` character (a fast scan)."""
    return CJK_CHARS.search(text) is not None


def is_emoji(char: str) -> bool:
    """True for an emoji code point (pictographs, dingbats, symbols, regional indicators)."""
    code = ord(char)
    if not (0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF or 0x2300 <= code <= 0x23FF
            or 0x2B00 <= code <= 0x2BFF or code in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x3030)):
        return False
    return unicodedata.category(char) == "So"


# what the projection column holds: CJK characters and emoji (the ranges is_emoji looks at)
PROJECTED_CHARS = re.compile(
    CJK_CHARS.pattern[:-1]
    + "\U0001f000-\U0001faff\u2600-\u27bf\u2300-\u23ff\u2b00-\u2bff\u00a9\u00ae\u203c\u2049\u2122\u3030]")


def emoji_tokens(text: str) -> list[str]:
    """One index word per emoji code point of ``text``, in order (``🚀`` -> ``emoji1f680``)."""
    return [f"emoji{ord(char):x}" for char in text if is_emoji(char)]


def display_width(text: str) -> int:
    """The columns ``text`` takes on a terminal: two for an East Asian wide or fullwidth character
    (CJK, most emoji), none for a combining mark or a zero-width format character, else one
    (what the CLI pads by, and how Kimi's printed lines were wrapped)."""
    width = 0
    for char in text:
        if unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def is_token_char(char: str) -> bool:
    """True when the ``unicode61`` tokenizer keeps ``char`` inside a token."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category in ("Co", "Mn", "Mc")


def tokenize(text: str) -> list[str]:
    """Split ``text`` into index tokens the way ``unicode61`` does (case kept)."""
    tokens: list[str] = []
    current: list[str] = []
    for char in text:
        if is_token_char(char):
            current.append(char)
        elif current:
            tokens.append("".join(current))
            current = []
    if current:
        tokens.append("".join(current))
    return tokens


def folded(word: str) -> str:
    """``word`` lower-cased without diacritics (``remove_diacritics``' folding, unstemmed)."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()


def split_cjk(token: str) -> list[tuple[bool, str]]:
    """Split one token into runs ``(is_cjk, text)``."""
    runs: list[tuple[bool, str]] = []
    for char in token:
        flag = is_cjk(char)
        if runs and runs[-1][0] == flag:
            runs[-1] = (flag, runs[-1][1] + char)
        else:
            runs.append((flag, char))
    return runs


def cjk_projection(text: str | None) -> str | None:
    """The index-side CJK projection of ``text``, or None when it holds no CJK.

    For every token that contains CJK characters: the bigrams of each CJK run
    (in order, so consecutive bigrams are adjacent positions), then its
    unigrams, then any Latin/digit part glued to the CJK, all space separated.
    Stored in a ``cjk`` FTS column tokenized by stock ``unicode61``. Emoji
    words (:func:`emoji_tokens`) follow, so emoji are searchable too.
    """
    if not text:
        return None
    emoji = emoji_tokens(text) if not text.isascii() else []
    if not emoji and not has_cjk(text):
        return None
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for token in tokenize(text):
        if not has_cjk(token):
            continue
        for flag, run in split_cjk(token):
            if flag:
                out.extend(run[i : i + 2] for i in range(len(run) - 1))
                out.extend(run)
            else:
                out.append(run)
    out.extend(emoji)
    return " ".join(out) if out else None


TOOL_INDEX_CHARS = 8192  # the message index reads only this prefix of tool rows


def message_projection(role: str, content: str) -> str | None:
    """A message's ``cjk`` column: the projection of its indexed part (a tool row's prefix)."""
    text = content[:TOOL_INDEX_CHARS] if role == "tool" else content
    if not PROJECTED_CHARS.search(text):
        return None
    return cjk_projection(text)


def fact_projection(content: str, tags: str) -> str | None:
    """A fact's ``cjk`` column: the projection of its content and tags (None without CJK)."""
    return cjk_projection(f"{content}\n{tags}")


#: the tokenizer of every message full-text index (schema/*.sql: ``tokenize=``)
INDEX_TOKENIZER = ("porter", ("unicode61", "remove_diacritics", "2"))
_TOKENIZER: dict[str, object] = {}
_TOKENIZER_LOCK = threading.Lock()


def _index_tokenizer() -> object:
    """SQLite's own FTS5 tokenizer of the index, on a private in-memory connection."""
    with _TOKENIZER_LOCK:
        if "tok" not in _TOKENIZER:
            name, args = INDEX_TOKENIZER
            _TOKENIZER["db"] = connection = apsw.Connection(":memory:")
            _TOKENIZER["tok"] = connection.fts5_tokenizer(name, list(args))
        return _TOKENIZER["tok"]


_FOLDING_TOKENIZER = ("unicode61", ("remove_diacritics", "2"))  # the index's, without porter


def index_folded(text: str) -> str:
    """``text`` with each of its words folded as the index's ``unicode61 remove_diacritics 2``
    tokenizer folds it (lower case, no diacritics, unstemmed: ``İstanbul`` -> ``istanbul``,
    ``Café`` -> ``cafe``; what it keeps, such as a Greek accent, is kept), every other
    character as it is: a name compared in this form matches as the full-text search does."""
    if text.isascii():
        return text.lower()
    with _TOKENIZER_LOCK:
        if "fold" not in _TOKENIZER:
            name, args = _FOLDING_TOKENIZER
            _TOKENIZER["fold_db"] = connection = apsw.Connection(":memory:")
            _TOKENIZER["fold"] = connection.fts5_tokenizer(name, list(args))
    folder = _TOKENIZER["fold"]
    out = []
    for is_word, chars in itertools.groupby(text, is_token_char):
        part = "".join(chars)
        if is_word:
            with _TOKENIZER_LOCK:
                found = folder(part.encode("utf-8", "surrogatepass"),  # type: ignore[operator]
                               apsw.FTS5_TOKENIZE_DOCUMENT, None)
            # one run of token characters is one token; a run of marks alone folds to nothing
            part = "".join(str(token[2]) for token in found)
        out.append(part)
    return "".join(out)


def index_spans(text: str, *, query: bool = False) -> list[tuple[int, int, str]]:
    """``(start, end, token)`` of every index token of ``text``: character offsets, and the
    token as the full-text index stores it (folded, without diacritics, Porter-stemmed:
    ``Edited`` -> ``edit``), so a word is marked where the index matched it and nowhere else."""
    if not text:
        return []
    data = text.encode("utf-8", "surrogatepass")
    tokenizer = _index_tokenizer()
    reason = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
    with _TOKENIZER_LOCK:
        found = tokenizer(data, reason, None)  # type: ignore[operator]
    if text.isascii():
        return [(int(start), int(end), str(token)) for start, end, token, *_ in found]
    chars = [0] * (len(data) + 1)  # byte offset -> character offset
    at = 0
    for index, char in enumerate(text):
        chars[at] = index
        at += len(char.encode("utf-8", "surrogatepass"))
    chars[at] = len(text)
    return [(chars[int(start)], chars[int(end)], str(token)) for start, end, token, *_ in found]
