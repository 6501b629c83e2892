"""The two Bayesian synthesis models of Guo & Hu and their MCMC samplers, in numpy/scipy.

*Zero-inflated truncated Poisson regression* for a count field (Eqs. 1–5)::

    Yᵢ ~ qᵢ·0 + (1 − qᵢ)·Poisson(λᵢ) truncated to [lower, upper],   qᵢ ~ Bernoulli(pᵢ),
    log λᵢ = xᵢ'α + εᵢ,   εᵢ ~ Normal(0, precision τ),   logit pᵢ = xᵢ'β,
    α, β ~ Normal(0, precision 1·λ),   τ ~ Gamma(0.001, 0.001).

*Linear regression of a log continuous field* (Eqs. 6–8)::

    log Yᵢ ~ Normal(wᵢ'γ, σ²),   γ ~ Normal(0, precision 2·λ),   σ ~ t(1, 1)⁺ (half-Cauchy, scale 1).

How the paper's notation is read, where it is ambiguous:
- The paper fits with JAGS, whose ``dnorm(μ, τ)`` takes a *precision*; "Normal(0, τ)" with a Gamma(0.001,
  0.001) prior on τ is the conventional JAGS precision prior, so τ is taken as the precision of ε (the text
  calls it the standard deviation), and "Normal(0, 1)", "Normal(0, 2)" as precisions 1 and 2.
- Every model has an intercept with a vague Normal(0, precision 10⁻⁴) prior that λ does not scale; the slopes
  carry the paper's priors multiplied by λ. So λ = 1 reproduces the paper's priors and λ → ∞ shrinks every
  slope to 0: the count model becomes one zero-inflated truncated Poisson–log-normal distribution for all
  records, the price model one log-normal — the fitted marginals.
- Predictors are standardized (centred, unit standard deviation; indicators of categories stay 0/1) so that
  one λ shrinks every slope alike; with thousands of records the paper's priors are vague on either scale.

Sampling (Metropolis-within-Gibbs, vectorized over records; every step leaves the posterior invariant):
- (uᵢ, qᵢ) of a zero record as one block: uᵢ = log λᵢ with qᵢ summed out, by an independence MH step from its
  prior Normal(xᵢ'α, 1/τ); then qᵢ given uᵢ exactly.
- uᵢ of a positive record: an independence MH step from the Laplace approximation of its untruncated
  conditional, corrected for truncation.
- β given q: an independence MH step whose proposal is the Laplace approximation of β's full conditional
  (Newton's mode and Hessian), accepted almost always with many records.
- α given u and τ: exact (conjugate normal linear regression); τ given u and α: exact (Gamma).
- γ given σ: exact (conjugate); σ² given γ: independence MH from its inverse-gamma conditional under a 1/σ²
  prior, re-weighted to the half-Cauchy prior.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

INTERCEPT_PRECISION = 1e-4
GAMMA_SHAPE = GAMMA_RATE = 1e-3
COUNT_PRIOR_PRECISION = 1.0  # Eqs. 3–4: Normal(0, 1)
PRICE_PRIOR_PRECISION = 2.0  # Eq. 7: Normal(0, 2)

Tick = Callable[[int], None]


@dataclass(frozen=True)
class Chains:
    """Posterior draws, ``values[name]`` of shape chains × draws (× dimension for vectors)."""

    values: dict[str, np.ndarray]
    accept: dict[str, float]

    @property
    def n_chains(self) -> int:
        return next(iter(self.values.values())).shape[0]

    @property
    def n_draws(self) -> int:
        return next(iter(self.values.values())).shape[1]


def prior_precisions(d: int, slope_precision: float) -> np.ndarray:
    """Prior precisions of [intercept, slopes…]: vague for the intercept, ``slope_precision`` for the rest."""
    p = np.full(d, float(slope_precision))
    p[0] = INTERCEPT_PRECISION
    return p


TAIL_TERMS = 200
TAIL_LOG_TOLERANCE = 46.0
"""Terms of a tail sum are kept until the next would be below e^-46 ≈ 1e-20 of the first: beyond what a sum of
doubles starting at 1 can hold."""


def _tail_length(k: int, mu: np.ndarray, below: bool) -> int:
    """How many tail terms `_tail_terms` needs for every mean of ``mu``: each term is at most ``ratio`` times
    the one before (k/μ walking down from k, μ/(k+1) walking up), so n terms with ratioⁿ < e^-46 hold the sum,
    and never more than `TAIL_TERMS`."""
    ratio = k / float(mu.min()) if below else float(mu.max()) / (k + 1)
    if ratio <= 0.0:
        return 2
    if ratio >= 1.0:
        return TAIL_TERMS
    return int(min(TAIL_TERMS, max(2, math.ceil(TAIL_LOG_TOLERANCE / -math.log(ratio)) + 1)))


def _tail_terms(k: int, mu: np.ndarray, below: bool) -> np.ndarray:
    """Relative Poisson probabilities walking away from k into the window (len(mu) × `_tail_length`).

    Below (μ > k): P(k − i) / P(k) = Π_{l<i} (k − l)/μ; above (μ < k): P(k + i) / P(k) = Π_{l=1..i} μ/(k + l).
    Used where the window's mass underflows because μ lies far beyond one bound, so the sum converges fast.
    """
    i = np.arange(_tail_length(k, mu, below) - 1, dtype=float)
    if below:
        steps = np.maximum(k - i, 0.0)[None, :] / mu[:, None]
    else:
        steps = mu[:, None] / (k + 1 + i)[None, :]
    with np.errstate(divide="ignore"):
        return np.exp(np.concatenate([np.zeros((len(mu), 1)), np.cumsum(np.log(steps), axis=1)], axis=1))


def _log_poisson(k: int, mu: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return k * np.log(mu) - mu - special.gammaln(k + 1)


def log_truncation(mu: np.ndarray, lower: int, upper: int) -> np.ndarray:
    """log P(lower ≤ Poisson(μ) ≤ upper), accurate also far in the tails (μ ≫ upper or μ ≪ lower), where the
    direct difference of CDFs underflows or cancels."""
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    with np.errstate(divide="ignore"):
        if lower > 0:
            mass = np.where(
                mu < lower,
                special.pdtrc(lower - 1, mu) - special.pdtrc(upper, mu),
                special.pdtr(upper, mu) - special.pdtr(lower - 1, mu),
            )
        else:
            mass = special.pdtr(upper, mu)
        out = np.log(np.maximum(mass, 0.0))
    bad = ~(out > -700.0)
    if bad.any():
        m = mu[bad]
        above = m > upper
        res = np.empty(len(m))
        if above.any():
            res[above] = _log_poisson(upper, m[above]) + np.log(_tail_terms(upper, m[above], True).sum(axis=1))
        if (~above).any():
            res[~above] = _log_poisson(lower, m[~above]) + np.log(_tail_terms(lower, m[~above], False).sum(axis=1))
        out[bad] = res
    return out


def window_log_mass(mu: np.ndarray, lower: int, upper: int) -> np.ndarray:
    """`log_truncation`, computed only where it differs from 0 by more than about 1e-15: a mean more than
    10 standard deviations inside the window has all its mass there."""
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    near = mu > upper - 10.0 * np.sqrt(upper) - 10.0
    if lower > 0:
        near |= mu < lower + 10.0 * np.sqrt(lower) + 10.0
    out = np.zeros(len(mu))
    if near.any():
        out[near] = log_truncation(mu[near], lower, upper)
    return out


def draw_truncated_poisson(mu: np.ndarray, lower: int, upper: int, rng: np.random.Generator) -> np.ndarray:
    """One draw per mean from Poisson(μ) truncated to [lower, upper]: the inverse CDF, and where the window's
    mass underflows (μ far beyond a bound) the inverse CDF of the tail terms walking in from that bound. A mean
    above ``upper`` gives a count spread over the last values under it by the renormalized probabilities, not
    ``upper`` itself (the final clip only guards the float round-off of the inverse CDF)."""
    mu = np.atleast_1d(np.asarray(mu, dtype=float))
    lo = special.pdtr(lower - 1, mu) if lower > 0 else np.zeros_like(mu)
    hi = special.pdtr(upper, mu)
    u = rng.random(mu.shape)
    with np.errstate(invalid="ignore"):
        y = stats.poisson.ppf(lo + u * (hi - lo), mu)
    tail = ~((hi - lo) > 1e-12) | ~np.isfinite(y)
    if tail.any():
        m = mu[tail]
        above = m > upper
        for side, bound, sign in ((above, upper, -1), (~above, lower, 1)):
            if side.any():
                w = _tail_terms(bound, m[side], sign < 0)
                cdf = np.cumsum(w, axis=1)
                step = (cdf < (u[tail][side] * cdf[:, -1])[:, None]).sum(axis=1)
                sub = y[tail]
                sub[side] = bound + sign * step
                y[tail] = sub
    return np.clip(y, lower, upper).astype(np.int64)


def _mvn(mean: np.ndarray, precision: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A draw from Normal(mean, precision⁻¹) through the Cholesky factor of the precision."""
    L = np.linalg.cholesky(precision)
    return mean + np.linalg.solve(L.T, rng.standard_normal(len(mean)))


