"""Named entities of each chunk, by category: the contingency table z of the swap (Greve & Sablica, Section 3.1).

spaCy's English model finds the entities of every chunk; its labels are grouped into the paper's categories
(organization, person, location, product, date, money, event by default; `CATEGORIES`). A chunk's value in a
category is the tuple of the distinct entity texts found in it there, in order of first mention (empty: none),
so the chunks × categories table is what `engine.protect.swap.swapping` swaps and what the risk DR counts
cells of; each mention keeps its offsets in the chunk, for rewriting the text after a swap.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from engine.progress import Progress, no_progress
from engine.text.entities import NER_PROCESSES, entity_spans

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
) -> ChunkEntities:
    """The entities of every chunk by category (module docstring); an entity that overlaps a match of ``skip``
    (the placeholders of suppressed identifiers, which the recognizer may take for part of a name) is left
    out."""
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
        for start, end, label in spans:
            if any(start < b and a < end for a, b in blocked):
                continue
            name, entity = category_of[label], text[start:end]
            mentions.append((k, start, end, name, entity))
            if entity not in found[name]:
                found[name].append(entity)
        rows.append({name: tuple(v) for name, v in found.items()})
    values = pd.DataFrame(rows, columns=list(categories), index=pd.RangeIndex(len(chunks)))
    return ChunkEntities(values, pd.DataFrame(mentions, columns=["chunk", "start", "end", "category", "text"]))
