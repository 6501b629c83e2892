"""Named entities of each chunk, by category: the contingency table z of the swap (Greve & Sablica, Section 3.1).

spaCy's English model finds the entities of every chunk; its labels are grouped into the paper's categories
(organization, person, location, product, date, money, event by default; `CATEGORIES`). A chunk's value in a
category is the tuple of the distinct entity texts found in it there, in order of first mention (empty: none),
so the chunks × categories table is what `engine.protect.swap.swapping` swaps and what the risk DR counts
cells of; each mention keeps its offsets in the chunk, for rewriting the text after a swap.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from engine.progress import Progress, no_progress
from engine.protect.corrections import Corrections, corrected
from engine.protect.detection import GOLD_NAME, DetectionShare, gold_digest, gold_size, shipped_gold
from engine.store import stored
from engine.text.detection_share import Found, spans_found
from engine.text.entities import NER_PROCESSES, SPACY_MODEL, entity_spans, spacy_model_version

CATEGORIES: dict[str, tuple[str, ...]] = {
    "organization": ("ORG",),
    "person": ("PERSON",),
    "location": ("GPE", "LOC"),
    "product": ("PRODUCT",),
    "date": ("DATE",),
    "money": ("MONEY",),
    "event": ("EVENT",),
}
"""The paper's categories and the spaCy labels each gathers."""


PARALLEL_MIN_CHARS = 400_000
"""Characters of chunks from which their entities are found in `NER_PROCESSES` processes, however few the chunks
(`entity_spans` goes by pieces, 1,000 or more; a swap's chunks are long). The demo's 450 chunks, 0.63 M
characters: 5.7 s in this process, 4.5 s in two, their start included. Redaction keeps the rule by pieces: with
spaCy in two more processes, redacting the 306 calls of 2021 Q3 (6.1 M characters in 306 pieces) went from 164
to 133 s but its processes' memory together from 1,441 to 2,047 MB, past issue 11's 2 GB."""


@dataclass(frozen=True)
class ChunkEntities:
    """``values``: one row per chunk, one column per category, each cell the chunk's distinct entities there (a
    tuple); ``mentions``: one row per mention (chunk, start, end, category, text), offsets in the chunk."""

    values: pd.DataFrame
    mentions: pd.DataFrame


def chunk_entities(
    chunks: Sequence[str],
    categories: Mapping[str, Sequence[str]] = CATEGORIES,
    progress: Progress = no_progress,
    skip: re.Pattern[str] | None = None,
    corrections: Corrections | None = None,
) -> ChunkEntities:
    """The entities of every chunk by category (module docstring); an entity that overlaps a match of ``skip``
    (the placeholders of suppressed identifiers, which the recognizer may take for part of a name) is left
    out. With the steward's kept ``corrections`` (`engine.protect.corrections`, labels being categories): an
    allowed string is no entity, a denied one is an entity of its category wherever it stands as a word (a
    denied category this run does not take is left out)."""
    if not categories:
        raise ValueError("no entity category given; the paper's are " + ", ".join(CATEGORIES))
    category_of = {label: name for name, labels in categories.items() for label in labels}
    rows: list[dict[str, tuple[str, ...]]] = []
    mentions = []
    processes = NER_PROCESSES if sum(len(c) for c in chunks) >= PARALLEL_MIN_CHARS else None
    for k, spans in enumerate(entity_spans(chunks, len(chunks), progress, processes=processes, labels=category_of)):
        text = chunks[k]
        found: dict[str, list[str]] = {name: [] for name in categories}
        blocked = [(m.start(), m.end()) for m in skip.finditer(text)] if skip is not None else []
        named = [(start, end, category_of[label]) for start, end, label in spans]
        [named] = corrected([text], [named], corrections)
        for start, end, name in named:
            if name not in categories or any(start < b and a < end for a, b in blocked):
                continue
            entity = text[start:end]
            mentions.append((k, start, end, name, entity))
            if entity not in found[name]:
                found[name].append(entity)
        rows.append({name: tuple(v) for name, v in found.items()})
    values = pd.DataFrame(rows, columns=list(categories), index=pd.RangeIndex(len(chunks)))
    return ChunkEntities(values, pd.DataFrame(mentions, columns=["chunk", "start", "end", "category", "text"]))


GOLD_KINDS: dict[str, tuple[str, str]] = {"person": ("NAME", "people's names"), "location": ("QIREGION", "places")}
"""The categories the shipped gold annotates: the gold label that stands for each and what it is called."""


def gold_found(categories: Sequence[str], progress: Progress = no_progress) -> dict[str, Found]:
    """For each of ``categories`` the shipped gold annotates (`GOLD_KINDS`), how many of its spans spaCy's
    entities of that category find (`engine.text.detection_share`); found once per gold, spaCy model and
    categories, and kept in the cache folder."""
    measured = [c for c in categories if c in GOLD_KINDS]
    if not measured:
        return {}
    key = hashlib.sha256(
        json.dumps([gold_digest(), f"{SPACY_MODEL}=={spacy_model_version()}", measured]).encode()
    ).hexdigest()[:32]

    def compute() -> dict[str, Found]:
        docs = shipped_gold()
        found = chunk_entities([d.text for d in docs], {c: CATEGORIES[c] for c in measured}, progress)
        detected: list[list[tuple[int, int, str]]] = [[] for _ in docs]
        for chunk, start, end, category in found.mentions[["chunk", "start", "end", "category"]].itertuples(
            index=False
        ):
            detected[int(chunk)].append((int(start), int(end), str(category)))
        labels = {GOLD_KINDS[c][0]: c for c in measured}
        counts = spans_found(docs, detected, list(labels), accept={label: {c} for label, c in labels.items()})
        return {c: counts[label] for label, c in labels.items()}

    return stored("detection", f"swap-{key}", compute)


def detection_shares(protected: Sequence[str], found: Mapping[str, Found]) -> tuple[DetectionShare, ...]:
    """What spaCy finds of the ``protected`` categories (the swapped and the must-change ones) on the shipped
    gold, and which of them no gold annotates."""
    unmeasured = tuple(c + "s" if c != "money" else "amounts of money" for c in protected if c not in found)
    shares = [
        DetectionShare(
            detector="the entity recognizer",
            what=GOLD_KINDS[c][1],
            gold=f"{gold_size():,} posts of {GOLD_NAME}",
            found=found[c].found,
            total=found[c].total,
        )
        for c in protected
        if c in found
    ]
    if not shares:
        return (
            DetectionShare(
                detector="the entity recognizer",
                what=", ".join(unmeasured),
                gold="",
                found=0,
                total=0,
            ),
        )
    if unmeasured:
        shares[-1] = replace(shares[-1], unmeasured=unmeasured)
    return tuple(shares)
