"""The features of each token the privacy-attribute tagger reads (Abeywardana & Thayasivam, Table 4): where it
stands, its case, its affixes, the words beside it, whether it holds a hyphen or is a number, its part of
speech (the Penn Treebank tag of spaCy's tagger) and spaCy's named-entity label for it (the paper's gazetteer
feature; the entities `engine.text.entities.named_entities` finds once per corpus); beside them, as stated
additions (measured in `benchmarks/bench_kanon.py`), the token itself, whether it is a hashtag or a handle, and
whether it is in the word lists of `gazetteers` (a demonym, a country or state, a city, a continent or region, a
language's name or code; part of a job title, a health condition's name or a place's name of several words
written out in the post, or the last word of job titles), and (issue 51, chosen by cross-validation on the
training part alone) what generalises beyond the gold set's own words: the token without its hashtag or handle
sign and its singular, its shape ("Xx", "d"), a four-letter suffix, which hand-kept cue list holds it (`cue`:
age, role, religion, relationship, politics, orientation, health, race, gender; "race" also for a demonym or a
people's name of `gazetteers.PEOPLE_WORDS`), whether it reads as an age or stands by an age's word, and the
sign-free token, shape, part of speech, entity and cue of the two tokens on either side, with the word pairs it
forms with its neighbours.

Tokens are those of `engine.protect.kanon.gold.TOKEN` (hashtags and handles whole); a token takes the part of
speech and entity label of the first spaCy token inside it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.protect.kanon.gazetteers import (
    AGE_CONTEXT,
    AGE_WORDS,
    GENDER_WORDS,
    HEALTH_WORDS,
    ORIENTATION_WORDS,
    PEOPLE_WORDS,
    POLITICS_WORDS,
    RACE_WORDS,
    REGION_WORDS,
    RELATIONSHIP_WORDS,
    RELIGION_WORDS,
    ROLE_WORDS,
    demonyms,
    health_conditions,
    job_titles,
    language_code,
    language_names,
    occupation_groups,
    place_names,
)
from engine.protect.kanon.gold import tokens
from engine.text.entities import Entity, load_pipeline, named_entities

if TYPE_CHECKING:
    from spacy.language import Language

Features = dict[str, str | bool]


@lru_cache(maxsize=1)
def load_tagging_spacy() -> Language:
    """spaCy's small English model with what part-of-speech tags need (its shared token embedding and tagger;
    the entities come from `engine.text.entities.named_entities`, found once per corpus for every method)."""
    return load_pipeline(["parser", "attribute_ruler", "lemmatizer", "senter", "ner"])


RESOURCES = (
    place_names,
    demonyms,
    language_names,
    occupation_groups,
    job_titles,
    health_conditions,
    load_tagging_spacy,
)
"""What the features read, each loaded once per process (up to 2 s each): the word lists and spaCy."""


def _word(text: str) -> str:
    return text.lower()


def shape(word: str) -> str:
    """The word's shape, runs of one kind written once: "Xx" for "Teacher", "d" for "25", "dx" for "25yo",
    "#Xx" for "#Photographer"."""
    out: list[str] = []
    for c in word:
        kind = "X" if c.isupper() else "x" if c.isalpha() else "d" if c.isdigit() else c
        if not out or out[-1] != kind:
            out.append(kind)
    return "".join(out)


def _stem(key: str) -> str:
    """A plural's singular, crudely ("teachers" → "teacher", "ladies" → "lady"; "ss" kept)."""
    if key.endswith("ies") and len(key) > 4:
        return key[:-3] + "y"
    if key.endswith("s") and not key.endswith("ss") and len(key) > 3:
        return key[:-1]
    return key


CONTEXT_KEYS = ("core", "shape", "pos_tag", "named_entity", "cue")
"""The features of the tokens beside a token (one and two before and after) that it also reads."""


