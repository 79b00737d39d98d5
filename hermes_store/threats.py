"""Threat scan for text that ends up in a prompt (memory entries, facts; lowest layer).

Two uses:

* write time — :func:`scan_content` returns the ``Blocked: …`` message for the
  first finding (or None), and the write is refused;
* prompt time — :func:`sanitize_entry` / :func:`sanitize_entries` replace a
  poisoned entry by a ``[BLOCKED: …]`` notice in the rendered snapshot only.

Every pattern id of the Hermes ``strict`` scope is checked, at parity with the
newest upstream list: a zero-width joiner between two emoji is part of the emoji
(👨‍👩‍👧 passes), and ``ssh_access`` needs a write verb or redirect before the path.
Invisible characters are looked for in the raw text (the Hermes list, plus soft hyphens,
fillers and Unicode tag characters outside a flag emoji); the regexes run on the NFKC form
(full-width homoglyphs fold to ASCII) and, for non-ASCII text, on :func:`scan_form` too
(look-alike letters, combining marks and format characters inside a keyword undone). At most ``MAX_SCAN_CHARS`` characters
are scanned, so longer text is blocked outright instead of passing with an
unscanned tail. Text that already starts with ``[BLOCKED:`` is scanned like any
other (an attacker cannot opt out by prefixing it).
"""

from __future__ import annotations

import logging
import re
import unicodedata

from hermes_store.threat_patterns import (  # noqa: F401 - PATTERN_IDS is public here too
    ENV_NAME_VALUE,
    PATTERN_IDS,
    RE_ASCII_FOLDS,
    REQUIRED,
    THREAT_PATTERNS,
    needle_text,
    possible_patterns,
)

logger = logging.getLogger(__name__)

MAX_SCAN_CHARS = 65_536

INVISIBLE_CHARS: tuple[str, ...] = (
    "\u200b", "\u200c", "\u200d", "\u2060", "\u2062", "\u2063", "\u2064", "\ufeff",
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
)
#: Beyond the Hermes list: characters that render as nothing (or as blank) and can hide a
#: word break inside a keyword — soft hyphen, invisible function application, Mongolian
#: vowel separator, Hangul fillers, Khmer inherent vowels, combining grapheme joiner,
#: interlinear annotation marks, Arabic letter mark, musical invisible formatters.
EXTRA_INVISIBLE_CHARS: tuple[str, ...] = (
    "\u00ad", "\u034f", "\u061c", "\u115f", "\u1160", "\u17b4", "\u17b5", "\u180b", "\u180c",
    "\u180d", "\u180e", "\u180f", "\u2061", "\u3164", "\uffa0", "\ufff9", "\ufffa", "\ufffb",
    *(chr(c) for c in range(0x1D173, 0x1D17B)),
)
#: Unicode tag characters (U+E0000-U+E007F): invisible, yet models read U+E0020-U+E007E as
#: ASCII ("ASCII smuggling"). Only a flag emoji sequence (U+1F3F4 + tags + U+E007F) is legitimate.
TAG_FIRST, TAG_LAST, TAG_CANCEL, BLACK_FLAG = 0xE0000, 0xE007F, "\U000E007F", "\U0001F3F4"
#: Characters that render as blank space and so may stand where a space is expected.
_BLANKS = str.maketrans(dict.fromkeys("\u115f\u1160\u3164\uffa0\u2800\u180e", " "))

_INVISIBLE_SET = frozenset(INVISIBLE_CHARS + EXTRA_INVISIBLE_CHARS)
# One pass over the text for any invisible or tag character (a per-character loop in Python
# was a tenth of a search's time).
_HIDDEN = re.compile("[" + "".join(sorted(_INVISIBLE_SET)) + chr(TAG_FIRST) + "-" + chr(TAG_LAST) + "]")
_ZWJ = "\u200d"
_PRESENTATION = frozenset("\ufe0e\ufe0f")  # text / emoji variation selectors
_EMOJI_BLOCKS: tuple[tuple[int, int], ...] = (
    (0x1F000, 0x1FFFF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x2300, 0x23FF), (0x2190, 0x21FF),
)


