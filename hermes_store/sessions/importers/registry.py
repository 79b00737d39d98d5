"""The importer registry: bundled format classes plus entry points ``hermes_store.importers``.

A third-party package registers an importer with::

    [project.entry-points."hermes_store.importers"]
    my-format = "my_package.module:MyImporter"

Bundled names win a clash; an entry point that fails to load, is not an
:class:`Importer` subclass or has no ``name`` is reported in
:data:`REGISTRY_PROBLEMS`, never fatal.
"""

from __future__ import annotations

from importlib import metadata

from hermes_store.sessions.importers.aider import AiderImporter
from hermes_store.sessions.importers.amp import AmpImporter
from hermes_store.sessions.importers.amp_stream import AmpStreamImporter
from hermes_store.sessions.importers.antigravity import AntigravityImporter
from hermes_store.sessions.importers.base import Importer
from hermes_store.sessions.importers.chatgpt_export import ChatGptExportImporter
from hermes_store.sessions.importers.claude_ai_export import ClaudeAiExportImporter
from hermes_store.sessions.importers.claude_code import ClaudeCodeImporter
from hermes_store.sessions.importers.claude_stream import ClaudeStreamImporter
from hermes_store.sessions.importers.claude_web import ClaudeWebImporter
from hermes_store.sessions.importers.cline import ClineImporter
from hermes_store.sessions.importers.cline_sdk import ClineSdkImporter
from hermes_store.sessions.importers.codex import CodexImporter
from hermes_store.sessions.importers.codex_exec import CodexExecImporter
from hermes_store.sessions.importers.codex_json import CodexJsonImporter
from hermes_store.sessions.importers.continue_dev import ContinueImporter
from hermes_store.sessions.importers.copilot_chat import CopilotChatImporter
from hermes_store.sessions.importers.copilot_chat_db import CopilotChatDbImporter
from hermes_store.sessions.importers.copilot_cli import CopilotCliImporter
from hermes_store.sessions.importers.copilot_cli_history import CopilotCliHistoryImporter
from hermes_store.sessions.importers.copilot_stream import CopilotStreamImporter
from hermes_store.sessions.importers.crush import CrushImporter
from hermes_store.sessions.importers.cursor import CursorImporter
from hermes_store.sessions.importers.cursor_agent import CursorAgentImporter
from hermes_store.sessions.importers.cursor_agent_text import CursorAgentTextImporter
from hermes_store.sessions.importers.cursor_chats import CursorChatsImporter
from hermes_store.sessions.importers.cursor_stream import CursorStreamImporter
from hermes_store.sessions.importers.factory_droid import FactoryDroidImporter
from hermes_store.sessions.importers.factory_droid_stream import FactoryDroidStreamImporter
from hermes_store.sessions.importers.gemini_cli import (
    GeminiCheckpointImporter,
    GeminiCliImporter,
    GeminiLogsImporter,
)
from hermes_store.sessions.importers.gemini_stream import GeminiStreamImporter
from hermes_store.sessions.importers.goose import GooseDbImporter, GooseJsonlImporter
from hermes_store.sessions.importers.goose_export import GooseExportImporter
from hermes_store.sessions.importers.goose_stream import GooseStreamImporter
from hermes_store.sessions.importers.grok import GrokCliImporter
from hermes_store.sessions.importers.grok_sessions import GrokSessionStoreImporter
from hermes_store.sessions.importers.grok_stream import GrokStreamImporter
from hermes_store.sessions.importers.hermes_db import HermesDbImporter
from hermes_store.sessions.importers.hermes_json import HermesJsonImporter
from hermes_store.sessions.importers.hermes_jsonl import HermesJsonlImporter
from hermes_store.sessions.importers.kimi_cli import KimiCliImporter
from hermes_store.sessions.importers.kimi_print import KimiPrintImporter
from hermes_store.sessions.importers.kimi_print_text import KimiPrintTextImporter
from hermes_store.sessions.importers.message_dump import MessageDumpImporter
from hermes_store.sessions.importers.openai_jsonl import OpenAIJsonlImporter
from hermes_store.sessions.importers.opencode_db import OpenCodeDbImporter
from hermes_store.sessions.importers.opencode_export import (
    OpenCodeExportImporter,
    OpenCodeJsonlImporter,
)
from hermes_store.sessions.importers.opencode_json import OpenCodeJsonImporter
from hermes_store.sessions.importers.opencode_run import OpenCodeRunImporter
from hermes_store.sessions.importers.openhands import OpenHandsImporter
from hermes_store.sessions.importers.openhands_stream import OpenHandsStreamImporter
from hermes_store.sessions.importers.openhands_v0 import (
    OpenHandsEventsImporter,
    OpenHandsTrajectoryImporter,
)
from hermes_store.sessions.importers.pi import OpenClawImporter, PiImporter
from hermes_store.sessions.importers.qwen_code import (
    QwenCodeImporter,
    QwenLegacyImporter,
    QwenLogsImporter,
)
from hermes_store.sessions.importers.qwen_stream import QwenStreamImporter