def token_features(words: Sequence[str], pos: Sequence[str], entity: Sequence[str]) -> list[Features]:
    """Table 4's features of every token of one post, with the stated additions (module docstring)."""
    out: list[Features] = []
    n = len(words)
    keys = [w.lstrip("#@").lower() for w in words]
    _, heads = occupation_groups()
    in_title = phrase_mask(keys, job_titles(), 4)
    in_health = phrase_mask(keys, health_conditions(), 3)
    in_place = phrase_mask(keys, multiword_places(), 4)
    cues = [cue(k) for k in keys]
    for i, w in enumerate(words):
        core = w.lstrip("#@")
        key = keys[i]
        out.append(
            {
                "is_first": i == 0,
                "is_last": i == n - 1,
                "is_capitalized": core[:1].isupper(),
                "is_all_caps": core.isupper(),
                "is_all_lower": core.islower(),
                "prefix-1": _word(core[:1]),
                "prefix-2": _word(core[:2]),
                "prefix-3": _word(core[:3]),
                "suffix-1": _word(core[-1:]),
                "suffix-2": _word(core[-2:]),
                "suffix-3": _word(core[-3:]),
                "suffix-4": _word(core[-4:]),
                "word": _word(w),
                "core": key,
                "stem": _stem(key),
                "shape": shape(w),
                "prev_word": _word(words[i - 1]) if i else "<s>",
                "next_word": _word(words[i + 1]) if i + 1 < n else "</s>",
                "has_hyphen": "-" in w,
                "is_numeric": core.replace(".", "", 1).isdigit(),
                "is_hashtag": w.startswith("#"),
                "is_handle": w.startswith("@"),
                "pos_tag": pos[i],
                "named_entity": entity[i],
                **gazetteer_features(core),
                "gaz_job_title": in_title[i],
                "gaz_job_head": key in heads or _stem(key) in heads,
                "gaz_health": in_health[i],
                "gaz_place_phrase": in_place[i],
                "gaz_place_written": (core[:1].isupper() or w.startswith("#")) and _is_place(key),
                "cue": cues[i],
                "age_number": _age_number(key),
                "age_context": any(k in AGE_CONTEXT for k in keys[max(0, i - 2) : i + 3]),
            }
        )
    for i, f in enumerate(out):  # the context window
        for offset in (-2, -1, 1, 2):
            j = i + offset
            for name in CONTEXT_KEYS:
                f[f"{offset:+d}:{name}"] = str(out[j][name]) if 0 <= j < n else ("<s>" if j < 0 else "</s>")
        f["-1:core|core"] = f"{out[i - 1]['core'] if i else '<s>'}|{f['core']}"
        f["core|+1:core"] = f"{f['core']}|{out[i + 1]['core'] if i + 1 < n else '</s>'}"
    return out


def _is_place(key: str) -> bool:
    found = dict(_in_word_lists(key))
    return bool(found["gaz_country_or_state"] or found["gaz_city"] or found["gaz_region"])


def _age_number(key: str) -> bool:
    """Whether ``key`` reads as an age: a whole number from 1 to 110, or one with "yo", "y/o" or "+" ("25yo")."""
    digits = key.removesuffix("yo").removesuffix("y/o").removesuffix("+")
    return digits.isdigit() and 0 < int(digits) <= 110


def cue(key: str) -> str:
    """Which cue list (`gazetteers`) holds ``key`` (lower case, its sign removed) or its singular: age, role,
    religion, relationship, politics, orientation, health, race or gender; else "race" when it names a people
    (`names_people`: a demonym or one of `PEOPLE_WORDS`); "" for none."""
    spaced = key.replace("-", " ")
    for candidate in (spaced, _stem(spaced)):
        for name, words in _CUES:
            if candidate in words:
                return name
    return "race" if names_people(key) else ""


def names_people(key: str) -> bool:
    """Whether ``key`` (lower case, its sign removed) or its singular is a demonym ("canadians") or in
    `PEOPLE_WORDS` ("aussie", "cherokee")."""
    key = key.replace("’", "'")
    singulars = (key, _stem(key), key.removesuffix("s"))
    return any(k in demonyms() for k in singulars) or any(k in PEOPLE_WORDS for k in singulars[:2])