def _is_emoji(char: str) -> bool:
    """A code point that can stand on either side of an emoji zero-width joiner."""
    code = ord(char)
    if any(lo <= code <= hi for lo, hi in _EMOJI_BLOCKS):
        return True
    return unicodedata.category(char) in ("So", "Sk")


def _joins_emoji(text: str, index: int) -> bool:
    """True when the ZWJ at ``index`` sits between two emoji (variation selectors skipped).

    That is how 👨‍👩‍👧, 🐈‍⬛ or ❤️‍🔥 are built; a ZWJ glued to any other
    character (``foo\u200dbar``, ``a\u200d🔥``) still counts as hidden text.
    """
    before = index - 1
    while before >= 0 and text[before] in _PRESENTATION:
        before -= 1
    after = index + 1
    return before >= 0 and after < len(text) and _is_emoji(text[before]) and _is_emoji(text[after])


def _is_tag(char: str) -> bool:
    return TAG_FIRST <= ord(char) <= TAG_LAST


def _in_flag_sequence(text: str, index: int) -> bool:
    """True when the tag character at ``index`` belongs to a 🏴 + tags + cancel-tag flag emoji."""
    start = index
    while start > 0 and _is_tag(text[start - 1]):
        start -= 1
    end = index
    while end + 1 < len(text) and _is_tag(text[end + 1]):
        end += 1
    return start > 0 and text[start - 1] == BLACK_FLAG and text[end] == TAG_CANCEL


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


def _undisguised_run(match: re.Match[str]) -> str:
    """A run of non-ASCII characters with tags read as their ASCII and format/combining marks dropped."""
    out: list[str] = []
    for char in match.group(0):
        code = ord(char)
        if 0xE0020 <= code <= 0xE007E:
            out.append(chr(code - 0xE0000))
        elif unicodedata.category(char) not in ("Cf", "Mn", "Me"):
            out.append(char)
    return "".join(out)


def scan_form(text: str) -> str:
    """The disguise-free form the patterns also run on.

    Compatibility-decomposed (NFKD) so combining marks come apart from their letters; tag
    characters read as the ASCII they smuggle; format characters (Cf) and combining marks
    dropped; blank-rendering fillers read as spaces; common look-alikes (Cyrillic, Greek,
    other brackets and dashes) mapped to ASCII; the result lower-cased.
    """
    from hermes_store.tooling import CONFUSABLES, PREFOLD

    decomposed = unicodedata.normalize("NFKD", text.translate(PREFOLD))
    # ASCII holds no tag, format or combining character: only the non-ASCII runs are read.
    folded = unicodedata.normalize("NFKC", _NON_ASCII_RUN.sub(_undisguised_run, decomposed)).lower()
    return folded.translate(_BLANKS).translate(CONFUSABLES)


# Spelled-out keywords: a run of three or more single letters with separators between them
# ("i g n o r e", "i - g - n - o - r - e"), and separators inside a word ("ign-ore", "i.g.n.o.r.e").
# ``[a-z]`` as IGNORECASE reads it (ASCII letters and the four non-ASCII ones ``re`` folds to
# them), spelled out: the same matches as a case-insensitive pattern, without its per-character
# case folding (a third of these substitutions' time).
_LETTER_CLASS = "a-zA-Z" + "".join(RE_ASCII_FOLDS)


def _letters(source: str) -> str:
    return source.replace("{L}", _LETTER_CLASS)


_LETTER_RUN = re.compile(_letters(r"(?<![{L}0-9])[{L}](?![{L}0-9])(?:[^{L}0-9]{1,3}[{L}](?![{L}0-9])){2,}"))
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_RUN_PART = re.compile(_letters(r"[{L}]|[^{L}]+"))
_INNER_SEPARATOR = re.compile(_letters(r"(?<=[{L}])[^\s{L}0-9]{1,3}(?=[{L}])"))
_BETWEEN_WORDS = re.compile(_letters(r"(?<=[{L}0-9])[^\s{L}0-9$]{1,3}(?=[{L}0-9])"))
# Markup inside a word ("ig<b></b>nore", "ig<span>no</span>re") renders as nothing.
_INNER_MARKUP = re.compile(_letters(r"(?<=[{L}])(?:</?[{L}][{L}0-9]{0,10}(?:\s[^<>]{0,40})?/?>)+(?=[{L}])"))
# Look-alike digits and signs inside a word of letters ("1gn0re", "pr3v10us", "in$truction$").
_LEET_WORD = re.compile(_letters(r"\b(?=[{L}0-9@$]*[{L}])(?=[{L}0-9@$]*[0-9@$])[{L}0-9@$]{3,}\b"))
_LEET_SIGN = re.compile(r"[0-9@$]")
_LEET = (str.maketrans("013457@$", "oieastas"), str.maketrans("013457@$", "oleastas"))  # 1 as i, as l


