"""`engine.text.word_diff`: the pieces two released values show side by side, what differs marked."""

from __future__ import annotations

from engine.text.word_diff import Piece, word_diff


def joined(pieces: list[Piece]) -> str:
    return "".join(p.text for p in pieces)


def test_a_replaced_placeholder_is_marked_on_both_sides_and_the_rest_is_kept():
    a = "[HANDLE_1] would pay $30 a flight"
    b = "[HANDLE_1] would pay [MONEY_1] a flight"
    left, right = word_diff(a, b)
    assert left == [Piece("[HANDLE_1] would pay ", False), Piece("$30", True), Piece(" a flight", False)]
    assert right == [Piece("[HANDLE_1] would pay ", False), Piece("[MONEY_1]", True), Piece(" a flight", False)]


def test_a_replaced_phrase_is_one_marked_stretch_and_each_side_joins_back_to_its_text():
    a = "Nice day  in\nParis, truly"
    b = "[GPE_1] day  in\n[GPE_2] [GPE_3], truly"
    left, right = word_diff(a, b)
    assert joined(left) == a and joined(right) == b
    assert [p.text for p in right if p.changed] == ["[GPE_1]", "[GPE_2] [GPE_3],"]
    assert [p.text for p in left if p.changed] == ["Nice", "Paris,"]


def test_equal_texts_have_nothing_marked_and_an_empty_side_has_no_piece():
    assert word_diff("same words", "same words") == ([Piece("same words", False)], [Piece("same words", False)])
    assert word_diff("", "new") == ([], [Piece("new", True)])
    assert word_diff("old", "") == ([Piece("old", True)], [])
