"""Transcript importers, one module per format, behind the :class:`Importer` interface."""

from __future__ import annotations

from pathlib import Path

from hermes_store.sessions.importers.base import Importer
from hermes_store.sessions.importers.claude_code import ClaudeCodeImporter
from hermes_store.sessions.importers.codex import CodexImporter
from hermes_store.sessions.importers.detect import detect_format
from hermes_store.sessions.importers.gemini_cli import (
    GeminiCheckpointImporter,
    GeminiCliImporter,
    GeminiLogsImporter,
)
from hermes_store.sessions.importers.hermes_db import HermesDbImporter
from hermes_store.sessions.importers.hermes_json import HermesJsonImporter
from hermes_store.sessions.importers.hermes_jsonl import HermesJsonlImporter
from hermes_store.sessions.importers.openai_jsonl import OpenAIJsonlImporter
from hermes_store.sessions.importers.opencode_db import OpenCodeDbImporter
from hermes_store.sessions.importers.opencode_json import OpenCodeJsonImporter
from hermes_store.sessions.importers.qwen_code import (
    QwenCodeImporter,
    QwenLegacyImporter,
    QwenLogsImporter,
)

IMPORTERS: dict[str, type[Importer]] = {
    cls.name: cls
    for cls in (HermesDbImporter, HermesJsonlImporter, HermesJsonImporter,
                ClaudeCodeImporter, CodexImporter, OpenAIJsonlImporter,
                GeminiCliImporter,
                GeminiLogsImporter,
                GeminiCheckpointImporter,
                QwenCodeImporter,
                QwenLegacyImporter,
                QwenLogsImporter,
                OpenCodeJsonImporter,
                OpenCodeDbImporter,
                )
}
FORMATS: tuple[str, ...] = tuple(IMPORTERS)


def importer_for(path: Path, fmt: str) -> Importer | None:
    """An importer instance for ``path`` (``fmt`` may be ``"auto"``); None if undetectable."""
    name = detect_format(path) if fmt == "auto" else fmt
    cls = IMPORTERS.get(name or "")
    return cls(path) if cls else None


__all__ = ["FORMATS", "IMPORTERS", "Importer", "detect_format", "importer_for"]
