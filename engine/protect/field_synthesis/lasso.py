"""Multinomial logistic regression with a lasso penalty, fitted along a whole path of λ at once.

This is the posterior mode of Schneider, Hu, Mankad & Bale (2023), Eqs. 1–2: a multinomial logit whose
coefficients have independent Laplace priors with inverse scale λ; the mode of that posterior is the lasso
estimate with penalty λ·Σ|u| (their footnote 2, after Tibshirani 1996). We minimize glmnet's objective

    F(B, b) = −(1/W) Σᵢ wᵢ [ Σₖ yᵢₖ ηᵢₖ − log Σₖ exp ηᵢₖ ] + λ Σⱼₖ |Bⱼₖ|,     ηᵢ = x̃ᵢ B + b,

with x̃ the columns standardized to mean 0 and variance 1 (weighted by w), the K class intercepts b
unpenalized, and every class carrying its own coefficient vector (the symmetric form glmnet fits; Eq. 1 writes
the same model against a reference class, and the predictive probabilities are what the synthesizer uses).

The path runs from λmax — the smallest λ at which every coefficient is zero, computed exactly as
max |x̃ⱼᵀ(yₖ − ȳₖ)|/W — down to ``lambda_min_ratio``·λmax on a log scale. Each λ is solved by an accelerated
proximal-gradient method (FISTA with backtracking and gradient restart; Beck & Teboulle 2009, O'Donoghue &
Candès 2015), warm-started from the previous solution, on a working set: the ever-active columns plus the
sequential strong set (Tibshirani et al. 2012), with a KKT check over all columns after each λ and a re-solve
when a column violates it. Each λ starts from the previous two solutions extrapolated linearly in log λ (the
path is piecewise smooth; the first proximal step zeroes what should be zero), which roughly halves the
iterations. Centring is implicit (the sparse matrix is never densified; a column of ones appended to it
carries the intercepts). Each iteration makes two passes over the records: a product and the loss at the
new point, then the loss, residual and product back at the extrapolated point, whose linear predictor is
combined from two known ones. Both use scipy's column-compressed kernel on n × K arrays (nothing is
transposed) and run in row blocks on several threads.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from scipy import sparse

from engine.errors import DataError
from engine.progress import Progress, no_progress


@dataclass
class LassoPath:
    """The fitted path: coefficients on the standardized scale for every λ.

    ``coef`` is (L, p·K) sparse, row l holding B at ``lambdas[l]`` flattened feature-major (j·K + k);
    ``intercept`` is (L, K). ``center``/``scale`` standardize a new design the same way.
    """

    lambdas: np.ndarray
    coef: sparse.csr_matrix
    intercept: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    n_classes: int
    n_iter: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    objective: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def n_features(self) -> int:
        return len(self.center)

    @property
    def lambda_max(self) -> float:
        return float(self.lambdas[0])

    def nonzero_counts(self) -> np.ndarray:
        """Number of non-zero coefficients (feature × class) at each λ — Schneider et al. (2023), Fig. 2."""
        return np.diff(self.coef.indptr)

    def coefficients(self, lam: float) -> tuple[sparse.csr_matrix, np.ndarray]:
        """(B as p × K sparse, b) at ``lam``; between path points linearly interpolated in λ, as glmnet's
        ``predict(..., exact = FALSE)`` does; above λmax the all-zero solution; below the last λ, an error."""
        lams = self.lambdas
        if lam >= lams[0]:
            return self._row(0), self.intercept[0]
        if lam < lams[-1] * (1 - 1e-12):
            raise ValueError(f"λ = {lam:g} is below the end of the fitted path ({lams[-1]:g})")
        right = int(np.searchsorted(-lams, -lam, side="left"))  # first index with λ_l ≤ lam
        right = min(right, len(lams) - 1)
        if math.isclose(lams[right], lam, rel_tol=1e-12):
            return self._row(right), self.intercept[right]
        left = right - 1
        frac = (lams[left] - lam) / (lams[left] - lams[right])
        B = self._row(left) * (1 - frac) + self._row(right) * frac
        b = self.intercept[left] * (1 - frac) + self.intercept[right] * frac
        return B.tocsr(), b

    def _row(self, l: int) -> sparse.csr_matrix:
        return self.coef[l].reshape((self.n_features, self.n_classes)).tocsr()

    def linear_predictor(self, X: sparse.spmatrix | np.ndarray, lam: float) -> np.ndarray:
        """η = x̃ B + b for the rows of a raw (unstandardized) design ``X``."""
        B, b = self.coefficients(lam)
        Bs = sparse.diags(1.0 / self.scale) @ B  # coefficients on the raw scale
        eta = np.asarray(X @ Bs.toarray()) if B.nnz else np.zeros((X.shape[0], self.n_classes))
        offset = np.asarray(Bs.T @ self.center).ravel() if B.nnz else 0.0
        return eta - offset + b

    def predict_proba(self, X: sparse.spmatrix | np.ndarray, lam: float) -> np.ndarray:
        return softmax(self.linear_predictor(X, lam))


def softmax(eta: np.ndarray) -> np.ndarray:
    z = eta - eta.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


# Tuning of the solver, measured in benchmarks/bench_glm_path.py: the smallest Hessian-diagonal step metric
# as a share of the largest; how far each λ's start is extrapolated from the previous two solutions (1 =
# linearly in log λ); how fast the step size is allowed to grow back after each iteration.
FLOOR = 1e-2
EXTRAPOLATE = 1.0
DECAY = 0.9
# Non-zeros per row block below which a pass is not worth handing to another thread (a hand-off costs
# some 50 µs, a product over 100,000 non-zeros about as much).
MIN_BLOCK_NNZ = 100_000
# Share of the design's non-zeros above which a working set uses the whole design (see _WorkingSet).
WHOLE_SHARE = 0.9

T = TypeVar("T")


def _log_sum_exp(eta: np.ndarray, axis: int = 1) -> np.ndarray:
    m = eta.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(eta - m).sum(axis=axis, keepdims=True))).squeeze(axis)


def standardize_columns(X: sparse.csr_matrix, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted column means and standard deviations (weights summing to 1) and which columns vary."""
    center = np.asarray(X.T @ w).ravel()
    second = np.asarray(X.multiply(X).T @ w).ravel()
    var = np.maximum(second - center**2, 0.0)
    varies = var > 1e-12 * np.maximum(second, 1e-300)
    scale = np.where(varies, np.sqrt(var), 1.0)
    return center, scale, varies


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """a·b for long vectors without BLAS: a multi-threaded ddot hands off to threads that spin on a busy
    machine and costs milliseconds where this costs tens of microseconds."""
    return float(np.einsum("i,i->", a, b))


