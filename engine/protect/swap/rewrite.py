"""A chunk's text after its entities were swapped or suppressed (Greve & Sablica, Section 2.1: the post-swap
chunk reads as the original with the partner's entities in place of its own).

Within a category, the i-th distinct entity of the chunk is replaced, at every mention, by the i-th of its new
values (cycling when the partner brought fewer); an entity with no new value (the category suppressed) becomes
the placeholder "[Category]". Mentions are rewritten from the last to the first, so the offsets of those not
yet rewritten hold; the new mentions' offsets are returned for showing where each swapped entity now stands.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

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


def rewrite_chunk(
    text: str,
    mentions: pd.DataFrame,
    before: Mapping[str, tuple[str, ...]],
    after: Mapping[str, tuple[str, ...]],
) -> tuple[str, pd.DataFrame]:
    """``text`` with its ``mentions`` (start, end, category, text; offsets in ``text``) rewritten from the
    ``before`` values per category to the ``after`` values; returns the new text and the rewritten mentions
    (start, end, category, text, original) in the new text. Categories absent from ``after`` are kept."""
    maps = {c: replacements(tuple(before.get(c, ())), tuple(after[c]), c) for c in after}
    pieces, out, last = [], [], len(text)
    rows = sorted(mentions[["start", "end", "category", "text"]].itertuples(index=False), key=lambda m: -m[0])
    for start, end, category, original in rows:
        if end > last:  # overlapping mentions: the later one was rewritten already
            continue
        new = maps.get(category, {}).get(original, original)
        pieces.append(text[end:last])
        pieces.append(new)
        out.append((start, category, new, original))
        last = start
    pieces.append(text[:last])
    new_text = "".join(reversed(pieces))
    # offsets in the new text: shift each rewritten mention by the growth of the mentions before it
    shifted, growth = [], 0
    for start, category, new, original in reversed(out):
        shifted.append((start + growth, start + growth + len(new), category, new, original))
        growth += len(new) - len(original)
    return new_text, pd.DataFrame(shifted, columns=MENTION_COLUMNS)
