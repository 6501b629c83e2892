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
from scipy.special import expit

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import field_levels, synthetic_codes
from engine.protect.field_synthesis.sequential import FieldLevels
from engine.protect.params import Param
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


def _cells(codes: Sequence[np.ndarray], n_levels: Sequence[int], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's cell (its combination of the fields' codes, numbered from 0) and the first row of each cell."""
    key, size = np.zeros(n, dtype=np.int64), 1
    for c, k in zip(codes, n_levels):
        key, size = key * int(k) + np.asarray(c, dtype=np.int64), size * int(k)
        if size > 2**40:  # renumber before the mixed-radix key could overflow
            kept, key = np.unique(key, return_inverse=True)
            size = len(kept)
    _, first, cell = np.unique(key, return_index=True, return_inverse=True)
    return cell.ravel(), first


@dataclass(frozen=True)
class FieldCells:
    """Rows grouped by cell (one cell per combination of the fields' values): ``order`` puts the rows cell by
    cell, cell g holding the ordered rows ``bounds[g]:bounds[g + 1]``; ``cell`` is each ordered row's cell, and
    each cell has its field indicators e = (1, indicators) in ``E`` and field × field products in ``F``."""

    order: np.ndarray
    cell: np.ndarray
    bounds: np.ndarray
    E: np.ndarray
    F: np.ndarray

    @classmethod
    def of(cls, codes: Sequence[np.ndarray], n_levels: Sequence[int], n: int) -> FieldCells:
        cell, first = _cells(codes, n_levels, n)
        order = np.argsort(cell, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=len(first)))])
        per_cell = [np.asarray(c)[first] for c in codes]
        indicators = _indicators(per_cell, n_levels) if len(codes) else np.zeros((len(first), 0))
        E = np.hstack([np.ones((len(first), 1)), indicators])
        return cls(order, cell[order], bounds, E, _field_pairs(indicators, n_levels))


ROWS_PER_CELL_LOOP = 64
"""From this many rows per cell on average, a cell's moments are one matrix product per cell; below it, one
pass over every row's u·uᵀ (a Python loop over many small cells would cost more)."""


class PropensityDesign:
    """The propensity model's design — intercept, text dimensions, field indicators, field × text and field ×
    field interactions — held by cell, not by row.

    With u = (1, z) a row's text part and e = (1, field indicators) its cell's, the intercept, text, indicator
    and field × text columns are every product e_a·u_b, and the field × field columns f_c enter alone. So the
    coefficients are a matrix B (e by u) and a vector b, the linear predictor is η = eᵀBu + fᵀb, and every sum
    Newton's method needs over the rows is a sum over cells of the cell's moments Σ s·u and Σ s·uuᵀ: the
    Hessian Σ s·xxᵀ = Σ_cells (eeᵀ ⊗ Σ s·uuᵀ) (and its f parts), the same numbers as the dense N × k design
    gives, at a cost of N·(dim + 1)² per iteration instead of N·k² (k = 160 for two fields of 5 and 8 levels
    and 10 dimensions). ``Z`` holds the rows in the cells' order (``cells.order``)."""

    def __init__(self, Z: np.ndarray, cells: FieldCells) -> None:
        self.U = np.hstack([np.ones((len(Z), 1)), Z])
        self.cells = cells
        self.E, self.F, self.cell = cells.E, cells.F, cells.cell
        self.shape_b = (self.E.shape[1], self.U.shape[1])
        self.n_parameters = self.E.shape[1] * self.U.shape[1] + self.F.shape[1]

    def dense(self) -> np.ndarray:
        """The N × k design itself, in the order of the parameters (for checking; the fit never builds it)."""
        e, f = self.E[self.cell], self.F[self.cell]
        return np.hstack([(e[:, :, None] * self.U[:, None, :]).reshape(len(self.U), -1), f])

    def eta(self, theta: np.ndarray) -> np.ndarray:
        """The linear predictor of every row."""
        size = self.shape_b[0] * self.shape_b[1]
        per_cell = self.E @ theta[:size].reshape(self.shape_b)
        return np.einsum("ij,ij->i", per_cell[self.cell], self.U) + (self.F @ theta[size:])[self.cell]

    def gradient(self, r: np.ndarray) -> np.ndarray:
        """Σ r_i·x_i, the design's transpose times ``r``."""
        R = np.add.reduceat(self.U * r[:, None], self.cells.bounds[:-1], axis=0)
        return np.concatenate([(self.E.T @ R).ravel(), self.F.T @ R[:, 0]])

    def moments(self, s: np.ndarray) -> np.ndarray:
        """Σ s·u·uᵀ over each cell's rows (cells × (dim + 1) × (dim + 1))."""
        U, bounds = self.U, self.cells.bounds
        n_cells, width = len(bounds) - 1, U.shape[1]
        if len(U) >= ROWS_PER_CELL_LOOP * n_cells:
            M = np.empty((n_cells, width, width))
            for g in range(n_cells):
                part = U[bounds[g] : bounds[g + 1]]
                M[g] = (part * s[bounds[g] : bounds[g + 1], None]).T @ part
            return M
        upper = np.triu_indices(width)
        summed = np.add.reduceat(U[:, upper[0]] * (U[:, upper[1]] * s[:, None]), bounds[:-1], axis=0)
        M = np.zeros((n_cells, width, width))
        M[:, upper[0], upper[1]] = summed
        M[:, upper[1], upper[0]] = summed
        return M

    def hessian(self, s: np.ndarray) -> np.ndarray:
        """Σ s_i·x_i·x_iᵀ from the cells' moments Σ s·u·uᵀ."""
        M = self.moments(s)
        E, F, size = self.E, self.F, self.shape_b[0] * self.shape_b[1]
        ee = np.einsum("ga,gc,gbd->abcd", E, E, M, optimize=True).reshape(size, size)
        ef = np.einsum("ga,gb,gc->abc", E, M[:, :, 0], F, optimize=True).reshape(size, F.shape[1])
        ff = np.einsum("ga,gc,g->ac", F, F, M[:, 0, 0], optimize=True)
        return np.block([[ee, ef], [ef.T, ff]])


def fit_logistic(
    design: PropensityDesign, t: np.ndarray, w: np.ndarray, max_iter: int = 30, tol: float = 1e-8
) -> tuple[np.ndarray, int]:
    """Weighted maximum-likelihood logistic regression by Newton's method with step halving.

    Returns the fitted probabilities and the number of estimable parameters (rank of the weighted design).
    Where the classes separate, the estimates diverge and the probabilities approach 0 or 1; the iteration
    count bounds that, as glm() does.
    """
    beta = np.zeros(design.n_parameters)
    eta = np.zeros(len(t))

    def loglik(e: np.ndarray) -> float:
        return float(w @ (t * e - np.logaddexp(0.0, e)))

    ll = loglik(eta)
    for _ in range(max_iter):
        p = expit(eta)  # 1 / (1 + e^−η) without overflow warnings for a separated cell
        g = design.gradient(w * (t - p))
        vals, vecs = np.linalg.eigh(design.hessian(w * p * (1 - p)))
        keep = vals > 1e-10 * max(vals.max(initial=0.0), 1e-300)
        step = vecs[:, keep] @ ((vecs[:, keep].T @ g) / vals[keep])
        for _half in range(30):
            new_eta = design.eta(beta + step)
            new_ll = loglik(new_eta)
            if new_ll >= ll - 1e-12:
                break
            step /= 2
        beta += step
        eta, ll_old, ll = new_eta, ll, new_ll
        if np.abs(step).max(initial=0.0) < tol or abs(ll - ll_old) < tol * (abs(ll) + tol):
            break
    vals = np.linalg.eigvalsh(design.hessian(w))
    rank = int((vals > 1e-10 * max(vals.max(initial=0.0), 1e-300)).sum())
    return expit(eta), rank


def propensity_scores(
    projections: Sequence[np.ndarray],
    confidential: Sequence[np.ndarray],
    synthetic: Sequence[np.ndarray],
    n_levels: Sequence[int],
) -> list[PropensityResult]:
    """pMSE and pMSE ratio of one synthetic dataset for each text projection (see the module docstring); the
    rows and their cells are laid out once for all projections."""
    n = len(confidential[0]) if len(confidential) else len(projections[0])
    same = np.ones(n, dtype=bool)
    for a, b in zip(confidential, synthetic):
        same &= a == b
    diff = ~same
    # Unchanged records: one row, weight 2, response ½. Changed records: a confidential and a synthetic row.
    rows = np.concatenate([np.flatnonzero(same), np.flatnonzero(diff), np.flatnonzero(diff)])
    codes = [np.concatenate([a[same], a[diff], b[diff]]) for a, b in zip(confidential, synthetic)]
    t = np.concatenate([np.full(same.sum(), 0.5), np.zeros(diff.sum()), np.ones(diff.sum())])
    w = np.concatenate([np.full(same.sum(), 2.0), np.ones(2 * diff.sum())])
    cells = FieldCells.of(codes, n_levels, len(rows))
    rows, t, w = rows[cells.order], t[cells.order], w[cells.order]  # cell by cell
    N, c = 2 * n, 0.5
    out = []
    for Z in projections:
        p, k = fit_logistic(PropensityDesign(Z[rows], cells), t, w)
        pmse = float(w @ (p - c) ** 2) / N
        expected = (k - 1 - Z.shape[1]) * c * (1 - c) / N
        out.append(PropensityResult(pmse, pmse / expected if expected > 0 else float("nan"), k))
    return out


def propensity_score(
    Z: np.ndarray, confidential: Sequence[np.ndarray], synthetic: Sequence[np.ndarray], n_levels: Sequence[int]
) -> PropensityResult:
    """`propensity_scores` for one projection ``Z``."""
    return propensity_scores([Z], confidential, synthetic, n_levels)[0]


def projection_interval(detail: pd.DataFrame) -> tuple[float, float, float]:
    """The paper's summary over projections (Table 1): average the ratio over the M releases for each
    projection, then the mean and the central 95% range of those averages. ``detail`` has columns
    projection, pmse_ratio and replicate."""
    per = detail.groupby("projection")["pmse_ratio"].mean().to_numpy()
    if len(per) == 0:
        nan = float("nan")
        return nan, nan, nan
    return float(per.mean()), float(np.quantile(per, 0.025)), float(np.quantile(per, 0.975))


PROJECTIONS = Param(
    "projections",
    int,
    20,
    "synthesis measures: random projections of the text for the pMSE (the paper uses 20)",
    low=1,
    high=200,
    label="pMSE projections",
    quick=5,
)
PROJECTION_DIM = 10
"""Dimensions of each random projection (Schneider et al. 2023 use 20 projections of 10 dimensions)."""


def projected_texts(context: PrepareContext) -> list[np.ndarray]:
    """The `random_projections` of the confidential texts' word counts, drawn once for the pMSE measures."""

    def project() -> list[np.ndarray]:
        settings = context.settings
        context.progress(0, 1, "projecting the text for the pMSE")
        counts = synthesis_counts(context.dataset.texts.astype(str).tolist())
        return random_projections(counts.matrix, settings[PROJECTIONS.name], PROJECTION_DIM, settings.seed)

    return context.shared("pmse_projections", project)


class _PropensityMeasure(Measure):
    """`propensity_score` over the projections, computed once per release for both pMSE measures; detail: one
    row per projection (projection, pmse, pmse_ratio, parameters)."""

    kind = "utility"
    source = (
        "Snoke, Raab, Nowok, Dibben & Slavković (2018); Schneider, Hu, Mankad & Bale (2023), Sections 4.1.1 and 5.3"
    )
    applies_to = "categorical"
    settings = (PROJECTIONS,)
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
            results = propensity_scores(self.projections, conf, syn, k)
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
        "(after Snoke et al. 2018: (k − 1 − d)·c(1 − c)/N for k parameters, d of them the text's, which cannot "
        "separate the two copies of a record; c the synthetic share of N rows). About 1 = good "
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
