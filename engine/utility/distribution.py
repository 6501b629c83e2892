"""Global utility of synthesized fields: propensity Up, cluster Uc and the empirical-CDF measures.

Woo, Reiter, Oganian & Karr (2009) and Snoke et al. (2018), as Guo & Hu use them (Section 3.1, Table 2): each
tells how well the synthetic records can be told apart from the confidential ones; 0 means not at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.linear_model import LogisticRegression

from engine.metrics import MetricResult
from engine.schema import FieldSpec

RIDGE_C = 1e6


def main_effects(frame: pd.DataFrame, fields: Sequence[FieldSpec], reference: pd.DataFrame) -> np.ndarray:
    """Main-effect columns of ``fields`` in ``frame``: categorical → indicators of every level of the reference
    except its most frequent; count / continuous → the value standardized by the reference's mean and sd
    (an sd of 0 gives a column of zeros). Levels and scales come from ``reference`` (the confidential data), so
    confidential and synthetic rows share their columns."""
    cols = []
    for f in fields:
        ref = reference[f.name]
        if f.kind == "categorical":
            counts = ref.astype(str).value_counts()
            levels = sorted(counts.index, key=lambda v: (-counts[v], v))[1:]
            values = frame[f.name].astype(str).to_numpy()
            cols += [(values == level).astype(float) for level in levels]
        else:
            r = ref.to_numpy(dtype=float)
            sd = float(r.std())
            x = frame[f.name].to_numpy(dtype=float)
            cols.append((x - r.mean()) / sd if sd > 0 else np.zeros(len(x)))
    return np.column_stack(cols) if cols else np.zeros((len(frame), 0))


def propensity_up(confidential_X: np.ndarray, synthetic_X: np.ndarray) -> MetricResult:
    """Propensity-score utility Up (Woo et al. 2009; Snoke et al. 2018): fit P(synthetic | main effects) by
    logistic regression on the stacked records and average (p̂ᵢ − c)² over all N of them, c = n_syn / N.

    The regression is unpenalized in effect (an L2 penalty of 1/`RIDGE_C` on standardized columns, only so
    that perfectly separable data, where the unpenalized fit has no finite solution, still give p̂ ≈ 0 or 1).
    0 = the synthetic records cannot be told apart; ¼ (at c = ½) = perfectly told apart.
    """
    X = np.vstack([confidential_X, synthetic_X])
    label = np.r_[np.zeros(len(confidential_X)), np.ones(len(synthetic_X))]
    c = len(synthetic_X) / len(X)
    if X.shape[1] == 0 or np.all(X.std(axis=0) == 0):
        return MetricResult("propensity_up", 0.0)
    model = LogisticRegression(C=RIDGE_C, max_iter=2000, tol=1e-8)
    model.fit(X, label)
    p = model.predict_proba(X)[:, 1]
    return MetricResult("propensity_up", float(np.mean((p - c) ** 2)))


def cluster_uc(confidential_X: np.ndarray, synthetic_X: np.ndarray, groups: int = 20, max_records: int = 4000,
               rng: np.random.Generator | None = None) -> MetricResult:
    """Cluster utility Uc (Woo et al. 2009): cluster the stacked records by UPGMA (average linkage, Euclidean
    distance on the main effects) into ``groups`` clusters and compute

        Uc = (1/G) Σⱼ wⱼ (n_jS / n_j − c)²,   wⱼ = n_j / N,   c = n_S / N,

    the deviation of each cluster's synthetic share from the overall share, clusters weighted by their size
    (Woo et al. leave wⱼ to the analyst; size weights keep tiny outlier clusters from dominating).

    Simplification: UPGMA needs all N² distances, so above ``max_records`` records a random subsample of
    ``max_records`` / 2 from each half (drawn with ``rng``) is clustered; c stays the same when the halves are.
    Detail: one row per cluster (cluster, size, synthetic_share).
    """
    rng = rng or np.random.default_rng(0)
    conf, syn = np.asarray(confidential_X, float), np.asarray(synthetic_X, float)
    if len(conf) + len(syn) > max_records:
        half = max_records // 2
        conf = conf[np.sort(rng.choice(len(conf), min(half, len(conf)), replace=False))]
        syn = syn[np.sort(rng.choice(len(syn), min(half, len(syn)), replace=False))]
    X = np.vstack([conf, syn])
    is_syn = np.r_[np.zeros(len(conf)), np.ones(len(syn))]
    c = is_syn.mean()
    if X.shape[1] == 0 or len(X) < 2:
        labels = np.ones(len(X), dtype=int)
    else:
        labels = fcluster(linkage(X, method="average", metric="euclidean"), t=groups, criterion="maxclust")
    ids, sizes = np.unique(labels, return_counts=True)
    share = np.array([is_syn[labels == k].mean() for k in ids])
    value = float(np.sum(sizes / len(X) * (share - c) ** 2) / groups)
    detail = pd.DataFrame({"cluster": ids, "size": sizes, "synthetic_share": share})
    return MetricResult("cluster_uc", value, detail=detail)


def ecdf_measures(confidential: pd.DataFrame, synthetic: pd.DataFrame, fields: Sequence[str]) -> dict[str, MetricResult]:
    """Empirical-CDF utility (Woo et al. 2009): per field, with F_c and F_s the empirical CDFs of the
    confidential and synthetic values evaluated at every value of the merged data, Um = max |F_c − F_s| and
    Ua = mean (F_c − F_s)². Each metric's value is its largest over ``fields`` (the worst field); detail: one
    row per field."""
    rows = []
    for f in fields:
        c = np.sort(confidential[f].to_numpy(dtype=float))
        s = np.sort(synthetic[f].to_numpy(dtype=float))
        points = np.concatenate([c, s])
        diff = np.searchsorted(c, points, side="right") / len(c) - np.searchsorted(s, points, side="right") / len(s)
        rows.append({"field": f, "ecdf_max": float(np.abs(diff).max()), "ecdf_avg": float(np.mean(diff ** 2))})
    detail = pd.DataFrame(rows, columns=["field", "ecdf_max", "ecdf_avg"])
    return {m: MetricResult(m, float(detail[m].max()) if len(detail) else float("nan"), detail=detail)
            for m in ("ecdf_max", "ecdf_avg")}