def _join_run(match: re.Match[str]) -> str:
    """One spelled-out run as words: letters joined across its usual separator, a space elsewhere."""
    parts = _RUN_PART.findall(match.group(0))
    separators = parts[1::2]
    usual = max(set(separators), key=separators.count)
    return "".join(part if i % 2 == 0 else ("" if part == usual else " ") for i, part in enumerate(parts))


def spelled_forms(text: str) -> list[str]:
    """Forms of ``text`` with spelled-out keywords undone (those that differ from ``text``).

    ``joined``: separators inside a word dropped (``ign-ore``, ``i.g.n.o.r.e``), then runs of
    single letters joined (``i g n o r e``), markup inside a word dropped (``ig<b></b>nore``);
    ``spaced``: punctuation between two words read as a space
    (``ignore-all-previous-instructions``); ``leet``: the joined form with look-alike digits and
    signs inside a word read as letters (``1gn0re``, ``pr3v10us``). Ordinary abbreviations ("e.g.",
    "U.S.A.", initials) only ever become one short word, so they match nothing new.
    """
    unmarked = _INNER_MARKUP.sub("", text) if "<" in text else text
    joined = _LETTER_RUN.sub(_join_run, _INNER_SEPARATOR.sub("", unmarked))
    spaced = _BETWEEN_WORDS.sub(" ", text)
    leet = ([_LEET_WORD.sub(lambda m, table=table: m.group(0).translate(table), joined) for table in _LEET]
            if _LEET_SIGN.search(joined) else [])
    return [form for form in dict.fromkeys((joined, spaced, *leet)) if form != text]


def _base_forms(head: str) -> list[str]:
    """The forms of ``head`` before spelled-out keywords are undone: NFKC, the disguise-free
    :func:`scan_form` (non-ASCII text), each also after HTML entities, percent and backslash
    escapes are decoded (to a fixed point) and control characters dropped or read as breaks."""
    from hermes_store.tooling import unescaped

    bases = [head]
    decoded = unescaped(head)
    if decoded != head:
        bases.append(decoded)
    if _CONTROLS.search(decoded):  # control characters render as nothing, or as a break
        bases += [_CONTROLS.sub("", decoded), _CONTROLS.sub(" ", decoded)]
    forms: list[str] = []
    for base in bases:
        folded = unicodedata.normalize("NFKC", base)
        forms += [folded] if base.isascii() else [folded, scan_form(base)]
    return list(dict.fromkeys(forms))


def scan_forms(head: str) -> list[str]:
    """Every form of ``head`` the patterns run on: the base forms (NFKC, :func:`scan_form` for
    non-ASCII text, the same decoded) and each with spelled-out keywords undone
    (:func:`spelled_forms`)."""
    forms = _base_forms(head)
    for form in list(forms):
        forms += spelled_forms(form)
    return list(dict.fromkeys(forms))


def _forms_to_scan(head: str) -> tuple[list[str], set[str]]:
    """:func:`scan_forms` less what cannot change a finding, and the patterns to run on them.

    Only patterns with their literals in the skeleton of some base form can match (see
    :func:`~hermes_store.threat_patterns.possible_patterns`); a base form none of them can
    match is not spelled out (what the spelling would add was in the skeleton already).
    """
    forms = _base_forms(head)
    possible: set[str] = set()
    for form in list(forms):
        unmarked = _INNER_MARKUP.sub("", form) if "<" in form else None  # markup goes with its letters
        found = possible_patterns(form, unmarked)
        if found:
            forms += spelled_forms(form)
            possible |= found
    return list(dict.fromkeys(forms)), possible


def invisible_id(char: str) -> str:
    """The finding id of an invisible character, e.g. ``invisible_unicode_U+200B``."""
    return f"invisible_unicode_U+{ord(char):04X}"


