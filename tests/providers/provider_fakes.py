"""Small fake memory providers that record every hook call (shared by the provider tests)."""

from __future__ import annotations

import json
import threading
from typing import Any

from hermes_store.providers.base import MemoryProvider, RecallStatus


class RecordingProvider(MemoryProvider):
    """Implements every hook with the current signatures and records (hook, args) pairs."""

    def __init__(self, name: str = "fake", tools: tuple[str, ...] = ("fake_tool",),
                 events: list | None = None, prefetch_text: str = "", prompt: str = "") -> None:
        self._name = name
        self.tools = tools
        self.events: list[tuple[str, str, Any]] = [] if events is None else events
        self.prefetch_text = prefetch_text
        self.prompt = prompt

    def _log(self, hook: str, payload: Any) -> None:
        self.events.append((self._name, hook, payload))

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._log("initialize", {"session_id": session_id, **kwargs})

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [{"name": t, "description": f"{t} tool", "parameters": {"type": "object", "properties": {}}}
                for t in self.tools]

    def system_prompt_block(self) -> str:
        self._log("system_prompt_block", None)
        return self.prompt

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self._log("on_turn_start", {"turn_number": turn_number, "message": message, **kwargs})

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self._log("prefetch", {"query": query, "session_id": session_id})
        return self.prefetch_text

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        self._log("queue_prefetch", {"query": query, "session_id": session_id})

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        self._log("handle_tool_call", {"tool_name": tool_name, "args": args})
        return json.dumps({"success": True, "handled_by": self._name, "tool": tool_name})

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list | None = None) -> None:
        self._log("sync_turn", {"user": user_content, "assistant": assistant_content,
                                "session_id": session_id, "messages": messages})

    def on_pre_compress(self, messages: list) -> str:
        self._log("on_pre_compress", {"count": len(messages)})
        return f"{self._name} summary"

    def on_session_end(self, messages: list) -> None:
        self._log("on_session_end", {"count": len(messages)})

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        self._log("on_session_switch", {"new_session_id": new_session_id, "parent_session_id": parent_session_id,
                                        "reset": reset, "rewound": rewound, **kwargs})

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        self._log("on_delegation", {"task": task, "result": result, "child_session_id": child_session_id})

    def on_memory_write(self, action: str, target: str, content: str, metadata: dict | None = None) -> None:
        self._log("on_memory_write", {"action": action, "target": target, "content": content,
                                      "metadata": metadata})

    def recall_status(self) -> RecallStatus | None:
        return RecallStatus(self._name, 2)

    def shutdown(self) -> None:
        self._log("shutdown", None)


class LegacyProvider(MemoryProvider):
    """A provider written against the old, narrower hook signatures."""

    def __init__(self, name: str = "legacy") -> None:
        self._name = name
        self.calls: list[tuple] = []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id):  # no **kwargs
        self.calls.append(("initialize", session_id))

    def get_tool_schemas(self):
        return []

    def sync_turn(self, user_content, assistant_content):  # no session_id / messages
        self.calls.append(("sync_turn", user_content, assistant_content))

    def on_memory_write(self, action, target, content):  # legacy 3-argument form
        self.calls.append(("on_memory_write", action, target, content))

    def on_turn_start(self, turn_number, message):  # no **kwargs
        self.calls.append(("on_turn_start", turn_number, message))

    def prefetch(self, query):  # no session_id
        self.calls.append(("prefetch", query))
        return "legacy recall"


class PositionalWriteProvider(LegacyProvider):
    """on_memory_write with a fourth positional parameter under another name."""

    def on_memory_write(self, action, target, content, extra):
        self.calls.append(("on_memory_write", action, target, content, extra))


class RaisingProvider(RecordingProvider):
    """Every hook raises."""

    def _log(self, hook: str, payload: Any) -> None:
        super()._log(hook, payload)
        raise RuntimeError(f"{hook} exploded")

    def system_prompt_block(self) -> str:
        self._log("system_prompt_block", None)
        return ""


class HangingPrefetchProvider(RecordingProvider):
    """prefetch blocks until ``release`` is set."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()
        self.entered = 0

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        self.entered += 1
        self.release.wait(30)
        return "late result"


class SlowSyncProvider(RecordingProvider):
    """sync_turn blocks until ``release`` is set."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()

    def sync_turn(self, user_content: str, assistant_content: str, **kwargs: Any) -> None:
        self.release.wait(30)
        super().sync_turn(user_content, assistant_content, **kwargs)


class HangingShutdownProvider(RecordingProvider):
    """shutdown blocks until ``release`` is set (a provider stuck closing a network client)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()

    def shutdown(self) -> None:
        self.release.wait(60)
        super().shutdown()
