"""Disclosure risk of synthesized counts and amounts by matching released records to a target's known values.

Guo & Hu, Section 4: attribute disclosure AR (after Mitra et al. 2020), identification disclosure EMR, TMR, FMR
and unique matches (Reiter & Mitra 2009; Hu 2019), and the same under a noisy intruder (Eq. 11).

Matching is vectorized and never builds an n × n matrix: records are grouped by their key values and, within a
group, sorted by one matching field, so each target's candidates are one contiguous run found by two binary
searches. The field whose windows hold the fewest candidates is chosen for the search; the candidates are then
materialized a bounded chunk at a time and checked against every condition with the paper's formulas as written.
So the full 48,895-listing file runs in bounded memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.measures.base import MetricResult
from engine.measures.intruders import COUNT_RADIUS, LOG_RADIUS

RADIUS_PAIRS: tuple[tuple[float, float], ...] = ((5.0, 0.05), (5.0, 0.10), (10.0, 0.05), (10.0, 0.10))
UNCERTAINTY_LEVELS: tuple[float, ...] = tuple(float(v) for v in np.round(np.arange(0, 0.151, 0.01), 2))
PAIR_BUDGET = 1 << 20  # candidate pairs held in memory at once (some tens of MB)

Closeness = Literal["absolute", "relative", "log"]
Condition = tuple[str, Closeness, float]  # (field, how closeness is measured, radius)


def attribute_risk_id(r_count: float, r_price: float) -> str:
    return f"attribute_risk_r{int(r_count)}_p{int(round(100 * r_price))}"


# ---------------------------------------------------------------------------------------------------------------
# Matching machinery


def key_groups(known: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer group ids of the targets' known key values and of the released records' key values (equal ids =
    equal values in every key). Numeric keys compare as numbers, so a noisy float 12.0 equals a released 12."""
    if not keys:
        return np.zeros(len(known), np.int64), np.zeros(len(released), np.int64)
    both = pd.concat([known[list(keys)], released[list(keys)]], ignore_index=True)
    codes = np.zeros(len(both), dtype=np.int64)
    for k in keys:
        col = both[k]
        c, uniques = pd.factorize(col.astype(float) if pd.api.types.is_numeric_dtype(col) else col.astype(str))
        codes = codes * (len(uniques) + 1) + (c + 1)
        codes = pd.factorize(codes)[0].astype(np.int64)  # keep the ids small however many keys there are
    return codes[: len(known)], codes[len(known) :]


