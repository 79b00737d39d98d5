"""Word-level text handling for the fact store (vectors, overlap scores, contradiction frames).

This is not an FTS sanitiser: MATCH expressions always come from
:mod:`hermes_store.query`. These helpers only turn text into comparable words,
splitting the way the index tokenizer does and projecting CJK runs to bigrams.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from hermes_store.query import STOPWORDS
from hermes_store.tokens import is_cjk, tokenize

NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
                       "cannot", "without", "n't", "isn't", "doesn't", "don't", "didn't",
                       "won't", "wasn't", "aren't", "hasn't", "haven't"})


_ASCII_WORD = re.compile(r"[a-z0-9]+")


def normalize(text: str) -> str:
    """NFKC-normalise and case-fold ``text`` (the comparison form of every word)."""
    return unicodedata.normalize("NFKC", text or "").casefold()


def words(text: str) -> list[str]:
    """All words of ``text`` in order: case-folded index tokens, CJK runs as bigrams.

    A CJK run of one character stays a unigram; longer runs give their
    consecutive bigrams, matching how the ``cjk`` index column is built.
    """
    if text.isascii():  # the same tokens, fast: ASCII token characters are letters and digits
        return _ASCII_WORD.findall(text.lower())
    out: list[str] = []
    for token in tokenize(normalize(text)):
        if not any(is_cjk(c) for c in token):
            out.append(token)
            continue
        run: list[str] = []
        latin: list[str] = []
        for char in token + "\0":
            if char != "\0" and is_cjk(char):
                if latin:
                    out.append("".join(latin))
                    latin = []
                run.append(char)
                continue
            if run:
                chunk = "".join(run)
                out.extend([chunk] if len(chunk) == 1 else
                           [chunk[i:i + 2] for i in range(len(chunk) - 1)])
                run = []
            if char != "\0":
                latin.append(char)
        if latin:
            out.append("".join(latin))
    return out


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deliberately crude English stem: like/likes/liked/liking and study/studied/studies match."""
    if len(word) <= 3 or not word.isascii():
        return word
    for suffix, keep in (("ies", "i"), ("ied", "i"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)] + keep
            break
    if len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def content_words(text: str) -> list[str]:
    """Words of ``text`` without stopwords (order kept, duplicates kept)."""
    return [w for w in words(text) if w not in STOPWORDS]


def coverage(query_words: list[str], fact_words: set[str]) -> float:
    """Share of the distinct query words found in ``fact_words`` (0..1, stems compared)."""
    wanted = {stem(w) for w in query_words}
    if not wanted:
        return 0.0
    have = {stem(w) for w in fact_words}
    return len(wanted & have) / len(wanted)
