"""Shared red-team checks: a memory manager's prefetch, system prompt and tool replies."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def assert_manager_holds_no_forgery(manager: Any, questions: Iterable[str],
                                    tool_calls: Sequence[tuple[str, dict]],
                                    leaks: Callable[[str], list[str]],
                                    block_leaks: Callable[[str], list[str]],
                                    must_contain: str | None = None) -> None:
    """Every prefetch block for ``questions``, the system prompt and every tool reply the
    manager offers hold no forgery (``leaks`` / ``block_leaks`` name what survived); the
    manager is shut down afterwards."""
    try:
        for question in questions:
            block = manager.prefetch_context(question)
            if must_contain:
                assert must_contain in block.lower()
            assert block_leaks(block) == [], (block_leaks(block), block)
        prompt = manager.build_system_prompt()
        assert leaks(prompt) == [], (leaks(prompt), prompt[:3000])
        for name, args in tool_calls:
            if manager.has_tool(name):
                reply = manager.handle_tool_call(name, json.dumps(args))
                assert leaks(reply) == [], (name, leaks(reply), reply[:1500])
    finally:
        manager.shutdown_all()
