"""The threat patterns, and the words each of their matches must contain (lowest layer).

:mod:`hermes_store.threats` runs these patterns; this module holds what they are and the
cheap tests that let the scan skip work without changing a finding:

* :data:`REQUIRED` - for every pattern, groups of lower-case literals: any match holds one
  literal of each group (a regex runs only where every group is present);
* :func:`skeleton` - a text reduced to the letters that survive every spelled-out disguise
  the scan undoes (separators, single-letter runs, markup, look-alike digits), so
  :func:`possible_patterns` can tell, without building those forms, which patterns none of
  them could match.

tests/builtin/test_mem_threats.py checks each literal against its pattern's source and the
filtered scan against the unfiltered one.
"""

from __future__ import annotations

import re

_F = r"(?:\w+\s+){0,8}"  # bounded filler: up to eight words between keywords
_SECRET_VAR = r"\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)S?\b"
# The write verbs of upstream's gated ``ssh_access``; the newest copy adds the in-place mutators
# (sed, chmod, chown, truncate, rm, touch), the fetchers (curl, wget), git and ``open(``.
_SSH_WRITE = (
    r"(?:echo|cat|cp|mv|dd|tee|install|printf|rsync|scp|ln|append|add|write"
    r"|sed|chmod|chown|truncate|rm|touch|curl|wget|git)"
)
_MODIFY = r"(?:update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}"
_SECRET_KEY = r"(?:api[_-]?key|token|secret|password)"
_ENV_NAME = r"(?-i:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"  # SHOUTY_SNAKE, case-sensitive

