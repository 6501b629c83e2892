"""Named-entity swapping between chunks of different documents in one cluster (Greve & Sablica, Sections 2.1
and 2.3), on the chunks' entity values; rewriting the chunks' text with the new values is a separate step.

Each chunk holds, per named-entity category, the distinct entities found in it (a tuple, empty when none). A
category takes one of four roles (Section 2.3): S (swapped between the chunks of a pair), F (fixed: never
touched), C (must change: exchanged within a pair like S, and suppressed wherever it is not exchanged) and U
(neither: left as it is here). This module adds a fifth, A (exchanged along; an extension of the paper, whose U
"may receive other forms of information suppression"): a category exchanged within a pair like S when the pair
swaps, without a pair needing it (a chunk whose partner has none has its own suppressed), and left as it is in
every chunk no pair takes, so D_pre is unchanged. At swap rate r, round(r·n / 2) pairs are swapped one after another (Section 3.2:
"after swapping one pair, out of the remaining pairs that constitute a valid swap, we swap one more"), each pair
drawn uniformly from the valid pairs left. A pair is valid when its two chunks

- come from different documents and lie in the same cluster (the constraints 𝒞 of Section 2.3: uniform weights
  within a cluster, zero across clusters, Section 2.2.1),
- have not been swapped yet,
- both hold entities in every S category and differ in at least one of them (otherwise the swap changes
  nothing), and differ in at least one category that is not swapped (Section 2.1: a swap of chunks alike in
  everything else only re-indexes them).

When fewer valid pairs are left than r asks for, fewer are swapped (the paper: "not all releases produce a
post-swap data set"); `SwapResult.pairs` says how many were. M Monte Carlo releases per r (Eq. 2.5) are M calls
with M generators.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

ROLES = ("S", "F", "C", "U", "A")
Labels = Sequence[object] | np.ndarray
"""One label per chunk (its document, its cluster)."""


@dataclass(frozen=True)
class SwapResult:
    """The chunks' entity values after swapping (same layout as given), the pairs swapped (chunk positions),
    which chunks took part, and per C category which chunks had their values suppressed."""

    values: pd.DataFrame
    pairs: list[tuple[int, int]]
    swapped: np.ndarray  # bool per chunk
    suppressed: dict[str, np.ndarray]  # C category → bool per chunk
    requested_pairs: int


def check_roles(values: pd.DataFrame, roles: Mapping[str, str]) -> tuple[list[str], list[str], list[str]]:
    """The S, C and the kept (F, U) categories, after checking every role is known and names a column (the A
    categories are none of them: `along`)."""
    unknown = [c for c in roles if c not in values.columns]
    if unknown:
        raise ValueError(f"roles name categories the chunks do not have: {unknown}; known: {list(values.columns)}")
    bad = {c: r for c, r in roles.items() if r not in ROLES}
    if bad:
        raise ValueError(
            f"unknown roles {bad}; a category is S (swap), F (fixed), C (must change), A (exchanged along) or U "
            "(neither)"
        )
    swap = [c for c in values.columns if roles.get(c, "U") == "S"]
    change = [c for c in values.columns if roles.get(c, "U") == "C"]
    if not swap and not change:
        raise ValueError("no category to swap: give at least one category the role S (or C)")
    if all(roles.get(c, "U") in ("S", "C", "A") for c in values.columns):
        raise ValueError(
            "every category is swapped or changed: a swap is valid only where the two chunks differ in a category "
            "they keep (Section 2.1); leave at least one category F or U"
        )
    return swap, change, [c for c in values.columns if roles.get(c, "U") in ("F", "U")]


def along(values: pd.DataFrame, roles: Mapping[str, str]) -> list[str]:
    """The A categories (exchanged along within a pair, module docstring), in column order."""
    return [c for c in values.columns if roles.get(c, "U") == "A"]


def valid_pairs(
    values: pd.DataFrame, documents: Labels, clusters: Labels, swap: Sequence[str], others: Sequence[str]
) -> np.ndarray:
    """Every valid pair (i < j) of chunk positions (module docstring), as a k × 2 array."""
    n = len(values)
    docs = pd.factorize(pd.Series(list(documents)))[0]
    groups = pd.factorize(pd.Series(list(clusters)))[0]
    if len(docs) != n or len(groups) != n:
        raise ValueError(f"{n} chunks but {len(docs)} documents and {len(groups)} cluster labels")
    codes = {c: pd.factorize(values[c])[0] for c in values.columns}
    filled = np.ones(n, dtype=bool)
    for c in swap:
        filled &= values[c].map(len).to_numpy() > 0
    out = []
    for g in np.unique(groups):
        members = np.flatnonzero((groups == g) & filled)
        if len(members) < 2:
            continue
        i, j = np.triu_indices(len(members), k=1)
        i, j = members[i], members[j]
        keep = docs[i] != docs[j]
        keep &= np.any([codes[c][i] != codes[c][j] for c in swap], axis=0) if swap else True
        keep &= np.any([codes[c][i] != codes[c][j] for c in others], axis=0) if others else False
        out.append(np.column_stack([i[keep], j[keep]]))
    return np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)


def swap_entities(
    values: pd.DataFrame,
    documents: Labels,
    clusters: Labels,
    roles: Mapping[str, str],
    rate: float,
    rng: np.random.Generator,
    candidates: np.ndarray | None = None,
) -> SwapResult:
    """Swap the S (and C and A) categories' entities of round(rate·n / 2) valid pairs, one pair after another, each
    drawn uniformly from the valid pairs left; then suppress (set to the empty tuple) the C categories' entities
    of every chunk that did not receive other values. ``values``: one row per chunk, one column per category,
    each cell the chunk's distinct entities in that category (a tuple); ``roles``: category → S, F, C or U
    (a category not named is U). ``candidates`` are the `valid_pairs` when they were listed once already
    (they do not depend on the rate: a fit lists them, each release draws from them)."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the swap rate r must lie in [0, 1], got {rate}")
    swap, change, others = check_roles(values, roles)
    exchanged = swap + change + along(values, roles)
    n = len(values)
    requested = int(round(rate * n / 2))
    if candidates is None:
        candidates = valid_pairs(values, documents, clusters, swap, others)
    out = values.copy()
    used = np.zeros(n, dtype=bool)
    pairs: list[tuple[int, int]] = []
    order = rng.permutation(len(candidates)) if requested else np.zeros(0, dtype=np.int64)
    # Drawing the candidates in a random order and taking each whose chunks are both still free is drawing,
    # each time, uniformly among the valid pairs left.
    for k in order:
        if len(pairs) == requested:
            break
        i, j = (int(v) for v in candidates[k])
        if used[i] or used[j]:
            continue
        used[i] = used[j] = True
        pairs.append((i, j))
        for c in exchanged:
            col = values.columns.get_loc(c)
            out.iat[i, col], out.iat[j, col] = values.iat[j, col], values.iat[i, col]
    suppressed = {}
    for c in change:
        before, after = values[c].to_numpy(), out[c].to_numpy()
        kept = np.array([bool(set(a) & set(b)) for a, b in zip(after, before)], dtype=bool)
        stale = kept | ~used  # a chunk that kept any of its own C entities, or took part in no swap
        stale &= values[c].map(len).to_numpy() > 0
        col = out.columns.get_loc(c)
        for row in np.flatnonzero(stale):
            out.iat[int(row), col] = ()
        suppressed[c] = stale
    return SwapResult(out, pairs, used, suppressed, requested)
