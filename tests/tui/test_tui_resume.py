"""The resume command of a saved headless run is the agent's own; its subagents have none."""

from hermes_store.tui.resume import resume_command


def test_a_headless_run_resumes_as_its_agent_and_its_subagent_does_not():
    assert resume_command("claude-stream", "5f1e2d3c-4b5a") == "claude --resume 5f1e2d3c-4b5a"
    assert resume_command("codex-exec", "0199a8c2-5e41") == "codex resume 0199a8c2-5e41"
    assert resume_command("gemini-stream", "b41c9e27") == "gemini --resume b41c9e27"
    assert resume_command("claude-stream", "5f1e2d3c-4b5a/toolu_task1") is None
    assert resume_command("cursor-stream", "3f9c2b1e") == "cursor-agent --resume 3f9c2b1e"
    assert resume_command("cursor-chats", "5d0c8a4e-2f1b") == "cursor-agent --resume 5d0c8a4e-2f1b"
    assert resume_command("qwen-stream", "7c1d-9e") == "qwen --resume 7c1d-9e"
    assert resume_command("qwen-code", "7c1d-9e") == "qwen --resume 7c1d-9e"
    assert resume_command("cursor-stream", "3f9c2b1e/call_1") is None
    assert resume_command("cursor-agent", "3f9c2b1e") is None  # the editor's chats too: none
    assert resume_command("claude-code", "a/b") == "claude --resume a/b"  # transcripts as before
