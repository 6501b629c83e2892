"""Generalization hierarchies of the kanon method on hand cases (issue 14)."""

from __future__ import annotations

import pytest

from engine.protect.kanon.hierarchies import AGE, GENDER, LANGUAGE, OCCUPATION, PLACE, age_range


@pytest.mark.parametrize(
    "value, levels",
    [
        ("65", ["65", "65-69", "60-69", "60-79", "*"]),
        ("25yo", ["25yo", "25-29", "20-29", "20-39", "*"]),
        ("18 years old", ["18 years old", "15-19", "10-19", "0-19", "*"]),
        ("1990", ["1990", "1990-1994", "1990-1999", "1980-1999", "*"]),
        ("teen", ["teen", "10-19", "10-19", "0-19", "*"]),  # 13–19 fits no 5-year band
        ("twenties", ["twenties", "20-29", "20-29", "20-39", "*"]),
        ("20s", ["20s", "20-29", "20-29", "20-39", "*"]),
        ("old", ["old", "*", "*", "*", "*"]),
    ],
)
def test_age_bands(value, levels):
    assert [AGE.at(value, level) for level in range(AGE.height + 1)] == levels


def test_what_is_not_an_age():
    assert age_range("1850") is None and age_range("500") is None and age_range("toddler") is None
    assert age_range("0") is None


def test_gender_goes_to_any():
    assert GENDER.at("woman", 0) == "woman" and GENDER.at("woman", 1) == "*"


@pytest.mark.parametrize(
    "value, levels",
    [
        ("Texas", ["Texas", "Texas", "United States", "Americas", "*"]),
        ("TX", ["TX", "Texas", "United States", "Americas", "*"]),
        ("#chicago", ["#chicago", "Illinois", "United States", "Americas", "*"]),
        ("USA", ["USA", "United States", "United States", "Americas", "*"]),
        ("UK", ["UK", "United Kingdom", "United Kingdom", "Europe", "*"]),
        ("Lagos", ["Lagos", "Lagos", "Nigeria", "Africa", "*"]),
        ("Europe", ["Europe", "Europe", "Europe", "Europe", "*"]),
        ("Nowhereville", ["Nowhereville", "*", "*", "*", "*"]),
    ],
)
def test_place_hierarchy(value, levels):
    assert [PLACE.at(value, level) for level in range(PLACE.height + 1)] == levels


@pytest.mark.parametrize(
    "value, family",
    [
        ("English", "Indo-European languages"),
        ("EN", "Indo-European languages"),
        ("Tagalog", "Austronesian languages"),
        ("Yoruba", "Atlantic-Congo languages"),
        ("bilingual", "*"),
    ],
)
def test_language_hierarchy(value, family):
    assert [LANGUAGE.at(value, level) for level in range(LANGUAGE.height + 1)] == [value, family, "*"]


@pytest.mark.parametrize(
    "value, group",
    [
        ("chemical engineer", "Architecture and engineering occupations"),  # a title of the A–Z index
        ("Writers", "Media and communication occupations"),  # its plural
        ("#Teacher", "Education training and library occupations"),  # the group of titles ending in "teacher"
        ("Software Engineer", "Computer and information technology occupations"),
        ("Writer/Director", "Media and communication occupations"),  # the first part with a group
        ("CEO", "Management occupations"),  # the stated aliases
        ("blogger", "*"),  # no title and no title's last word
    ],
)
def test_occupation_hierarchy(value, group):
    assert [OCCUPATION.at(value, level) for level in range(OCCUPATION.height + 1)] == [value, group, "*"]


def test_generalized_occupations_are_released_as_their_group():
    import pandas as pd

    from engine.protect.kanon.sanitize import sanitize

    qi = pd.DataFrame({"QIJOB": [("nurse",), ("surgeon",), ("teacher",), ("professor",)]})
    done = sanitize(qi, 2, {"QIJOB": "generalize"})
    assert done.anonymized.levels["QIJOB"] == 1
    assert (
        list(done.released["QIJOB"])
        == [("Healthcare occupations",)] * 2 + [("Education training and library occupations",)] * 2
    )


def test_language_families_load_under_a_console_script_whose_folder_holds_lang2vec_py():
    """`textsdc` runs with its folder (the venv's bin, where lang2vec installs a script named lang2vec.py) first on
    the path; the families are read from the package's data file, never by importing lang2vec."""
    import subprocess
    import sys
    from pathlib import Path

    bin_dir = str(Path(sys.executable).parent)
    code = (
        f"import sys; sys.path.insert(0, {bin_dir!r}); "
        "from engine.protect.kanon.gazetteers import language_families; print(language_families()['eng'])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "Indo-European"


@pytest.mark.parametrize(
    "label, value, written",
    [
        ("QIREGION", "usa", "United States"),
        ("QIREGION", "SEATTLE", "Seattle"),
        ("QIREGION", "Rebecca", None),  # a name the tagger took for a place
        ("QIRACE", "americans", "American"),
        ("QIRACE", "black", "Black"),
        ("QIRACE", "lenevans", None),  # a handle the tagger took for a nationality
        ("QIJOB", "writers", "Writer"),
        ("QIJOB", "CEO", "Top executives"),
        ("QIJOB", "renaissance art historian", None),
        ("QIAGE", "25yo", "25"),
        ("QIAGE", "twenties", "twenties"),
        ("QIGENDER", "Mom", "mom"),
        ("QILANG", "EN", "English"),
    ],
)
def test_the_vocabulary_writes_a_value_as_its_list_does_or_not_at_all(label, value, written):
    from engine.protect.kanon.vocabulary import form

    assert form(label, value) == written


def test_a_union_writes_only_vocabulary_values_and_at_most_three_else_the_level_above():
    import pandas as pd

    from engine.protect.kanon.sanitize import MAX_UNION, rebuild, sanitize

    places = ["seattle", "chicago", "boston", "austin", "rebecca"]
    qi = pd.DataFrame({"QIREGION": [(p,) for p in places]})
    done = sanitize(qi, 5, {"QIREGION": "union"})
    assert MAX_UNION == 3 and set(done.table["QIREGION"]) == {("United States",)}  # 4 cities, 4 states: a country
    text, _ = rebuild("Tweets by Rebecca Veals", [(10, 17, "QIREGION")], done.replacement[4])
    assert text == "Tweets by * Veals"  # outside the vocabulary: not united, not carried to the others
    text, _ = rebuild("Seattle born", [(0, 7, "QIREGION")], done.replacement[0])
    assert text == "United States born"
    few = sanitize(pd.DataFrame({"QIREGION": [("usa",), ("uk",), ("lenevans",)] * 2}), 2, {"QIREGION": "union"})
    assert set(few.table["QIREGION"]) == {("United Kingdom", "United States")}
