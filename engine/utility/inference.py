"""Analysis-specific utility: estimates and 95% intervals from the confidential and synthetic data, and how much
the intervals overlap (Guo & Hu, Section 3.2, Eq. 10; Karr et al. 2006).

Quantities: the mean, the 25% and 90% quantiles of every synthesized count and amount, and the coefficients of
a linear regression of the log amount on all other fields. Each comes with a variance, so the synthetic
estimates can also be combined over the M datasets with Reiter's (2003) rules (`engine.utility.combining`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from engine.metrics import MetricResult
from engine.schema import FieldSpec

QUANTILES = (0.25, 0.90)
Z95 = float(stats.norm.ppf(0.975))
ESTIMATE_COLUMNS = ["quantity", "kind", "field", "term", "estimate", "variance"]


def interval_overlap(lo_c, hi_c, lo_s, hi_s) -> np.ndarray:
    """Guo & Hu, Eq. 10: I = (Uᵢ − Lᵢ) / (2 (U_c − L_c)) + (Uᵢ − Lᵢ) / (2 (U_s − L_s)) with Uᵢ = min(U_c, U_s)
    and Lᵢ = max(L_c, L_s). 1 for identical intervals; negative when they do not overlap.

    Each term is the share of one interval covered by the intersection. A zero-width interval (a quantile
    with no bootstrap variation, such as a 25% quantile at a floor of zeros) is covered entirely when it lies
    inside the other interval (term ½) and not at all otherwise (term 0), where the formula would divide by 0.
    """
    lo_c, hi_c, lo_s, hi_s = (np.asarray(v, dtype=float) for v in (lo_c, hi_c, lo_s, hi_s))
    inter = np.minimum(hi_c, hi_s) - np.maximum(lo_c, lo_s)

    def term(width: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(width > 0, inter / (2 * np.where(width > 0, width, 1.0)), np.where(inter >= 0, 0.5, 0.0))

    return term(hi_c - lo_c) + term(hi_s - lo_s)


def _indicators(values: pd.Series, name: str) -> tuple[list[np.ndarray], list[str]]:
    counts = values.astype(str).value_counts()
    levels = sorted(counts.index, key=lambda v: (-counts[v], v))[1:]
    s = values.astype(str).to_numpy()
    return [(s == lv).astype(float) for lv in levels], [f"{name}={lv}" for lv in levels]


def regression_estimates(frame: pd.DataFrame, response: str, regressors: Sequence[FieldSpec]) -> pd.DataFrame:
    """OLS of log(response) (the response itself when any value is ≤ 0) on ``regressors`` (categorical as
    indicators with the most frequent level as reference, numeric as they are): coefficients and variances
    σ̂² (XᵀX)⁻¹, the intercept left out."""
    y = frame[response].to_numpy(dtype=float)
    logged = bool((y > 0).all())
    y = np.log(y) if logged else y
    cols, names = [np.ones(len(frame))], ["(intercept)"]
    for f in regressors:
        if f.kind == "categorical":
            c, n = _indicators(frame[f.name], f.name)
            cols += c
            names += n
        else:
            cols.append(frame[f.name].to_numpy(dtype=float))
            names.append(f.name)
    X = np.column_stack(cols)
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    dof = max(len(y) - X.shape[1], 1)
    sigma2 = float(resid @ resid / dof)
    cov = sigma2 * np.linalg.pinv(X.T @ X)
    lhs = f"log({response})" if logged else response
    return pd.DataFrame({"quantity": [f"{lhs} ~ {n}" for n in names[1:]], "kind": "coefficient", "field": response,
                         "term": names[1:], "estimate": beta[1:], "variance": np.diag(cov)[1:]})


def inferential_estimates(frame: pd.DataFrame, targets: Sequence[FieldSpec], predictors: Sequence[FieldSpec],
                          response: str | None, rng: np.random.Generator, bootstrap: int = 200) -> pd.DataFrame:
    """Estimates with variances of: the mean (s²/n) and the 25% and 90% quantiles (variance over ``bootstrap``
    nonparametric bootstrap resamples drawn from ``rng``) of every count / continuous target; and, when
    ``response`` names a field, the regression coefficients of `regression_estimates` on all other fields."""
    rows = []
    n = len(frame)
    idx = rng.integers(0, n, size=(bootstrap, n)) if bootstrap > 1 else None
    for f in targets:
        if f.kind not in ("count", "continuous"):
            continue
        x = frame[f.name].to_numpy(dtype=float)
        rows.append({"quantity": f"mean of {f.name}", "kind": "mean", "field": f.name, "term": "mean",
                     "estimate": float(x.mean()), "variance": float(x.var(ddof=1) / n)})
        boot = np.quantile(x[idx], QUANTILES, axis=1) if idx is not None else None
        for k, q in enumerate(QUANTILES):
            rows.append({"quantity": f"{round(100 * q)}% quantile of {f.name}", "kind": "quantile", "field": f.name,
                         "term": f"q{round(100 * q)}", "estimate": float(np.quantile(x, q)),
                         "variance": float(boot[k].var(ddof=1)) if boot is not None else float("nan")})
    out = pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)
    if response is not None:
        others = [*predictors, *(f for f in targets if f.name != response)]
        out = pd.concat([out, regression_estimates(frame, response, others)], ignore_index=True)
    return out


def ci_overlap(confidential: pd.DataFrame, synthetic: pd.DataFrame) -> MetricResult:
    """Interval overlap (Eq. 10) of every quantity, 95% intervals estimate ± 1.96 √variance; the value is the
    mean over quantities. Detail: one row per quantity with the synthetic estimate, variance and interval, the
    confidential ones and the overlap (combine the synthetic rows over replicates with `combine_table`)."""
    c = confidential.set_index("quantity")
    s = synthetic[synthetic["quantity"].isin(c.index)].copy()
    half = Z95 * np.sqrt(s["variance"].to_numpy())
    s["lo"], s["hi"] = s["estimate"] - half, s["estimate"] + half
    ce = c.loc[s["quantity"], "estimate"].to_numpy()
    chalf = Z95 * np.sqrt(c.loc[s["quantity"], "variance"].to_numpy())
    s["confidential_estimate"], s["confidential_lo"], s["confidential_hi"] = ce, ce - chalf, ce + chalf
    s["overlap"] = interval_overlap(s["confidential_lo"], s["confidential_hi"], s["lo"], s["hi"])
    detail = s.reset_index(drop=True)
    value = float(np.nanmean(detail["overlap"])) if len(detail) else float("nan")
    return MetricResult("ci_overlap", value, detail=detail)