# (id, regex) in reporting order; all compiled case-insensitive. A leading ``(?=[...])`` names the
# first letters of an alternation so ``re`` skips ahead to them (three times faster on long text).
PATTERN_SOURCES: tuple[tuple[str, str], ...] = (
    ("prompt_injection", rf"ignore\s+{_F}(?:previous|all|above|prior)\s+{_F}instructions"),
    ("sys_prompt_override", r"system\s+prompt\s+override"),
    ("disregard_rules", rf"disregard\s+{_F}(?:your|all|any)\s+{_F}(?:instructions|rules|guidelines)"),
    ("bypass_restrictions",
     rf"act\s+as\s+(?:if|though)\s+{_F}you\s+{_F}(?:have\s+no|don'?t\s+have|do\s+not\s+have)\s+{_F}"
     r"(?:restrictions|limits|rules)"),
    # The keyword may sit inside a word ("ignored", "systemic"), as upstream has no word edges here.
    ("html_comment_injection",
     r"<!--[\s\S]{0,512}?(?:ignore|override|system|secret|hidden)[\s\S]{0,512}?-->"),
    # One bounded gap per look (a style attribute, then display:none, inside one tag): nested or
    # unbounded gaps made 64 KB of "<div " / '<div style="' take 11 s / 55 s.
    ("hidden_div", r"<\s*div\s(?=[^>]{0,2048}?style\s*=)[^>]{0,2048}?display\s*:\s*none"),
    ("translate_execute", rf"translate\s+(?:{_F}into\s+{_F}|[^\n]{{0,512}}?\s+into\s+\w+(?:[\s-]+\w+){{0,2}}\s+)"
                          r"and\s+(?:execute|run|eval)\b"),
    ("deception_hide", rf"(?:do\s+not|don'?t)\s+{_F}tell\s+{_F}the\s+user"),
    ("role_hijack", rf"you\s+are\s+{_F}now\s+(?:a|an|the)\s+"),
    ("role_pretend", rf"pretend\s+{_F}(?:you\s+are|to\s+be)\s+"),
    ("leak_system_prompt", rf"output\s+{_F}(?:system|initial)\s+prompt"),
    ("remove_filters",
     rf"(?=[ar])(?:respond|answer|reply)\s+without\s+{_F}(?:restrictions|limitations|filters|safety)"),
    ("fake_update", rf"you\s+have\s+been\s+{_F}(?:updated|upgraded|patched)\s+to"),
    ("identity_override", r"\bname\s+yourself\s+\w+"),
    ("c2_node_registration", r"register\s+(?:as\s+)?a?\s*node"),
    ("c2_heartbeat", r"(?=[bch])(?:heartbeat|beacon|check[\s\-]?in)\s+(?:to|with)\s+"),
    ("c2_task_pull", r"pull\s+(?:down\s+)?(?:new\s+)?task(?:ing|s)?\b"),
    ("c2_network_connect", r"connect\s+to\s+the\s+network\b"),
    ("forced_action", r"you\s+must\s+(?:\w+\s+){0,3}(?:register|connect|report|beacon)\b"),
    ("anti_forensic_oneliner", r"only\s+use\s+one[\s\-]?liners?\b"),
    ("anti_forensic_disk", rf"never\s+{_F}(?:create|write)\s+{_F}(?:scripts?|files?)\s+{_F}disk"),
    ("env_var_unset_agent", r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*"),
    ("known_c2_framework", r"\b(?=[bchms])(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b"),
    ("c2_explicit", r"\bc2\s+(?:server|channel|infrastructure|beacon)s?\b"),
    ("c2_explicit_long", r"\bcommand\s+and\s+control\b"),
    ("exfil_curl", rf"curl\b\s*[^\n]{{0,2048}}{_SECRET_VAR}"),
    ("exfil_wget", rf"wget\b\s*[^\n]{{0,2048}}{_SECRET_VAR}"),
    ("read_secrets",
     r"cat\s+[^\n]{0,2048}?(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"),
    # The blank run before "to"/"at" may span lines, as upstream's ``\s+`` there does. Each blank
    # run is taken whole (``(?=(\s+))\1``: an atomic group before Python 3.11), so a long run is
    # read once, not once per way of splitting it (64 KB of blanks: 11 s before, 2 ms now).
    ("send_to_url", rf"(?=[pstu])(?:send|post|upload|transmit)(?=(\s+))\1"
                    rf"(?:{_F}|(?:[^\n]{{0,2048}}?\S)?(?=(\s+))\2)(?:to|at)\s+https?://"),
    ("context_exfil",
     rf"(?=[iops])(?:include|output|print|share)\s+{_F}"
     r"(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)"),
    ("ssh_backdoor", r"authorized_keys"),
    # A write verb (word-bounded, so "address" is no "add") or a redirect before the path:
    # a mere mention ("check $HOME/.ssh is chmod 700") is documentation, as in Hermes. The path
    # has no end edge, as upstream (``~/.ssh2``, ``~/.ssh_config`` count).
    ("ssh_access", rf"(?:\b{_SSH_WRITE}\b|\bopen\s*\(|>>?)[^\n]{{0,512}}?(?:\$HOME|~)/\.ssh"),
    ("hermes_env", r"(?:\$HOME|~)/\.hermes/\.env"),
    ("agent_config_mod", rf"{_MODIFY}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)"),
    ("hermes_config_mod", rf"{_MODIFY}\.hermes/(?:config\.yaml|SOUL\.md)"),
    # A value that is itself an environment-variable NAME (SHOUTY_SNAKE with two or more
    # underscore-separated parts, case-sensitive) says where a secret lives, not what it is
    # (upstream #116221): ``ENV_PASSWORD = "MYPLUGIN_APP_PASSWORD"`` is saved.
    ("hardcoded_secret",
     rf"(?=[apst]){_SECRET_KEY}\s*[=:]\s*[\"'](?!{_ENV_NAME}[\"'])[A-Za-z0-9+/=_\-]{{20,}}"),
)

#: An assignment whose quoted value is an environment-variable name (``hardcoded_secret``'s
#: exemption); :mod:`hermes_store.threats` drops such values before the disguise-undoing forms
#: are built, so joining ``MYPLUGIN_APP_PASSWORD`` into one word cannot bring the finding back.
ENV_NAME_VALUE = re.compile(rf"({_SECRET_KEY}\s*[=:]\s*[\"']){_ENV_NAME}(?=[\"'])", re.IGNORECASE)

THREAT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (pid, re.compile(source, re.IGNORECASE)) for pid, source in PATTERN_SOURCES
)
PATTERN_IDS: tuple[str, ...] = tuple(pid for pid, _ in THREAT_PATTERNS)