def _logistic_laplace(
    X: np.ndarray, z: np.ndarray, prior: np.ndarray, start: np.ndarray, steps: int = 25
) -> tuple[np.ndarray, np.ndarray]:
    """Mode and Hessian (negative) of the logistic log posterior with Normal(0, prior⁻¹) coefficients."""
    b = start.copy()
    for _ in range(steps):
        p = special.expit(X @ b)
        grad = X.T @ (z - p) - prior * b
        H = (X * (p * (1 - p))[:, None]).T @ X + np.diag(prior)
        step = np.linalg.solve(H, grad)
        b = b + step
        if np.max(np.abs(step)) < 1e-10:
            break
    p = special.expit(X @ b)
    H = (X * (p * (1 - p))[:, None]).T @ X + np.diag(prior)
    return b, H


def _logistic_logpost(X: np.ndarray, z: np.ndarray, prior: np.ndarray, b: np.ndarray) -> float:
    eta = X @ b
    return float(np.sum(z * eta - np.logaddexp(0.0, eta)) - 0.5 * np.sum(prior * b * b))


T_DF = 4.0


def _t_draw(mean: np.ndarray, precision: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A multivariate Student-t draw (`T_DF` degrees of freedom) centred at ``mean`` with scale precision⁻¹:
    heavier tails than the normal, so an independence sampler cannot get stuck far out in the tail."""
    return mean + (_mvn(np.zeros(len(mean)), precision, rng)) / np.sqrt(rng.chisquare(T_DF) / T_DF)


def _t_logpdf(x: np.ndarray, mean: np.ndarray, precision: np.ndarray) -> float:
    d = x - mean
    return float(-0.5 * (T_DF + len(d)) * np.log1p(d @ precision @ d / T_DF))


def sample_zero_inflated_poisson(
    X: np.ndarray,
    y: np.ndarray,
    lower: int,
    upper: int,
    slope_precision: float,
    chains: int,
    warmup: int,
    draws: int,
    rng: np.random.Generator,
    tick: Tick = lambda n: None,
    keep_rates: Sequence[int] = (),
) -> Chains:
    """MCMC for the zero-inflated truncated Poisson–log-normal regression (Eqs. 1–5; see the module docstring).

    ``X`` is n × d with an intercept column first; zero inflation applies only when ``lower`` is 0 (otherwise
    there is no β). Returns α (rate), β (zero inflation) and τ: ``draws`` draws per chain after ``warmup``;
    and, at the post-warm-up iterations ``keep_rates``, every record's log rate uᵢ = xᵢ'α + εᵢ ("log_rate",
    chains × len(keep_rates) × n, float32).
    """
    n, d = X.shape
    y = np.asarray(y, dtype=float)
    zero_inflated = lower == 0
    zero = (y == 0) & zero_inflated
    zi, pi = np.flatnonzero(zero), np.flatnonzero(~zero)
    Xz, yp = X[zi], y[pi]
    near = (y >= upper - 2 * np.sqrt(upper)) | ((y <= lower + 2 * np.sqrt(lower)) & (lower > 0))
    edge = np.flatnonzero(near & ~zero)
    pa = prior_precisions(d, COUNT_PRIOR_PRECISION * slope_precision)
    pb = prior_precisions(d, COUNT_PRIOR_PRECISION * slope_precision)
    XtX = X.T @ X
    out: dict[str, np.ndarray] = {
        "alpha": np.zeros((chains, draws, d)),
        "beta": np.zeros((chains, draws, d)),
        "tau": np.zeros((chains, draws)),
    }
    keep_at = {int(k): slot for slot, k in enumerate(keep_rates)}
    rates = np.zeros((chains, len(keep_at), n), dtype=np.float32)
    acc_b = acc_u = 0
    start_u = np.log(y + 0.5)
    share0 = min(max(zero.mean(), 1e-3), 1 - 1e-3)
    for c in range(chains):
        # Over-dispersed starting points: jittered least-squares fits, so R-hat can see chains that disagree.
        alpha = np.linalg.lstsq(X, start_u, rcond=None)[0] + rng.normal(0, 0.5, d)
        beta = np.zeros(d)
        beta[0] = special.logit(share0) + rng.normal(0, 0.5)
        tau = float(rng.gamma(2.0, 1.0))
        u = start_u.copy()
        lt = window_log_mass(np.exp(u), lower, upper)  # log truncation mass at the current u, kept up to date
        z = np.zeros(n, dtype=bool)
        beta_mode = beta.copy()
        for it in range(warmup + draws):
            m = X @ alpha
            sd_prior = 1.0 / np.sqrt(tau)
            if zero_inflated:
                # Zero records: (uᵢ, qᵢ) as one block — uᵢ with qᵢ summed out, by an independence MH step from
                # its prior Normal(xᵢ'α, 1/τ) (the ratio is the zero-probability ratio, at most 1/pᵢ), then qᵢ
                # given uᵢ exactly. Updated one at a time, the two are coupled so tightly that chains stick.
                eta = Xz @ beta
                log_p, log_1p = -np.logaddexp(0.0, -eta), -np.logaddexp(0.0, eta)
                cur = u[zi]
                prop0 = m[zi] + sd_prior * rng.standard_normal(len(zi))
                lt_prop = window_log_mass(np.exp(np.minimum(prop0, 50.0)), lower, upper)
                p0_cur = log_1p - np.exp(np.minimum(cur, 50.0)) - lt[zi]
                p0_new = log_1p - np.exp(np.minimum(prop0, 50.0)) - lt_prop
                all_cur, all_new = np.logaddexp(log_p, p0_cur), np.logaddexp(log_p, p0_new)
                take = np.log(rng.random(len(zi))) < all_new - all_cur
                u[zi] = np.where(take, prop0, cur)
                lt[zi] = np.where(take, lt_prop, lt[zi])
                both = np.where(take, all_new, all_cur)
                z[zi] = rng.random(len(zi)) < np.exp(log_p - both)
            # Other records: an independence MH step per record from a Student-t around the Laplace
            # approximation of the untruncated conditional of uᵢ, corrected for truncation in the ratio.
            mp = m[pi]
            mode = _rate_mode(yp, mp, tau)
            sd = 1.2 / np.sqrt(np.exp(mode) + tau)
            prop = mode + sd * rng.standard_t(T_DF, len(pi))
            cur = u[pi]
            log_q = _t_log_ratio(cur, prop, mode, sd)
            ok, lt_prop = _accept_rate(yp, mp, tau, cur, prop, lt[pi], lower, upper, rng, log_q)
            u[pi] = np.where(ok, prop, cur)
            lt[pi] = np.where(ok, lt_prop, lt[pi])
            acc_u += int(ok.sum())
            # Records at a bound: beyond it the truncation leaves only the prior, which the Laplace proposal
            # does not see; a random-walk step of the prior's scale explores that side.
            if len(edge):
                cur = u[edge]
                prop = cur + rng.standard_normal(len(edge)) * sd_prior
                ok, lt_prop = _accept_rate(y[edge], m[edge], tau, cur, prop, lt[edge], lower, upper, rng, 0.0)
                u[edge] = np.where(ok, prop, cur)
                lt[edge] = np.where(ok, lt_prop, lt[edge])
            if zero_inflated:
                # β given q: independence MH from the Laplace approximation of its full conditional.
                zf = z.astype(float)
                beta_mode, H = _logistic_laplace(X, zf, pb, beta_mode)
                proposal = _t_draw(beta_mode, H, rng)
                log_r_b = (
                    _logistic_logpost(X, zf, pb, proposal)
                    - _logistic_logpost(X, zf, pb, beta)
                    - _t_logpdf(proposal, beta_mode, H)
                    + _t_logpdf(beta, beta_mode, H)
                )
                if np.log(rng.random()) < log_r_b:
                    beta = proposal
                    acc_b += 1
            # α given u and τ (conjugate), τ given u and α (conjugate).
            Q = tau * XtX + np.diag(pa)
            alpha = _mvn(np.linalg.solve(Q, tau * (X.T @ u)), Q, rng)
            resid = u - X @ alpha
            tau = float(rng.gamma(GAMMA_SHAPE + n / 2, 1.0 / (GAMMA_RATE + 0.5 * resid @ resid)))
            if it >= warmup:
                k = it - warmup
                out["alpha"][c, k], out["beta"][c, k], out["tau"][c, k] = alpha, beta, tau
                if k in keep_at:
                    rates[c, keep_at[k]] = u
            tick(1)
    total = chains * (warmup + draws)
    accept = {"log_rate": acc_u / max(total * len(pi), 1)}
    if zero_inflated:
        accept["beta"] = acc_b / total
    else:
        del out["beta"]
    if keep_at:
        out["log_rate"] = rates
    return Chains(out, accept)


def _t_log_ratio(cur: np.ndarray, prop: np.ndarray, mode: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """log q(cur) − log q(prop) of the one-dimensional Student-t independence proposal."""

    def logq(v: np.ndarray) -> np.ndarray:
        return -0.5 * (T_DF + 1) * np.log1p(((v - mode) / sd) ** 2 / T_DF)

    return logq(cur) - logq(prop)


def _accept_rate(
    y: np.ndarray,
    m: np.ndarray,
    tau: float,
    cur: np.ndarray,
    prop: np.ndarray,
    lt_cur: np.ndarray,
    lower: int,
    upper: int,
    rng: np.random.Generator,
    log_q_ratio: np.ndarray | float,
) -> tuple[np.ndarray, np.ndarray]:
    """Metropolis–Hastings acceptances for log rates: target y·v − eᵛ − log mass(eᵛ) − τ/2 (v − m)²; and the
    log truncation mass at the proposals (the new one where accepted)."""
    lt_prop = window_log_mass(np.exp(np.minimum(prop, 50.0)), lower, upper)
    with np.errstate(over="ignore", invalid="ignore"):
        log_r = (
            y * (prop - cur)
            - np.exp(np.minimum(prop, 50.0))
            + np.exp(np.minimum(cur, 50.0))
            - lt_prop
            + lt_cur
            - 0.5 * tau * ((prop - m) ** 2 - (cur - m) ** 2)
            + log_q_ratio
        )
    return np.log(rng.random(len(cur))) < np.nan_to_num(log_r, nan=-np.inf), lt_prop


def _rate_mode(y: np.ndarray, m: np.ndarray, tau: float, steps: int = 30) -> np.ndarray:
    """Mode of y·v − eᵛ − τ/2 (v − m)² in v (the log-rate's conditional without truncation), by safeguarded
    Newton from a start that depends only on (y, m, τ) — so the proposal built on it is a valid
    independence proposal."""
    v = np.minimum(np.log(y + 0.5), m + y / tau)
    for _ in range(steps):
        ev = np.exp(np.minimum(v, 50.0))
        g = y - ev - tau * (v - m)
        h = ev + tau
        step = np.clip(g / h, -2.0, 2.0)
        v = v + step
        if np.max(np.abs(step)) < 1e-9:
            break
    return v


def sample_log_linear(
    W: np.ndarray,
    log_y: np.ndarray,
    slope_precision: float,
    chains: int,
    warmup: int,
    draws: int,
    rng: np.random.Generator,
    tick: Tick = lambda n: None,
) -> Chains:
    """MCMC for log Yᵢ ~ Normal(wᵢ'γ, σ²) with the priors of Eqs. 7–8 (see the module docstring)."""
    n, d = W.shape
    pg = prior_precisions(d, PRICE_PRIOR_PRECISION * slope_precision)
    WtW, Wty = W.T @ W, W.T @ log_y
    out = {"gamma": np.zeros((chains, draws, d)), "sigma": np.zeros((chains, draws))}
    acc = 0

    def log_weight(s2: float) -> float:  # half-Cauchy(σ) · σ: target over the 1/σ² proposal prior, on σ²
        s = np.sqrt(s2)
        return float(-np.log1p(s2) + np.log(s))

    for c in range(chains):
        sigma2 = float(np.var(log_y) * rng.uniform(0.5, 2.0))
        for it in range(warmup + draws):
            Q = WtW / sigma2 + np.diag(pg)
            gamma = _mvn(np.linalg.solve(Q, Wty / sigma2), Q, rng)
            resid = log_y - W @ gamma
            proposal = float(1.0 / rng.gamma(n / 2, 2.0 / (resid @ resid)))
            if np.log(rng.random()) < log_weight(proposal) - log_weight(sigma2):
                sigma2 = proposal
                acc += 1
            if it >= warmup:
                out["gamma"][c, it - warmup], out["sigma"][c, it - warmup] = gamma, np.sqrt(sigma2)
            tick(1)
    return Chains(out, {"sigma": acc / (chains * (warmup + draws))})