def scan_findings(text: str) -> list[str]:
    """Every finding id in ``text`` (first ``MAX_SCAN_CHARS`` chars): invisible characters first."""
    head = text[:MAX_SCAN_CHARS]
    findings: list[str] = []
    seen: set[str] = set()
    for hidden in _HIDDEN.finditer(head):
        index, char = hidden.start(), hidden.group(0)
        if char not in seen:
            if char == _ZWJ and _joins_emoji(head, index):
                continue
            if _is_tag(char) and _in_flag_sequence(head, index):
                continue
            seen.add(char)
            findings.append(invisible_id(char))
    # Disguised text (look-alike letters, marks or format characters inside a keyword,
    # entities, spelled-out words) is matched on its other forms too (see scan_forms); a
    # pattern's regex runs only where each of its required literal groups occurs.
    forms, possible = _forms_to_scan(head)
    if not possible:
        return findings
    lowered = needle_text(forms)
    for pid, regex in THREAT_PATTERNS:
        if pid not in possible or not all(any(literal in lowered for literal in group) for group in REQUIRED[pid]):
            continue
        if any(regex.search(form) for form in _forms_for(pid, head, forms)):
            findings.append(pid)
    return findings


def _forms_for(pid: str, head: str, forms: list[str]) -> list[str]:
    """The forms ``pid`` runs on: for ``hardcoded_secret``, those of ``head`` with every quoted
    environment-variable name dropped (its exemption, which a joined form would otherwise undo)."""
    if pid != "hardcoded_secret" or not ENV_NAME_VALUE.search(head):
        return forms
    return _forms_to_scan(ENV_NAME_VALUE.sub(r"\1", head))[0]


def too_large_message(length: int) -> str:
    """The write-time refusal for text longer than the scan window."""
    return (
        f"Blocked: content is too large to scan ({length:,} chars; the limit is {MAX_SCAN_CHARS:,}). "
        "Split it into smaller entries."
    )


def scan_content(text: str) -> str | None:
    """Write-time scan: the ``Blocked: …`` message for the first finding, or None when clean."""
    if len(text) > MAX_SCAN_CHARS:
        return too_large_message(len(text))
    findings = scan_findings(text)
    if not findings:
        return None
    first = findings[0]
    if first.startswith("invisible_unicode_"):
        code = first[len("invisible_unicode_"):]
        return f"Blocked: content contains invisible unicode character {code} (possible injection)."
    return (
        f"Blocked: content matches threat pattern '{first}'. Content is injected into the system "
        "prompt and must not contain injection or exfiltration payloads."
    )


def blocked_notice(source: str, findings: list[str]) -> str:
    """The ``[BLOCKED: …]`` text that replaces a poisoned entry in a rendered prompt."""
    return (
        f"[BLOCKED: {source} entry contained threat pattern(s): {', '.join(findings)}. "
        "Removed from system prompt; use memory(action=remove) to delete the original.]"
    )


def too_large_notice(source: str, length: int) -> str:
    """The ``[BLOCKED: …]`` text for an entry too long to scan."""
    return (
        f"[BLOCKED: {source} entry too large to scan ({length:,} chars). "
        "Removed from system prompt; use memory(action=remove) to delete the original.]"
    )


def sanitize_entry(entry: str, source: str = "MEMORY.md") -> str:
    """Return ``entry`` when clean, else the ``[BLOCKED: …]`` notice naming ``source``.

    A clean entry still loses any memory-context fence tag or system note it holds
    (``tooling.sanitize_context``), since it is rendered into a prompt.
    Empty text passes through. Text already starting with ``[BLOCKED:`` is still
    scanned; a genuine notice is clean and therefore never wrapped twice.
    """
    if not entry:
        return entry
    if len(entry) > MAX_SCAN_CHARS:
        logger.warning("Memory entry from %s blocked at load time: too large (%d chars)", source, len(entry))
        return too_large_notice(source, len(entry))
    findings = scan_findings(entry)
    if not findings:
        from hermes_store.tooling import sanitize_context

        return sanitize_context(entry)  # a forged fence tag or system note never reaches the prompt
    logger.warning("Memory entry from %s blocked at load time: %s", source, ", ".join(findings))
    return blocked_notice(source, findings)


