"""Conservative fact extraction from a finished conversation (``auto_extract``).

Only user messages are read. Compaction summaries are skipped (text a user
wrote before a merged summary is still read); questions are skipped; and what
is stored is the matched clause ("I prefer dark mode in editors"), not the
whole message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MIN_MESSAGE_CHARS = 10
MAX_FACT_CHARS = 400
MAX_FACTS_PER_SESSION = 20
SUMMARY_MARKERS = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")

PREFERENCE = [
    re.compile(r"\bI\s+(?:prefer|like|love|use|want|need)\s+\S", re.IGNORECASE),
    re.compile(r"\bmy\s+(?:favorite|favourite|preferred|default)\s+\w+\s+is\s+\S", re.IGNORECASE),
    re.compile(r"\bI\s+(?:always|never|usually)\s+\S", re.IGNORECASE),
]
DECISION = [
    re.compile(r"\bwe\s+(?:decided|agreed|chose)\s+(?:to\s+)?\S", re.IGNORECASE),
    re.compile(r"\bthe\s+project\s+(?:uses|needs|requires)\s+\S", re.IGNORECASE),
]
_SENTENCES = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_QUESTION_START = re.compile(
    r"^\s*(?:what|how|why|when|where|who|whom|which|whose|do|does|did|can|could|would|should|"
    r"is|are|was|were|will|shall|may|might|have|has|had|am)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"\s*(?:[,;:]\s*(?:but|although|though|however|because|so)\b|;|\s-{1,2}\s|\s—\s)",
                         re.IGNORECASE)


@dataclass(frozen=True)
class Extracted:
    """One clause worth storing and the category it belongs to."""

    content: str
    category: str


def message_text(message: Any) -> str:
    """The text of a chat message (string content or the text parts of a list)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def strip_summary(text: str) -> str:
    """Drop a compaction summary: everything from the first summary marker on."""
    cut = min((i for i in (text.find(m) for m in SUMMARY_MARKERS) if i >= 0), default=-1)
    return text if cut < 0 else text[:cut]


def is_question(sentence: str) -> bool:
    """True for a question (ends with a question mark or starts like one)."""
    s = sentence.strip()
    return s.endswith(("?", "？")) or bool(_QUESTION_START.match(s))


def clause_at(sentence: str, start: int) -> str:
    """The clause of ``sentence`` beginning at ``start``, cut at a clause break, without end punctuation."""
    rest = sentence[start:]
    end = _CLAUSE_END.search(rest)
    if end:
        rest = rest[: end.start()]
    return rest.strip().rstrip(".!。！ ").strip()[:MAX_FACT_CHARS]


def extract_from_text(text: str) -> list[Extracted]:
    """Preference and decision clauses found in one user message."""
    found: list[Extracted] = []
    for match in _SENTENCES.finditer(strip_summary(text)):
        sentence = match.group(0).strip()
        if len(sentence) < MIN_MESSAGE_CHARS or is_question(sentence):
            continue
        for patterns, category in ((PREFERENCE, "user_pref"), (DECISION, "project")):
            hit = min((m for m in (p.search(sentence) for p in patterns) if m),
                      key=lambda m: m.start(), default=None)
            if hit is None:
                continue
            clause = clause_at(sentence, hit.start())
            if len(clause) >= MIN_MESSAGE_CHARS and clause not in {f.content for f in found}:
                found.append(Extracted(clause, category))
            break
    return found


def extract_from_messages(messages: Iterable[Any]) -> list[Extracted]:
    """Clauses to store from a conversation's user messages (at most 20)."""
    found: list[Extracted] = []
    for message in messages or ():
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        text = message_text(message)
        if len(text.strip()) < MIN_MESSAGE_CHARS or text.lstrip().startswith(SUMMARY_MARKERS):
            continue
        for item in extract_from_text(text):
            if item.content not in {f.content for f in found}:
                found.append(item)
            if len(found) >= MAX_FACTS_PER_SESSION:
                return found
    return found
