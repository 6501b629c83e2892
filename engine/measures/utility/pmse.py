"""Propensity-score utility: the pMSE and its ratio to the null expectation (Snoke, Raab, Nowok, Dibben &
Slavković 2018), as Schneider, Hu, Mankad & Bale (2023, Sections 4.1.1 and 5.3) use it for text.

The confidential and the synthetic records are stacked (N = 2n rows, c = n/N = ½ of them synthetic) and a
logistic regression predicts which rows are synthetic. Its covariates: the text reduced by a random projection
of the word counts to ``dim`` dimensions (standardized), the synthesized fields as indicators, and the
interactions of every field indicator with every text dimension and with the indicators of the other
synthesized fields. Then

    pMSE = (1/N) Σᵢ (p̂ᵢ − c)²,     ratio = pMSE / E₀[pMSE].

A ratio near 1 means the synthetic data look like draws from the same distribution; below 1 the synthesizer
over-fits (reproduces the confidential values), above 1 it under-fits. The projection is drawn
``n_projections`` times; each release gets the mean ratio over the draws, and the per-draw values are kept so
that the paper's interval over projections (Table 1) can be formed after averaging over the M releases.

The null expectation. Snoke et al. (2018) give E₀[pMSE] = (k − 1)(1 − c)²c/N for a propensity model with k
parameters. Under the null each row's label is a Bernoulli(c) draw, so each fitted group share varies by
c(1 − c)/nᵍ and E₀[pMSE] = (k − 1)·c(1 − c)/N — which for c = ½ is twice the printed value (our simulation of
the null agrees with the latter: tests/test_field_measures.py). Moreover, in partially synthetic data every
record appears twice with the same text, so the ``dim`` text main effects cannot separate the halves and
carry no degrees of freedom. We therefore use

    E₀[pMSE] = (k − 1 − dim) · c(1 − c) / N,

which makes the ratio 1 on average when the synthetic fields are drawn from the confidential data's own
distribution (tested), the property the paper's choice of λ* relies on.

Simplifications, stated: the text columns are identical in the two halves, so text-by-text interactions could
not separate them and are left out; records whose synthetic values equal the confidential ones give two
identical rows with opposite labels and are fitted as one row of weight 2 with response ½, which changes
nothing in the fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import field_levels, synthetic_codes
from engine.protect.field_synthesis.sequential import FieldLevels
from engine.text.features import synthesis_counts


@dataclass(frozen=True)
class PropensityResult:
    pmse: float
    ratio: float
    n_parameters: int


def random_projections(counts: sparse.csr_matrix, n_projections: int, dim: int, seed: int) -> list[np.ndarray]:
    """``n_projections`` Gaussian random projections of the word counts to ``dim`` standardized columns."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_projections):
        R = rng.standard_normal((counts.shape[1], dim)) / np.sqrt(dim)
        Z = np.asarray(counts @ R)
        sd = Z.std(axis=0)
        out.append((Z - Z.mean(axis=0)) / np.where(sd > 0, sd, 1.0))
    return out


def _indicators(codes: Sequence[np.ndarray], n_levels: Sequence[int]) -> np.ndarray:
    """Indicators of levels 1..K−1 of each field, side by side."""
    cols = [(c[:, None] == np.arange(1, k)[None, :]).astype(float) for c, k in zip(codes, n_levels)]
    return np.hstack(cols) if cols else np.zeros((len(codes[0]) if codes else 0, 0))


def _field_pairs(D: np.ndarray, n_levels: Sequence[int]) -> np.ndarray:
    """Products of the indicators of two different fields."""
    bounds = np.cumsum([0, *[k - 1 for k in n_levels]])
    cols = []
    for a in range(len(n_levels)):
        for b in range(a + 1, len(n_levels)):
            A, B = D[:, bounds[a] : bounds[a + 1]], D[:, bounds[b] : bounds[b + 1]]
            cols.append((A[:, :, None] * B[:, None, :]).reshape(len(D), -1))
    return np.hstack(cols) if cols else np.zeros((len(D), 0))


def propensity_design(Z: np.ndarray, codes: Sequence[np.ndarray], n_levels: Sequence[int]) -> np.ndarray:
    """Intercept, text dimensions, field indicators, field × text and field × field interactions."""
    D = _indicators(codes, n_levels)
    inter = (D[:, :, None] * Z[:, None, :]).reshape(len(Z), -1)
    return np.hstack([np.ones((len(Z), 1)), Z, D, inter, _field_pairs(D, n_levels)])


def fit_logistic(
    X: np.ndarray, t: np.ndarray, w: np.ndarray, max_iter: int = 30, tol: float = 1e-8
) -> tuple[np.ndarray, int]:
    """Weighted maximum-likelihood logistic regression by Newton's method with step halving.

    Returns the fitted probabilities and the number of estimable parameters (rank of the weighted design).
    Where the classes separate, the estimates diverge and the probabilities approach 0 or 1; the iteration
    count bounds that, as glm() does.
    """
    k = X.shape[1]
    beta = np.zeros(k)
    eta = np.zeros(len(X))

    def loglik(e: np.ndarray) -> float:
        return float(w @ (t * e - np.logaddexp(0.0, e)))

    ll = loglik(eta)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-eta))
        g = X.T @ (w * (t - p))
        H = (X * (w * p * (1 - p))[:, None]).T @ X
        vals, vecs = np.linalg.eigh(H)
        keep = vals > 1e-10 * max(vals.max(initial=0.0), 1e-300)
        step = vecs[:, keep] @ ((vecs[:, keep].T @ g) / vals[keep])
        for _half in range(30):
            new_eta = X @ (beta + step)
            new_ll = loglik(new_eta)
            if new_ll >= ll - 1e-12:
                break
            step /= 2
        beta += step
        eta, ll_old, ll = new_eta, ll, new_ll
        if np.abs(step).max(initial=0.0) < tol or abs(ll - ll_old) < tol * (abs(ll) + tol):
            break
    H = (X * w[:, None]).T @ X
    vals = np.linalg.eigvalsh(H)
    rank = int((vals > 1e-10 * max(vals.max(initial=0.0), 1e-300)).sum())
    return 1.0 / (1.0 + np.exp(-eta)), rank


