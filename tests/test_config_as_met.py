"""config.yaml as a person meets it when they get it wrong.

Every mistake is one line naming the file, the line (where YAML gives one), the key and what is
allowed; never a Python class name or a traceback. ``status`` lists every problem once, in
``config_errors`` (the ``memory:`` section) or ``store_config_errors`` (everything else); a typo
or a key given twice, which YAML and the readers ignored without a word, is among them. Keys
Hermes itself reads from the same file are never warned about.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hermes_store.cli import cli


def _run(home, *argv: str):
    return CliRunner().invoke(cli, ["--home", str(home.root), *argv])


def _status(home, text: str) -> tuple[list[str], list[str], str]:
    """(config_errors, store_config_errors, the human status's stderr) for config ``text``."""
    home.config_path.write_text(text, encoding="utf-8")
    result = _run(home, "status", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    human = _run(home, "status")
    assert human.exit_code == 0, human.output
    return data["config_errors"], data["store_config_errors"], human.stderr


def _one_clean_line(text: str) -> None:
    assert "Traceback" not in text and "Error:" not in text.replace("Error: ", "", 1)
    for name in ("ConfigError", "RedactionConfigError", "DatabaseError", "ValueError", "Errno"):
        assert name not in text, text


def test_a_provider_that_is_no_name_is_a_problem_naming_file_line_and_key(home):
    """``memory.provider: 5`` was shown as provider ``5`` without a word."""
    errors, _, stderr = _status(home, "memory:\n  provider: 5\n")
    assert errors == [f"{home.config_path}:2: memory.provider: expected a provider name (builtin, "
                      "holographic_store or a plug-in's name), got 5"]
    assert stderr.count("memory.provider") == 1


def test_a_bad_redaction_pattern_names_its_line_and_memory_add_names_no_class(home, caplog):
    """The regular expression's error named no line; ``memory add`` printed ``ConfigError:``."""
    _, store_errors, _ = _status(home, "store:\n  redact_patterns:\n    x: \"([\"\n")
    assert store_errors == [f"{home.config_path}:3: store.redact_patterns.x: not a valid regular "
                            "expression: unterminated character set at position 1"]
    result = _run(home, "memory", "add", "hello")
    assert result.exit_code == 0, result.output
    warned = result.stderr + caplog.text  # the provenance warning is logged
    assert f"{home.config_path}:3: store.redact_patterns.x" in warned
    _one_clean_line(warned)


@pytest.mark.parametrize(("text", "line", "key", "hint"), [
    ("semantc:\n  model: x\n", 1, "semantc", "did you mean semantic?"),
    ("memory:\n  memory_char_limt: 5\n", 2, "memory.memory_char_limt", "did you mean memory.memory_char_limit?"),
    ("store:\n  redact: true\n  database_ur: x\n", 3, "store.database_ur", "did you mean store.database_url?"),
    ("store:\n  colour: blue\n", 2, "store.colour", "known keys: database_url, redact, redact_allow, "
                                                     "redact_patterns"),
    ("semantic:\n  modle: x\n", 2, "semantic.modle", "did you mean semantic.model?"),
    ("memory:\n  holographic_store:\n    hrr_dimm: 4\n", 3, "memory.holographic_store.hrr_dimm",
     "did you mean memory.holographic_store.hrr_dim?"),
], ids=["top-level", "memory", "store-near", "store-other", "semantic", "facts"])
def test_a_mistyped_key_is_warned_about_once_with_its_line(home, text, line, key, hint):
    """A typo was ignored without a word: the setting silently kept its default."""
    _, store_errors, stderr = _status(home, text)
    expected = f"{home.config_path}:{line}: {key}: unknown key, ignored ({hint})"
    assert store_errors == [expected]
    assert stderr.count(f"{key}:") == 1 and expected in stderr


def test_keys_hermes_reads_are_not_warned_about(home):
    """config.yaml is Hermes's too: its own sections and memory keys are no typo of ours."""
    errors, store_errors, stderr = _status(home, (
        "model: anthropic/claude\nterminal:\n  backend: local\ntoolsets: [all]\n"
        "memory:\n  memory_enabled: true\n  flush_min_turns: 6\n  provider: holographic_store\n"
        "plugins:\n  disabled: []\n  hermes-memory-store:\n    db_path: x.db\n"))
    assert errors == [] and store_errors == [] and stderr == ""


def test_a_key_given_twice_is_a_problem_and_a_value_error_names_the_line_used(home):
    """YAML kept the later ``memory:`` silently; the error of its value named the first's line."""
    errors, store_errors, _ = _status(home, "memory:\n  provider: a\nmemory:\n  provider: 5\n")
    assert store_errors == [f"{home.config_path}:3: memory: given twice (lines 1 and 3); only the "
                            "later one is used: remove one"]
    assert errors[0].startswith(f"{home.config_path}:4: memory.provider:")


@pytest.mark.parametrize(("text", "expected"), [
    ("semantic: 5\n", ":1: semantic: expected a mapping (model:, reranker:, roles:, ...), got 5"),
    ("semantic:\n  model: 5\n", ":2: semantic.model: expected a model name or path (a string), got 5"),
    ("semantic:\n  roles: [usr]\n", ":2: semantic.roles: expected user or assistant, or a list of them, "
                                    "got ['usr']"),
    ("semantic:\n  gate: high\n", ":2: semantic.gate: expected a number of 0 or more, got 'high'"),
    ("semantic:\n  window: -1\n", ":2: semantic.window: expected a whole number of 0 or more, got -1"),
], ids=["not-a-mapping", "model", "roles", "fusion-word", "fusion-negative"])
def test_a_bad_semantic_value_is_listed(home, text, expected):
    """Each fell back to its default (or off) without a word."""
    _, store_errors, _ = _status(home, text)
    assert store_errors == [f"{home.config_path}{expected}"]


def test_a_bad_fact_store_value_is_listed_and_facts_add_names_file_and_line(home):
    """``status`` said nothing; ``facts add`` failed naming neither the file nor the line."""
    text = "memory:\n  holographic_store:\n    hrr_dim: -3\n"
    _, store_errors, stderr = _status(home, text)
    expected = f"{home.config_path}:3: memory.holographic_store.hrr_dim: must be at least 16, got -3"
    assert store_errors == [expected]
    assert "fact commands fail until it is fixed" in stderr
    result = _run(home, "facts", "add", "Ana likes tea")
    assert result.exit_code == 1 and result.stderr == f"Error: {expected}\n"
    assert _run(home, "recall", "tea").exit_code == 0  # a command that does not need it works


def test_the_hermes_fact_section_is_named_as_written(home):
    home.config_path.write_text("plugins:\n  hermes-memory-store:\n    hrr_weight: 7\n", encoding="utf-8")
    result = _run(home, "facts", "add", "Ana likes tea")
    assert result.stderr == (f"Error: {home.config_path}:3: plugins.hermes-memory-store.hrr_weight: "
                             "must be between 0.0 and 1.0, got 7.0\n")


def test_a_database_url_that_is_no_string_names_its_line(home):
    home.config_path.write_text("store:\n  database_url: 5\n", encoding="utf-8")
    result = _run(home, "recall", "x")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {home.config_path}:2: store.database_url: expected a string URL "
                             "(postgresql://... or sqlite:///path), got 5\n")


@pytest.mark.parametrize("argv", [["status"], ["recall", "x"], ["facts", "add", "x"]])
def test_a_config_that_is_a_directory_is_one_line(home, argv):
    """``cannot read: [Errno 21] Is a directory: '<path>'`` named the path twice, with errno."""
    home.config_path.mkdir()
    result = _run(home, *argv)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {home.config_path}: cannot read: is a directory\n"


def test_a_config_not_in_utf8_says_so(home):
    home.config_path.write_bytes(b"memory:\n  provider: caf\xe9\n")
    result = _run(home, "recall", "x")
    assert result.stderr == (f"Error: {home.config_path}:2: cannot read: not UTF-8 text (byte 0xe9); "
                             "save it as UTF-8\n")


def test_a_config_that_is_a_list_says_what_it_is(home):
    home.config_path.write_text("- memory\n- store\n", encoding="utf-8")
    result = _run(home, "status")
    assert result.stderr == (f"Error: {home.config_path}:1: expected a mapping of settings (key: value "
                             "lines) at the top level, got a list\n")


@pytest.mark.parametrize("text", ["", "\ufeffmemory:\n  provider: builtin\n", "# only a comment\n"],
                         ids=["empty", "bom", "comment"])
def test_an_empty_file_or_a_bom_is_no_problem(home, text):
    errors, store_errors, stderr = _status(home, text)
    assert errors == [] and store_errors == [] and stderr == ""


def test_the_tool_path_names_the_problem_without_a_class(home):
    home.config_path.write_text("memory:\n  provider: 5\n", encoding="utf-8")
    result = _run(home, "tool", "memory", json.dumps({"action": "add", "target": "memory", "content": "x"}))
    reply = json.loads(result.stdout)
    assert reply["success"] is False
    assert f"{home.config_path}:2: memory.provider: expected a provider name" in reply["error"]
    _one_clean_line(reply["error"])


@pytest.mark.parametrize(("text", "expected"), [
    ("plugins: 5\n", ":1: plugins: expected a mapping (disabled: [...], ...), got 5; no plug-in is disabled"),
    ("plugins:\n  disabled: honcho\n", ":2: plugins.disabled: expected a list of plug-in names, got 'honcho'; "
                                       "what is not a name disables nothing"),
], ids=["not-a-mapping", "disabled-not-a-list"])
def test_a_plugins_section_hermes_would_ignore_is_listed(home, text, expected):
    """``plugins.disabled: honcho`` (no list) disabled nothing, as Hermes reads it, without a word."""
    _, store_errors, _ = _status(home, text)
    assert store_errors == [f"{home.config_path}{expected}"]