def close(how: Closeness, radius: float, target: np.ndarray, released: np.ndarray) -> np.ndarray:
    """Whether released values are close to the target's, elementwise, by the formulas of Guo & Hu as written:

    - ``absolute`` (counts, Sections 4.1–4.2): |y_j − y_i| ≤ r;
    - ``relative`` (amounts, Section 4.1): |y_j − y_i| / |y_i| ≤ r;
    - ``log`` (amounts, Section 4.2): |log y_j − log y_i| ≤ r · |log y_i|.

    Where the formula is undefined because the target's value has no logarithm (≤ 0) or is a divisor of 0, only
    an identical released value counts as close (the limit of the window as it shrinks to the point). Missing
    values are never close.
    """
    yi, yj = np.asarray(target, dtype=float), np.asarray(released, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if how == "absolute":
            return np.abs(yj - yi) <= radius
        if how == "relative":
            return np.where(yi != 0, np.abs(yj - yi) / np.abs(yi) <= radius, yj == yi)
        if how == "log":
            li, lj = np.log(yi), np.log(yj)
            return np.where(yi > 0, (yj > 0) & (np.abs(lj - li) <= radius * np.abs(li)), yj == yi)
    raise ValueError(f"unknown closeness '{how}'; expected absolute, relative or log")


def _window(how: Closeness, radius: float, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds [lo, hi] that contain every released value `close` to each target value, widened by a few ulps so
    that rounding can only add candidates (which `close` then rejects), never lose one."""
    v = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        if how == "absolute":
            lo, hi = v - radius, v + radius
        elif how == "relative":
            lo, hi = v - radius * np.abs(v), v + radius * np.abs(v)
        else:
            lv = np.log(v)
            lo = np.where(v > 0, np.exp(lv - radius * np.abs(lv)), v)
            hi = np.where(v > 0, np.exp(lv + radius * np.abs(lv)), v)
    lo, hi = lo - 1e-9 * (1 + np.abs(lo)), hi + 1e-9 * (1 + np.abs(hi))
    empty = ~(np.isfinite(v) & (lo <= hi))
    return np.where(empty, np.inf, lo), np.where(empty, -np.inf, hi)


def _runs(
    group_t: np.ndarray, lo_t: np.ndarray, hi_t: np.ndarray, group_r: np.ndarray, value_r: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each target, the run of released records (positions in ``order``) with the same group and a value in
    [lo, hi]: returns ``order``, each run's ``first`` position and its length.

    Values and bounds are replaced by their dense ranks among all of them (order and ties kept), so
    (group, rank) becomes one exact integer key and one sort of the released keys serves every target.
    """
    _, rank = np.unique(np.concatenate([value_r, lo_t, hi_t]), return_inverse=True)
    width = int(rank.max(initial=0)) + 2
    n_r, n_t = len(value_r), len(lo_t)
    key_r = group_r.astype(np.int64) * width + rank[:n_r]
    order = np.argsort(key_r, kind="stable")
    sorted_keys = key_r[order]
    base = group_t.astype(np.int64) * width
    first = np.searchsorted(sorted_keys, base + rank[n_r : n_r + n_t], side="left")
    last = np.searchsorted(sorted_keys, base + rank[n_r + n_t :], side="right")
    return order, first, np.maximum(last - first, 0)


def _materialize(
    targets: np.ndarray, order: np.ndarray, first: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The (target, released) pairs of the runs of ``targets``."""
    c = counts[targets]
    i = np.repeat(targets, c)
    offsets = np.arange(c.sum()) - np.repeat(np.cumsum(c) - c, c)
    return i, order[np.repeat(first[targets], c) + offsets]


def _narrowest(
    group_t: np.ndarray, group_r: np.ndarray, searches: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]
) -> tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Of several searches (each the targets' [lo, hi] windows and the released values they search), the one
    whose runs (`_runs`) hold the fewest candidates, the first on a tie: its index and its runs."""
    best_k, best = 0, _runs(group_t, searches[0][0], searches[0][1], group_r, searches[0][2])
    for k, (lo, hi, values_r) in enumerate(searches[1:], start=1):
        runs = _runs(group_t, lo, hi, group_r, values_r)
        if runs[2].sum() < best[2].sum():
            best_k, best = k, runs
    return best_k, best


def candidate_pairs(
    group_t: np.ndarray, lo_t: np.ndarray, hi_t: np.ndarray, group_r: np.ndarray, value_r: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every (target i, released j) with group_r[j] == group_t[i] and lo_t[i] ≤ value_r[j] ≤ hi_t[i]."""
    order, first, counts = _runs(group_t, lo_t, hi_t, group_r, value_r)
    return _materialize(np.arange(len(lo_t)), order, first, counts)


def close_pairs(
    group_t: np.ndarray, group_r: np.ndarray, numbers: Sequence[tuple[np.ndarray, np.ndarray, Closeness, float]]
) -> tuple[np.ndarray, np.ndarray]:
    """Every (target i, released j) with group_r[j] == group_t[i] whose numbers agree: for each (target values,
    released values, closeness, radius) of ``numbers``, `close`, or both missing. A group must say which numbers
    are missing (a missing number is searched as 0, so only a group of missing ones keeps its candidates).

    Searched on the number whose windows hold the fewest candidates, the others checked on those only.
    """
    zeros_t, zeros_r = np.zeros(len(group_t)), np.zeros(len(group_r))
    searches = [(zeros_t, zeros_t, zeros_r)]  # the whole group
    for values_t, values_r, how, radius in numbers:
        searches.append((*_window(how, radius, np.nan_to_num(values_t, nan=0.0)), np.nan_to_num(values_r, nan=0.0)))
    _, best = _narrowest(group_t, group_r, searches)
    i, j = _materialize(np.arange(len(group_t)), *best)
    for values_t, values_r, how, radius in numbers:
        k, r = values_t[i], values_r[j]
        keep = close(how, radius, k, r) | (np.isnan(k) & np.isnan(r))
        i, j = i[keep], j[keep]
    return i, j


def match_counts(
    target: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str],
    conditions: Sequence[Condition],
    known: pd.DataFrame | None = None,
    budget: int = PAIR_BUDGET,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per target i: the number of released records j with i's (known) key values that meet every condition
    (`close` on the field, target value from ``target``); whether released record i itself (same row position)
    is among them; and the number of released records with i's key values at all.

    ``known`` holds the key values the intruder believes (default: ``target``'s own).
    """
    known = target if known is None else known
    n_t, n_r = len(target), len(released)
    gt, gr = key_groups(known, released, keys)
    same_key = np.bincount(gr, minlength=int(max(gt.max(initial=-1), gr.max(initial=-1)) + 1))[gt]
    hits, itself = np.zeros(n_t, dtype=np.int64), np.zeros(n_t, dtype=bool)
    m = min(n_t, n_r)
    if not conditions:
        itself[:m] = gt[:m] == gr[:m]
        return same_key.astype(np.int64), itself, same_key
    tv = {f: target[f].to_numpy(dtype=float) for f, _, _ in conditions}
    rv = {f: released[f].to_numpy(dtype=float) for f, _, _ in conditions}
    # Search on the field whose windows hold the fewest candidates (for availability the ±days windows on a
    # floor of zeros are wide; the amount's ±5% ones are narrow), then check every condition on those.
    best_k, (order, first, counts) = _narrowest(
        gt, gr, [(*_window(how, radius, tv[field]), rv[field]) for field, how, radius in conditions]
    )
    # The searched field's window is a slightly widened superset, so it is checked too, but last: the others
    # discard most candidates first.
    checks = [c for k, c in enumerate(conditions) if k != best_k] + [conditions[best_k]]
    cum = np.cumsum(counts)
    start = 0
    while start < n_t:
        done = cum[start - 1] if start else 0
        stop = max(int(np.searchsorted(cum, done + budget, side="right")), start + 1)
        i, j = _materialize(np.arange(start, min(stop, n_t)), order, first, counts)
        for field, how, radius in checks:
            keep = close(how, radius, tv[field][i], rv[field][j])
            i, j = i[keep], j[keep]
        hits += np.bincount(i, minlength=n_t)
        itself[i[i == j]] = True
        start = stop
    return hits, itself, same_key


# ---------------------------------------------------------------------------------------------------------------
# Attribute disclosure (Section 4.1)


def attribute_risk(
    confidential: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str],
    count_fields: Sequence[str],
    continuous_fields: Sequence[str],
    r_count: float,
    r_price: float,
) -> MetricResult:
    """Attribute disclosure risk (Guo & Hu, Section 4.1, after Mitra et al. 2020).

    For confidential record i, Mᵢ are the released records with i's key values, cᵢ = |Mᵢ|, and

        pᵢ = (1/cᵢ) Σ_{j∈Mᵢ} 1(|count_j − count_i| ≤ r_count, |price_j − price_i| / price_i ≤ r_price),

    with every count field held to the absolute radius and every continuous field to the relative one;
    AR = Σᵢ pᵢ, a record with an empty Mᵢ contributing 0. For the confidential baseline pass
    ``released = confidential``. Detail: one row per record (record, matches cᵢ, p).
    """
    conditions: list[Condition] = [
        *((f, "absolute", r_count) for f in count_fields),
        *((f, "relative", r_price) for f in continuous_fields),
    ]
    hits, _, same_key = match_counts(confidential, released, keys, conditions)
    p = np.where(same_key > 0, hits / np.maximum(same_key, 1), 0.0)
    detail = pd.DataFrame({"record": np.arange(len(confidential)), "matches": same_key, "p": p})
    return MetricResult(attribute_risk_id(r_count, r_price), float(p.sum()), detail=detail)


def attribute_risks(
    confidential: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str],
    count_fields: Sequence[str],
    continuous_fields: Sequence[str],
    radii: Sequence[tuple[float, float]] = RADIUS_PAIRS,
) -> dict[str, MetricResult]:
    """`attribute_risk` at the paper's radius pairs (Table 3): counts within 5 or 10, amounts within 5% or 10%."""
    out = {}
    for rc, rp in radii:
        r = attribute_risk(confidential, released, keys, count_fields, continuous_fields, rc, rp)
        out[r.id] = r
    return out


# ---------------------------------------------------------------------------------------------------------------
# Identification disclosure (Sections 4.2–4.3)


def identification_risk(
    confidential: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str],
    count_fields: Sequence[str],
    continuous_fields: Sequence[str],
    count_rule: tuple[Closeness, float] = ("absolute", COUNT_RADIUS),
    amount_rule: tuple[Closeness, float] = ("log", LOG_RADIUS),
    known: pd.DataFrame | None = None,
) -> dict[str, MetricResult]:
    """Identification disclosure risk (Reiter & Mitra 2009; Hu 2019; Guo & Hu, Section 4.2).

    The intruder knows target i's key values (from ``known`` if given, else the confidential ones) and its
    confidential count and amount values. Released record j matches if its key values equal those and each count
    and amount is `close` by ``count_rule`` and ``amount_rule`` — the paper's: a count within ±5, an amount with
    |log y_j − log y_i| ≤ 0.05·|log y_i| (an amount ≤ 0 has no logarithm: only an identical value matches it);
    an attacker preset may set others (`Intruder.closeness`). With cᵢ = |Mᵢ| the number of matches and Tᵢ = 1
    when released record i (the same row position) is among them:

        EMR = Σ_{cᵢ>0} Tᵢ / cᵢ,   TMR = Σ 1(cᵢ = 1, Tᵢ = 1) / n,
        u = Σ 1(cᵢ = 1),          FMR = Σ 1(cᵢ = 1, Tᵢ = 0) / u,

    where FMR is defined as 0 when there is no unique match (u = 0): no unique match can mislead.
    Detail of ``emr``: one row per record (record, matches, true_match, unique).
    """
    conditions: list[Condition] = [
        *((f, *count_rule) for f in count_fields),
        *((f, *amount_rule) for f in continuous_fields),
    ]
    c, true, _ = match_counts(confidential, released, keys, conditions, known)
    n = len(confidential)
    emr = float(np.sum(np.where(c > 0, true / np.maximum(c, 1), 0.0)))
    unique = c == 1
    u = int(unique.sum())
    tmr = float(np.sum(unique & true) / n) if n else 0.0
    fmr = float(np.sum(unique & ~true) / u) if u else 0.0
    detail = pd.DataFrame({"record": np.arange(n), "matches": c, "true_match": true, "unique": unique})
    return {
        "emr": MetricResult("emr", emr, detail=detail),
        "tmr": MetricResult("tmr", tmr),
        "fmr": MetricResult("fmr", fmr),
        "unique_matches": MetricResult("unique_matches", float(u)),
    }


def noisy_counts(values: np.ndarray, level: float, noise: np.ndarray) -> np.ndarray:
    """The intruder's uncertain knowledge of a count (Guo & Hu, Eq. 11, as written):

        log x*ᵢ ~ Normal(log xᵢ, sd = S × xᵢ),   x*ᵢ = round(exp(log x*ᵢ)).

    The standard deviation on the log scale is S times the count itself (not its logarithm), so large counts
    become very uncertain quickly. ``noise`` holds standard-normal draws, scaled by S·xᵢ. A count of 0 has no
    logarithm and an sd of 0, so it stays exactly 0 (as does any count ≤ 0). Draws beyond the float range give
    an infinite count, which matches nothing.
    """
    x = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = np.round(np.exp(np.log(x) + level * x * np.asarray(noise, dtype=float)))
    return np.where(x > 0, out, x)


def intruder_uncertainty(
    confidential: pd.DataFrame,
    released: pd.DataFrame,
    keys: Sequence[str],
    noisy_field: str,
    levels: Sequence[float] = UNCERTAINTY_LEVELS,
    seed: int = 0,
    **match_kwargs: Any,
) -> pd.DataFrame:
    """EMR, TMR, FMR and unique matches when the intruder knows the key count ``noisy_field`` only through
    `noisy_counts` at each uncertainty level S (Guo & Hu, Section 4.3, Eq. 11): sd on the log scale S·xᵢ,
    counts of 0 kept exact.

    One standard-normal vector from ``default_rng(seed)`` (one draw per confidential record) is scaled for every
    level, so every call with the same seed, whatever the release, sees the same intruder: the confidential and
    synthetic curves, and the curves of different releases, are comparable draw for draw. ``match_kwargs`` go to
    `identification_risk` (count_fields, continuous_fields, count_rule, amount_rule). Columns: S, emr, tmr,
    fmr, unique_matches.
    """
    noise = np.random.default_rng(seed).standard_normal(len(confidential))
    x = confidential[noisy_field].to_numpy(dtype=float)
    known = confidential[list(dict.fromkeys([*keys, noisy_field]))].copy()
    rows = []
    for s in levels:
        known[noisy_field] = noisy_counts(x, float(s), noise)
        r = identification_risk(confidential, released, keys, known=known, **match_kwargs)
        rows.append({"S": float(s), **{k: v.value for k, v in r.items()}})
    return pd.DataFrame(rows, columns=["S", "emr", "tmr", "fmr", "unique_matches"])
