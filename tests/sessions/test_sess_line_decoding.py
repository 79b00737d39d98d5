"""The JSONL fast paths read exactly what the plain decoders read: same values, same errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_store.sessions.importers.base import decode_line, parse_timestamp

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
    """parse_timestamp's general path (text round trip) for numbers."""
    number = float(value)
    return number / 1000.0 if number > 1e11 else number


@pytest.mark.parametrize("value", [0, 1, -5, 1767225600, 1767225600123, 10**11, 10**11 + 1, (1 << 53) - 1,
                                   1767225600.5, 1767225600123.25, -0.0, 1e300, float("inf")])
def test_numeric_timestamps_as_before(value):
    got = parse_timestamp(value)
    assert got == _slow_timestamp(value) and type(got) is float


def test_timestamp_edge_values_keep_their_outcome():
    assert parse_timestamp(True) is None and parse_timestamp(None) is None and parse_timestamp("") is None
    assert parse_timestamp(10**30) == 10**30 / 1000.0  # past the fast path, same value
    assert parse_timestamp("1767225600") == 1767225600.0
    nan = parse_timestamp(float("nan"))
    assert nan != nan
    with pytest.raises(ValueError):
        parse_timestamp(10**5000)  # too many digits for a text round trip: reported, as before
