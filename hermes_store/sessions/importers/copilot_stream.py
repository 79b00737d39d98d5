"""``copilot-stream``: what ``copilot -p PROMPT --output-format json`` prints, saved to a file.

GitHub Copilot CLI's non-interactive JSON output (``--output-format text|json``) is JSONL of
the session's own events, the ``{type, data, id, timestamp, parentId}`` envelope its
``events.jsonl`` log holds (see :mod:`copilot_cli`), with three differences read here:

* no ``session.start``: the run opens with startup notices (``session.mcp_servers_loaded``,
  ``session.skills_loaded``, ``session.tools_updated``, ``session.warning``, ...);
* the transient events Copilot never writes to the log (``assistant.message_delta``,
  ``assistant.message_start``, ``assistant.idle``, ...) are printed too, marked
  ``ephemeral: true``: skipped, as they repeat what the whole events say;
* the last line is ``{type: "result", sessionId, exitCode, usage}``: it names the session (the
  ``<sessionId>`` of ``~/.copilot/session-state/``, what ``--resume`` takes); the exit code and
  usage are kept in the session's ``meta``.

Messages, reasoning, tool requests and results are read by the ``copilot-cli`` reader. The file
is read whole (the session id comes last); a changed file replaces what it gave before. A run
with no ``result`` line (cut short) is named after the file.

Before this reader such a file was read as a ``copilot-cli`` session log named after the file,
and its ``result`` line was reported as an unknown event type.
"""

from __future__ import annotations

from collections.abc import Iterator

from hermes_store.sessions.importers.base import Event, SourceState, opt_str
from hermes_store.sessions.importers.copilot_cli import CopilotCliImporter, run_result
from hermes_store.sessions.importers.doc_common import ReplacedWhenChanged, iter_json_lines


class CopilotStreamImporter(ReplacedWhenChanged, CopilotCliImporter):
    """A saved ``copilot -p --output-format json`` run."""

    name = "copilot-stream"
    reader = 2  # 2: a skill's instructions (skill.invoked), sub-agent bookkeeping events (see copilot-cli 4)
    agent = "GitHub Copilot CLI (copilot -p --output-format json)"
    indexes = "user and assistant messages, tool requests and results, reasoning, notices; exit code and usage"
    source = "copilot-cli"
    default_locations: dict[str, tuple[str, ...]] = {}
    resumable_by_offset = False
    snapshot = True
    saved_stream = True
    run_session: str | None = None

    def default_session_id(self) -> str:
        """The ``sessionId`` of the run's ``result`` line (read by :meth:`read`), else the file stem."""
        return self.run_session or self.path.stem

    def read(self, state: SourceState) -> Iterator[Event]:
        """Find the run's session id (its last ``result`` line), then read the events."""
        for _, obj, _ in iter_json_lines(self.path):
            if isinstance(obj, dict) and run_result(obj):
                self.run_session = opt_str(obj.get("sessionId")) or self.run_session
        yield from super().read(state)
