"""Direct identifiers of the protected metadata suppressed before any swap (Greve & Sablica, Section 3.1): the
company's name and its variants, its ticker, the executives named in the call, and web addresses, replaced by
"[Company Name]", "[Executive 1]", … and "[URL]".

The steward gives, per document, the strings that identify it under a label (e.g. {"Company Name": ["Automatic
Data Processing, Inc.", "ADP"], "Executive": ["Carlos Rodriguez"]}); they can come from the data's own columns.
Each name also matches without a legal suffix (Inc., Corporation, plc, …) and without a leading "The". Matches
are whole words; a short all-capital string (a ticker or an acronym, up to five letters) matches only in
capitals, so the ticker "ON" does not take the word "on"; any other string matches in any case. Longer strings
are replaced first. Labels that name people (`engine.text.names.names_people`: "Executive", "participants") are
numbered in the order given, so that each person stays one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from engine.protect.swap.edits import apply
from engine.text.names import identifier_pattern, names_people, variants_under
from engine.text.recognizers import URL_PATTERN

_URL = URL_PATTERN


def _url_end(text: str, match: re.Match[str]) -> int:
    """A web address ends before the punctuation that ends its sentence."""
    end = match.end()
    while end > match.start() + 1 and text[end - 1] in ".,;:!?)":
        end -= 1
    return end


def identifier_edits(text: str, identifiers: Mapping[str, Sequence[str]]) -> list[tuple[int, int, str, str]]:
    """Where ``text`` names a direct identifier (module docstring), as edits (start, end, placeholder, label
    "suppressed <placeholder>"), in order of appearance."""
    targets: list[tuple[str, str]] = []
    for label, values in identifiers.items():
        for k, value in enumerate(values, start=1):
            tag = f"[{label} {k}]" if names_people(label) else f"[{label}]"
            targets += [(variant, tag) for variant in variants_under(label, value)]
    targets.sort(key=lambda t: -len(t[0]))
    found: list[tuple[int, int, str]] = [(m.start(), _url_end(text, m), "[URL]") for m in _URL.finditer(text)]
    for value, tag in targets:
        for m in identifier_pattern(value).finditer(text):
            if not any(m.start() < end and start < m.end() for start, end, _ in found):
                found.append((m.start(), m.end(), tag))
    return [(start, end, tag, f"suppressed {tag}") for start, end, tag in sorted(found)]


def suppress_identifiers(text: str, identifiers: Mapping[str, Sequence[str]]) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with every direct identifier replaced (module docstring); also the (label, original) of each
    replacement, in order of appearance."""
    edits = identifier_edits(text, identifiers)
    return apply(text, edits), [(tag, text[start:end]) for start, end, tag, _ in edits]


SPELLED_OUT_SHARE = 0.5
"""Share of records from which a column that holds the record's protected value is withheld (`spelling_out`)."""


def spelling_out(frame: pd.DataFrame, field: str, columns: Sequence[str]) -> dict[str, int]:
    """Of ``columns``, those whose value holds the record's ``field`` value as a whole word, as written, in at
    least `SPELLED_OUT_SHARE` of the records whose value has two characters or more (one letter cannot be told
    from a word): a file path or an id that holds the ticker ("MAEC_Dataset/20170201_ADP/text.txt") would tell
    what the swap protects. Maps each such column to the records where it does. Letters and digits bound a word
    here, not "_", which joins the parts of a file name."""
    protected = frame[field].astype("string")
    usable = protected.notna() & (protected.str.len() >= 2)
    if not usable.any():
        return {}
    out = {}
    for column in columns:
        values = frame[column].astype("string")
        hits = sum(
            re.search(r"(?<![A-Za-z0-9])" + re.escape(str(v)) + r"(?![A-Za-z0-9])", str(c)) is not None
            for v, c in zip(protected[usable], values[usable])
            if c is not pd.NA
        )
        if hits >= SPELLED_OUT_SHARE * usable.sum():
            out[str(column)] = int(hits)
    return out


OWN_NAME_CATEGORIES = ("organization", "person", "product")
"""Entity categories whose names, held by one document's chunks only, name what the swap protects."""
OWN_NAME_CHUNKS = 3
"""Chunks of one document a name must appear in to be listed by `names_of_one` (a name seen once or twice may be
a customer or a place mentioned in passing)."""


def names_of_one(mentions: pd.DataFrame, labels: np.ndarray, field: str) -> pd.DataFrame:
    """Names the suppression left that only the chunks of one ``field`` value hold, in `OWN_NAME_CHUNKS` chunks or
    more, in the `OWN_NAME_CATEGORIES`: the company's own name where no identifiers file lists it ("Ameren",
    "AmerisourceBergen"), its executives' first names, its subsidiaries and products. A chunk the swap leaves
    keeps them, and they point to its value as a ticker would. ``mentions`` are the fit's entity mentions (chunk,
    category, text) and ``labels`` each chunk's value. Returns the rows of an identifiers file (``field``,
    label, value) with the chunks that hold each name, most first."""
    kept = mentions[mentions["category"].isin(OWN_NAME_CATEGORIES)]
    chunks = kept["chunk"].to_numpy(dtype=int)  # as integers when there are none too
    rows = kept.assign(label=np.asarray(labels, dtype=object)[chunks])
    per_name = rows.groupby("text").agg(
        values=("label", "nunique"), value=("label", "first"), chunks=("chunk", "nunique")
    )
    category = rows.groupby("text")["category"].agg(lambda c: c.value_counts().index[0])
    own = per_name[(per_name["values"] == 1) & (per_name["chunks"] >= OWN_NAME_CHUNKS)].join(category)
    own = own.reset_index().sort_values(["chunks", "text"], ascending=[False, True], kind="stable")
    labels_of = {"organization": "Company Name", "person": "Executive", "product": "Product"}
    return pd.DataFrame(
        {
            field: own["value"].astype(str).to_numpy(),
            "label": own["category"].map(labels_of).to_numpy(),
            "value": own["text"].astype(str).to_numpy(),
            "chunks": own["chunks"].astype(int).to_numpy(),
        }
    )
