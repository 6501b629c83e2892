"""Convergence diagnostics of Markov chains: split R-hat and the effective sample size.

Both follow Gelman et al., *Bayesian Data Analysis* (3rd ed., 2013), Section 11.4–11.5: every chain is split
in half (so a chain that drifts shows up as two chains that disagree), R-hat compares the between- and the
within-half variances, and the effective sample size sums the combined autocorrelations until Geyer's
initial positive sequence of pair sums turns negative. R-hat near 1 (below 1.01–1.05) and a few hundred
effective draws are the usual marks of chains one can trust.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RHAT_POOR = 1.05
ESS_POOR = 100.0


def _split(chains: np.ndarray) -> np.ndarray:
    """chains (C × S) → split halves (2C × S//2); a middle draw of an odd S is dropped."""
    x = np.asarray(chains, dtype=float)
    if x.ndim != 2 or x.shape[1] < 4:
        raise ValueError(f"need chains × draws with at least 4 draws, got shape {x.shape}")
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, -half:]], axis=0)


def split_rhat(chains: np.ndarray) -> float:
    """Split R-hat (BDA3, Eq. 11.4) of one scalar: √(var⁺ / W) with var⁺ = (n−1)/n·W + B/n."""
    x = _split(chains)
    m, n = x.shape
    means = x.mean(axis=1)
    W = float(x.var(axis=1, ddof=1).mean())
    B = float(n * means.var(ddof=1))
    if W == 0:
        return 1.0 if B == 0 else float("inf")
    var_plus = (n - 1) / n * W + B / n
    return float(np.sqrt(var_plus / W))


def _autocovariance(x: np.ndarray) -> np.ndarray:
    """Autocovariances of each row at lags 0..n−1 (biased, by FFT)."""
    n = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(centred, size, axis=1)
    return np.fft.irfft(f * np.conj(f), size, axis=1)[:, :n] / n


def effective_sample_size(chains: np.ndarray) -> float:
    """Effective sample size of one scalar over all chains (BDA3, Eqs. 11.7–11.8, on the split chains).

    ρ̂_t = 1 − (W − mean autocovariance at lag t) / var⁺; the sum runs over lags while Geyer's pair sums
    ρ̂_{2k} + ρ̂_{2k+1} stay positive, made monotone (Geyer 1992).
    """
    x = _split(chains)
    m, n = x.shape
    acov = _autocovariance(x)
    W = float(acov[:, 0].mean() * n / (n - 1))
    B = float(n * x.mean(axis=1).var(ddof=1)) if m > 1 else 0.0
    var_plus = (n - 1) / n * W + B / n
    if var_plus <= 0:
        return float(m * n)
    rho = 1.0 - (W - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    pairs = rho[: (n // 2) * 2].reshape(-1, 2).sum(axis=1)
    positive = np.flatnonzero(pairs <= 0)
    pairs = pairs[: positive[0]] if len(positive) else pairs
    pairs = np.minimum.accumulate(pairs)
    tau = -1.0 + 2.0 * float(pairs.sum())
    return float(m * n / max(tau, 1.0 / np.log10(max(m * n, 10))))


def diagnostics(samples: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per scalar parameter: parameter, mean, sd, rhat, ess, poor (R-hat > `RHAT_POOR` or ESS <
    `ESS_POOR`). ``samples[name]`` is chains × draws."""
    rows = []
    for name, chains in samples.items():
        x = np.asarray(chains, dtype=float)
        rhat, ess = split_rhat(x), effective_sample_size(x)
        rows.append(
            {
                "parameter": name,
                "mean": float(x.mean()),
                "sd": float(x.std(ddof=1)),
                "rhat": rhat,
                "ess": ess,
                "poor": bool(rhat > RHAT_POOR or ess < ESS_POOR),
            }
        )
    return pd.DataFrame(rows, columns=["parameter", "mean", "sd", "rhat", "ess", "poor"])
