"""Consistent redaction: an identifier replaced once is replaced wherever it recurs, under one placeholder.

Three steps on the spans `engine.text.entities.find_identifiers` found (one row per span: record, start, end,
label, tier, original):

1. `author_name_spans`: the values of the author column (screen names) are identifiers in the text too, with
   or without their ``@``: a bare mention of an author's name is a HANDLE span of tier 1.
   `listed_spans`: the strings of an identifiers file beside the data (company names, tickers, executives)
   are identifiers wherever they appear.
2. `propagate`: every found original recurs as a span of its own label and tier wherever it appears as a whole
   word in any record (the detector may have missed it there: spaCy tags "Terry" as a person in one tweet and
   not in the next). An original found with several labels keeps the one of its lowest tier, so at every
   level an original is either replaced everywhere or nowhere.
3. `number_placeholders`: within a document (the schema's document column, else the record) each distinct
   original of a label gets a numbered placeholder, ``[PERSON_1]``, ``[PERSON_2]``, by first appearance; the
   same original gets the same placeholder at every occurrence in the document. Numbers restart in every
   document, so placeholders do not link records of different documents (a corpus-wide number would be a
   pseudonym an intruder could join records on). ``@name`` and ``name``, and spellings that differ only in
   case, count as one original.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from engine.text.entities import SPAN_COLUMNS, TIERS
from engine.text.names import names_people, variants_under

_TOKEN = re.compile(r"[@#]?\w+|[^\w\s]")
MIN_LENGTH = 2  # a one-character "original" is noise, not an identifier to chase through the corpus


def _overlaps(start: int, end: int, taken: list[tuple[int, int, int]], tier: int) -> bool:
    """Whether [start, end) overlaps a taken span replaced at every level where a span of ``tier`` is (a span
    of a higher tier does not block: at the levels below it, the occurrence inside it must still go)."""
    return any(start < e and s < end and t <= tier for s, e, t in taken)


def _find_all(
    texts: Sequence[str], needles: dict[str, tuple[str, int]], taken: dict[int, list[tuple[int, int, int]]]
) -> list[tuple[int, int, int, str, int, str]]:
    """Whole-word occurrences of ``needles`` (original → (label, tier)) not overlapping ``taken`` spans of their
    tier or a lower one (inside a span of a higher tier they are kept: `outermost` chooses at each level).

    Candidates are looked up by their first token, so the cost is the number of tokens times the few
    needles that start with each; where several start at one place the longest is taken first, and a
    shorter one only if its tier is lower.
    """
    by_first: dict[str, list[str]] = {}
    for needle in sorted(needles, key=lambda s: (-len(s), s)):
        first = _TOKEN.match(needle)
        if first is not None and first.start() == 0:
            by_first.setdefault(first.group(0), []).append(needle)
    found = []
    for record, text in enumerate(texts):
        spans = taken.setdefault(record, [])
        for tok in _TOKEN.finditer(text):
            for needle in by_first.get(tok.group(0), ()):
                start, end = tok.start(), tok.start() + len(needle)
                if text[start:end] != needle:
                    continue
                if (start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_@#")) or (
                    end < len(text) and (text[end].isalnum() or text[end] == "_")
                ):
                    continue
                label, tier = needles[needle]
                if _overlaps(start, end, spans, tier):
                    continue
                spans.append((start, end, tier))
                found.append((record, start, end, label, tier, needle))
                # no break: a shorter needle here of a lower tier ("Flight" inside "Flight Booking Problems")
                # is replaced at the levels below the longer one's; one of the same tier or higher is blocked
    return found


def _table(rows: list[tuple[int, int, int, str, int, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SPAN_COLUMNS).astype(
        {"record": "int64", "start": "int64", "end": "int64", "tier": "int64"}
    )


def _taken(spans: pd.DataFrame) -> dict[int, list[tuple[int, int, int]]]:
    taken: dict[int, list[tuple[int, int, int]]] = {}
    for r, s, e, t in zip(spans["record"], spans["start"], spans["end"], spans["tier"]):
        taken.setdefault(int(r), []).append((int(s), int(e), int(t)))
    return taken


def outermost(spans: pd.DataFrame) -> pd.DataFrame:
    """``spans`` without those overlapping an earlier or longer one of the same record: where a name found
    inside a longer span (a person's name inside an organization's) is replaced at a lower level, the longer
    span replaces both at the levels that include it."""
    if spans.empty:
        return spans
    order = spans.assign(_length=spans["end"] - spans["start"]).sort_values(
        ["record", "start", "_length"], ascending=[True, True, False], kind="stable"
    )
    keep, last_record, last_end = [], None, -1
    for index, record, start, end in zip(order.index, order["record"], order["start"], order["end"]):
        if record != last_record:
            last_record, last_end = record, -1
        if start >= last_end:
            keep.append(index)
            last_end = end
    return spans.loc[sorted(keep, key=order.index.get_loc)]


def author_name_spans(texts: Sequence[str], authors: Sequence[str], spans: pd.DataFrame) -> pd.DataFrame:
    """``spans`` plus a HANDLE span (tier 1) wherever an author's name appears in a text as a whole word, with
    or without its ``@``, outside the spans already found."""
    names = {str(a).strip().lstrip("@") for a in authors if isinstance(a, str)}
    needles: dict[str, tuple[str, int]] = {}
    for name in names:
        if len(name) >= MIN_LENGTH + 1 and re.fullmatch(r"\w+", name) and not name.isdigit():
            needles["@" + name] = ("HANDLE", TIERS["HANDLE"])
            needles[name] = ("HANDLE", TIERS["HANDLE"])
    extra = _find_all(texts, needles, _taken(spans))
    return _sorted(pd.concat([spans, _table(extra)], ignore_index=True))


def listed_spans(
    texts: Sequence[str], listed: Mapping[str, Mapping[str, Sequence[str]]], spans: pd.DataFrame, keys: bool = True
) -> pd.DataFrame:
    """``spans`` plus a span wherever a string of an identifiers file (`engine.data.identifiers_file`: key →
    label → strings) or one of its variants (`engine.text.names.variants_under`: without "Inc.", "The" or
    middle initials; a person's surname after Mr., Ms., Mrs. or Dr.) appears as a whole word, in the case
    written, outside the spans already found: PERSON (tier 2) for a label naming people
    (`engine.text.names.names_people`), else ORG (tier 3), and with ``keys`` the keys themselves (tickers) as
    ORG."""
    needles: dict[str, tuple[str, int]] = {}
    for key, by_label in listed.items():
        for label, strings in [*([("ticker", [key])] if keys else []), *by_label.items()]:
            kind = "PERSON" if names_people(label) else "ORG"
            for string in strings:
                for variant in variants_under(label, string):
                    if len(variant) >= MIN_LENGTH and variant not in needles:
                        needles[variant] = (kind, TIERS[kind])
    extra = _find_all(texts, needles, _taken(spans))
    return _sorted(pd.concat([spans, _table(extra)], ignore_index=True))


def propagate(texts: Sequence[str], spans: pd.DataFrame) -> pd.DataFrame:
    """``spans`` made consistent: each original gets the label of its lowest tier everywhere, and every
    further whole-word occurrence of an original becomes a span of that label and tier."""
    if spans.empty:
        return spans
    best = spans.assign(length=spans["original"].str.len()).sort_values(["tier", "label"], kind="stable")
    best = best[best["length"] >= MIN_LENGTH].drop_duplicates("original")
    needles = {o: (lb, int(t)) for o, lb, t in zip(best["original"], best["label"], best["tier"])}
    relabelled = spans.copy()
    known = relabelled["original"].map(lambda o: needles.get(o))
    has = known.notna()
    relabelled.loc[has, "label"] = [k[0] for k in known[has]]
    relabelled.loc[has, "tier"] = [k[1] for k in known[has]]
    extra = _find_all(texts, needles, _taken(relabelled))
    return _sorted(pd.concat([relabelled, _table(extra)], ignore_index=True))


def number_placeholders(spans: pd.DataFrame, documents: Sequence[object] | None = None) -> pd.Series:
    """The placeholder of every span: ``[LABEL_n]``, n counting the distinct originals of that label within
    the span's document by first appearance (``documents[record]``; each record its own document if None)."""
    if spans.empty:
        return pd.Series([], dtype=object, index=spans.index)
    records = spans["record"].to_numpy()
    doc = np.asarray(documents, dtype=object)[records] if documents is not None else records
    frame = pd.DataFrame(
        {
            "doc": pd.Series(doc, index=spans.index).astype(str),
            "label": spans["label"],
            # @name and name, Terry and TERRY are one identity
            "original": spans["original"].astype(str).str.lstrip("@").str.casefold(),
        }
    )
    order = frame.assign(record=spans["record"], start=spans["start"]).sort_values(["record", "start"], kind="stable")
    firsts = order.drop_duplicates(["doc", "label", "original"])
    numbers = firsts.groupby(["doc", "label"], sort=False).cumcount() + 1
    key = pd.Series(numbers.to_numpy(), index=pd.MultiIndex.from_frame(firsts[["doc", "label", "original"]]))
    n = key.reindex(pd.MultiIndex.from_frame(frame[["doc", "label", "original"]])).to_numpy()
    return pd.Series([f"[{lb}_{int(k)}]" for lb, k in zip(frame["label"], n)], index=spans.index, dtype=object)


def _sorted(spans: pd.DataFrame) -> pd.DataFrame:
    return spans.sort_values(["record", "start"], kind="stable").reset_index(drop=True)
