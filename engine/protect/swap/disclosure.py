"""Population uniques from the Ewens–Pitman partition structure, and the swap risk DR built on them
(Greve & Sablica, Section 2.4, Eqs. 2.10–2.16, after Hoshino 2001).

The cells of a contingency table of n sample records (the |J|-way marginal z_J of the named-entity categories
that are swapped, Eq. 2.9) are read as a random partition: s_j is the number of cells holding exactly j records,
k = Σ s_j cells, n = Σ j s_j. Under the Ewens–Pitman sampling formula with discount α ∈ [0, 1) and strength
θ > −α (Eq. 2.10, the same form for the sample as for the population, by sampling consistency)

    P(s) ∝ θ^{k↑α} / θ^{n↑} · Π_j ((1 − α)^{j−1↑})^{s_j},     x^{k↑a} = x (x + a) ⋯ (x + (k − 1) a).

θ and α are fitted by maximum likelihood (Newton–Raphson, as the paper does); the expected number of uniques in
a population of N records is then

    E(S₁) = N (θ + α)^{N−1↑} / (θ + 1)^{N−1↑}                 (Eq. 2.11, exact)
          ≈ Γ(θ + 1) / Γ(θ + α) · N^α                          (Eq. 2.14, large N),

the share of sample uniques that are population uniques p̂ = Ŝ₁ / s₁ · n / N (Eq. 2.15), and the risk left after
swapping DR = 1 − (#swapped sample uniques / s₁) · p̂ (Eq. 2.16): 1 before any swap, lower the more of the
sample uniques a release swapped and the more of them are unique in the population too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

ALPHA_MAX = 1.0 - 1e-9


def frequencies_of_frequencies(cells: Sequence[Hashable]) -> np.ndarray:
    """s[j] = the number of cells holding exactly j of the records, j = 0…n (s[0] = 0), from each record's cell
    (any hashable label, e.g. the tuple of its entities in the categories J)."""
    sizes = np.fromiter(Counter(cells).values(), dtype=np.int64)
    return np.bincount(sizes, minlength=len(cells) + 1)


@dataclass(frozen=True)
class PitmanFit:
    """The maximum-likelihood (θ, α) of a table's frequencies of frequencies and the table's n, k and s₁.
    θ is infinite when every record is alone in its cell (the likelihood grows without bound in θ)."""

    theta: float
    alpha: float
    n: int
    k: int
    s1: int
    log_likelihood: float
    iterations: int


def _sums(theta: float, alpha: float, s: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """ℓ(θ, α) of Eq. 2.10 without the terms free of (θ, α), its gradient and its Hessian.

    ℓ = Σ_{i=1}^{k−1} log(θ + iα) − Σ_{i=1}^{n−1} log(θ + i) + Σ_j s_j Σ_{i=1}^{j−1} log(i − α)
    (the factor θ of i = 0 in θ^{k↑α} cancels the one in θ^{n↑})."""
    j = np.flatnonzero(s)
    sj = s[j].astype(float)
    k, n = int(s.sum()), int((np.arange(len(s)) * s).sum())
    i = np.arange(1, k, dtype=float)
    a = theta + i * alpha
    value = float(np.log(a).sum() - (special.gammaln(theta + n) - special.gammaln(theta + 1)))
    value += float((sj * (special.gammaln(j - alpha) - special.gammaln(1 - alpha))).sum())
    d_theta = float((1 / a).sum() - (special.digamma(theta + n) - special.digamma(theta + 1)))
    d_alpha = float((i / a).sum() - (sj * (special.digamma(j - alpha) - special.digamma(1 - alpha))).sum())
    h_tt = float(-(1 / a**2).sum() - special.polygamma(1, theta + n) + special.polygamma(1, theta + 1))
    h_ta = float(-(i / a**2).sum())
    h_aa = float(
        -(i**2 / a**2).sum() + (sj * (special.polygamma(1, j - alpha) - special.polygamma(1, 1 - alpha))).sum()
    )
    return value, np.array([d_theta, d_alpha]), np.array([[h_tt, h_ta], [h_ta, h_aa]])


def _inside(theta: float, alpha: float) -> bool:
    return 0.0 <= alpha <= ALPHA_MAX and theta > -alpha and np.isfinite(theta)


def fit_pitman(s: np.ndarray, max_iter: int = 50, tol: float = 1e-10) -> PitmanFit:
    """Maximum-likelihood (θ, α) of Eq. 2.10 for frequencies of frequencies ``s`` (`frequencies_of_frequencies`).

    The paper uses Newton–Raphson, which needs a start where the Hessian is negative definite; θ and α trade off
    along a ridge, so the basin is found first by a bounded quasi-Newton search (L-BFGS-B on log(θ + α) and
    α ∈ [0, 1), with the analytic gradient), then Newton–Raphson steps polish the maximum where the Hessian is
    negative definite (each step halved until ℓ does not fall). A maximum on the edge α = 0 (the
    Ewens partition) stays there. Needs at least two records in at least two cells (otherwise θ and α are not
    identified); when every record is alone in its cell ℓ grows without bound in θ, and θ = ∞ is returned."""
    from scipy.optimize import minimize

    s = np.asarray(s, dtype=np.int64)
    k, n = int(s.sum()), int((np.arange(len(s)) * s).sum())
    s1 = int(s[1]) if len(s) > 1 else 0
    if n < 2 or k < 2:
        raise ValueError(f"the table needs at least 2 records in at least 2 cells to fit θ and α; got {n} in {k}")
    if k == n:
        return PitmanFit(float("inf"), 0.0, n, k, s1, float("nan"), 0)

    def negative(v: np.ndarray) -> tuple[float, np.ndarray]:
        alpha = float(v[1])
        theta = float(np.exp(v[0])) - alpha
        value, grad, _ = _sums(theta, alpha, s)
        # θ = e^t − α: ∂ℓ/∂t = e^t ∂ℓ/∂θ, ∂ℓ/∂α at fixed t = ∂ℓ/∂α − ∂ℓ/∂θ
        return -value, -np.array([grad[0] * np.exp(v[0]), grad[1] - grad[0]])

    found = minimize(
        negative,
        np.array([np.log(1.5), 0.5]),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-30.0, 30.0), (0.0, ALPHA_MAX)],
        options={"ftol": 1e-15, "gtol": 1e-10},
    )
    alpha = float(found.x[1])
    theta = float(np.exp(found.x[0])) - alpha
    value, grad, hess = _sums(theta, alpha, s)
    iterations = int(found.nit)
    for _ in range(max_iter):
        if alpha <= 0.0 and grad[1] <= 0:  # the maximum over α ≥ 0 is on the edge: θ alone
            step = np.array([-grad[0] / hess[0, 0], 0.0]) if hess[0, 0] < 0 else np.zeros(2)
        elif np.all(np.linalg.eigvalsh(hess) < 0):
            step = -np.linalg.solve(hess, grad)
        else:
            break
        size = 1.0
        while size > 1e-12:
            t, a = theta + size * step[0], min(max(alpha + size * step[1], 0.0), ALPHA_MAX)
            if _inside(t, a) and (new := _sums(t, a, s))[0] >= value - 1e-12 * abs(value):
                break
            size /= 2
        else:
            break
        moved = max(abs(t - theta), abs(a - alpha))
        theta, alpha, (value, grad, hess) = t, a, new
        iterations += 1
        if moved < tol * max(1.0, abs(theta)):
            break
    return PitmanFit(theta, alpha, n, k, s1, value, iterations)


def expected_population_uniques_exact(theta: float, alpha: float, population: float) -> float:
    """E(S₁) = N (θ + α)^{N−1↑} / (θ + 1)^{N−1↑} (Eq. 2.11), through log-gamma functions."""
    N = float(population)
    if np.isinf(theta):
        return N
    log_ratio = (
        special.gammaln(theta + alpha + N - 1)
        - special.gammaln(theta + alpha)
        - special.gammaln(theta + N)
        + special.gammaln(theta + 1)
    )
    return float(N * np.exp(log_ratio))


def expected_population_uniques(theta: float, alpha: float, population: float) -> float:
    """Ŝ₁ = Γ(θ + 1) / Γ(θ + α) · N^α (Eq. 2.14), the large-N form of Eq. 2.11 the paper uses."""
    N = float(population)
    if np.isinf(theta):
        return N
    return float(np.exp(special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * np.log(N)))


def unique_share(fit: PitmanFit, population: float) -> float:
    """p̂ = Ŝ₁ / s₁ · n / N (Eq. 2.15), the estimated share of the sample uniques that are population uniques,
    held to [0, 1] (the estimator can exceed 1 when N is not much larger than n; a share cannot)."""
    if fit.s1 == 0:
        return 0.0
    if population < fit.n:
        raise ValueError(f"the population size N ({population:g}) must be at least the sample's n ({fit.n})")
    p = expected_population_uniques(fit.theta, fit.alpha, population) / fit.s1 * fit.n / float(population)
    return float(min(max(p, 0.0), 1.0))


@dataclass(frozen=True)
class SwapRisk:
    """DR of one release (Eq. 2.16) and what it is made of."""

    value: float
    sample_uniques: int
    swapped_uniques: int
    unique_share: float  # p̂
    fit: PitmanFit | None


def swap_disclosure_risk(
    cells: Sequence[Hashable], swapped: Sequence[bool] | np.ndarray, population: float
) -> SwapRisk:
    """DR = 1 − (#swapped sample uniques / s₁) · p̂ (Eq. 2.16).

    ``cells`` gives each record's cell of the pre-swap table z_J (e.g. the tuple of its entities in the swapped
    categories J), ``swapped`` whether the release swapped any of that record's entities in J, ``population`` the
    size N of the population the sample is drawn from (a steward's setting: the paper takes N large). A table
    without sample uniques has nothing a swap can protect: DR = 1. θ and α are fitted on the pre-swap table; a
    table of one record cannot be fitted, and its record counts as unique in the population (p̂ = 1).
    """
    flags = np.asarray(swapped, dtype=bool)
    if len(flags) != len(cells):
        raise ValueError(f"{len(cells)} records but {len(flags)} swap flags")
    counts = Counter(cells)
    unique = np.array([counts[c] == 1 for c in cells], dtype=bool)
    s1, hit = int(unique.sum()), int((unique & flags).sum())
    if s1 == 0:
        return SwapRisk(1.0, 0, 0, 0.0, None)
    if len(counts) < 2:  # one record: θ and α are not identified; count it as unique in the population too
        return SwapRisk(1.0 - hit / s1, s1, hit, 1.0, None)
    fit = fit_pitman(frequencies_of_frequencies(cells))
    p = unique_share(fit, population)
    return SwapRisk(1.0 - hit / s1 * p, s1, hit, p, fit)


_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def population_text(n: float) -> str:
    """A population size as a reader takes it in: 10²⁰ for a power of ten from a million up, else 12,345."""
    exponent = math.log10(n) if n > 0 else 0.0
    if n >= 1e6 and exponent == round(exponent):
        return "10" + str(round(exponent)).translate(_SUPERSCRIPTS)
    return f"{n:,.0f}" if n < 1e15 else f"{n:.3g}"
