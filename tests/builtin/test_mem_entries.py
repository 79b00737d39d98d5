"""File format: parsing, dedup, BOM, newlines, char counting, matching."""

from __future__ import annotations

from hermes_store.builtin.entries import (
    AMBIGUOUS,
    ENTRY_DELIMITER,
    char_count,
    find_unique_match,
    join_entries,
    parse_entries,
    preview,
    read_raw_checked,
    splits_on_reload,
    usage_long,
    usage_short,
)


def test_delimiter_and_join_have_no_trailing_newline():
    assert ENTRY_DELIMITER == "\n§\n"
    assert join_entries(["a", "b"]) == "a\n§\nb"
    assert join_entries([]) == ""


def test_parse_strips_drops_empty_and_dedupes_keeping_first():
    assert parse_entries("dup\n§\ndup\n§\nunique") == ["dup", "unique"]
    assert parse_entries("  a  \n§\n\n§\n b\nline2 ") == ["a", "b\nline2"]
    assert parse_entries("") == [] and parse_entries(" \n\t") == []


def test_bare_section_sign_inside_text_is_kept():
    assert parse_entries("price § 5\n§\nnext") == ["price § 5", "next"]


def test_crlf_and_cr_are_read_as_lf():
    assert parse_entries("a\r\n§\r\nb\r§\rc") == ["a", "b", "c"]


def test_char_count_counts_code_points_and_delimiters():
    assert char_count([]) == 0
    assert char_count(["ab", "çé"]) == 2 + 3 + 2
    assert char_count(["日本"]) == 2


def test_read_raw_checked(tmp_path):
    path = tmp_path / "MEMORY.md"
    assert read_raw_checked(path) == ("", True)
    path.write_bytes("\ufeffhello\r\n§\r\nworld".encode())
    assert read_raw_checked(path) == ("hello\n§\nworld", True)
    path.write_bytes(b"ok\xff\xfe")
    assert read_raw_checked(path) == ("", False)
    path.unlink()
    path.mkdir()
    assert read_raw_checked(path) == ("", False)


def test_splits_on_reload_detects_delimiter_shapes():
    assert splits_on_reload("a\n§\nb")
    assert splits_on_reload("§\nb") and splits_on_reload("a\n§") and splits_on_reload("§")
    assert splits_on_reload("a\r\n§\r\nb")
    assert not splits_on_reload("a § b") and not splits_on_reload("§5 of the contract")


def test_exact_match_beats_substring():
    entries = ["all tests pass in CI", "test"]
    assert find_unique_match(entries, "test") == (1, [])
    assert find_unique_match(entries, "tests") == (0, [])
    assert find_unique_match(entries, "nothing") == (None, [])


def test_ambiguous_distinct_matches_give_80_char_previews():
    long = "x" * 100 + " alpha"
    index, previews = find_unique_match([long, "alpha beta"], "alpha")
    assert index == AMBIGUOUS
    assert previews == ["x" * 80 + "...", "alpha beta"]
    assert preview("short") == "short"


def test_identical_duplicates_resolve_to_first():
    assert find_unique_match(["same", "other", "same"], "sam") == (0, [])


def test_matching_is_case_sensitive():
    assert find_unique_match(["Uses Docker"], "docker") == (None, [])


def test_usage_strings():
    assert usage_short(1474, 2200) == "1,474/2,200"
    assert usage_long(1474, 2200) == "67% — 1,474/2,200 chars"
    assert usage_long(5000, 2200).startswith("100% — ")
    assert usage_long(2199, 2200).startswith("99% ")
