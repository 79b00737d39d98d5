"""Highlight marks: a marked excerpt cut to its cap keeps its marks whole."""

from __future__ import annotations


def test_cap_marked_never_cuts_inside_a_mark() -> None:
    """A snippet cut to its cap could end inside a mark (``>>``) or with a span left open; with
    a front end's long marks that left raw mark characters or an unclosed bold on the screen."""
    from hermes_store.excerpts import cap_marked

    marks = ("\ue000abc\ue001", "\ue002abc\ue001")
    text = "aaaa " + marks[0] + "word" + marks[1] + " tail"
    for limit in range(3, len(text) + 1):
        cut = cap_marked(text, limit, marks)
        assert cut.count(marks[0]) == cut.count(marks[1]), (limit, cut)
        assert "\ue000" not in cut.replace(marks[0], "") and "\ue002" not in cut.replace(marks[1], ""), (limit, cut)
    assert cap_marked("x >>>y<<<", 100) == "x >>>y<<<"
    assert cap_marked("ab >>>cdef<<< gh", 9) == "ab >>>cd<<<\u2026"
