"""A company's own vocabulary, learnt from the data: the words only one protected value's documents use, found
like a named-entity category ("term") so that a swap can exchange them (an extension of Greve & Sablica, whose
categories are spaCy's entities only).

Measured against an intruder trained on another quarter's calls (issue 50, docs/swap.md), what still names a
swapped chunk is mostly what no entity category holds: a company's products and brands spaCy does not tag, its
segments and plants, its jargon. A word is a company term when the chunks of one value of the protected field
(one company) hold it in `MIN_CHUNKS` chunks or more and hold at least `CONCENTRATION` of the chunks that hold it
(in any case): on 60 of the 2021 Q3 calls, words one company alone uses left the background intruder naming 0.79
of the swapped chunks she named before the swap; words one company holds half the uses of, 0.70.
A word that stands inside a placeholder ("[Company Name]") or a named entity anywhere in the chunks is no term
(the entity categories handle those, and a term is replaced wherever it stands: "fourth" would be taken out of
the fixed date "the fourth quarter"). A chunk's terms are the distinct words of the vocabulary it holds, as written there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

TERM = "term"
"""The category of company terms beside spaCy's (`engine.protect.swap.entities.CATEGORIES`)."""
MIN_CHUNKS = 2
"""Chunks of one value that must hold a word for it to be a company term (a word seen once may be chance)."""
CONCENTRATION = 0.5
"""Least share of the chunks holding a word that one value's chunks must hold for it to be that value's term."""
WORD = re.compile(r"(?<![\w\[])[A-Za-z][A-Za-z0-9'&\-]*[A-Za-z0-9](?![\w\]])")
"""A word of two characters or more, starting with a letter (figures are the money category's)."""


def _words(text: str, blocked: Sequence[tuple[int, int]]) -> list[re.Match[str]]:
    return [m for m in WORD.finditer(text) if not any(m.start() < b and a < m.end() for a, b in blocked)]


def company_terms(
    chunks: Sequence[str],
    labels: Sequence[object],
    blocked: Sequence[Sequence[tuple[int, int]]],
    concentration: float = CONCENTRATION,
) -> set[str]:
    """The company terms (lower case) of ``chunks``, each labelled by its protected value; ``blocked`` gives per
    chunk the spans not to read (placeholders, entity mentions); ``concentration`` is `CONCENTRATION`'s."""
    rows = [
        (word, str(label), k)
        for k, (text, label) in enumerate(zip(chunks, labels, strict=True))
        for word in {m.group().lower() for m in _words(text, blocked[k])}
    ]
    inside = {
        m.group().lower()
        for k, text in enumerate(chunks)
        for m in WORD.finditer(text)
        if any(m.start() < b and a < m.end() for a, b in blocked[k])
    }
    rows = [row for row in rows if row[0] not in inside]
    if not rows:
        return set()
    table = pd.DataFrame(rows, columns=["word", "label", "chunk"])
    per_label = table.groupby(["word", "label"]).size()
    top = per_label.groupby(level="word").max()
    total = per_label.groupby(level="word").sum()
    return set(top.index[(top >= MIN_CHUNKS) & (top >= concentration * total)])


def term_mentions(
    chunks: Sequence[str], terms: set[str], blocked: Sequence[Sequence[tuple[int, int]]]
) -> tuple[list[tuple[str, ...]], list[tuple[int, int, int, str, str]]]:
    """Per chunk its distinct terms as written (in order of first mention), and every mention (chunk, start, end,
    `TERM`, text)."""
    values: list[tuple[str, ...]] = []
    mentions: list[tuple[int, int, int, str, str]] = []
    for k, text in enumerate(chunks):
        found: dict[str, None] = {}
        for m in _words(text, blocked[k]):
            if m.group().lower() in terms:
                found.setdefault(m.group())
                mentions.append((k, m.start(), m.end(), TERM, m.group()))
        values.append(tuple(found))
    return values, mentions