_MODIFY_VERBS = ("update", "modify", "edit", "write", "change", "append", "add")
#: For every pattern, groups of lower-case literals of its source: a match contains one literal
#: of each group (each group is a required part of the pattern; an optional part has none).
REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "prompt_injection": (("ignore",), ("previous", "all", "above", "prior"), ("instructions",)),
    "sys_prompt_override": (("system",), ("prompt",), ("override",)),
    "disregard_rules": (("disregard",), ("your", "all", "any"), ("instructions", "rules", "guidelines")),
    "bypass_restrictions": (("act",), ("if", "though"), ("you",), ("have",), ("restrictions", "limits", "rules")),
    "html_comment_injection": (("<!--",), ("ignore", "override", "system", "secret", "hidden"), ("-->",)),
    "hidden_div": (("div",), ("style",), ("display",), ("none",)),
    "translate_execute": (("translate",), ("into",), ("and",), ("execute", "run", "eval")),
    "deception_hide": (("do",), ("tell",), ("the",), ("user",)),
    "role_hijack": (("you",), ("are",), ("now",)),
    "role_pretend": (("pretend",), ("you", "to")),
    "leak_system_prompt": (("output",), ("system", "initial"), ("prompt",)),
    "remove_filters": (("respond", "answer", "reply"), ("without",),
                       ("restrictions", "limitations", "filters", "safety")),
    "fake_update": (("you",), ("have",), ("been",), ("updated", "upgraded", "patched")),
    "identity_override": (("name",), ("yourself",)),
    "c2_node_registration": (("register",), ("node",)),
    "c2_heartbeat": (("heartbeat", "beacon", "check"), ("to", "with")),
    "c2_task_pull": (("pull",), ("task",)),
    "c2_network_connect": (("connect",), ("network",)),
    "forced_action": (("you",), ("must",), ("register", "connect", "report", "beacon")),
    "anti_forensic_oneliner": (("only",), ("use",), ("liner",)),
    "anti_forensic_disk": (("never",), ("create", "write"), ("script", "file"), ("disk",)),
    "env_var_unset_agent": (("unset",), ("claude", "codex", "hermes", "agent", "openai", "anthropic")),
    "known_c2_framework": (("cobalt", "sliver", "havoc", "mythic", "metasploit", "brainworm"),),
    "c2_explicit": (("c2",), ("server", "channel", "infrastructure", "beacon")),
    "c2_explicit_long": (("command",), ("and",), ("control",)),
    "exfil_curl": (("curl",), ("$",), ("key", "token", "secret", "password", "credential")),
    "exfil_wget": (("wget",), ("$",), ("key", "token", "secret", "password", "credential")),
    "read_secrets": (("cat",), (".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc")),
    "send_to_url": (("send", "post", "upload", "transmit"), ("to", "at"), ("http",)),
    "context_exfil": (("include", "output", "print", "share"), ("conversation", "history", "messages", "context")),
    "ssh_backdoor": (("authorized_keys",),),
    "ssh_access": (("/.ssh",),),
    "hermes_env": ((".hermes/.env",),),
    "agent_config_mod": (_MODIFY_VERBS, ("agents.md", "claude.md", ".cursorrules", ".clinerules")),
    "hermes_config_mod": (_MODIFY_VERBS, (".hermes/",), ("config.yaml", "soul.md")),
    "hardcoded_secret": (("key", "token", "secret", "password"), ("=", ":"), ('"', "'")),
}

