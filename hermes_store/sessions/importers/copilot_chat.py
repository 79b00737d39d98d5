"""``copilot-chat``: GitHub Copilot Chat sessions kept by VS Code.

``<User>/workspaceStorage/<hash>/chatSessions/<sessionId>.json`` (and
``<User>/globalStorage/emptyWindowChatSessions/`` for windows without a folder),
``<User>`` being ``~/.config/Code/User`` (Linux) or ``~/Library/Application
Support/Code/User`` (macOS), also ``Code - Insiders``:

* ``.json`` (until VS Code 1.108): ``{version: 3, sessionId, creationDate,
  lastMessageDate (ms), customTitle?, requesterUsername, requests: [...]}``;
* ``.jsonl`` (since January 2026): an operation log: ``{kind: 0, v: <the same
  object>}`` then ``{kind: 1, k: [path...], v}`` (set), ``{kind: 2, k: [path...],
  v?: [items], i?}`` (push, after cutting the array to ``i`` items) and ``{kind: 3,
  k}`` (delete) lines, replayed in order (:func:`apply_operations`).

A request is ``{requestId, timestamp, modelId, agent: {id}, message: {text} (a plain string in
the oldest chats), variableData:
{variables: [{name, kind}]} (attachments), response: [...], result: {errorDetails},
isCanceled}``; response items are Markdown fragments (``{value}``, a plain string, or
``kind: "markdownContent"``), ``thinking``, ``toolInvocationSerialized`` (``toolId``,
``toolCallId``, ``toolSpecificData`` input, ``resultDetails`` output, terminal
output), ``inlineReference``, ``textEditGroup`` and UI bookkeeping
(``prepareToolInvocation``, ``undoStop``, ``codeblockUri``, progress). The
workspace folder is read from the sibling ``workspace.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from hermes_store.sessions.importers.base import (
    Checkpoint,
    Event,
    Head,
    Importer,
    MessageRecord,
    Notice,
    Problem,
    SessionRecord,
    SourceState,
    opt_str,
    parse_timestamp,
)
from hermes_store.sessions.importers.doc_common import (
    ReplacedWhenChanged,
    dumps,
    json_objects,
    load_document,
    safe_rows,
    shape_guarded,
    tool_call,
)

_SKIP = {"prepareToolInvocation", "undoStop", "codeblockUri", "mcpServersStarting", "progressMessage",
         "progressTaskSerialized", "autoModeResolution", "disabledClaudeHooks"}
_NOTICE = {"warning", "info", "confirmation", "elicitationSerialized", "systemNotification"}
_EDITIONS = ("Code", "Code - Insiders", "VSCodium")


def _globs(base: str) -> tuple[str, ...]:
    out = []
    for edition in _EDITIONS:
        for ext in ("json", "jsonl"):
            out.append(f"{base}/{edition}/User/workspaceStorage/*/chatSessions/*.{ext}")
            out.append(f"{base}/{edition}/User/globalStorage/emptyWindowChatSessions/*.{ext}")
    return tuple(out)


def _stamp(value: Any) -> float | None:
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = value.get("value")
        return inner if isinstance(inner, str) else ""
    return ""


def workspace_of(directory: Path) -> str | None:
    """The folder of a VS Code workspace-storage directory (its ``workspace.json``)."""
    try:
        meta = json.loads((directory / "workspace.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = meta.get("folder") or meta.get("workspace") if isinstance(meta, dict) else None
    if not isinstance(folder, str):
        return None
    parsed = urlparse(folder)
    return unquote(parsed.path) if parsed.scheme == "file" else folder


def apply_operations(path: Path, hasher: Any, problems: list[Problem]) -> dict[str, Any] | None:
    """Replay a ``.jsonl`` operation log into the session object, as VS Code's
    ``ObjectMutationLog`` reads it: ``{kind: 0, v}`` the whole object, ``{kind: 1, k, v}`` set a
    property, ``{kind: 2, k, v?, i?}`` push onto an array (created when missing) after cutting it
    to ``i`` items when ``i`` is given (a rewritten or shortened array), ``{kind: 3, k}`` delete."""
    state: dict[str, Any] | None = None
    for line, obj in json_objects(path, hasher, problems):
        kind = obj.get("kind")
        if kind == 0:
            state = obj.get("v") if isinstance(obj.get("v"), dict) else None
            continue
        if state is None:
            problems.append(Problem(line, "operation before the initial snapshot (kind 0)"))
            continue
        keys = obj.get("k")
        if kind not in _OPERATIONS or not isinstance(keys, list) or not keys:
            problems.append(Problem(line, f"unknown operation kind {kind!r} (skipped)"))
            continue
        target: Any = state
        for key in keys[:-1]:
            target = _step(target, key)
            if target is None:
                break
        if target is None:
            problems.append(Problem(line, f"path {keys!r} not found (skipped)"))
        elif not _OPERATIONS[kind](target, keys[-1], obj):
            problems.append(Problem(line, f"cannot apply operation kind {kind} at {keys!r} (skipped)"))
    return state


def _set(target: Any, key: Any, obj: dict[str, Any]) -> bool:
    """``kind: 1``: set ``target[key]`` (an index one past a list's end appends)."""
    if isinstance(target, dict) and isinstance(key, str):
        target[key] = obj.get("v")
    elif isinstance(target, list) and isinstance(key, int) and 0 <= key < len(target):
        target[key] = obj.get("v")
    elif isinstance(target, list) and key == len(target):
        target.append(obj.get("v"))
    else:
        return False
    return True


def _push(target: Any, key: Any, obj: dict[str, Any]) -> bool:
    """``kind: 2``: cut the array to ``i`` items when ``i`` is given, then append ``v``'s items."""
    array = _step(target, key, probe=True)
    if array is _MISSING or array is None:
        if not isinstance(target, dict) or not isinstance(key, str):
            return False
        array = target[key] = []
    items, start = obj.get("v"), obj.get("i")
    if not isinstance(array, list) or not isinstance(items, (list, type(None))) or not (
            start is None or isinstance(start, int) and not isinstance(start, bool) and start >= 0):
        return False
    if start is not None:
        del array[start:]
    array.extend(items or [])
    return True


def _delete(target: Any, key: Any, obj: dict[str, Any]) -> bool:
    """``kind: 3``: remove a property (VS Code sets it to ``undefined``, which JSON leaves out)."""
    if isinstance(target, dict) and isinstance(key, str):
        target.pop(key, None)
        return True
    if isinstance(target, list) and isinstance(key, int) and 0 <= key < len(target):
        target[key] = None
        return True
    return False


# operation kind -> applies it at (parent, last key); False when the path does not fit the object
_OPERATIONS: dict[int, Any] = {1: _set, 2: _push, 3: _delete}


_MISSING = object()


def _step(target: Any, key: Any, probe: bool = False) -> Any:
    if isinstance(target, dict) and isinstance(key, str):
        return target.get(key, _MISSING if probe else None)
    if isinstance(target, list) and isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(target):
        return target[key]
    return _MISSING if probe else None


class _Turn:
    """The rows of one request's response, in order."""

    def __init__(self, session_id: str, stamp: float | None) -> None:
        self.session_id, self.stamp = session_id, stamp
        self.texts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.results: list[MessageRecord] = []
        self.rows: list[MessageRecord] = []

    def flush(self) -> None:
        text = "".join(self.texts).strip()
        if text or self.calls:
            self.rows.append(MessageRecord(self.session_id, "assistant", text,
                                           tool_calls=dumps(self.calls) if self.calls else None,
                                           timestamp=self.stamp))
        self.rows.extend(self.results)
        self.texts, self.calls, self.results = [], [], []

    def text(self, value: str) -> None:
        if self.calls:
            self.flush()
        self.texts.append(value)

    def tool(self, item: dict[str, Any]) -> None:
        name = opt_str(item.get("toolId")) or "tool"
        call_id = opt_str(item.get("toolCallId"))
        data = item.get("toolSpecificData") if isinstance(item.get("toolSpecificData"), dict) else {}
        details = item.get("resultDetails") if isinstance(item.get("resultDetails"), dict) else {}
        arguments: Any = {}
        command = data.get("commandLine")
        if isinstance(command, dict):
            command = command.get("toolEdited") or command.get("original")
        if isinstance(command, str):
            arguments = {"command": command}
        elif isinstance(data.get("file"), dict):
            uri = data["file"].get("uri")
            arguments = {"file": (uri.get("fsPath") or uri.get("path")) if isinstance(uri, dict) else uri}
        elif isinstance(details.get("input"), str):
            try:
                arguments = json.loads(details["input"])
            except ValueError:
                arguments = {"input": details["input"]}
        elif data.get("kind") == "subagent":
            arguments = {k: data[k] for k in ("agentName", "description", "prompt") if data.get(k)}
        self.calls.append(tool_call(call_id, name, arguments))
        outputs = details.get("output")
        text = "\n".join(_text(o) for o in outputs if _text(o)) if isinstance(outputs, list) else ""
        terminal = data.get("terminalCommandOutput")
        if not text and isinstance(terminal, dict):
            text = _text(terminal.get("text")) or str(terminal.get("text") or "")
        if not text and isinstance(data.get("result"), str):
            text = data["result"]
        if not text:
            text = _text(item.get("pastTenseMessage")) or _text(item.get("invocationMessage"))
        self.results.append(MessageRecord(self.session_id, "tool", text, tool_name=name, tool_call_id=call_id,
                                          timestamp=self.stamp))


def _reference_name(item: dict[str, Any]) -> str:
    """The shown name of an ``inlineReference`` (a URI object or a ``{uri, range}`` location)."""
    if opt_str(item.get("name")):
        return str(item["name"])
    ref = item.get("inlineReference")
    if isinstance(ref, dict) and isinstance(ref.get("uri"), dict):
        ref = ref["uri"]
    path = (ref.get("fsPath") or ref.get("path")) if isinstance(ref, dict) else None
    return Path(str(path)).name if path else ""


def request_rows(request: dict[str, Any], session_id: str, where: str, problems: list[Problem]) -> list[MessageRecord]:
    """The user row and response rows of one Copilot Chat request."""
    stamp = _stamp(request.get("timestamp"))
    rows: list[MessageRecord] = []
    message = request.get("message")
    if isinstance(message, dict):
        message = message.get("text")
    text = message if isinstance(message, str) else ""  # a plain string: the oldest saved chats
    variables = request.get("variableData", {}).get("variables") if isinstance(request.get("variableData"), dict) else None
    for variable in variables or []:
        if isinstance(variable, dict) and variable.get("name"):
            text += ("\n" if text else "") + f"[attachment {variable['name']}]"
    if text:
        rows.append(MessageRecord(session_id, "user", text, timestamp=stamp))
    turn = _Turn(session_id, stamp)
    response = request.get("response")
    for index, item in enumerate([response] if isinstance(response, str) else response or []):
        if isinstance(item, str):  # the oldest saved chats: a Markdown string (VS Code revives it so)
            item = {"value": item}
        if not isinstance(item, dict):
            continue
        kind = item.get("kind")
        if kind == "toolInvocationSerialized":
            turn.tool(item)
        elif kind == "thinking":
            value = item.get("value")
            thought = "".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else _text(value)
            if thought.strip():
                turn.flush()
                turn.rows.append(MessageRecord(session_id, "reasoning", thought, timestamp=stamp))
        elif kind in (None, "markdownContent", "markdownVuln"):
            turn.text(_text(item.get("value") if kind != "markdownContent" else item.get("content")))
        elif kind == "inlineReference":
            turn.text(f"`{_reference_name(item)}`")
        elif kind in ("textEditGroup", "notebookEditGroup"):
            uri = item.get("uri") if isinstance(item.get("uri"), dict) else {}
            turn.text(f"\n[edited {uri.get('fsPath') or uri.get('path') or ''}]\n")
        elif kind in _NOTICE:
            turn.text("\n" + (_text(item.get("content")) or _text(item.get("message")) or _text(item.get("title"))) + "\n")
        elif kind not in _SKIP:
            problems.append(Problem(None, f"{where} response[{index}]: unknown kind {kind!r} (skipped)"))
    turn.flush()
    rows.extend(turn.rows)
    result = request.get("result") if isinstance(request.get("result"), dict) else {}
    error = result.get("errorDetails") or request.get("responseErrorDetails")  # the latter: before ``result``
    error = error if isinstance(error, dict) else None
    if error and error.get("message"):
        rows.append(MessageRecord(session_id, "system", f"[error] {error['message']}", timestamp=stamp))
    return rows


class CopilotChatImporter(ReplacedWhenChanged, Importer):
    """A VS Code Copilot Chat session file (``.json`` snapshot or ``.jsonl`` operation log)."""

    name = "copilot-chat"
    # 2: a request saved in the oldest shape (``message`` and ``response`` plain strings, as VS Code
    # migrated them from ``interactive.sessions``) keeps its prompt and reply; 3: an operation log's
    # pushes cut the array at ``i`` and ``kind: 3`` deletes, as VS Code replays them
    reader = 3
    agent = "GitHub Copilot Chat (VS Code)"
    indexes = "requests and responses, tool invocations with inputs and outputs, thinking, edits, errors"
    source: str | None = "copilot-chat"
    resumable_by_offset = False
    snapshot = True
    default_locations = {"linux": _globs("~/.config"), "darwin": _globs("~/Library/Application Support")}

    @classmethod
    def sniff(cls, head: Head) -> float:
        """A ``requests`` session object (``requesterUsername``/``creationDate``) or its operation log."""
        if head.is_sqlite:
            return 0.0
        under = head.path.parent.name in ("chatSessions", "emptyWindowChatSessions")
        if head.suffix == ".jsonl":
            first = head.objects()[:1]
            if first and first[0].get("kind") == 0 and isinstance(first[0].get("v"), dict) \
                    and "requests" in first[0]["v"]:
                return 0.95 if under or "requesterUsername" in first[0]["v"] else 0.7
            return 0.0
        doc = head.document() if head.suffix == ".json" else None
        if isinstance(doc, dict) and isinstance(doc.get("requests"), list) and \
                ("requesterUsername" in doc or "creationDate" in doc or under):
            return 0.95
        return 0.0

    @shape_guarded
    def read(self, state: SourceState) -> Iterator[Event]:
        problems: list[Problem] = []
        if self.path.suffix.lower() == ".jsonl":
            doc: Any = apply_operations(self.path, self.hasher, problems)
        else:
            doc = load_document(self, problems)
        yield from problems
        if doc is None:
            return
        if not isinstance(doc, dict) or not isinstance(doc.get("requests"), list):
            yield Problem(1, "expected a chat session with a 'requests' list")
            return
        if not doc["requests"]:  # VS Code saves every chat it opens, before the first request too
            yield Notice(None, "the chat session holds no requests yet; nothing to import")
            return
        session_id = opt_str(doc.get("sessionId")) or self.path.stem
        workspace = workspace_of(self.path.parent.parent) if self.path.parent.name == "chatSessions" else None
        yield from session_events(doc, session_id, self.source, workspace, "")
        yield Checkpoint(str(self.path.stat().st_size), 0)


def session_events(doc: dict[str, Any], session_id: str, source: str | None, workspace: str | None,
                   where: str) -> Iterator[Event]:
    """The session record and rows of one saved chat (``ISerializableChatData`` versions 1-3, any
    ``requests`` list); ``where`` prefixes what a problem names (e.g. the database key)."""
    models = [r.get("modelId") for r in doc["requests"] if isinstance(r, dict) and r.get("modelId")]
    agents = [r["agent"].get("id") for r in doc["requests"]
              if isinstance(r, dict) and isinstance(r.get("agent"), dict) and r["agent"].get("id")]
    meta = {k: doc[k] for k in ("requesterUsername", "responderUsername", "initialLocation", "version")
            if doc.get(k) not in (None, "")}
    if agents:
        meta["agent"] = agents[-1]
    yield SessionRecord(
        id=session_id, source=source, title=opt_str(doc.get("customTitle")) or opt_str(doc.get("computedTitle")),
        model=opt_str(models[-1]) if models else None, workspace=workspace,
        started_at=_stamp(doc.get("creationDate")), ended_at=_stamp(doc.get("lastMessageDate")), meta=meta)
    problems: list[Problem] = []
    for index, request in enumerate(doc["requests"]):
        place = f"{where}requests[{index}]"
        if not isinstance(request, dict):
            yield Problem(None, f"{place}: expected an object")
            continue
        yield from safe_rows(request_rows, problems, None, place, request, session_id, place, problems)
        yield from problems
        problems = []