def _class_sum(P: np.ndarray) -> np.ndarray:
    """Row sums of an n × K array: K − 1 passes over strided columns, several times faster than
    ``P.sum(axis=1)``, whose inner loop is only K long."""
    total = P[:, 0].copy()
    for k in range(1, P.shape[1]):
        total += P[:, k]
    return total


def _class_max(P: np.ndarray) -> np.ndarray:
    top = P[:, 0].copy()
    for k in range(1, P.shape[1]):
        np.maximum(top, P[:, k], out=top)
    return top


class _Rows:
    """Per-record data of one row block: weights, and where each record's true class sits in the block's
    flattened n_b × K arrays (a 1-d take/put is several times faster than 2-d fancy indexing)."""

    def __init__(self, w: np.ndarray, y: np.ndarray, K: int) -> None:
        self.w = w
        self.true = np.arange(len(y)) * K + y


def _block_loss(eta: np.ndarray, rows: _Rows, residual: bool) -> tuple[float, np.ndarray | None]:
    """Σᵢ wᵢ (log Σₖ exp ηᵢₖ − ηᵢ,yᵢ) over a block (n_b × K) and, if ``residual``, w·(P − Y) in a new array.

    Exponentiates without shifting by the row maximum whenever that is safe (no overflow, no row summing
    to zero), which saves two passes over the block."""
    with np.errstate(over="ignore", under="ignore"):
        P = np.exp(eta)
    total = _class_sum(P)
    if np.isfinite(total).all() and total.min(initial=1.0) > 1e-250:
        per_record = np.log(total)
    else:
        top = _class_max(eta)
        np.subtract(eta, top[:, None], out=P)
        np.exp(P, out=P)
        total = _class_sum(P)
        per_record = np.log(total)
        per_record += top
    per_record -= eta.reshape(-1).take(rows.true)
    loss = _dot(rows.w, per_record)
    if not residual:
        return loss, None
    scale = rows.w / total
    for k in range(P.shape[1]):  # K strided passes: a broadcast over an inner axis of K is slower
        P[:, k] *= scale
    P.reshape(-1)[rows.true] -= rows.w
    return loss, P