#: Python's ``re`` with IGNORECASE matches these to ASCII letters (the ``re`` docs: U+0130, U+0131,
#: U+017F, U+212A); every other case fold of a non-ASCII letter stays non-ASCII.
RE_ASCII_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def needle_text(forms: list[str]) -> str:
    """The forms as one lower-case text the :data:`REQUIRED` literals are looked for in (the four
    letters ``re`` folds to ASCII read as those, so the test holds for every script)."""
    joined = " ".join(forms)
    if not joined.isascii():
        for char, ascii_letter in RE_ASCII_FOLDS.items():
            if char in joined:
                joined = joined.replace(char, ascii_letter)
    return joined.lower()


# The skeleton keeps what no disguise the scan undoes can change: ASCII letters and look-alike
# digits read as the letters they may stand for. Separators, spaces and non-ASCII letters (no
# lower-case form of one is ASCII beside the four folds) are dropped. "$" and "@" may be read as
# "s" / "a" (look-alike signs) or dropped (separators): in a text that holds them, "s" / "a" and
# their look-alikes are dropped too. In a text holding "1", which may be read as "i" or "l",
# "i", "l" and "1" are one letter. A variant of the table for each of the eight cases.
def _skeleton_table(dollar: bool, at: bool, one: bool) -> dict[int, str | None]:
    table: dict[int, str | None] = {c: None for c in range(128)}
    table |= {ord(char): char for char in "abcdefghijklmnopqrstuvwxyz2689"}
    table |= {ord("0"): "o", ord("3"): "e", ord("7"): "t", ord("5"): "s", ord("4"): "a", ord("1"): "l"}
    if dollar:
        table |= {ord("s"): None, ord("5"): None}
    if at:
        table |= {ord("a"): None, ord("4"): None}
    if one:
        table |= {ord("l"): "i", ord("1"): "i"}
    return table


_VARIANTS = [(dollar, at, one) for dollar in (False, True) for at in (False, True) for one in (False, True)]
_SKELETON_TABLES = {variant: _skeleton_table(*variant) for variant in _VARIANTS}


def _variant(text: str) -> tuple[bool, bool, bool]:
    return "$" in text, "@" in text, "1" in text


def skeleton(text: str, variant: tuple[bool, bool, bool] | None = None) -> str:
    """``text`` as the letters every spelled-out form of it (see
    :func:`~hermes_store.threats.spelled_forms`) keeps, read with the table of ``variant`` (by
    default that of ``text`` itself): a literal in a spelled form has its skeleton in this one."""
    lowered = needle_text([text])
    if not lowered.isascii():
        lowered = lowered.encode("ascii", "ignore").decode("ascii")
    return lowered.translate(_SKELETON_TABLES[variant or _variant(text)])


def _literal_test(literal: str, variant: tuple[bool, bool, bool]) -> tuple[str, str]:
    """A literal as (its skeleton, its other characters): what a text must hold for a spelled
    form of it to hold the literal (spelled forms add no character but letters and spaces)."""
    return literal.translate(_SKELETON_TABLES[variant]), "".join(
        sorted({char for char in literal if not char.isalnum()}))


