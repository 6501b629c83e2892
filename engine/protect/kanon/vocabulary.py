"""The vocabulary of each quasi-identifier: the values a union or a swap may write into another record's text
(issue 54). A union or a swap moves values between records, so what it writes must come from a list of attribute
values, never from a single post: a stated value is written as its list writes it (`form`), and a value no list
holds (a tagger's error, a handle, a name) is generalized instead (`released`: its hierarchy's first level above
the value, "*" when the hierarchy does not know it either).

The lists (`gazetteers`, `hierarchies`): ages, as the number or life-stage word they state; race or nationality,
the demonyms and the hand-kept race words; places, the place names with where they lie; gender, the hand-kept
gender words; languages, the ISO 639 names; occupations, the BLS index's job titles and the last words of its
titles.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.protect.kanon.gazetteers import (
    GENDER_WORDS,
    RACE_WORDS,
    demonyms,
    language_code,
    occupation_title,
)
from engine.protect.kanon.hierarchies import AGE_WORDS, age_range, place
from engine.protect.kanon.lattice import Hierarchy


def _key(value: str) -> str:
    return " ".join(value.strip().lstrip("#").strip().lower().split())


def age_form(value: str) -> str | None:
    """An age as the number or life-stage word it states ("25yo" → "25", "20s", "teen"), or None."""
    key = _key(value)
    span = age_range(key)
    if span is None:
        return None
    if key in AGE_WORDS:
        return key
    low, high = span
    return f"{low}s" if high > low else str(low)


def race_form(value: str) -> str | None:
    """A demonym ("americans" → "American") or a race word of the hand-kept list, capitalized; or None."""
    key = _key(value)
    for candidate in (key, key.removesuffix("s")):
        if candidate in demonyms() or candidate in RACE_WORDS:
            return candidate.title()
    return None


def place_form(value: str) -> str | None:
    """A place as its list names it ("usa" → "United States"), or None."""
    where = place(value)
    return None if where is None else where.name


def gender_form(value: str) -> str | None:
    key = _key(value)
    return key if key in GENDER_WORDS else None


def language_form(value: str) -> str | None:
    """A language by its ISO 639 name ("EN" → "English"), or None."""
    import pycountry

    code = language_code(value)
    found = None if code is None else pycountry.languages.get(alpha_3=code)
    return None if found is None else str(found.name)


FORMS: dict[str, Callable[[str], str | None]] = {
    "QIAGE": age_form,
    "QIRACE": race_form,
    "QIREGION": place_form,
    "QIGENDER": gender_form,
    "QILANG": language_form,
    "QIJOB": occupation_title,
}
"""Per quasi-identifier label: a stated value as its list writes it, or None when no list holds it."""


def form(label: str, value: str) -> str | None:
    """``value`` of ``label`` as its list writes it; None when it is outside the vocabulary."""
    return FORMS[label](value)


def released(label: str, value: str, hierarchy: Hierarchy) -> str:
    """What a union or a swap may write for ``value``: its form, else its generalization one level up ("*"
    when the hierarchy does not know it: a handle, a name)."""
    written = form(label, value)
    return written if written is not None else hierarchy.at(value, 1)
