"""Disclosure risk of synthesized counts and amounts by matching released records to a target's known values.

Guo & Hu, Section 4: attribute disclosure AR (after Mitra et al. 2020), identification disclosure EMR, TMR, FMR
and unique matches (Reiter & Mitra 2009; Hu 2019), and the same under a noisy intruder (Eq. 11).

Matching is vectorized: records are grouped by their key values and, within a group, sorted by the first
synthesized field, so each target's candidates are one contiguous window found by binary search; only the
pairs inside windows are materialized (no n × n matrices, so the full 48,895-listing file fits).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from engine.metrics import MetricResult

RADIUS_PAIRS = ((5.0, 0.05), (5.0, 0.10), (10.0, 0.05), (10.0, 0.10))


def attribute_risk_id(r_count: float, r_price: float) -> str:
    return f"attribute_risk_r{int(r_count)}_p{int(round(100 * r_price))}"


def _groups(known: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Integer group ids of the targets' known key values and of the released records' key values (equal ids =
    equal values in every key)."""
    if not keys:
        return np.zeros(len(known), np.int64), np.zeros(len(released), np.int64)
    both = pd.concat([known[list(keys)], released[list(keys)]], ignore_index=True)
    codes = np.zeros(len(both), dtype=np.int64)
    for k in keys:
        col = both[k]
        c, uniques = pd.factorize(col.astype(float) if pd.api.types.is_numeric_dtype(col) else col.astype(str))
        codes = codes * (len(uniques) + 1) + (c + 1)
        codes = pd.factorize(codes)[0].astype(np.int64)  # keep the ids small however many keys there are
    return codes[: len(known)], codes[len(known):]


