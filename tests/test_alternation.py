"""The trie of `longest_first` matches what an alternation of the same strings, longest first, matches."""

from __future__ import annotations

import random
import re

from engine.text.alternation import longest_first


def _words(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + pattern + r")(?!\w)", flags)


def test_the_longest_name_that_ends_at_a_word_boundary_wins():
    names = ["Apple", "Apple Inc", "Apple Inc.", "Apple Incorporated", "App"]
    found = _words(longest_first(names)).findall("Apple Inc. and Apple Incor and Apples, App, Apple Incorporated")
    assert found == ["Apple Inc.", "Apple", "App", "Apple Incorporated"]
    assert _words(longest_first([])).findall("anything") == []


def test_it_matches_as_the_alternation_sorted_longest_first_on_random_names():
    rng = random.Random(3)
    alphabet = "abAB .&-'"
    for _ in range(1500):
        names = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))).strip() for _ in range(20)} - {""}
        for flags in (0, re.IGNORECASE):
            chosen = {n.casefold() for n in names} if flags else names  # the gazetteer casefolds what it folds
            alternation = "|".join(map(re.escape, sorted(chosen, key=len, reverse=True)))
            for _ in range(4):
                text = "".join(rng.choice(alphabet + "cd") for _ in range(rng.randint(0, 40)))
                expected = _words(alternation, flags).findall(text)
                assert _words(longest_first(chosen), flags).findall(text) == expected, (chosen, text)
