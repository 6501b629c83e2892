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
iterations. Centring is implicit (the sparse matrix is never densified), and the linear
predictor is kept class-major so each step costs one sparse product each way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from engine.errors import DataError
from engine.protect.base import Progress, no_progress


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

    def nonzero_features(self) -> np.ndarray:
        """Number of features with a non-zero coefficient for at least one class, at each λ."""
        out = np.zeros(len(self.lambdas), dtype=int)
        for l in range(len(self.lambdas)):
            cols = self.coef.indices[self.coef.indptr[l]:self.coef.indptr[l + 1]]
            out[l] = len(np.unique(cols // self.n_classes))
        return out

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


class _Problem:
    """The data of one fit: raw design, class indicators, weights, standardization."""

    def __init__(self, X: sparse.csr_matrix, y: np.ndarray, n_classes: int, w: np.ndarray,
                 center: np.ndarray, scale: np.ndarray, varies: np.ndarray) -> None:
        self.X = X
        self.Xcsc = X.tocsc()
        self.n, self.p = X.shape
        self.K = n_classes
        self.y = y
        self.rows = np.arange(self.n)
        self.w = w
        # Class-major (K × n): reductions over the few classes then run along long contiguous rows.
        self.Yt = np.zeros((n_classes, self.n))
        self.Yt[y, np.arange(self.n)] = 1.0
        self.center, self.scale, self.varies = center, scale, varies

    def full_gradient(self, Rt: np.ndarray) -> np.ndarray:
        """x̃ᵀR for every column (R = Rtᵀ already weighted): (Xᵀ R − μ ⊗ Σᵢ Rᵢ) / σ, p × K."""
        G = np.asarray(self.X.T @ np.ascontiguousarray(Rt.T))
        G -= np.outer(self.center, Rt.sum(axis=1))
        G /= self.scale[:, None]
        G[~self.varies] = 0.0
        return G


class _WorkingSet:
    """The columns currently optimized, with their raw sub-matrix and standardization."""

    def __init__(self, prob: _Problem, cols: np.ndarray) -> None:
        self.cols = cols
        sub = prob.Xcsc[:, cols]
        self.A = sub.tocsr()
        self.At = sub.T.tocsr()
        self.mu = prob.center[cols]
        self.inv_sd = 1.0 / prob.scale[cols]

    def eta(self, B: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The linear predictor, class-major (K × n)."""
        Braw = B * self.inv_sd[:, None]
        eta = np.ascontiguousarray(np.asarray(self.A @ Braw).T)
        eta += (b - self.mu @ Braw)[:, None]
        return eta

    def hessian_diagonal(self, Rt: np.ndarray, prob: _Problem) -> tuple[np.ndarray, np.ndarray]:
        """Σᵢ wᵢ x̃ᵢⱼ² pᵢₖ(1 − pᵢₖ) for every coefficient and Σᵢ wᵢ pᵢₖ(1 − pᵢₖ) for the intercepts, floored."""
        pos = prob.w > 0
        P = np.zeros_like(Rt)
        P[:, pos] = Rt[:, pos] / prob.w[pos] + prob.Yt[:, pos]
        Q = np.ascontiguousarray((P * (1.0 - P) * prob.w).T)  # n × K
        raw2 = np.asarray(self.At.multiply(self.At) @ Q)
        raw1 = np.asarray(self.At @ Q)
        D = (raw2 - 2 * self.mu[:, None] * raw1 + np.outer(self.mu**2, Q.sum(axis=0))) * (self.inv_sd**2)[:, None]
        Db = Q.sum(axis=0)
        floor = FLOOR * max(float(D.max(initial=0.0)), float(Db.max()), 1e-12)
        return np.maximum(D, floor), np.maximum(Db, floor)

    def grad_stacked(self, Rt: np.ndarray) -> np.ndarray:
        """The gradient for the coefficients (m rows) with the intercepts' below it, (m + 1) × K."""
        s = Rt.sum(axis=1)
        out = np.empty((len(self.cols) + 1, Rt.shape[0]))
        G = out[:-1]
        G[:] = np.asarray(self.At @ np.ascontiguousarray(Rt.T))
        G -= np.outer(self.mu, s)
        G *= self.inv_sd[:, None]
        out[-1] = s
        return out


def _loss_and_residual(eta: np.ndarray, prob: _Problem, residual: bool = True) -> tuple[float, np.ndarray | None]:
    """Weighted mean negative log-likelihood and (unless ``residual`` is False) the weighted residual
    w·(P − Y), both class-major. Each pass over the K × n array counts, so the true class is gathered and
    scattered rather than multiplied in."""
    m = eta.max(axis=0)
    P = eta - m
    np.exp(P, out=P)
    total = P.sum(axis=0)
    loss = float(prob.w @ (m + np.log(total))) - float(eta[prob.y, prob.rows] @ prob.w)
    if not residual:
        return loss, None
    P *= prob.w / total
    P[prob.y, prob.rows] -= prob.w
    return loss, P


def _objective_from_residual(R: np.ndarray, prob: _Problem) -> float:
    """The weighted mean negative log-likelihood, recovered from R = w·(P − Y) where every weight is positive."""
    pos = prob.w > 0
    p_true = R[prob.y[pos], np.flatnonzero(pos)] / prob.w[pos] + 1.0
    return float(-(prob.w[pos] @ np.log(np.maximum(p_true, 1e-300))))


def _fista(prob: _Problem, ws: _WorkingSet, lam: float, B: np.ndarray, b: np.ndarray, L: float,
           tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, float, int, np.ndarray]:
    """Minimize the objective over the working set from (B, b). Returns B, b, L, iterations, residual w(P−Y).

    The coefficients and the intercepts are kept as one (m + 1) × K array, the intercepts in the last row
    with no penalty. Steps are taken in the metric of the Hessian's diagonal at the warm start (a
    per-coefficient step size, with the soft-threshold scaled to match), which evens out rare and common
    words; backtracking on L keeps the quadratic model an upper bound. Stops when the proximal-gradient
    residual L·d·|x⁺ − y| (zero exactly at the optimum) falls below ``tol`` everywhere.
    """
    m = B.shape[0]
    x = np.vstack([B, b[None, :]])
    eta_x = ws.eta(x[:m], x[m])
    y, eta_y = x, eta_x
    f_y, R_y = _loss_and_residual(eta_y, prob)
    D_B, D_b = ws.hessian_diagonal(R_y, prob)
    D = np.vstack([D_B, D_b[None, :]])
    inv_D = 1.0 / D
    penalty = np.full((m + 1, 1), lam)
    penalty[m] = 0.0
    t = 1.0
    it = 0
    for it in range(1, max_iter + 1):
        g = ws.grad_stacked(R_y)
        while True:
            step = inv_D / L
            z = y - g * step
            thr = penalty * step
            n = z - np.clip(z, -thr, thr)
            eta_n = ws.eta(n[:m], n[m])
            f_n, _ = _loss_and_residual(eta_n, prob, residual=False)
            d = n - y
            Dd = D * d
            if f_n <= f_y + float((g * d).sum()) + 0.5 * L * float((Dd * d).sum()) + 1e-12 * abs(f_y):
                break
            L *= 2.0
        residual = L * float(np.abs(Dd).max(initial=0.0))
        # Gradient restart: drop the momentum when it points uphill.
        if float((Dd * (n - x)).sum()) < 0:
            t = 1.0
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_next
        prev, prev_eta = x, eta_x
        x, eta_x = n, eta_n
        if residual <= tol:
            return x[:m], x[m], L, it, _loss_and_residual(eta_x, prob)[1]
        y = x + beta * (x - prev)
        eta_y = eta_x + beta * (eta_x - prev_eta)  # η is linear in (B, b): no extra product
        f_y, R_y = _loss_and_residual(eta_y, prob)
        t = t_next
        L *= DECAY  # let the step grow again where the curvature is smaller
    _, R_x = _loss_and_residual(eta_x, prob)
    return x[:m], x[m], L, it, R_x


def lambda_max(X: sparse.spmatrix, y: np.ndarray, n_classes: int, sample_weight: np.ndarray | None = None,
               center: np.ndarray | None = None, scale: np.ndarray | None = None) -> float:
    """The smallest λ at which every coefficient is zero: max over columns j and classes k of
    |x̃ⱼᵀ wᵢ(yᵢₖ − ȳₖ)| (standardized columns, weights summing to 1)."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    w = _weights(sample_weight, X.shape[0])
    c, s, v = standardize_columns(X, w)
    prob = _Problem(X, np.asarray(y), n_classes, w, c if center is None else center,
                    s if scale is None else scale, v if scale is None else scale > 0)
    ybar = prob.Yt @ w
    return float(np.abs(prob.full_gradient(w * (ybar[:, None] - prob.Yt))).max(initial=0.0))


def _weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,) or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise DataError("sample weights must be n finite non-negative numbers with a positive sum")
    return w / w.sum()


def objective(X: sparse.spmatrix, y: np.ndarray, path: LassoPath, l: int,
              sample_weight: np.ndarray | None = None) -> float:
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
    prob = _Problem(X, y, n_classes, w, c, s, v)

    ybar = np.maximum(prob.Yt @ w, 1e-300)
    b0 = np.log(ybar)
    b0 -= b0.mean()
    R0 = w * (ybar[:, None] - prob.Yt)
    G = prob.full_gradient(R0)
    lam_max = float(np.abs(G).max(initial=0.0))
    if lambdas is None:
        top = lam_max if lam_max > 0 else 1.0
        lambdas = top * np.power(lambda_min_ratio, np.arange(n_lambda) / max(n_lambda - 1, 1))
    lambdas = np.asarray(lambdas, dtype=np.float64)
    if np.any(np.diff(lambdas) > 0) or np.any(lambdas <= 0):
        raise ValueError("lambdas must be positive and decreasing")

    K = n_classes
    B_full = np.zeros((p, K))
    b = b0.copy()
    ever = np.zeros(p, dtype=bool)
    rows, cols_idx, vals = [], [], []
    intercepts = np.zeros((len(lambdas), K))
    iters = np.zeros(len(lambdas), dtype=int)
    objs = np.zeros(len(lambdas))
    # A safe first step size: ½·‖[X̃ 1]‖² bounds the Hessian (Böhning 1992); backtracking refines it.
    L = 0.25
    prev_lam = lam_max
    R = R0
    B_prev = b_prev = None
    abs_tol = tol * max(lam_max, 1e-12)
    for l, lam in enumerate(lambdas):
        if l % 5 == 0:
            progress(l, len(lambdas), what)
        if lam >= lam_max:
            B_full[:] = 0.0
            b = b0.copy()
            R = R0
            G = prob.full_gradient(R)
        else:
            strong = (np.abs(G).max(axis=1) >= 2 * lam - prev_lam) & prob.varies
            work = ever | strong
            total_it = 0
            # Warm start extrapolated along the path (the solution moves smoothly in log λ between changes
            # of the active set); the first proximal step puts any coefficient that should be zero back to 0.
            start_B, start_b = B_full, b
            if B_prev is not None:
                start_B = B_full + EXTRAPOLATE * (B_full - B_prev)
                start_b = b + EXTRAPOLATE * (b - b_prev)
            B_prev, b_prev = B_full.copy(), b.copy()
            while True:
                cols = np.flatnonzero(work)
                if len(cols):
                    ws = _WorkingSet(prob, cols)
                    Bw, b, L, it, R = _fista(prob, ws, lam, start_B[cols], start_b, L, abs_tol, max_iter)
                    start_B, start_b = B_full, b
                    total_it += it
                    B_full[:] = 0.0
                    B_full[cols] = Bw
                G = prob.full_gradient(R)
                violators = (np.abs(G).max(axis=1) > lam * (1 + 1e-6) + abs_tol) & ~work & prob.varies
                if not violators.any():
                    break
                work |= violators
            iters[l] = total_it
        active = np.abs(B_full).max(axis=1) > 0
        ever |= active
        nz = np.flatnonzero(B_full.ravel())
        rows.append(np.full(len(nz), l))
        cols_idx.append(nz)
        vals.append(B_full.ravel()[nz])
        intercepts[l] = b
        objs[l] = _objective_from_residual(R, prob) + lam * float(np.abs(B_full).sum())
        prev_lam = lam
    progress(len(lambdas), len(lambdas), what)
    coef = sparse.csr_matrix(
        (np.concatenate(vals) if vals else [], (np.concatenate(rows) if rows else [], np.concatenate(cols_idx) if cols_idx else [])),
        shape=(len(lambdas), p * K),
    )
    return LassoPath(lambdas, coef, intercepts, c, s, K, iters, objs)


def kkt_violation(X: sparse.spmatrix, y: np.ndarray, path: LassoPath, l: int,
                  sample_weight: np.ndarray | None = None) -> float:
    """The largest violation of the lasso optimality conditions at path point ``l``, relative to λmax: 0 at
    the exact solution (for benchmarks and checks of a reference fit)."""
    X = sparse.csr_matrix(X, dtype=np.float64)
    w = _weights(sample_weight, X.shape[0])
    prob = _Problem(X, np.asarray(y), path.n_classes, w, path.center, path.scale, path.scale > 0)
    lam = float(path.lambdas[l])
    eta = path.linear_predictor(X, lam).T
    _, Rt = _loss_and_residual(np.ascontiguousarray(eta), prob)
    G = prob.full_gradient(Rt)
    B = path.coef[l].toarray().reshape(-1, path.n_classes)
    zero = B == 0
    worst = max(float(np.maximum(np.abs(G[zero]) - lam, 0).max(initial=0.0)),
                float(np.abs(G[~zero] + lam * np.sign(B[~zero])).max(initial=0.0)),
                float(np.abs(Rt.sum(axis=1)).max()))
    return worst / float(path.lambdas[0])
