"""The threat scan's skip tests (hermes_store.threat_patterns) never change a finding.

The scan skips a pattern whose literals are missing from a text's skeleton, and skips spelling
out a form no pattern can match. These tests check the two claims that makes exact: the skeleton
of every spelled-out form equals the skeleton the gate reads, and the gated scan finds what the
ungated one (every form, every pattern) finds, on texts built to hit the gate's edges.
"""

from __future__ import annotations

import random

import pytest

from hermes_store import threats
from hermes_store.threat_patterns import (
    PATTERN_IDS,
    RAW_REQUIRED,
    SKELETON_REQUIRED,
    THREAT_PATTERNS,
    possible_patterns,
    skeleton,
)
from tests.builtin.test_mem_threats import FALSE_POSITIVES, FRAGMENTS, POSITIVE

# Disguises around every pattern's words: separators, single letters, look-alike digits and
# signs (which a spelled form may read as letters or drop), markup inside a word, entities.
EDGE_FRAGMENTS = [
    "p@ssw0rd", "t0ken", "ig$nore", "ign@re", "y0u", "n0w", "c-h-e-c-k", "check-in", "check in",
    "to", "with", "api_key", "= '", '="', ": \"", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012", "~/.ssh",
    "/.ssh", "$HOME/.ssh", "<b></b>", "ig<b>n</b>ore", "<!--", "-->", "h e a r t b e a t",
    "1nstruct10ns", "cat", ".env", "curl", "$API_KEY", "echo x >>", "do n't", "don't", "tell",
    "the user", "y.o.u", "a-r-e", "m u s t", "r3p0rt", "b3ac0n", "c2", "c-2", "s3rv3r",
    "&#105;", "%20", "\\x69", "\u0130", "\u017f", "\u212a", "\u00e9", "$", "@", "1", "4", "5",
    "l", "i", "s", "a", "\x01", "\u200b", "you", "are", "now", "must", "register",
]


def _ungated(text: str) -> list[str]:
    forms = threats.scan_forms(text[: threats.MAX_SCAN_CHARS])
    return [pid for pid, regex in THREAT_PATTERNS if any(regex.search(form) for form in forms)]


@pytest.mark.parametrize("seed", range(60))
def test_the_gated_scan_finds_what_every_form_and_pattern_finds(seed):
    rng = random.Random(seed)
    pool = FRAGMENTS + EDGE_FRAGMENTS
    for _ in range(60):
        glue = rng.choice([" ", "", "-", ".", " \n", "$", "@"])
        text = glue.join(rng.choice(pool) for _ in range(rng.randint(1, 14)))
        found = [f for f in threats.scan_findings(text) if not f.startswith("invisible_unicode_")]
        assert found == _ungated(text), text


@pytest.mark.parametrize("seed", range(20))
def test_a_spelled_out_form_has_the_skeleton_the_gate_reads(seed):
    rng = random.Random(1000 + seed)
    alphabet = "aAsSlLiI01345789$@-._<>/=:'\" \n\u0130\u017f\u212a\u00e9" + "ignorebpctuwyk"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
        for base in threats._base_forms(text):
            variant = ("$" in base, "@" in base, "1" in base)
            unmarked = threats._INNER_MARKUP.sub("", base) if "<" in base else base
            allowed = {skeleton(base, variant), skeleton(unmarked, variant)}
            for form in threats.spelled_forms(base):
                assert skeleton(form, variant) in allowed, (base, form)


def test_every_positive_example_and_its_disguises_pass_the_gate():
    for pid, text in POSITIVE.items():
        for variant in (text, text.upper(), text.replace("e", "3"), text.replace(" ", "  \n ")):
            if pid in _ungated(variant):
                possible = set().union(*(possible_patterns(f) for f in threats._base_forms(variant)))
                assert pid in possible, (pid, variant)


def test_the_gate_skips_ordinary_text():
    prose = ("We looked at the failing test again: the cache key was built from the path, so two "
             "checkouts of the repository shared one entry. Now the key holds the commit too.")
    assert possible_patterns(prose) == set()
    assert threats.scan_findings(prose) == []
    assert all(not threats.scan_findings(text) for text in FALSE_POSITIVES)


def test_every_skeleton_group_holds_in_the_match_of_the_positive_example():
    for pid, groups in SKELETON_REQUIRED.items():
        regex = dict(THREAT_PATTERNS)[pid]
        match = regex.search(POSITIVE[pid])
        assert match, pid
        span = skeleton(match.group(0), (False, False, False))
        for group in groups:
            assert any(literal in span for literal in group), (pid, group, span)
    assert set(RAW_REQUIRED) <= set(PATTERN_IDS)
    for pid, raw in RAW_REQUIRED.items():
        assert raw.search(dict(THREAT_PATTERNS)[pid].search(POSITIVE[pid]).group(0)), pid


def _disguise(text: str, rng: random.Random) -> str:
    """One random spelled-out disguise of ``text``: signs inside words, spaced letters, look-alike
    digits and signs, markup inside a word, upper case."""
    leet = {"o": "0", "i": "1", "l": "1", "e": "3", "a": "4", "s": "$", "t": "7"}
    out = []
    for word in text.split(" "):
        how = rng.randrange(6)
        if how == 0 and len(word) > 2:
            cut = rng.randrange(1, len(word))
            word = word[:cut] + rng.choice(["-", ".", "$", "@", "_", "<b></b>", "'"]) + word[cut:]
        elif how == 1:
            word = rng.choice([" ", "-", "."]).join(word)
        elif how == 2:
            word = "".join(leet.get(ch, ch) if rng.random() < 0.5 else ch for ch in word)
        elif how == 3:
            word = word.upper()
        out.append(word)
    return rng.choice([" ", "  ", " \n"]).join(out)


@pytest.mark.parametrize("pid", sorted(POSITIVE))
def test_disguised_positive_examples_get_the_same_findings_gated_and_ungated(pid):
    rng = random.Random(pid)
    for _ in range(40):
        text = _disguise(POSITIVE[pid], rng)
        found = [f for f in threats.scan_findings(text) if not f.startswith("invisible_unicode_")]
        assert found == _ungated(text), text


def test_the_scan_benchmark_compares_the_three_scans_on_the_same_findings():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "scripts" / "bench_scan.py"), "--messages", "300",
                          "--sample", "150", "--rounds", "1"], capture_output=True, text=True, timeout=300,
                         cwd=root, check=True).stdout
    assert "same findings in all three scans" in out
    assert "| gated (scan_findings) |" in out and "gated / needles:" in out
