"""Global utility of synthesized fields: propensity Up, cluster Uc and the empirical-CDF measures.

Woo, Reiter, Oganian & Karr (2009) and Snoke et al. (2018), as Guo & Hu use them (Section 3.1, Table 2): each
tells how well the synthetic records can be told apart from the confidential ones; 0 means not at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.special import expit

from engine.data.levels import levels_by_frequency
from engine.data.schema import FieldSpec
from engine.measures.base import MetricResult


def main_effects(frame: pd.DataFrame, fields: Sequence[FieldSpec], reference: pd.DataFrame) -> np.ndarray:
    """Main-effect columns of ``fields`` in ``frame``: categorical → indicators of every level of the reference
    except its most frequent; count / continuous → the value standardized by the reference's mean and sd
    (population sd; an sd of 0 gives a column of zeros). Levels and scales come from ``reference`` (the
    confidential data), so confidential and synthetic rows share their columns; a level the reference lacks
    gets no column (its rows sit at the reference level)."""
    cols = []
    for f in fields:
        ref = reference[f.name]
        if f.kind == "categorical":
            levels = levels_by_frequency(ref)[1:]
            values = frame[f.name].astype(str).to_numpy()
            cols += [(values == level).astype(float) for level in levels]
        else:
            r = ref.to_numpy(dtype=float)
            sd = float(r.std())
            x = frame[f.name].to_numpy(dtype=float)
            cols.append((x - r.mean()) / sd if sd > 0 else np.zeros(len(x)))
    return np.column_stack(cols) if cols else np.zeros((len(frame), 0))


RIDGE = 1e-4  # fallback penalty: negligible beside the log-likelihood summed over thousands of records


def _logistic_fit(X: np.ndarray, y: np.ndarray, ridge: float, max_iter: int = 100) -> tuple[np.ndarray, bool]:
    """Fitted probabilities of a logistic regression of ``y`` on an intercept and ``X`` by Newton's method with
    step halving, minimizing −log L + (ridge/2)·|β|² (the intercept unpenalized). Returns them and whether the
    fit converged to a finite optimum (False on non-convergence or when fitted probabilities reach 0 or 1, the
    sign of separation, where the unpenalized optimum lies at infinity)."""
    A = np.column_stack([np.ones(len(X)), X])
    pen = np.full(A.shape[1], ridge)
    pen[0] = 0.0
    beta = np.zeros(A.shape[1])
    beta[0] = np.log(y.mean() / (1 - y.mean()))

    def loss(b: np.ndarray) -> float:
        eta = A @ b
        return float(np.sum(np.logaddexp(0.0, eta) - y * eta) + 0.5 * np.sum(pen * b * b))

    f = loss(beta)
    for _ in range(max_iter):
        p = expit(A @ beta)
        grad = A.T @ (p - y) + pen * beta
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(pen)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]  # least squares: collinear columns leave H singular
        t, f_new = 1.0, loss(beta - step)
        while f_new > f and t > 1e-8:
            t /= 2
            f_new = loss(beta - t * step)
        if f_new > f:
            break
        beta, f_old, f = beta - t * step, f, f_new
        if f_old - f <= 1e-10 * (1 + abs(f)):
            eta = A @ beta
            return expit(eta), bool(np.abs(eta).max(initial=0.0) < 30)
    return expit(A @ beta), False


def propensity_up(confidential_X: np.ndarray, synthetic_X: np.ndarray) -> MetricResult:
    """Propensity-score utility Up (Woo et al. 2009; Snoke et al. 2018; Guo & Hu, Section 3.1):
    stack the records, label synthetic ones 1, fit P(synthetic | main effects) by logistic regression and

        Up = (1/N) Σᵢ (p̂ᵢ − c)²,   c = n_syn / N.

    The regression is unpenalized (maximum likelihood by Newton's method). When it does not converge or the
    data are separable (some fitted probabilities reach 0 or 1, so the maximum-likelihood coefficients are
    infinite), it is refitted with a very small ridge penalty (`RIDGE` on the summed log-likelihood), whose
    probabilities approach the unpenalized limit. 0 = the synthetic records cannot be told apart; c(1 − c)
    (¼ at c = ½) = perfectly told apart.
    """
    conf, syn = np.asarray(confidential_X, dtype=float), np.asarray(synthetic_X, dtype=float)
    X = np.vstack([conf, syn])
    y = np.r_[np.zeros(len(conf)), np.ones(len(syn))]
    c = len(syn) / max(len(X), 1)
    if X.shape[1] == 0 or c in (0.0, 1.0) or np.ptp(X, axis=0).max() == 0:
        return MetricResult("propensity_up", 0.0)  # nothing to tell the halves apart by: p̂ = c everywhere
    p, ok = _logistic_fit(X, y, ridge=0.0)
    if not ok:
        p, _ = _logistic_fit(X, y, ridge=RIDGE, max_iter=500)
    return MetricResult("propensity_up", float(np.mean((p - c) ** 2)))


def cluster_uc(
    confidential_X: np.ndarray,
    synthetic_X: np.ndarray,
    groups: int = 20,
    max_records: int = 4000,
    rng: np.random.Generator | None = None,
) -> MetricResult:
    """Cluster utility Uc (Woo et al. 2009; Guo & Hu, Section 3.1): cluster the stacked records by
    UPGMA (average linkage, Euclidean distance) into ``groups`` clusters and compute

        Uc = (1/G) Σⱼ wⱼ (n_jS / n_j − c)²,   wⱼ = n_j / N,   c = n_S / N,

    the squared deviation of each cluster's synthetic share from the overall share. Woo et al.'s own choice of
    the weights wⱼ could not be checked here; we weight clusters by their share of the records, so tiny outlier
    clusters do not dominate. G is the number of clusters actually formed (fewer than ``groups`` only when the
    records have fewer distinct values).

    Simplification: UPGMA needs all N² distances, so when N > ``max_records`` a random subsample of
    ``max_records`` records (drawn with ``rng``, default seed 0) is clustered, taken from each half in
    proportion to its size, so c is kept (½ from each of two equal halves). Detail: one row per cluster
    (cluster, size, synthetic_share).
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    conf, syn = np.asarray(confidential_X, dtype=float), np.asarray(synthetic_X, dtype=float)
    n = len(conf) + len(syn)
    if n > max_records:
        take_c = int(round(max_records * len(conf) / n))
        conf = conf[np.sort(rng.choice(len(conf), take_c, replace=False))]
        syn = syn[np.sort(rng.choice(len(syn), max_records - take_c, replace=False))]
    X = np.vstack([conf, syn])
    is_syn = np.r_[np.zeros(len(conf)), np.ones(len(syn))]
    c = float(is_syn.mean()) if len(X) else 0.0
    if X.shape[1] == 0 or len(X) < 2:
        labels = np.ones(len(X), dtype=int)
    else:
        labels = fcluster(linkage(X, method="average", metric="euclidean"), t=groups, criterion="maxclust")
    ids, labels = np.unique(labels, return_inverse=True)
    sizes = np.bincount(labels, minlength=len(ids))
    share = np.bincount(labels, weights=is_syn, minlength=len(ids)) / np.maximum(sizes, 1)
    value = float(np.sum(sizes / max(len(X), 1) * (share - c) ** 2) / max(len(ids), 1))
    detail = pd.DataFrame({"cluster": np.arange(1, len(ids) + 1), "size": sizes, "synthetic_share": share})
    return MetricResult("cluster_uc", value, detail=detail)


def ecdf_measures(
    confidential: pd.DataFrame, synthetic: pd.DataFrame, fields: Sequence[str]
) -> dict[str, MetricResult]:
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
        rows.append({"field": f, "ecdf_max": float(np.abs(diff).max()), "ecdf_avg": float(np.mean(diff**2))})
    detail = pd.DataFrame(rows, columns=["field", "ecdf_max", "ecdf_avg"])
    return {
        m: MetricResult(m, float(detail[m].max()) if len(detail) else float("nan"), detail=detail)
        for m in ("ecdf_max", "ecdf_avg")
    }
