"""A chunk's text after its entities were swapped or suppressed (Greve & Sablica, Section 2.1: the post-swap
chunk reads as the original with the partner's entities in place of its own).

Within a category, the i-th distinct entity of the chunk is replaced, at every mention, by the i-th of its new
values (cycling when the partner brought fewer); an entity with no new value (the category suppressed) becomes
the placeholder "[Category]". An entity replaced once is replaced at every whole-word occurrence in the chunk,
tagged by the recognizer there or not, and whichever category it gave it there (spaCy may tag "Plum Creek" an
organization in one sentence and a location in the next, or miss it), so no chunk keeps a name it was meant
to lose. The rewrite is made as edits of the chunk (`engine.protect.swap.edits`), which are also the release's
record of what changed; the new mentions' offsets are returned for showing where each swapped entity now stands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from engine.protect.swap.edits import Edit, apply

MENTION_COLUMNS = ["start", "end", "category", "text", "original"]


def placeholder(category: str) -> str:
    return f"[{category.capitalize()}]"


def replacements(old: tuple[str, ...], new: tuple[str, ...], category: str) -> dict[str, str]:
    """Each distinct old entity → its new text (module docstring); unchanged values map to themselves."""
    if old == new:
        return {e: e for e in old}
    if not new:
        return {e: placeholder(category) for e in old}
    return {e: new[i % len(new)] for i, e in enumerate(old)}


def _occurrences(text: str, maps: Mapping[str, Mapping[str, str]]) -> list[tuple[int, int, str, str]]:
    """Every whole-word occurrence of an entity that changes (start, end, category, entity), longer entities
    first, none overlapping another."""
    found: list[tuple[int, int, str, str]] = []
    changing = [(old, c) for c, mapping in maps.items() for old, new in mapping.items() if old != new and old.strip()]
    for old, category in sorted(changing, key=lambda e: -len(e[0])):
        for m in re.finditer(r"(?<!\w)" + re.escape(old) + r"(?!\w)", text):
            if not any(m.start() < e and s < m.end() for s, e, _, _ in found):
                found.append((m.start(), m.end(), category, old))
    return found


Mention = tuple[int, int, str, str]
"""(start, end, category, text) of one entity mention, offsets in its chunk."""


def rewritten(
    text: str,
    tagged: Sequence[Mention],
    before: Mapping[str, tuple[str, ...]],
    after: Mapping[str, tuple[str, ...]],
    source: str | None = None,
) -> tuple[str, list[Edit], list[tuple[int, int, str, str, str]]]:
    """``text`` with its ``tagged`` mentions rewritten from the ``before`` values per category to the ``after``
    values (categories absent from ``after`` are kept); also the edits that made it (`engine.protect.swap.edits`;
    labelled "suppressed [Category]", or "<category> swapped in from document <source>") and the mentions after
    the rewrite (start, end, category, text, original), offsets in the new text."""
    maps = {c: replacements(tuple(before.get(c, ())), tuple(after[c]), c) for c in after}
    found = _occurrences(text, maps)
    # an entity that changes is rewritten wherever it stands, also where the recognizer put it in another category
    kept = [m for m in tagged if not any(m[0] < e and s < m[1] for s, e, _, _ in found)]
    rows = sorted(kept + found, key=lambda m: -m[0])
    out: list[tuple[int, str, str, str]] = []
    last = len(text)
    for start, end, category, original in rows:
        if end > last:  # overlapping mentions: the later one was rewritten already
            continue
        out.append((start, category, maps.get(category, {}).get(original, original), original))
        last = start
    out.reverse()
    edits: list[Edit] = [
        (
            start,
            start + len(original),
            new,
            f"suppressed {new}" if new == placeholder(category) else f"{category} swapped in from document {source}",
        )
        for start, category, new, original in out
        if new != original
    ]
    # offsets in the new text: shift each rewritten mention by the growth of the mentions before it
    shifted, growth = [], 0
    for start, category, new, original in out:
        shifted.append((start + growth, start + growth + len(new), category, new, original))
        growth += len(new) - len(original)
    return apply(text, edits), edits, shifted