ENTRY_POINT_GROUP = "hermes_store.importers"

BUNDLED: tuple[type[Importer], ...] = (
    HermesDbImporter, HermesJsonlImporter, HermesJsonImporter,
    ClaudeCodeImporter, ClaudeWebImporter, CodexImporter, CodexExecImporter, CodexJsonImporter, OpenAIJsonlImporter,
    GeminiCliImporter,
    GeminiLogsImporter,
    GeminiCheckpointImporter,
    GeminiStreamImporter,
    QwenCodeImporter,
    QwenLegacyImporter,
    QwenLogsImporter,
    OpenCodeJsonImporter,
    OpenCodeDbImporter,
    OpenCodeJsonlImporter,
    OpenCodeExportImporter,
    OpenCodeRunImporter,
    CursorImporter,
    CursorAgentImporter,
    CursorAgentTextImporter,
    CursorChatsImporter,
    ChatGptExportImporter,
    ClaudeAiExportImporter,
    AiderImporter,
    ClineImporter,
    ClineSdkImporter,
    ContinueImporter,
    CopilotChatImporter,
    CopilotChatDbImporter,
    CopilotCliImporter,
    CopilotCliHistoryImporter,
    CopilotStreamImporter,
    GooseJsonlImporter,
    GooseDbImporter,
    GooseExportImporter,
    GooseStreamImporter,
    GrokCliImporter,
    GrokSessionStoreImporter,
    GrokStreamImporter,
    AmpImporter,
    AmpStreamImporter,
    AntigravityImporter,
    ClaudeStreamImporter,
    CursorStreamImporter,
    QwenStreamImporter,
    CrushImporter,
    FactoryDroidImporter,
    FactoryDroidStreamImporter,
    KimiCliImporter,
    KimiPrintImporter,
    KimiPrintTextImporter,
    PiImporter,
    OpenClawImporter,
    OpenHandsImporter,
    OpenHandsEventsImporter,
    OpenHandsTrajectoryImporter,
    OpenHandsStreamImporter,
    MessageDumpImporter,
)


def _entry_points() -> list[metadata.EntryPoint]:
    try:
        return list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # a broken distribution's metadata must not stop indexing
        return []


def load_registry(
    bundled: tuple[type[Importer], ...] = BUNDLED,
    entry_points: list[metadata.EntryPoint] | None = None,
) -> tuple[dict[str, type[Importer]], list[str], dict[str, str]]:
    """Build ``(importers, problems, origins)``; ``origins`` maps a name to "bundled" or a package."""
    importers: dict[str, type[Importer]] = {cls.name: cls for cls in bundled}
    origins = {name: "bundled" for name in importers}
    problems: list[str] = []
    for ep in _entry_points() if entry_points is None else entry_points:
        where = f"entry point {ep.name!r} ({ep.value})"
        try:
            cls = ep.load()
        except Exception as exc:  # any import error of a third-party module
            problems.append(f"{where}: cannot load: {type(exc).__name__}: {exc}")
            continue
        if not (isinstance(cls, type) and issubclass(cls, Importer)) or not getattr(cls, "name", ""):
            problems.append(f"{where}: not an Importer subclass with a name")
            continue
        if cls.name in importers:
            problems.append(f"{where}: name {cls.name!r} is already taken ({origins[cls.name]})")
            continue
        importers[cls.name] = cls
        dist = getattr(ep, "dist", None)
        origins[cls.name] = getattr(dist, "name", None) or ep.value
    return importers, problems, origins


IMPORTERS, REGISTRY_PROBLEMS, ORIGINS = load_registry()
