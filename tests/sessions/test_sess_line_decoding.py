"""The JSONL fast paths read exactly what the plain decoders read: same values, same errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_store.sessions.importers.base import EPOCH_RANGE, decode_line, parse_timestamp

DECODER = json.JSONDecoder(strict=False)
LINES = ['{"a": 1}\n', '{"a": 1}', ' {"a": 1}\n', '{"a": 1} \r\n', '{"a": 1}\n\n', '{"a": 1}\nx', '{"a": 1} {}',
         '[1, 2]\n', '"text"\n', '12\n', '12 3\n', 'null\n', 'tru\n', '{"a": \x01"}\n', '{"a": "x\x01y"}\n',
         '\ufeff{"a": 1}\n', '{"a": NaN}\n', '{"a": 1', '', '\n', '{"a": "\\ud800"}\n', '[' * 50 + ']' * 50 + '\n']


def _outcome(read, text):
    try:
        return ("value", read(text))
    except ValueError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("text", LINES)
def test_decode_line_matches_the_decoder(text):
    assert repr(_outcome(decode_line, text)) == repr(_outcome(DECODER.decode, text))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40),
                 st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                              lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids,
                                                                                       max_size=3),
                              max_leaves=8).map(lambda v: json.dumps(v)),
                 ), st.sampled_from(["", "\n", " \n", "\r\n", "x", "\n{}"]))
def test_decode_line_matches_the_decoder_on_generated_lines(body, tail):
    text = body + tail
    assert repr(_outcome(decode_line, text)) == repr(_outcome(DECODER.decode, text))


def _slow_timestamp(value):
    """parse_timestamp's general path (text round trip) for numbers; a time no date can show
    (past the years 1 to 9999, NaN) is refused."""
    number = float(value)
    seconds = number / 1000.0 if number > 1e11 else number
    if not EPOCH_RANGE[0] <= seconds <= EPOCH_RANGE[1]:
        raise ValueError(value)
    return seconds


def _outcome_of(parse, value):
    try:
        got = parse(value)
    except ValueError:
        return "refused"
    assert type(got) is float
    return got


@pytest.mark.parametrize("value", [0, 1, -5, 1767225600, 1767225600123, 10**11, 10**11 + 1, (1 << 53) - 1,
                                   1767225600.5, 1767225600123.25, -0.0, 1e300, -1e300, float("inf"),
                                   253402300799, 253402300799000, 253402300799001])
def test_numeric_timestamps_as_before(value):
    assert _outcome_of(parse_timestamp, value) == _outcome_of(_slow_timestamp, value)


def test_timestamp_edge_values_keep_their_outcome():
    assert parse_timestamp(True) is None and parse_timestamp(None) is None and parse_timestamp("") is None
    assert parse_timestamp("1767225600") == 1767225600.0
    for far in (10**30, float("nan"), "NaN", "-inf"):  # past the fast path; no date shows them
        with pytest.raises(ValueError, match="is outside the years 1 to 9999"):
            parse_timestamp(far)
    with pytest.raises(ValueError):
        parse_timestamp(10**5000)  # too many digits for a text round trip: reported, as before