_CUES = (
    ("relationship", RELATIONSHIP_WORDS),
    ("orientation", ORIENTATION_WORDS),
    ("religion", RELIGION_WORDS),
    ("politics", POLITICS_WORDS),
    ("health", HEALTH_WORDS),
    ("age", AGE_WORDS),
    ("race", RACE_WORDS),
    ("gender", GENDER_WORDS),
    ("role", ROLE_WORDS),
)


@lru_cache(maxsize=1)
def multiword_places() -> frozenset[str]:
    """Place names of two to four words (countries, states and cities of `place_names`: "new york", "south
    africa"), for the phrase feature."""
    countries, subdivisions, cities, _ = place_names()
    names = (countries, subdivisions, cities, REGION_WORDS)
    return frozenset(k for group in names for k in group if 2 <= len(k.split()) <= 4)


def phrase_mask(keys: Sequence[str], phrases: Collection[str], longest: int) -> list[bool]:
    """Per token, whether it lies in a run of ``keys`` (lower-case tokens) that is one of ``phrases`` (of at most
    ``longest`` words; the longest run at each position)."""
    mask = [False] * len(keys)
    for i in range(len(keys)):
        for length in range(min(longest, len(keys) - i), 0, -1):
            if " ".join(keys[i : i + length]) in phrases:
                mask[i : i + length] = [True] * length
                break
    return mask


def gazetteer_features(word: str) -> Features:
    """Whether ``word`` is a demonym, a country or state, a city (longer than 3 letters: "Nice" is a word
    too), a continent or world region, a language's name (longer than 3 letters) or a language's code (2 or 3
    letters: "the" is one, so it is a feature of its own)."""
    return dict(_in_word_lists(word.lower()))


@lru_cache(maxsize=2**16)
def _in_word_lists(key: str) -> tuple[tuple[str, bool], ...]:
    countries, subdivisions, cities, _ = place_names()
    return (
        ("gaz_demonym", key in demonyms() or key.removesuffix("s") in demonyms()),
        ("gaz_country_or_state", len(key) > 2 and (key in countries or key in subdivisions)),
        ("gaz_city", len(key) > 3 and key in cities),
        ("gaz_region", key in REGION_WORDS),
        ("gaz_language", len(key) > 3 and language_code(key) is not None),
        ("gaz_language_code", 2 <= len(key) <= 3 and language_code(key) is not None),
    )


def posts_features(
    texts: Iterable[str], entities: Iterable[Sequence[Entity]] | None = None, batch_size: int = 256
) -> list[tuple[list[tuple[int, int]], list[Features]]]:
    """For each text: its tokens (start, end) and their features, spaCy's tagger run over the texts in
    batches; ``entities`` are spaCy's entities of each text (default: `named_entities`), a spaCy token taking
    the label of the entity it lies in (as spaCy's own ``ent_type_``)."""
    nlp = load_tagging_spacy()
    texts = list(texts)
    entities = named_entities(texts) if entities is None else entities
    out = []
    for text, doc, found in zip(texts, nlp.pipe(texts, batch_size=batch_size), entities, strict=True):
        spans = tokens(text)
        starts = sorted(found)
        by_char: dict[int, tuple[str, str]] = {}
        k = 0
        for t in doc:  # tokens and entities both in order of their start
            while k < len(starts) and starts[k][1] <= t.idx:
                k += 1
            inside = k < len(starts) and starts[k][0] <= t.idx
            by_char.setdefault(t.idx, (t.tag_ or "X", starts[k][2] if inside else "O"))
        pos, entity = [], []
        for start, end in spans:
            hit = next((by_char[c] for c in range(start, end) if c in by_char), ("X", "O"))
            pos.append(hit[0])
            entity.append(hit[1])
        out.append((spans, token_features([text[s:e] for s, e in spans], pos, entity)))
    return out
