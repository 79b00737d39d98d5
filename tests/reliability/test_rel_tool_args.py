"""Every tool with missing, null, wrong-typed and oversized arguments.

Each call goes through ``handle_tool_call`` exactly as an agent's would. The
reply must be a JSON object; a refusal must be ``success: false`` with an error
that names the argument, and never an internal failure (a traceback, or the
dispatcher's ``<tool> failed: SomeError`` catch-all for an exception a handler let escape).
"""

from __future__ import annotations

import json
import re

import pytest

from hermes_store.facts.store import FactStore
from hermes_store.sessions import SessionIndex
from hermes_store.tools import TOOL_NAMES, get_tool, handle_tool_call

HUGE_TEXT = "x" * 1_000_001
WRONG = {
    "string": [12345, 1.5, True, [1, "a"], {"a": 1}],
    "integer": ["abc", "1.5", 1.5, True, [1], {"n": 1}, "", "9" * 40],
    "number": ["abc", True, [0.5], {"x": 1}, ""],
    "array": [5, True, {"a": 1}, [1, 2], [None], [["nested"]]],
}
OVERSIZED = {
    "string": [HUGE_TEXT],
    "integer": [10**30, -(10**30), 2**63],
    "number": [1e308, -1e308, 10**400],
    "array": [["memory"] * 100_000, [HUGE_TEXT]],
}
# Base calls that are valid, so only the argument under test is wrong.
BASES = {
    "memory": {"action": "add", "target": "memory", "content": "a valid entry"},
    "session_search": {"query": "deploy"},
    "fact_store": {"action": "search", "query": "deploy"},
    "fact_feedback": {"action": "helpful", "fact_id": 1},
    "recall": {"query": "deploy"},
}
# Arguments only read by a particular action get a base that uses them.
ACTION_BASES = {
    ("fact_store", "fact_id"): {"action": "update", "fact_id": 1, "content": "Deploy runs on Fridays"},
    ("fact_store", "trust_delta"): {"action": "update", "fact_id": 1, "trust_delta": 0.1},
    ("fact_store", "tags"): {"action": "add", "content": "Tagged fact", "tags": "a,b"},
    ("fact_store", "content"): {"action": "add", "content": "Some fact"},
    ("fact_store", "category"): {"action": "add", "content": "Categorised fact", "category": "project"},
    ("fact_store", "entity"): {"action": "probe", "entity": "deploy"},
    ("fact_store", "entities"): {"action": "reason", "entities": ["deploy", "friday"]},
    ("memory", "old_text"): {"action": "replace", "target": "memory", "old_text": "seed",
                             "content": "seed entry replaced"},
    ("memory", "new_text"): {"action": "add", "target": "memory", "new_text": "via alias"},
    ("memory", "operations"): {"target": "memory",
                               "operations": [{"action": "add", "content": "batch entry"}]},
    ("session_search", "around_message_id"): {"session_id": "20260101_000000_aaaaaa",
                                              "around_message_id": 1},
    ("session_search", "window"): {"session_id": "20260101_000000_aaaaaa", "around_message_id": 1,
                                   "window": 3},
    ("session_search", "session_id"): {"session_id": "20260101_000000_aaaaaa"},
}
# An alias's error may name the argument it stands for (Hermes: "Content is required ...").
ALIASES = {("memory", "new_text"): "content", ("session_search", "session_id"): "session not found"}
INTERNAL = re.compile(r"^\w+ failed: \w+(Error|Exception)\b|Traceback|File \"")


def _cases():
    for tool in TOOL_NAMES:
        schema = get_tool(tool).schema["parameters"]
        required = set(schema.get("required", []))
        for name, prop in schema["properties"].items():
            kind = prop.get("type", "string")
            base = ACTION_BASES.get((tool, name), BASES[tool])
            if name in required or name in base:
                yield tool, name, "missing", base, None
            yield tool, name, "null", base, None
            for value in WRONG.get(kind, []):
                yield tool, name, f"wrong:{type(value).__name__}", base, value
            for value in OVERSIZED.get(kind, []):
                yield tool, name, "oversized", base, value
            if kind == "string":  # JSON "\ud800" escapes decode to lone surrogates
                yield tool, name, "surrogate", base, "lone \ud800 surrogate \udfff"


CASES = list(_cases())


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    from hermes_store.builtin.store import MemoryStore
    from hermes_store.home import Home

    home = Home(tmp_path_factory.mktemp("tool_args") / "home").ensure()
    store = MemoryStore(home)
    store.add("memory", "seed entry about deploys")
    store.close()
    with FactStore(home) as facts:
        facts.add_fact("Deploy runs on Fridays", "project")
    with SessionIndex(home) as index:
        sid = index.create_session("20260101_000000_aaaaaa", source="cli")
        index.append_message(sid, "user", "how do we deploy on friday?")
        index.append_message(sid, "assistant", "with the deploy script")
    return home


def _mentions(error: str, name: str) -> bool:
    text = error.lower()
    return name.lower() in text or name.replace("_", " ").lower() in text


@pytest.mark.parametrize(("tool", "name", "case", "base", "value"), CASES,
                         ids=[f"{t}-{n}-{c}-{i}" for i, (t, n, c, _, _) in enumerate(CASES)])
def test_bad_argument_gives_json_error_naming_it(seeded, tool, name, case, base, value):
    args = dict(base)
    if case == "missing":
        args.pop(name, None)
    else:
        args[name] = value
    raw = handle_tool_call(tool, args, home=seeded)
    raw.encode("utf-8")  # the reply is valid Unicode (no lone surrogate echoed back)
    reply = json.loads(raw)
    assert isinstance(reply, dict) and "success" in reply, raw[:300]
    if reply["success"]:
        return  # tolerated (coerced or optional); nothing crashed
    error = reply.get("error")
    assert isinstance(error, str) and error, reply
    assert not INTERNAL.search(error), f"internal failure leaked: {error[:300]}"
    named = _mentions(error, name) or _mentions(error, ALIASES.get((tool, name), name))
    assert named or case == "missing" and name not in base, (
        f"error does not name {name!r}: {error[:300]}")
    assert len(raw) < 200_000, "the oversized value was echoed back"


def test_non_object_arguments_and_unknown_tool(seeded):
    for tool in TOOL_NAMES:
        for args in ("[1, 2]", "not json", "42", '"text"', [1, 2], 3.5):
            reply = json.loads(handle_tool_call(tool, args, home=seeded))
            assert reply["success"] is False and "argument" in reply["error"].lower()
    reply = json.loads(handle_tool_call("no_such_tool", {}, home=seeded))
    assert reply["success"] is False and "no_such_tool" in reply["error"]
