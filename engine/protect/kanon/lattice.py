"""k-anonymity by full-domain generalization and record suppression: the search over the generalization lattice
and the utility measures of its result (Abeywardana & Thayasivam, Sections 3.3 and 4.4).

The quasi-identifier table has one row per record and one column per attribute; a cell is the tuple of the
distinct values the record states for that attribute (empty when it states none: "not stated" is a value of
its own). Each attribute has a hierarchy of ``height`` levels, level 0 the value itself and the top "*" (any);
a lattice node gives every attribute a level. A node is *k-anonymous with suppression* when the records whose
equivalence class (same generalized cells) holds fewer than k of them are at most ``max_suppressed`` of all:
those records are suppressed (every cell "*"). Optional ℓ-diversity (distinct ℓ-diversity of the sensitive
values in every class kept) and t-closeness (the variational distance of a class's sensitive distribution from
that of all records kept, the equal-distance form of Li, Li & Venkatasubramanian 2007, at most t) are further
conditions on the classes kept.

The search, in the style of the Incognito/Flash family (LeFevre, DeWitt & Ramakrishnan 2005; Kohlmayer et al.
2012, the algorithm of ARX): the property is monotone along the lattice (generalizing a node merges classes,
so small classes only shrink), so the nodes are visited by height and a node with an anonymous node below it
is anonymous without being checked and is never optimal; among the minimal anonymous nodes the one of least
loss metric is chosen (ties: the lower node, then the first in lattice order). ℓ-diversity and t-closeness
with suppression are not monotone (classes suppressed below may merge into a class that is not diverse), so
with either every node is checked.

Measures: the discernibility metric DM = Σ_classes |E|² + |suppressed| · n (Bayardo & Agrawal 2005), the loss
metric LM = the mean over cells of (leaves under the released value − 1) / (leaves of the attribute − 1), 1 for
a suppressed cell (Iyengar 2002; leaves are the distinct values the data holds), and the generalization count
(cells released at a level above 0, and suppressed).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

ANY = "*"
Generalize = Callable[[str, int], str]
"""A hierarchy: (value, level) → the value at that level; level ≥ height gives ANY."""


@dataclass(frozen=True)
class Hierarchy:
    """A generalization hierarchy of one attribute: ``generalize(value, level)`` for level 0 … height (ANY)."""

    height: int
    generalize: Generalize
    names: tuple[str, ...] = ()
    """What each level releases, from level 1 ("10-year bands"); ANY at the top needs no name."""

    def level_name(self, level: int) -> str:
        if level <= 0:
            return "as stated"
        if level >= self.height:
            return "any value ('*')"
        return self.names[level - 1] if level - 1 < len(self.names) else f"level {level} of {self.height}"

    def at(self, value: str, level: int) -> str:
        if level <= 0:
            return value
        return ANY if level >= self.height else self.generalize(value, level)


@dataclass(frozen=True)
class Anonymized:
    """The chosen node and what it releases."""

    levels: dict[str, int]
    table: pd.DataFrame  # generalized cells (tuples); suppressed rows hold (ANY,) in every column
    suppressed: np.ndarray  # bool per record
    class_sizes: np.ndarray  # per record: the size of its equivalence class (0 when suppressed)
    nodes_checked: int
    loss: float  # LM of the release
    over_limit: bool = False  # no node met k within the suppression limit: the top node suppressed more


def generalize_column(cells: pd.Series, hierarchy: Hierarchy, level: int) -> pd.Series:
    """Every cell (a tuple of values) at ``level``: each value generalized, duplicates dropped, sorted."""
    if level == 0:
        return cells
    cache: dict[str, str] = {}

    def one(cell: tuple[str, ...]) -> tuple[str, ...]:
        out = set()
        for v in cell:
            if v not in cache:
                cache[v] = hierarchy.at(v, level)
            out.add(cache[v])
        return tuple(sorted(out))

    return cells.map(one)


def class_codes(table: pd.DataFrame) -> np.ndarray:
    """Per record, the number of its equivalence class (records with the same cells in every column)."""
    keys = pd.Series(list(map(tuple, table.itertuples(index=False, name=None))))
    return pd.factorize(keys)[0]


def class_sizes(table: pd.DataFrame) -> np.ndarray:
    """Per record, the size of its equivalence class."""
    codes = class_codes(table)
    return np.bincount(codes)[codes]


def loss_metric(original: pd.DataFrame, released: pd.DataFrame, suppressed: np.ndarray) -> float:
    """LM (module docstring) of ``released`` against ``original`` (same shape)."""
    if original.empty:
        return 0.0
    per_column = []
    for col in original.columns:
        leaves = sorted({v for cell in original[col] for v in cell})
        if len(leaves) <= 1:
            per_column.append(np.where(suppressed, 1.0, 0.0))
            continue
        under: dict[tuple[str, ...], set[str]] = {}
        for o, r in zip(original[col], released[col]):
            under.setdefault(r, set()).update(o)
        span = {r: max(len(vs) - 1, 0) / (len(leaves) - 1) for r, vs in under.items()}
        cells = np.array([span[r] if r != (ANY,) else 1.0 for r in released[col]])
        cells[[len(o) == 0 and r == () for o, r in zip(original[col], released[col])]] = 0.0
        per_column.append(np.where(suppressed, 1.0, cells))
    return float(np.mean(per_column))


def discernibility(class_sizes: np.ndarray, suppressed: np.ndarray) -> float:
    """DM (module docstring): each kept record counts its class's size, each suppressed one the table's."""
    n = len(class_sizes)
    return float(class_sizes[~suppressed].sum() + suppressed.sum() * n)


def _failing_classes(
    codes: np.ndarray, keep: np.ndarray, sensitive: np.ndarray | None, ell: int | None, t: float | None
) -> list[int]:
    """The kept classes whose sensitive values are not ℓ-diverse or not t-close to those of all records kept."""
    if sensitive is None or (ell is None and t is None) or not keep.any():
        return []
    whole = pd.Series(sensitive[keep]).value_counts(normalize=True)
    out = []
    for code in np.unique(codes[keep]):
        values = pd.Series(sensitive[keep & (codes == code)])
        if ell is not None and values.nunique() < ell:
            out.append(int(code))
            continue
        if t is not None:
            share = values.value_counts(normalize=True).reindex(whole.index, fill_value=0.0)
            if 0.5 * float(np.abs(share - whole).sum()) > t + 1e-12:
                out.append(int(code))
    return out


def _node_release(
    qi: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    levels: Sequence[int],
    k: int,
    max_suppressed: float,
    sensitive: np.ndarray | None,
    ell: int | None,
    t: float | None,
) -> tuple[bool, pd.DataFrame, np.ndarray, np.ndarray]:
    table = pd.DataFrame(
        {c: generalize_column(qi[c], hierarchies[c], lv) for c, lv in zip(qi.columns, levels)}, index=qi.index
    )
    codes = class_codes(table)
    sizes = np.bincount(codes)[codes]
    small = sizes < k
    ok = small.sum() <= max_suppressed * len(qi) + 1e-9
    if ok and sensitive is not None:
        ok = not _failing_classes(codes, ~small, sensitive, ell, t)
    return ok, table, small, sizes


def k_anonymize(
    qi: pd.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    max_suppressed: float = 0.05,
    sensitive: Sequence[str] | np.ndarray | None = None,
    ell: int | None = None,
    t: float | None = None,
) -> Anonymized:
    """The least-loss k-anonymous release of ``qi`` (module docstring). ``sensitive``: one value per record,
    for ℓ-diversity (``ell``) and t-closeness (``t``). When no node meets k (and ℓ, t) within the suppression
    limit — an attribute's levels need not end in one class, e.g. whether a record states it at all — the top
    node is released with every record suppressed that it must, and ``over_limit`` says so."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not 0.0 <= max_suppressed <= 1.0:
        raise ValueError(f"the suppression limit is a share in [0, 1], got {max_suppressed}")
    missing = [c for c in qi.columns if c not in hierarchies]
    if missing:
        raise ValueError(f"no generalization hierarchy for {missing}")
    sens = None if sensitive is None else np.asarray(list(sensitive), dtype=object)
    heights = [hierarchies[c].height for c in qi.columns]
    nodes = sorted(itertools.product(*(range(h + 1) for h in heights)), key=lambda n: (sum(n), n))
    prune = sens is None or (ell is None and t is None)
    anonymous: set[tuple[int, ...]] = set()
    best: tuple[float, int, tuple[int, ...], pd.DataFrame, np.ndarray, np.ndarray] | None = None
    checked = 0
    for node in nodes:
        below = [node[:i] + (node[i] - 1,) + node[i + 1 :] for i in range(len(node)) if node[i] > 0]
        if prune and any(b in anonymous for b in below):
            anonymous.add(node)  # monotone: anonymous, and not minimal
            continue
        checked += 1
        ok, table, small, sizes = _node_release(qi, hierarchies, node, k, max_suppressed, sens, ell, t)
        if not ok:
            continue
        anonymous.add(node)
        released = table.copy()
        for c in released.columns:
            released.loc[small, c] = pd.Series([(ANY,)] * int(small.sum()), index=released.index[small])
        lm = loss_metric(qi, released, small)
        if best is None or (lm, sum(node), node) < (best[0], best[1], best[2]):
            best = (lm, sum(node), node, released, small, sizes)
    if best is None:  # no node within the suppression limit: the top node, suppressing what it must
        top = tuple(heights)
        _, table, small, sizes = _node_release(qi, hierarchies, top, k, 1.0, None, None, None)
        codes = class_codes(table)
        failing = _failing_classes(codes, ~small, sens, ell, t)
        while failing:  # suppressing a class moves the distribution of those kept: check again
            small = small | np.isin(codes, failing)
            failing = _failing_classes(codes, ~small, sens, ell, t)
        released = table.copy()
        for c in released.columns:
            released.loc[small, c] = pd.Series([(ANY,)] * int(small.sum()), index=released.index[small])
        return Anonymized(
            dict(zip(qi.columns, top)),
            released,
            small,
            np.where(small, 0, sizes),
            checked,
            loss_metric(qi, released, small),
            over_limit=True,
        )
    lm, _, node, released, small, sizes = best
    return Anonymized(dict(zip(qi.columns, node)), released, small, np.where(small, 0, sizes), checked, lm)
