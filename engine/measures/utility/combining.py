"""Combining estimates from M partially synthetic datasets into one estimate with a 95% interval.

Reiter (2003), "Inference for partially synthetic, public use microdata sets": with point estimates qₘ and
their within-dataset variances uₘ from m = 1…M synthetic datasets,

    q̄ = Σ qₘ / M,   b = Σ (qₘ − q̄)² / (M − 1),   ū = Σ uₘ / M,   T = ū + b / M,

and the interval q̄ ± t_ν √T with ν = (M − 1)(1 + ū / (b / M))². With M = 1 there is no between-dataset
variance: T = ū and the normal quantile is used. These are the rules Schneider et al. (2023) and Guo & Hu
cite for their intervals (Drechsler 2011; Reiter & Raghunathan 2007).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class Combined:
    estimate: float
    variance: float
    df: float
    lo: float
    hi: float


def combine_partial_synthesis(estimates: np.ndarray, variances: np.ndarray, level: float = 0.95) -> Combined:
    """Reiter's (2003) combining rules for partially synthetic data (see the module docstring)."""
    q = np.asarray(estimates, dtype=float)
    u = np.asarray(variances, dtype=float)
    keep = np.isfinite(q) & np.isfinite(u)
    q, u = q[keep], u[keep]
    m = len(q)
    if m == 0:
        nan = float("nan")
        return Combined(nan, nan, nan, nan, nan)
    qbar, ubar = float(q.mean()), float(u.mean())
    if m == 1:
        total, df = ubar, float("inf")
    else:
        b = float(q.var(ddof=1))
        total = ubar + b / m
        df = float("inf") if b == 0 else (m - 1) * (1 + ubar / (b / m)) ** 2
    crit = stats.norm.ppf(0.5 + level / 2) if not np.isfinite(df) else stats.t.ppf(0.5 + level / 2, df)
    half = float(crit * np.sqrt(max(total, 0.0)))
    return Combined(qbar, total, df, qbar - half, qbar + half)


def combine_table(rows: pd.DataFrame, keys: list[str], level: float = 0.95) -> pd.DataFrame:
    """Combine a tidy table of per-replicate ``estimate`` and ``variance`` columns within each group of ``keys``."""
    out = []
    for key, g in rows.groupby(keys, sort=False):
        c = combine_partial_synthesis(g["estimate"].to_numpy(), g["variance"].to_numpy(), level)
        key = key if isinstance(key, tuple) else (key,)
        out.append(
            {
                **dict(zip(keys, key)),
                "estimate": c.estimate,
                "variance": c.variance,
                "df": c.df,
                "lo": c.lo,
                "hi": c.hi,
                "replicates": int(len(g)),
            }
        )
    return pd.DataFrame(out, columns=[*keys, "estimate", "variance", "df", "lo", "hi", "replicates"])