Block = tuple[int, int, sparse.csr_matrix, sparse.csc_matrix | None]
Eta = list[np.ndarray]  # the linear predictor as one n_b × K array per row block


def _with_ones(A: sparse.csc_matrix) -> sparse.csc_matrix:
    """A with a column of ones appended, which carries the intercept into A M and Σᵢ Rᵢ out of Aᵀ R at the
    cost of n more non-zeros, instead of two passes over an n × K array."""
    n = A.shape[0]
    index = np.int64 if A.nnz + n > np.iinfo(np.int32).max else A.indices.dtype
    indptr = np.append(A.indptr, A.indptr[-1] + n).astype(index)
    indices = np.concatenate([A.indices, np.arange(n)]).astype(index, copy=False)
    data = np.concatenate([A.data, np.ones(n)])
    return sparse.csc_matrix((data, indices, indptr), shape=(n, A.shape[1] + 1))


class _Design:
    """A sparse matrix with a column of ones appended, kept both row- and column-compressed and cut into
    row blocks, with the solver's passes over the records: a product and the loss, or the loss, the
    residual and a product back.

    Each pass runs block by block, on several threads when there is more than one block (scipy's sparse
    kernels and numpy's loops release the GIL), and keeps everything n × K so that nothing is transposed.
    Both products use scipy's column-compressed kernel, which scatters each non-zero into a different row
    of the result: A M from the CSC copy, and Aᵀ R from the CSR copy (whose transpose is a CSC view). The
    row-compressed kernel instead accumulates each row's non-zeros into the same K numbers, a chain of
    dependent additions that runs at about two thirds of the speed.
    """

    def __init__(
        self, A: sparse.csc_matrix, bounds: list[tuple[int, int]], rows: list[_Rows], pool: ThreadPoolExecutor | None
    ) -> None:
        A = _with_ones(A)
        self.pool = pool if len(bounds) > 1 else None
        self.rows = rows
        if len(bounds) == 1:
            self.blocks: list[Block] = [(0, A.shape[0], A.tocsr(), A)]
        else:
            csr = A.tocsr()
            self.blocks = []
            for r0, r1 in bounds:
                part = csr[r0:r1]
                self.blocks.append((r0, r1, part, part.tocsc()))
        self._squared: _Design | None = None

    def _each(self, f: Callable[[int], T]) -> list[T]:
        if self.pool is None:
            return [f(i) for i in range(len(self.blocks))]
        return list(self.pool.map(f, range(len(self.blocks))))

    @property
    def squared(self) -> _Design:
        """Every entry squared (for the Hessian's diagonal); kept, since the design often outlives a λ."""
        if self._squared is None:
            out = _Design.__new__(_Design)
            out.pool, out.rows, out._squared = self.pool, self.rows, None
            out.blocks = [
                (r0, r1, sparse.csr_matrix((A.data**2, A.indices, A.indptr), shape=A.shape), None)
                for r0, r1, A, _ in self.blocks
            ]
            self._squared = out
        return self._squared

    def forward(self, M: np.ndarray) -> tuple[Eta, float]:
        """η = [A 1] M (M's last row the offsets) and the loss there."""

        def run(i: int) -> tuple[np.ndarray, float]:
            eta = np.asarray(self.blocks[i][3] @ M)
            return eta, _block_loss(eta, self.rows[i], residual=False)[0]

        parts = self._each(run)
        return [e for e, _ in parts], math.fsum(f for _, f in parts)

    def backward(self, eta: Eta, prev: Eta | None = None, beta: float = 0.0) -> tuple[float, np.ndarray]:
        """At η + β(η − prev) (η itself without ``prev``): the loss and [A 1]ᵀ R for the residual
        R = w·(P − Y), whose last row is Σᵢ Rᵢ. The extrapolated η is formed block by block, never kept."""

        def run(i: int) -> tuple[float, np.ndarray]:
            part = eta[i]
            if prev is not None and beta != 0.0:
                part = part + beta * (part - prev[i])
            loss, R = _block_loss(part, self.rows[i], residual=True)
            return loss, np.asarray(self.blocks[i][2].T @ R)

        parts = self._each(run)
        G = parts[0][1]
        for more in parts[1:]:
            G += more[1]
        return math.fsum(f for f, _ in parts), G

    def t_times(self, R: np.ndarray) -> np.ndarray:
        """[A 1]ᵀ R for a given n × K array."""

        def run(i: int) -> np.ndarray:
            r0, r1, A, _ = self.blocks[i]
            return np.asarray(A.T @ np.ascontiguousarray(R[r0:r1]))

        parts = self._each(run)
        return sum(parts[1:], parts[0])

    def curvature(self, eta: Eta) -> tuple[np.ndarray, np.ndarray]:
        """[A² 1]ᵀQ and [A 1]ᵀQ for Q = w·P(1 − P) at η."""
        squared = self.squared

        def run(i: int) -> tuple[np.ndarray, np.ndarray]:
            Q = softmax(eta[i])
            Q *= 1.0 - Q
            Q *= self.rows[i].w[:, None]
            return np.asarray(squared.blocks[i][2].T @ Q), np.asarray(self.blocks[i][2].T @ Q)

        parts = self._each(run)
        return sum((q[0] for q in parts[1:]), parts[0][0]), sum((q[1] for q in parts[1:]), parts[0][1])


