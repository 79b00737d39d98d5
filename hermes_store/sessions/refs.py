"""One printed name per message: ``SESSION_ID#N``.

``N`` is the message's ``seq``: its position in the session counted from 0, as stored, which
never changes for an indexed message (appending to a transcript adds higher numbers; deleting
and re-indexing the same file gives the same numbers). ``sessions search``, ``sessions show``,
``recall``, ``session_search`` and the MCP tools print it and accept it.

Older forms keep working where they are accepted: ``@session:ID`` (recall's link) names the
session, ``@session:ID #K`` (recall's old label) names message row id ``K``, and
``session_search``'s ``around_message_id`` keeps Hermes' meaning (a message row id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# at most 18 digits: a number that fits a stored integer (a longer one made SQLite's
# "int too big to convert" fail session_search); such a text is no reference, only an id
_OLD_LABEL = re.compile(r"^(?P<sid>\S+)\s+#(?P<id>\d{1,18})$")
_REF = re.compile(r"^(?P<sid>.+)#(?P<seq>\d{1,18})$")


@dataclass(frozen=True)
class MessageRef:
    """A parsed reference: the session, and the message by ``seq`` or by row ``message_id``."""

    session_id: str
    seq: int | None = None
    message_id: int | None = None


def message_ref(session_id: str, seq: int) -> str:
    """The printed reference of message ``seq`` of ``session_id``."""
    return f"{session_id}#{int(seq)}"


def named_id(text: str) -> str:
    """The whole id a reference text names when read as a session id (``@session:`` dropped): a
    session whose id has the ``ID#N`` shape (a generic JSONL's ``<file>#<line>``) is named so, and
    callers try it as an exact id before reading the text as a reference."""
    value = text.strip()
    return value[len("@session:"):].strip() if value.startswith("@session:") else value


def parse_ref(text: str) -> MessageRef:
    """``ID``, ``ID#N``, ``@session:ID``, ``@session:ID #K`` -> :class:`MessageRef`.

    Raises ValueError for an empty reference.
    """
    value = named_id(text)
    if not value:
        raise ValueError(f"empty message reference {text!r} (expected SESSION_ID or SESSION_ID#N)")
    old = _OLD_LABEL.match(value)
    if old:
        return MessageRef(old.group("sid"), message_id=int(old.group("id")))
    ref = _REF.match(value)
    if ref:
        return MessageRef(ref.group("sid"), seq=int(ref.group("seq")))
    return MessageRef(value)