#: Where a pattern's words stand side by side (only blanks or an optional word between), the
#: skeleton of every match holds them run together: these groups (letters only) are the
#: patterns' skeleton tests in place of :data:`REQUIRED` (far fewer texts hold "youare" than "you").
SKELETON_REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "sys_prompt_override": (("systempromptoverride",),),
    "bypass_restrictions": (("actasif", "actasthough"), ("you",), ("have",), ("restrictions", "limits", "rules")),
    "translate_execute": (("translate",), ("into",), ("andexecute", "andrun", "andeval")),
    "deception_hide": (("donot", "dont"), ("tell",), ("theuser",)),
    "role_hijack": (("youare",), ("now",)),
    "role_pretend": (("pretend",), ("youare", "tobe")),
    "leak_system_prompt": (("output",), ("systemprompt", "initialprompt")),
    "remove_filters": (("respondwithout", "answerwithout", "replywithout"),
                       ("restrictions", "limitations", "filters", "safety")),
    "fake_update": (("youhavebeen",), ("updatedto", "upgradedto", "patchedto")),
    "identity_override": (("nameyourself",),),
    "c2_node_registration": (("registernode", "registeranode", "registerasnode", "registerasanode"),),
    "c2_heartbeat": (("heartbeatto", "heartbeatwith", "beaconto", "beaconwith", "checkinto", "checkinwith"),),
    "c2_task_pull": (("pulltask", "pulldowntask", "pullnewtask", "pulldownnewtask"),),
    "c2_network_connect": (("connecttothenetwork",),),
    "forced_action": (("youmust",), ("register", "connect", "report", "beacon")),
    "anti_forensic_oneliner": (("onlyuseoneliner",),),
    "c2_explicit": (("c2server", "c2channel", "c2infrastructure", "c2beacon"),),
    "c2_explicit_long": (("commandandcontrol",),),
    "send_to_url": (("send", "post", "upload", "transmit"), ("tohttp", "athttp")),
    "context_exfil": (("include", "output", "print", "share"),
                      ("conversation", "chathistory", "previousmessages", "fullcontext", "entirecontext")),
}


def _gate(groups: tuple[tuple[str, ...], ...], variant: tuple[bool, bool, bool]) -> tuple[tuple[tuple[str, str], ...], ...]:
    """A pattern's groups as literal tests, the group least likely to occur (longest shortest
    literal) first, so most texts fail the pattern on its first test."""
    tests = [tuple(_literal_test(literal, variant) for literal in group) for group in groups]
    return tuple(sorted(tests, key=lambda group: -min(len(letters) for letters, _ in group)))


_GATES = {variant: tuple(_gate(SKELETON_REQUIRED.get(pid, REQUIRED[pid]), variant) for pid in PATTERN_IDS)
          for variant in _VARIANTS}


#: What the base form itself must hold for a pattern to match any form of it. Spelled-out forms
#: add no character but letters and spaces, and drop separators only between two letters, so a
#: run of signs a match needs (``= "``, ``<!--``, ``/.``) stands in the base form already, after
#: the letter (or look-alike digit) it follows there.
RAW_REQUIRED: dict[str, re.Pattern[str]] = {
    "hardcoded_secret": re.compile(r"[yntd7]\s*[=:]\s*[\"']", re.IGNORECASE),  # key|token|secret|password
    "html_comment_injection": re.compile(r"<!--"),
    "ssh_access": re.compile(r"/\."),
    "hermes_env": re.compile(r"/\."),
}


def possible_patterns(form: str, unmarked: str | None = None) -> set[str]:
    """The ids of the patterns that ``form``, or a spelled-out form of it (``unmarked``: the same
    with markup inside words dropped, when it differs), could match: those with a literal of
    each :data:`REQUIRED` group (:data:`SKELETON_REQUIRED` where given) in the skeleton and
    their :data:`RAW_REQUIRED` signs in ``form``. No other pattern can match any form of it."""
    variant = _variant(form)
    text = skeleton(form, variant)
    if unmarked is not None and unmarked != form:
        text += " " + skeleton(unmarked, variant)  # no skeleton literal holds a space
    found: set[str] = set()
    for pid, groups in zip(PATTERN_IDS, _GATES[variant], strict=True):
        for group in groups:
            for letters, others in group:
                if letters in text and (not others or all(char in form for char in others)):
                    break
            else:
                break  # no literal of this group: the pattern cannot match
        else:
            raw = RAW_REQUIRED.get(pid)
            if raw is None or raw.search(form):
                found.add(pid)
    return found