class _Problem:
    """The data of one fit: raw design (whole, in row blocks), class labels, weights, standardization."""

    def __init__(
        self,
        X: sparse.csr_matrix,
        y: np.ndarray,
        n_classes: int,
        w: np.ndarray,
        center: np.ndarray,
        scale: np.ndarray,
        varies: np.ndarray,
        pool: ThreadPoolExecutor | None = None,
        n_threads: int = 1,
    ) -> None:
        self.X = X
        self.Xcsc = X.tocsc()
        self.col_nnz = np.diff(self.Xcsc.indptr)
        self.n, self.p = X.shape
        self.K = n_classes
        self.y = y
        self.w = w
        # Row blocks of about equal non-zeros, shared by every sub-matrix of the fit.
        parts = max(1, min(n_threads, X.nnz // MIN_BLOCK_NNZ)) if pool is not None else 1
        cuts = np.searchsorted(X.indptr, np.arange(1, parts) * (X.nnz / parts)).tolist()
        edges = sorted({0, *cuts, self.n})
        self.bounds = list(zip(edges[:-1], edges[1:]))
        self.pool = pool if len(self.bounds) > 1 else None
        self.rows = [_Rows(w[r0:r1], y[r0:r1], n_classes) for r0, r1 in self.bounds]
        self.design = _Design(self.Xcsc, self.bounds, self.rows, self.pool)
        self.center, self.scale, self.varies = center, scale, varies

    def intercept_eta(self, b: np.ndarray) -> Eta:
        return [np.broadcast_to(b, (r1 - r0, self.K)).copy() for r0, r1 in self.bounds]

    def split(self, eta: np.ndarray) -> Eta:
        return [np.ascontiguousarray(eta[r0:r1]) for r0, r1 in self.bounds]

    def full_gradient(self, G_aug: np.ndarray) -> np.ndarray:
        """x̃ᵀR for every column from [X 1]ᵀ R: (Xᵀ R − μ ⊗ Σᵢ Rᵢ) / σ, p × K."""
        G = G_aug[:-1] - np.outer(self.center, G_aug[-1])
        G /= self.scale[:, None]
        G[~self.varies] = 0.0
        return G


class _WorkingSet:
    """The columns currently optimized, with their raw sub-matrix and standardization.

    When the columns hold nearly all of the design's non-zeros (late in the path), the whole design is
    used with zero coefficients elsewhere: a product then costs a little more, but nothing is copied each
    time the working set grows.
    """

    def __init__(self, prob: _Problem, cols: np.ndarray) -> None:
        self.cols = cols
        self.p = prob.p
        self.whole = int(prob.col_nnz[cols].sum()) >= WHOLE_SHARE * prob.X.nnz
        if self.whole:
            self.A = prob.design
            self.own = np.append(cols, prob.p)  # rows of [X 1]ᵀR that belong to the set, and the ones
        else:
            self.A = _Design(prob.Xcsc[:, cols], prob.bounds, prob.rows, prob.pool)
        self.mu = prob.center[cols]
        self.inv_sd = 1.0 / prob.scale[cols]

    def _own(self, G: np.ndarray) -> np.ndarray:
        return G[self.own] if self.whole else G

    def forward(self, x: np.ndarray) -> tuple[Eta, float]:
        """η and the loss at x = [B; b] ((m + 1) × K, the intercepts in the last row)."""
        M = np.zeros((self.p + 1, x.shape[1])) if self.whole else np.empty_like(x)
        Braw = x[:-1] * self.inv_sd[:, None]
        offset = x[-1] - self.mu @ Braw
        if self.whole:
            M[self.cols] = Braw
        else:
            M[:-1] = Braw
        M[-1] = offset
        return self.A.forward(M)

    def backward(self, eta: Eta, prev: Eta | None = None, beta: float = 0.0) -> tuple[float, np.ndarray]:
        """The loss and its gradient ((m + 1) × K, the intercepts' last) at η + β(η − prev)."""
        loss, G = self.A.backward(eta, prev, beta)
        G = self._own(G)
        G[:-1] -= np.outer(self.mu, G[-1])
        G[:-1] *= self.inv_sd[:, None]
        return loss, G

    def hessian_diagonal(self, eta: Eta) -> np.ndarray:
        """Σᵢ wᵢ x̃ᵢⱼ² pᵢₖ(1 − pᵢₖ) for every coefficient and Σᵢ wᵢ pᵢₖ(1 − pᵢₖ) for the intercepts, floored,
        stacked like x."""
        raw2, raw1 = (self._own(G) for G in self.A.curvature(eta))
        Db = raw1[-1]
        D = np.empty_like(raw1)
        D[:-1] = (raw2[:-1] - 2 * self.mu[:, None] * raw1[:-1] + np.outer(self.mu**2, Db)) * (self.inv_sd**2)[:, None]
        D[-1] = Db
        floor = FLOOR * max(float(D.max(initial=0.0)), 1e-12)
        return np.maximum(D, floor)


def _fista(
    ws: _WorkingSet, lam: float, x: np.ndarray, eta_x: Eta, L: float, tol: float, max_iter: int
) -> tuple[np.ndarray, Eta, float, int]:
    """Minimize the objective over the working set from x = [B; b] with η(x) = ``eta_x``. Returns x, η(x),
    L and the iterations.

    The coefficients and the intercepts are kept as one (m + 1) × K array, the intercepts in the last row
    with no penalty. Steps are taken in the metric of the Hessian's diagonal at the warm start (a
    per-coefficient step size, with the soft-threshold scaled to match), which evens out rare and common
    words; backtracking on L keeps the quadratic model an upper bound. Stops when the proximal-gradient
    residual L·d·|x⁺ − y| (zero exactly at the optimum) falls below ``tol`` everywhere. Each iteration
    makes two passes over the records: the product and loss at the new point, then the loss, residual and
    product back at the extrapolated one (whose η is a combination of two known ones, so never multiplied).
    """
    D = ws.hessian_diagonal(eta_x)
    thr_unit = D**-1.0 * lam  # the soft-threshold at L = 1
    thr_unit[-1] = 0.0  # intercepts are not penalized
    y = x
    f_y, g = ws.backward(eta_x)
    t = 1.0
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (``it`` is reported after the loop)
        while True:
            z = g / D
            z *= -1.0 / L
            z += y
            n = z - np.clip(z, -thr_unit / L, thr_unit / L)
            eta_n, f_n = ws.forward(n)
            d = n - y
            Dd = D * d
            if f_n <= (
                f_y
                + float(np.einsum("ij,ij->", g, d))
                + 0.5 * L * float(np.einsum("ij,ij->", Dd, d))
                + 1e-12 * abs(f_y)
            ):
                break
            L *= 2.0
        residual = L * float(np.abs(Dd).max(initial=0.0))
        # Gradient restart: drop the momentum when it points uphill.
        if float(np.einsum("ij,ij->", Dd, n - x)) < 0:
            t = 1.0
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_next
        prev, prev_eta = x, eta_x
        x, eta_x = n, eta_n
        if residual <= tol:
            break
        y = x + beta * (x - prev)
        f_y, g = ws.backward(eta_x, prev_eta, beta)  # η is linear in (B, b): no extra product
        t = t_next
        L *= DECAY  # let the step grow again where the curvature is smaller
    return x, eta_x, L, it


def lambda_max(
    X: sparse.spmatrix,
    y: np.ndarray,
    n_classes: int,
    sample_weight: np.ndarray | None = None,
    center: np.ndarray | None = None,
    scale: np.ndarray | None = None,
) -> float:
    """The smallest λ at which every coefficient is zero: max over columns j and classes k of
    |x̃ⱼᵀ wᵢ(yᵢₖ − ȳₖ)| (standardized columns, weights summing to 1)."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    w = _weights(sample_weight, X.shape[0])
    c, s, v = standardize_columns(X, w)
    prob = _Problem(
        X,
        np.asarray(y, dtype=np.int64),
        n_classes,
        w,
        c if center is None else center,
        s if scale is None else scale,
        v if scale is None else scale > 0,
    )
    return float(np.abs(_null_gradient(prob)[1]).max(initial=0.0))


def _null_gradient(prob: _Problem) -> tuple[np.ndarray, np.ndarray]:
    """Class shares and the gradient of the loss at B = 0 with the intercepts fitted."""
    ybar = np.bincount(prob.y, weights=prob.w, minlength=prob.K)
    R0 = -prob.w[:, None] * (np.arange(prob.K) == prob.y[:, None])
    R0 += prob.w[:, None] * ybar
    return ybar, prob.full_gradient(prob.design.t_times(R0))


def _weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise DataError("sample weights must be n finite non-negative numbers with a positive sum")
    return w / w.sum()


def objective(
    X: sparse.spmatrix, y: np.ndarray, path: LassoPath, l: int, sample_weight: np.ndarray | None = None
) -> float:
    """F(B, b) of the module docstring at path point ``l`` (for tests and benchmarks)."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    w = _weights(sample_weight, X.shape[0])
    lam = float(path.lambdas[l])
    eta = path.linear_predictor(X, lam)
    loss = float(w @ (_log_sum_exp(eta) - eta[np.arange(len(y)), y]))
    return loss + lam * float(np.abs(path.coef[l].data).sum())


def fit_lasso_path(
    X: sparse.spmatrix | np.ndarray,
    y: np.ndarray,
    n_classes: int,
    *,
    lambdas: np.ndarray | None = None,
    n_lambda: int = 100,
    lambda_min_ratio: float = 1e-3,
    sample_weight: np.ndarray | None = None,
    center: np.ndarray | None = None,
    scale: np.ndarray | None = None,
    tol: float = 1e-4,
    max_iter: int = 20_000,
    progress: Progress = no_progress,
    what: str = "fitting the λ path",
    n_threads: int | None = None,
) -> LassoPath:
    """Fit the multinomial lasso along a decreasing λ path (see the module docstring).

    Parameters
    ----------
    X : n × p design (sparse or dense), raw scale; standardized internally.
    y : class codes 0..n_classes−1.
    lambdas : the path to use (sorted decreasing); default ``n_lambda`` values from λmax down to
        ``lambda_min_ratio``·λmax, equally spaced on the log scale (Schneider et al. 2023, Section 5.3).
    sample_weight : observation weights (a Bayesian-bootstrap draw, for example); default equal weights.
    center, scale : standardization to use instead of the (weighted) column means and standard deviations,
        so that several fits share one penalty scale.
    tol : stop each λ when the proximal-gradient residual is below ``tol``·λmax. The default reaches
        glmnet's default accuracy: along the benchmark paths (benchmarks/results_glm_path.json) our
        objective is lower than glmnet's (thresh 1e-7) on average and at worst higher by 4e-8 of its value.
    n_threads : threads for the passes over the records (row blocks); default the usable cores, at most
        4. The result depends on it only through rounding.

    Returns
    -------
    LassoPath
    """
    X = sparse.csr_matrix(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    n, p = X.shape
    if n != len(y):
        raise DataError(f"the design has {n} rows but there are {len(y)} class labels")
    if n_classes < 2 or y.min(initial=0) < 0 or y.max(initial=0) >= n_classes:
        raise DataError(f"class codes must lie in 0..{n_classes - 1} with at least two classes")
    w = _weights(sample_weight, n)
    c, s, v = standardize_columns(X, w)
    if center is not None:
        c = np.asarray(center, dtype=np.float64)
    if scale is not None:
        s = np.asarray(scale, dtype=np.float64)
        v = v & (s > 0)
        s = np.where(s > 0, s, 1.0)
    threads = _usable_cores() if n_threads is None else max(1, int(n_threads))
    # A pool only pays when at least two blocks reach MIN_BLOCK_NNZ.
    if threads > 1 and X.nnz >= 2 * MIN_BLOCK_NNZ:
        with ThreadPoolExecutor(threads, thread_name_prefix="lasso") as pool:
            return _fit_path(
                _Problem(X, y, n_classes, w, c, s, v, pool, threads),
                lambdas,
                n_lambda,
                lambda_min_ratio,
                tol,
                max_iter,
                progress,
                what,
            )
    return _fit_path(
        _Problem(X, y, n_classes, w, c, s, v), lambdas, n_lambda, lambda_min_ratio, tol, max_iter, progress, what
    )


def _usable_cores() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def _fit_path(
    prob: _Problem,
    lambdas: np.ndarray | None,
    n_lambda: int,
    lambda_min_ratio: float,
    tol: float,
    max_iter: int,
    progress: Progress,
    what: str,
) -> LassoPath:
    """The path loop of `fit_lasso_path`, on validated data."""
    p, K = prob.p, prob.K
    ybar, G = _null_gradient(prob)
    b0 = np.log(np.maximum(ybar, 1e-300))
    b0 -= b0.mean()
    lam_max = float(np.abs(G).max(initial=0.0))
    if lambdas is None:
        top = lam_max if lam_max > 0 else 1.0
        lambdas = top * np.power(lambda_min_ratio, np.arange(n_lambda) / max(n_lambda - 1, 1))
    lambdas = np.asarray(lambdas, dtype=np.float64)
    if np.any(np.diff(lambdas) > 0) or np.any(lambdas <= 0):
        raise ValueError("lambdas must be positive and decreasing")

    B_full = np.zeros((p, K))
    b = b0.copy()
    eta = prob.intercept_eta(b0)
    f_null = prob.design.forward(np.vstack([np.zeros((p, K)), b0]))[1] if len(lambdas) else 0.0
    ever = np.zeros(p, dtype=bool)
    rows, cols_idx, vals = [], [], []
    intercepts = np.zeros((len(lambdas), K))
    iters = np.zeros(len(lambdas), dtype=int)
    objs = np.zeros(len(lambdas))
    # A safe first step size: ½·‖[X̃ 1]‖² bounds the Hessian (Böhning 1992); backtracking refines it.
    L = 0.25
    prev_lam = lam_max
    B_prev = b_prev = None
    eta_prev: Eta | None = None
    ws: _WorkingSet | None = None
    abs_tol = tol * max(lam_max, 1e-12)
    for l, lam in enumerate(lambdas):
        if l % 5 == 0:
            progress(l, len(lambdas), what)
        if lam >= lam_max:
            B_full[:] = 0.0
            b = b0.copy()
            eta = prob.intercept_eta(b0)
            f = f_null
        else:
            strong = (np.abs(G).max(axis=1) >= 2 * lam - prev_lam) & prob.varies
            work = ever | strong
            total_it = 0
            # Warm start extrapolated along the path (the solution moves smoothly in log λ between changes
            # of the active set); the first proximal step puts any coefficient that should be zero back to 0.
            # η is affine in (B, b), so the start's η is extrapolated the same way, without a product.
            start_B, start_b, start_eta = B_full, b, eta
            if B_prev is not None:
                start_B = B_full + EXTRAPOLATE * (B_full - B_prev)
                start_b = b + EXTRAPOLATE * (b - b_prev)
                assert eta_prev is not None  # set with B_prev
                start_eta = [e + EXTRAPOLATE * (e - ep) for e, ep in zip(eta, eta_prev)]
            B_prev, b_prev, eta_prev = B_full.copy(), b.copy(), eta
            while True:
                cols = np.flatnonzero(work)
                if len(cols):
                    # The sub-matrix is rebuilt only when the working set changes; late in the path it
                    # stays the same for many λ.
                    if ws is None or not np.array_equal(ws.cols, cols):
                        ws = _WorkingSet(prob, cols)
                    x0 = np.vstack([start_B[cols], start_b[None, :]])
                    x, eta, L, it = _fista(ws, lam, x0, start_eta, L, abs_tol, max_iter)
                    total_it += it
                    B_full = np.zeros((p, K))
                    B_full[cols] = x[:-1]
                    b = x[-1].copy()
                    start_B, start_b, start_eta = B_full, b, eta
                f, G_aug = prob.design.backward(eta)
                G = prob.full_gradient(G_aug)
                violators = (np.abs(G).max(axis=1) > lam * (1 + 1e-6) + abs_tol) & ~work & prob.varies
                if not violators.any():
                    break
                work |= violators
            iters[l] = total_it
        if lam >= lam_max and l + 1 < len(lambdas):
            G = prob.full_gradient(prob.design.backward(eta)[1])
        active = np.abs(B_full).max(axis=1) > 0
        ever |= active
        nz = np.flatnonzero(B_full.ravel())
        rows.append(np.full(len(nz), l))
        cols_idx.append(nz)
        vals.append(B_full.ravel()[nz])
        intercepts[l] = b
        objs[l] = f + lam * float(np.abs(B_full).sum())
        prev_lam = lam
    progress(len(lambdas), len(lambdas), what)
    coef = sparse.csr_matrix(
        (
            np.concatenate(vals) if vals else [],
            (np.concatenate(rows) if rows else [], np.concatenate(cols_idx) if cols_idx else []),
        ),
        shape=(len(lambdas), p * K),
    )
    return LassoPath(lambdas, coef, intercepts, prob.center, prob.scale, K, iters, objs)


def kkt_violation(
    X: sparse.spmatrix, y: np.ndarray, path: LassoPath, l: int, sample_weight: np.ndarray | None = None
) -> float:
    """The largest violation of the lasso optimality conditions at path point ``l``, relative to λmax: 0 at
    the exact solution (for benchmarks and checks of a reference fit)."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    w = _weights(sample_weight, X.shape[0])
    prob = _Problem(X, np.asarray(y, dtype=np.int64), path.n_classes, w, path.center, path.scale, path.scale > 0)
    lam = float(path.lambdas[l])
    _, G_aug = prob.design.backward(prob.split(path.linear_predictor(X, lam)))
    G = prob.full_gradient(G_aug)
    s = G_aug[-1]
    B = path.coef[l].toarray().reshape(-1, path.n_classes)
    zero = B == 0
    worst = max(
        float(np.maximum(np.abs(G[zero]) - lam, 0).max(initial=0.0)),
        float(np.abs(G[~zero] + lam * np.sign(B[~zero])).max(initial=0.0)),
        float(np.abs(s).max()),
    )
    return worst / float(path.lambdas[0])
