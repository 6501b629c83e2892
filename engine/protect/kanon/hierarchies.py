"""Generalization hierarchies of the quasi-identifiers found in text (Abeywardana & Thayasivam, Table 6; the
issue's levels): age → 5-, 10-, 20-year bands → any; place → state or region → country → continent → any;
language → family → any; occupation → occupational group → any; gender → any. Each is a `lattice.Hierarchy`;
where the word lists come from is said beside each.

Ages: a number of 1–3 digits (with "yo", "y/o", "yrs", "years" glued on or not) is an age; 4 digits from 1900
to 2099 are a birth year, banded the same way on the year ("1990" → "1990-1994"); a life-stage word of the
list below is the range it names, released at the first level whose band holds the whole range (a teen,
13–19, is "10-19" from the 5-year level on). Any other value goes to "*" above level 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.protect.kanon.gazetteers import (
    CONTINENTS,
    language_code,
    language_families,
    occupation_group,
    place_names,
)
from engine.protect.kanon.lattice import ANY, Hierarchy

AGE_BANDS = (5, 10, 20)
AGE_WORDS = {
    "teen": (13, 19),
    "teens": (13, 19),
    "teenager": (13, 19),
    "twenties": (20, 29),
    "thirties": (30, 39),
    "forties": (40, 49),
    "fifties": (50, 59),
    "sixties": (60, 69),
    "seventies": (70, 79),
    "eighties": (80, 89),
    "nineties": (90, 99),
}
"""Life-stage words and the age ranges they state (a decade's name, or the teens)."""
_NUMBER = re.compile(r"(\d{1,4})\s*(?:yo|y/o|yrs?|years?(?: old)?|s)?", re.IGNORECASE)


def age_range(value: str) -> tuple[int, int] | None:
    """The ages (or birth years) a stated age covers, or None when it is not one."""
    text = value.strip().lower().lstrip("#")
    if text in AGE_WORDS:
        return AGE_WORDS[text]
    m = _NUMBER.fullmatch(text)
    if m is None:
        return None
    number = int(m.group(1))
    if len(m.group(1)) == 4:
        return (number, number) if 1900 <= number <= 2099 else None
    if text.endswith("s") and not text.endswith(("yrs", "years")) and number % 10 == 0:  # "20s"
        return number, number + 9
    return (number, number) if 1 <= number <= 120 else None


def generalize_age(value: str, level: int) -> str:
    """``value`` at ``level`` (1–3: the bands of `AGE_BANDS`): the narrowest band at or above that level
    holding the whole range the value states, else "*"."""
    span = age_range(value)
    if span is None:
        return ANY
    low, high = span
    for width in AGE_BANDS[level - 1 :]:
        if low // width == high // width:
            start = low // width * width
            return f"{start}-{start + width - 1}"
    return ANY


AGE = Hierarchy(len(AGE_BANDS) + 1, generalize_age, tuple(f"{w}-year bands" for w in AGE_BANDS))
GENDER = Hierarchy(1, lambda value, level: value)
"""Gender: the value itself, or any."""


# Places: place → state or region → country → continent → any (name indexes: `gazetteers`). A name that is
# several places is the most populous city, after a country and a subdivision of that name.
@dataclass(frozen=True)
class Place:
    state: str | None
    country: str | None  # ISO 3166-1 alpha-2
    continent: str | None
    name: str  # as the list writes it: "United States" for "USA", "Seattle" for "SEATTLE"


def country_name(code: str) -> str:
    """A country's name as people write it ("South Korea", not "Korea, Republic of")."""
    import pycountry

    found = pycountry.countries.get(alpha_2=code)
    if found is None:
        return code
    return str(getattr(found, "common_name", None) or found.name)


def place(value: str) -> Place | None:
    """Where a place name lies (None when it is no known place)."""
    countries, subdivisions, cities, continent = place_names()
    key = value.strip().lstrip("#").strip().lower()
    for name in CONTINENTS:
        if key == name.lower():
            return Place(None, None, name, name)
    if key in countries:
        code = countries[key]
        return Place(None, code, continent.get(code), country_name(code))
    if key in subdivisions:
        state, code = subdivisions[key]
        return Place(state, code, continent.get(code), state)
    if key in cities:
        state, code, name = cities[key]
        return Place(state or None, code, continent.get(code), name)
    return None


def generalize_place(value: str, level: int) -> str:
    """``value`` at ``level``: 1 its state or region (else its country), 2 its country, 3 its continent."""
    where = place(value)
    if where is None:
        return ANY
    country = country_name(where.country) if where.country else None
    steps = [where.state or country, country, where.continent]
    for step in steps[level - 1 :]:
        if step:
            return step
    return ANY


PLACE = Hierarchy(4, generalize_place, ("state or region", "country", "continent"))


# Languages: language → family → any (`gazetteers`: ISO 639 names and codes, Glottolog families).
def generalize_language(value: str, level: int) -> str:
    code = language_code(value)
    family = language_families().get(code) if code else None
    return f"{family} languages" if family and level == 1 else ANY


LANGUAGE = Hierarchy(2, generalize_language, ("language family",))


# Occupations: occupation → occupational group of the BLS Occupational Outlook Handbook → any (`gazetteers`).
def generalize_occupation(value: str, level: int) -> str:
    group = occupation_group(value)
    return group if group and level == 1 else ANY


OCCUPATION = Hierarchy(2, generalize_occupation, ("occupational group",))
