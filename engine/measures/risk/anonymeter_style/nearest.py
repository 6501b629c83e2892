"""The released record nearest to each target on some columns: the search the linkability and inference attacks
of Giomi et al. (2023) make, with the distance they use (inspired by Gower's): over the columns, a category adds
1 when the values differ, a number the absolute difference divided by the column's range (over the target and
the released records), so each column adds at most 1.

Choices made here and stated: a missing value is at distance 0 from a missing one and 1 from any other (the
framework's code counts two missing numbers as 1 apart); where several released records are equally near, the
intruder picks one of them at random (seeded) rather than the first in the table's order, so that a link is not
made by the order of the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.measures.risk.anonymeter_style.table import Column, Encoded

CHUNK = 256
"""Targets whose distances to every released record are held at once."""


def distances(targets: Encoded, released: Encoded, columns: Sequence[Column]) -> np.ndarray:
    """Targets × released records: the sum over ``columns`` of each column's distance (at most 1)."""
    out = np.zeros((targets.rows, released.rows), dtype=np.float64)
    for c in columns:
        t, r = targets.values[c.name], released.values[c.name]
        if not c.numeric:
            out += t[:, None] != r[None, :]
            continue
        both = np.concatenate([t, r])
        finite = both[np.isfinite(both)]
        span = float(finite.max() - finite.min()) if len(finite) else 0.0
        span = span if span > 0 else 1.0
        t_nan, r_nan = np.isnan(t), np.isnan(r)
        if not (t_nan.any() or r_nan.any()):
            out += np.abs(t[:, None] - r[None, :]) / span
            continue
        diff = np.abs(t[:, None] - r[None, :]) / span
        either, both_missing = t_nan[:, None] | r_nan[None, :], t_nan[:, None] & r_nan[None, :]
        out += np.where(both_missing, 0.0, np.where(either, 1.0, diff))
    return out


def nearest(targets: Encoded, released: Encoded, columns: Sequence[Column], rng: np.random.Generator) -> np.ndarray:
    """For each target, the position of a released record at the least distance on ``columns`` (one of the
    equally near ones drawn at random, each as likely). Distances are taken to the distinct released values only
    (a few dozen where the columns are categories), a record then drawn among those holding the nearest."""
    values = np.column_stack([released.values[c.name].astype(float) for c in columns])
    distinct, combo = np.unique(np.nan_to_num(values, nan=np.inf), axis=0, return_inverse=True)
    combo = combo.ravel()
    counts = np.bincount(combo, minlength=len(distinct)).astype(float)
    order = np.argsort(combo, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    first = order[starts]  # a record holding each distinct value
    table = Encoded({c.name: released.values[c.name][first] for c in columns}, len(distinct))
    out = np.empty(targets.rows, dtype=np.int64)
    for start in range(0, targets.rows, CHUNK):
        stop = min(start + CHUNK, targets.rows)
        chunk = Encoded({k: v[start:stop] for k, v in targets.values.items()}, stop - start)
        d = distances(chunk, table, columns)
        weight = np.where(d <= d.min(axis=1, keepdims=True) + 1e-9, counts[None, :], 0.0)
        cumulative = np.cumsum(weight, axis=1)
        drawn = rng.random(stop - start) * cumulative[:, -1]
        chosen = np.minimum((cumulative <= drawn[:, None]).sum(axis=1), len(distinct) - 1)
        member = np.floor(rng.random(stop - start) * counts[chosen]).astype(np.int64)
        out[start:stop] = order[starts[chosen] + np.minimum(member, counts[chosen].astype(np.int64) - 1)]
    return out