def candidate_pairs(group_t: np.ndarray, lo_t: np.ndarray, hi_t: np.ndarray, group_r: np.ndarray,
                    value_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (target i, released j) with group_r[j] == group_t[i] and lo_t[i] ≤ value_r[j] ≤ hi_t[i].

    Values and window bounds are replaced by their dense ranks among all of them (order and ties kept), so
    (group, rank) becomes one exact integer key; sorting the released keys makes each target's candidates the
    contiguous run between two binary searches.
    """
    _, rank = np.unique(np.concatenate([value_r, lo_t, hi_t]), return_inverse=True)
    width = int(rank.max(initial=0)) + 2
    n_r, n_t = len(value_r), len(lo_t)
    key_r = group_r.astype(np.int64) * width + rank[:n_r]
    order = np.argsort(key_r, kind="stable")
    sorted_keys = key_r[order]
    base = group_t.astype(np.int64) * width
    first = np.searchsorted(sorted_keys, base + rank[n_r:n_r + n_t], side="left")
    last = np.searchsorted(sorted_keys, base + rank[n_r + n_t:], side="right")
    counts = np.maximum(last - first, 0)
    i = np.repeat(np.arange(n_t), counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return i, order[np.repeat(first, counts) + offsets]


def _window(values: np.ndarray, how: str, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the released values that count as close to ``values``: absolute ±radius, relative ±radius·|v|,
    or on the log scale |log y − log v| ≤ radius·|log v|."""
    if how == "absolute":
        return values - radius, values + radius
    if how == "relative":
        return values - radius * np.abs(values), values + radius * np.abs(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        lv = np.log(values)
        lo, hi = np.exp(lv - radius * np.abs(lv)), np.exp(lv + radius * np.abs(lv))
    return np.where(values > 0, lo, np.inf), np.where(values > 0, hi, -np.inf)


def _close(target: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str], conditions: list[tuple[str, str, float]],
           known: pd.DataFrame | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (i, j) of a target i and a released record j with the same (known) key values whose fields meet
    every condition (field, how, radius); and each target's number of same-key released records."""
    known = target if known is None else known
    gt, gr = _groups(known, released, keys)
    same_key = np.bincount(gr, minlength=int(max(gt.max(initial=-1), gr.max(initial=-1)) + 1))[gt]
    if not conditions:
        lo, hi = np.full(len(target), -np.inf), np.full(len(target), np.inf)
        i, j = candidate_pairs(gt, lo, hi, gr, np.zeros(len(released)))
        return i, j, same_key
    field, how, radius = conditions[0]
    lo, hi = _window(target[field].to_numpy(dtype=float), how, radius)
    i, j = candidate_pairs(gt, lo, hi, gr, released[field].to_numpy(dtype=float))
    keep = np.ones(len(i), dtype=bool)
    for field, how, radius in conditions[1:]:
        lo, hi = _window(target[field].to_numpy(dtype=float), how, radius)
        v = released[field].to_numpy(dtype=float)[j]
        keep &= (v >= lo[i]) & (v <= hi[i])
    return i[keep], j[keep], same_key


def attribute_risk(confidential: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                   count_fields: Sequence[str], continuous_fields: Sequence[str], r_count: float,
                   r_price: float) -> MetricResult:
    """Attribute disclosure risk (Guo & Hu, Section 4.1): for record i, Mᵢ are the released records with i's
    key values and pᵢ = (1/cᵢ) Σ_{j∈Mᵢ} 1(|count_j − count_i| ≤ r_count and |price_j − price_i| / price_i ≤
    r_price), cᵢ = |Mᵢ|; AR = Σᵢ pᵢ (0 for a record with no same-key released record). Every count field
    takes the absolute radius, every continuous field the relative one. Detail: record, matches cᵢ, p."""
    conditions = [(f, "absolute", r_count) for f in count_fields] + [(f, "relative", r_price) for f in continuous_fields]
    i, _, same_key = _close(confidential, released, keys, conditions)
    hits = np.bincount(i, minlength=len(confidential))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(same_key > 0, hits / np.maximum(same_key, 1), 0.0)
    detail = pd.DataFrame({"record": np.arange(len(confidential)), "matches": same_key, "p": p})
    return MetricResult(attribute_risk_id(r_count, r_price), float(p.sum()), detail=detail)


def attribute_risks(confidential: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                    count_fields: Sequence[str], continuous_fields: Sequence[str]) -> dict[str, MetricResult]:
    """AR at the paper's radii: counts within 5 or 10, amounts within 5% or 10%."""
    out = {}
    for rc, rp in RADIUS_PAIRS:
        r = attribute_risk(confidential, released, keys, count_fields, continuous_fields, rc, rp)
        out[r.id] = r
    return out


def identification_risk(confidential: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str],
                        count_fields: Sequence[str], continuous_fields: Sequence[str], count_radius: float = 5.0,
                        log_radius: float = 0.05, known: pd.DataFrame | None = None) -> dict[str, MetricResult]:
    """Identification risk (Reiter & Mitra 2009; Hu 2019; Guo & Hu, Section 4.2).

    The intruder knows target i's key values (``known``, else the confidential ones) and its confidential
    count and amount; released record j matches if its key values equal those, each count is within
    ±``count_radius`` and each amount satisfies |log y_j − log y_i| ≤ ``log_radius``·|log y_i|. With cᵢ the
    number of matches and Tᵢ = 1 when record i itself is among them:

        EMR = Σ_{cᵢ>0} Tᵢ / cᵢ,   TMR = Σ 1(cᵢ = 1, Tᵢ = 1) / n,   u = Σ 1(cᵢ = 1),   FMR = Σ 1(cᵢ = 1, Tᵢ = 0) / u

    (FMR = 0 when there is no unique match). Detail of ``emr``: record, matches, true_match, unique.
    """
    conditions = [(f, "absolute", count_radius) for f in count_fields] + [(f, "log", log_radius) for f in continuous_fields]
    i, j, _ = _close(confidential, released, keys, conditions, known)
    n = len(confidential)
    c = np.bincount(i, minlength=n)
    true = np.zeros(n, dtype=bool)
    true[i[i == j]] = True
    with np.errstate(divide="ignore", invalid="ignore"):
        emr = float(np.sum(np.where(c > 0, true / np.maximum(c, 1), 0.0)))
    unique = c == 1
    u = int(unique.sum())
    tmr = float(np.sum(unique & true) / n)
    fmr = float(np.sum(unique & ~true) / u) if u else 0.0
    detail = pd.DataFrame({"record": np.arange(n), "matches": c, "true_match": true, "unique": unique})
    return {"emr": MetricResult("emr", emr, detail=detail), "tmr": MetricResult("tmr", tmr),
            "fmr": MetricResult("fmr", fmr), "unique_matches": MetricResult("unique_matches", float(u))}


def noisy_counts(values: np.ndarray, level: float, noise: np.ndarray) -> np.ndarray:
    """Guo & Hu, Eq. 11, as written: log x*ᵢ ~ Normal(log xᵢ, S × xᵢ) — the standard deviation on the log
    scale is S times the count itself (not its logarithm) — and the intruder's value is round(exp(log x*ᵢ)).
    ``noise`` holds the standard-normal draws. A count of 0 has no logarithm and an sd of 0: it stays 0."""
    x = np.asarray(values, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out = np.round(np.exp(np.log(x) + level * x * noise))
    return np.where(x > 0, out, x)


def intruder_uncertainty(confidential: pd.DataFrame, released: pd.DataFrame, keys: Sequence[str], noisy_field: str,
                         levels: Sequence[float] = tuple(np.round(np.arange(0, 0.151, 0.01), 2)), seed: int = 0,
                         **match) -> pd.DataFrame:
    """EMR, TMR, FMR and unique matches when the intruder knows ``noisy_field`` (a key count) only through
    `noisy_counts` at each level S (Guo & Hu, Section 4.3). The same standard-normal draws (from ``seed``) serve
    every level and every call, so curves of different releases and of the confidential data see the same
    intruder. ``match`` goes to `identification_risk` (count_fields, continuous_fields, radii)."""
    noise = np.random.default_rng(seed).standard_normal(len(confidential))
    x = confidential[noisy_field].to_numpy(dtype=float)
    rows = []
    for s in levels:
        known = confidential[list(keys)].copy()
        known[noisy_field] = noisy_counts(x, float(s), noise)
        r = identification_risk(confidential, released, keys, known=known, **match)
        rows.append({"S": float(s), **{k: v.value for k, v in r.items()}})
    return pd.DataFrame(rows, columns=["S", "emr", "tmr", "fmr", "unique_matches"])
