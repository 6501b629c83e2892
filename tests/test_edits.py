"""Edits of a text applied and composed: the swap's record of changes comes from the steps that made a chunk."""

from __future__ import annotations

import random

import pytest

from engine.protect.swap.edits import apply, compose


def test_suppression_then_swap_compose_to_edits_of_the_original():
    original = "ADP DataCloud grew in Boston, said ADP."
    first = [(0, 3, "[Ticker]", "suppressed [Ticker]"), (35, 38, "[Ticker]", "suppressed [Ticker]")]
    middle = apply(original, first)
    assert middle == "[Ticker] DataCloud grew in Boston, said [Ticker]."
    second = [(9, 18, "Globex", "organization swapped in from document B"), (27, 33, "Austin", "location swapped")]
    assert compose(first, second, middle) == [
        (0, 3, "[Ticker]", "suppressed [Ticker]"),
        (4, 13, "Globex", "organization swapped in from document B"),
        (22, 28, "Austin", "location swapped"),
        (35, 38, "[Ticker]", "suppressed [Ticker]"),
    ]


def test_a_second_edit_over_a_first_one_becomes_one_edit_with_the_second_label():
    original = "Call with Jane Doe today"
    first = [(10, 18, "[Executive 1]", "suppressed [Executive 1]")]
    middle = apply(original, first)  # "Call with [Executive 1] today"
    second = [(11, 20, "Person", "person swapped in from document B")]  # inside the placeholder
    out = compose(first, second, middle)
    assert out == [(10, 18, "[Person 1]", "person swapped in from document B")]
    assert apply(original, out) == apply(middle, second)


def test_composed_edits_give_what_the_two_steps_give_on_random_texts():
    rng = random.Random(7)

    def edits(text: str, k: int, deletes: bool) -> list[tuple[int, int, str, str]]:
        points = sorted(rng.sample(range(len(text) + 1), 2 * min(k, (len(text) + 1) // 2)))
        return [
            (a, b, "".join(rng.choice("XY[]") for _ in range(rng.randint(0 if deletes else 1, 5))), f"at {a}")
            for a, b in zip(points[::2], points[1::2])
        ]

    for _ in range(3000):
        a = "".join(rng.choice("ab ") for _ in range(rng.randint(6, 30)))
        first = edits(a, rng.randint(0, 3), deletes=False)
        b = apply(a, first)
        second = edits(b, rng.randint(0, 3), deletes=True)
        out = compose(first, second, b)
        assert apply(a, out) == apply(b, second)
        assert all(s1 <= e1 <= s2 for (s1, e1, *_), (s2, *_) in zip(out, out[1:]))


def test_overlapping_edits_and_deleting_first_edits_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        apply("abcdef", [(0, 3, "x", ""), (2, 4, "y", "")])
    with pytest.raises(ValueError, match="deletes"):
        compose([(0, 2, "", "")], [], "cdef")