def sanitize_entries(entries: list[str], source: str = "MEMORY.md") -> list[str]:
    """:func:`sanitize_entry` over a list (order and length kept; see :func:`sanitize_sequence`)."""
    return sanitize_sequence([(entry, source) for entry in entries])


def sanitize_sequence(items: list[tuple[str, str]]) -> list[str]:
    """:func:`sanitize_entry` over ``(text, source)`` items rendered one after another.

    A payload split over two neighbours ("… ignore all previous" / "instructions …") reads
    as one in the prompt: when two adjacent items joined by a space match a pattern that
    neither matches alone, both are replaced by a ``[BLOCKED: …]`` notice.
    """
    out = [sanitize_entry(text, source) for text, source in items]
    findings = [scan_findings(text) if text and len(text) <= MAX_SCAN_CHARS else None for text, _ in items]
    for i in range(len(items) - 1):
        if findings[i] is None or findings[i + 1] is None or findings[i] or findings[i + 1]:
            continue  # too large or already blocked on its own
        joined = scan_findings(f"{items[i][0]} {items[i + 1][0]}")
        if joined:
            logger.warning("Entries from %s and %s blocked at load time (split payload): %s",
                           items[i][1], items[i + 1][1], ", ".join(joined))
            out[i] = blocked_notice(items[i][1], [f"{f} (split with the next entry)" for f in joined])
            out[i + 1] = blocked_notice(items[i + 1][1], [f"{f} (split with the previous entry)" for f in joined])
    return out


def sanitize_snapshot(text: str, source: str = "context") -> str:
    """Sanitise one block of prompt-bound text as a whole (same rules as an entry)."""
    return sanitize_entry(text, source)


PAST_SCAN_OVERLAP = 1_024  # chars shared by neighbouring windows of a long recorded text
PAST_SCAN_WINDOWS = 4  # windows scanned at most (about 260 KB; what reaches a model is capped far below)
PAST_ALSO_CHARS = 4_096  # of the text a shown excerpt was cut from, this much is scanned too


def past_findings(text: str) -> list[str]:
    """The threat findings of recorded text (a past session message, a title, an entity name).

    Recorded text may legitimately be longer than the scan window (a tool output): it is
    scanned window by window (overlapping, so a payload on a border is seen), at most
    ``PAST_SCAN_WINDOWS`` windows; what lies beyond is never shown whole to a model anyway.
    """
    if not text:
        return []
    findings: list[str] = []
    step = MAX_SCAN_CHARS - PAST_SCAN_OVERLAP
    for start in range(0, min(len(text), step * PAST_SCAN_WINDOWS), step):
        for finding in scan_findings(text[start:start + MAX_SCAN_CHARS]):
            if finding not in findings:
                findings.append(finding)
        if start + MAX_SCAN_CHARS >= len(text):
            break
    return findings



PAST_NOTICE_END = "Withheld from the model; the stored text is unchanged (hermes-store sessions show).]"


def past_notice(source: str, findings: list[str]) -> str:
    """The ``[BLOCKED: …]`` notice a model sees instead of flagged recorded text."""
    return f"[BLOCKED: {source} contained threat pattern(s): {', '.join(findings)}. {PAST_NOTICE_END}"


def is_past_notice(text: str) -> bool:
    """Whether ``text`` is a :func:`past_notice` (what :func:`guard_past` gives for flagged text)."""
    return text.startswith("[BLOCKED: ") and text.endswith(PAST_NOTICE_END)


def guard_past(text: str | None, source: str, *, also: str | None = None) -> str:
    """Recorded text as it may reach a model: the one scan for every kind of past.

    Clean text comes back fence-sanitised (``tooling.sanitize_context``); text with a
    finding (or whose ``also`` - e.g. the full message a snippet was cut from - has one)
    becomes the :func:`past_notice` naming ``source``. The stored text is never changed.
    """
    if not text:
        return text or ""
    findings = past_findings(text)
    if also and not findings and also != text:
        findings = past_findings(also[:PAST_ALSO_CHARS])
    if findings:
        logger.warning("Recorded text from %s withheld from the model: %s", source, ", ".join(findings))
        return past_notice(source, findings)
    from hermes_store.tooling import sanitize_context

    return sanitize_context(text)