def propensity_score(
    Z: np.ndarray,
    confidential: Sequence[np.ndarray],
    synthetic: Sequence[np.ndarray],
    n_levels: Sequence[int],
) -> PropensityResult:
    """pMSE and pMSE ratio of one synthetic dataset for one text projection ``Z`` (see the module docstring)."""
    n = len(Z)
    same = np.ones(n, dtype=bool)
    for a, b in zip(confidential, synthetic):
        same &= a == b
    diff = ~same
    # Unchanged records: one row, weight 2, response ½. Changed records: a confidential and a synthetic row.
    Zs = np.vstack([Z[same], Z[diff], Z[diff]])
    codes = [np.concatenate([a[same], a[diff], b[diff]]) for a, b in zip(confidential, synthetic)]
    t = np.concatenate([np.full(same.sum(), 0.5), np.zeros(diff.sum()), np.ones(diff.sum())])
    w = np.concatenate([np.full(same.sum(), 2.0), np.ones(2 * diff.sum())])
    X = propensity_design(Zs, codes, n_levels)
    p, k = fit_logistic(X, t, w)
    N, c = 2 * n, 0.5
    pmse = float(w @ (p - c) ** 2) / N
    expected = (k - 1 - Z.shape[1]) * c * (1 - c) / N
    return PropensityResult(pmse, pmse / expected if expected > 0 else float("nan"), k)


def projection_interval(detail: pd.DataFrame) -> tuple[float, float, float]:
    """The paper's summary over projections (Table 1): average the ratio over the M releases for each
    projection, then the mean and the central 95% range of those averages. ``detail`` has columns
    projection, pmse_ratio and replicate."""
    per = detail.groupby("projection")["pmse_ratio"].mean().to_numpy()
    if len(per) == 0:
        nan = float("nan")
        return nan, nan, nan
    return float(per.mean()), float(np.quantile(per, 0.025)), float(np.quantile(per, 0.975))


def projected_texts(context: PrepareContext) -> list[np.ndarray]:
    """The `random_projections` of the confidential texts' word counts, drawn once for the pMSE measures."""

    def project() -> list[np.ndarray]:
        o = context.options
        context.progress(0, 1, "projecting the text for the pMSE")
        counts = synthesis_counts(context.dataset.texts.astype(str).tolist())
        return random_projections(counts.matrix, o.projections, o.projection_dim, o.seed)

    return context.shared("pmse_projections", project)


class _PropensityMeasure(Measure):
    """`propensity_score` over the projections, computed once per release for both pMSE measures; detail: one
    row per projection (projection, pmse, pmse_ratio, parameters)."""

    kind = "utility"
    source = (
        "Snoke, Raab, Nowok, Dibben & Slavković (2018); Schneider, Hu, Mankad & Bale (2023), Sections 4.1.1 and 5.3"
    )
    applies_to = "categorical"
    levels: list[FieldLevels]
    projections: list[np.ndarray]

    def prepare(self, context: PrepareContext) -> None:
        self.levels = field_levels(context)
        self.projections = projected_texts(context)

    def per_projection(self, view: ReleaseView) -> pd.DataFrame:
        def fit() -> pd.DataFrame:
            conf = [lv.codes for lv in self.levels]
            syn = synthetic_codes(view, self.levels)
            k = [lv.n_levels for lv in self.levels]
            results = [propensity_score(Z, conf, syn, k) for Z in self.projections]
            return pd.DataFrame(
                {
                    "projection": np.arange(1, len(results) + 1),
                    "pmse": [r.pmse for r in results],
                    "pmse_ratio": [r.ratio for r in results],
                    "parameters": [r.n_parameters for r in results],
                }
            )

        return view.memo("pmse", fit)

    def compute(self, view: ReleaseView) -> MetricResult:
        per = self.per_projection(view)
        return MetricResult(self.id, float(per[self.id].mean()), detail=per)


class PmseRatio(_PropensityMeasure):
    """pMSE over its null expectation (Snoke et al. 2018; the null mean of this module's docstring)."""

    id = "pmse_ratio"
    better = "one"
    label = "pMSE ratio"
    meaning = (
        "Propensity-score mean squared error of telling synthetic from confidential records (text by random "
        "projection, fields and their interactions), divided by its mean when both come from the same distribution "
        "(Snoke et al. 2018; the null mean as derived in engine/measures/utility/pmse.py). About 1 = good "
        "synthesis; below 1 = over-fit to the confidential values; above 1 = under-fit. Mean over the projections."
    )
    high = float("inf")


class Pmse(_PropensityMeasure):
    """Propensity-score mean squared error (Snoke et al. 2018; Schneider et al. 2023, Section 4.1.1)."""

    id = "pmse"
    better = "lower"
    label = "pMSE"
    meaning = (
        "Propensity-score mean squared error: how well a logistic regression tells synthetic from "
        "confidential records. 0 = indistinguishable (which also happens when nothing was changed)."
    )
    high = 0.25
