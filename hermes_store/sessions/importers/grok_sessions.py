"""``grok-cli-session``: the session files of the superagent Grok CLI's forks, ``~/.grok/sessions/<id>.json``.

The superagent-ai ``grok-cli`` (npm ``@vibe-kit/grok-cli``) keeps its chat in memory; forks of it
added a ``SessionStore`` (``src/persistence/session-store.ts``) that saves each session whole on
every message, ``~/.grok/sessions/session_<time>_<random>.json`` (beside, not inside, the
``<cwd>/<id>/`` folders of xAI's own Grok CLI, read by ``grok-cli``): ``{id, name,
workingDirectory, model, messages, createdAt, lastAccessedAt, metadata?}``, each message the
agent's ``ChatEntry`` cut down to ``{type, content, timestamp, toolCallName?, toolCallSuccess?}``:

* ``user`` / ``assistant``: the words;
* ``tool_call``: the agent's call (its name only: the store drops the arguments), an
  ``assistant`` row calling ``toolCallName``;
* ``tool_result``: the tool's output (its error when it failed), a ``tool`` row answering the
  oldest open call of that name (``[error]`` when a failed one says nothing); the agent turns a
  call's entry into its result in place, so a result usually follows no ``tool_call``: the call
  is then implied (an ``assistant`` row calling ``toolCallName`` before it);
* later forks' ``reasoning`` (a ``reasoning`` row), ``steer`` (the user's words sent while the
  agent works), ``plan_progress`` and ``diff_preview`` (``system`` rows).

Title ``name``, workspace ``workingDirectory``, model, times ``createdAt`` / ``lastAccessedAt``.
The file is re-read whole when it changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    safe_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    NamedByDocument,
    ReplacedWhenChanged,
    dumps,
    load_document,
    shape_guarded,
    tool_call,
)
from hermes_store.sessions.importers.grok import path_in_grok

_ROLES = {"user": "user", "assistant": "assistant", "reasoning": "reasoning", "steer": "user",
          "plan_progress": "system", "diff_preview": "system"}
_TYPES = {*_ROLES, "tool_call", "tool_result"}


def is_session_store_doc(doc: Any) -> bool:
    """True for a ``SessionStore`` session: ``workingDirectory`` and ``messages`` of
    ``{type, content, timestamp}`` entries of the ``ChatEntry`` types."""
    if not isinstance(doc, dict) or "workingDirectory" not in doc or not isinstance(doc.get("messages"), list):
        return False
    if not ({"lastAccessedAt", "createdAt"} & doc.keys()):
        return False
    messages = [m for m in doc["messages"][:20] if isinstance(m, dict)]
    return all(m.get("type") in _TYPES and "content" in m for m in messages) and (
        bool(messages) or "id" in doc)


class GrokSessionStoreImporter(NamedByDocument, ReplacedWhenChanged, Importer):
    """A Grok CLI fork's ``SessionStore`` file (``~/.grok/sessions/<id>.json``)."""

    name = "grok-cli-session"
    agent = "Grok CLI forks (superagent grok-cli SessionStore)"
    indexes = "prompts, replies, tool calls (names) and their results, reasoning; name, directory, model, times"
    source: str | None = "grok"
    resumable_by_offset = False
    snapshot = True
    default_locations = {"linux": ("~/.grok/sessions/*.json",), "darwin": ("~/.grok/sessions/*.json",)}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``SessionStore`` document (0.9 under ``.grok``)."""
        if head.is_sqlite or head.data.lstrip()[:1] != b"{":
            return 0.0
        if not is_session_store_doc(head.document()):
            return 0.0
        return 0.9 if path_in_grok(head.path) else 0.8

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        doc = load_document(self, problems)
        yield from problems
        if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
            yield Problem(1, "expected a session object with a 'messages' list")
            return
        self.doc_id = opt_str(doc.get("id"))
        session_id = self.default_session_id()
        times: list[Problem] = []
        yield SessionRecord(
            id=session_id, source=self.source, title=opt_str(doc.get("name")),
            workspace=opt_str(doc.get("workingDirectory")), model=opt_str(doc.get("model")),
            started_at=safe_timestamp(doc.get("createdAt"), None, times),
            ended_at=safe_timestamp(doc.get("lastAccessedAt"), None, times))
        yield from times
        open_calls: dict[str, list[str]] = {}  # tool name -> ids of its calls not answered yet
        for index, message in enumerate(doc["messages"], 1):
            if not isinstance(message, dict):
                yield Problem(index, f"messages[{index - 1}]: expected an object (skipped)")
                continue
            yield from _rows(message, session_id, index, open_calls)
        yield Checkpoint("done")


def _rows(message: dict[str, Any], session_id: str, index: int,
          open_calls: dict[str, list[str]]) -> Iterator[Event]:
    """The row of one stored ``ChatEntry`` (``index`` is its place, reported as the line)."""
    kind = message.get("type")
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    problems: list[Problem] = []
    stamp = safe_timestamp(message.get("timestamp"), index, problems)
    yield from problems
    name = opt_str(message.get("toolCallName"))
    if kind == "tool_call":
        call_id = f"{session_id}:call-{index}"  # the store keeps no call id
        open_calls.setdefault(name or "tool", []).append(call_id)
        yield MessageRecord(session_id, "assistant", text, tool_calls=dumps([tool_call(call_id, name or "tool", {})]),
                            timestamp=stamp, line=index)
    elif kind == "tool_result":
        pending = open_calls.get(name or "tool")
        call_id = pending.pop(0) if pending else None
        if call_id is None and name:  # the agent turns its call entry into the result: the call is implied
            call_id = f"{session_id}:call-{index}"
            yield MessageRecord(session_id, "assistant", "", tool_calls=dumps([tool_call(call_id, name, {})]),
                                timestamp=stamp, line=index)
        if not text.strip() and message.get("toolCallSuccess") is False:
            text = "[error]"
        yield MessageRecord(session_id, "tool", text, tool_name=name, tool_call_id=call_id, timestamp=stamp,
                            line=index)
    elif kind in _ROLES:
        if text.strip():
            yield MessageRecord(session_id, _ROLES[kind], text, timestamp=stamp, line=index)
    else:
        yield Problem(index, f"messages[{index - 1}]: unknown message type {kind!r} (skipped)")
