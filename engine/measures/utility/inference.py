"""Analysis-specific utility: estimates and 95% intervals from the confidential and synthetic data, and how much
the intervals overlap (Guo & Hu, Section 3.2, Eq. 10; Karr et al. 2006).

Quantities: the mean, the 25% and 90% quantiles of every synthesized count and amount, and the coefficients of
a linear regression of the log amount on all other fields. Each comes with a variance, so the synthetic
estimates can also be combined over the M datasets with Reiter's (2003) rules (`engine.measures.utility.combining`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from engine.data.levels import levels_by_frequency
from engine.data.schema import FieldSpec
from engine.measures.base import MetricResult

QUANTILES = (0.25, 0.90)
Z95 = float(stats.norm.ppf(0.975))
ESTIMATE_COLUMNS = ["quantity", "kind", "field", "term", "estimate", "variance"]


def interval_overlap(
    lo_c: np.ndarray | float, hi_c: np.ndarray | float, lo_s: np.ndarray | float, hi_s: np.ndarray | float
) -> np.ndarray:
    """Interval overlap, Guo & Hu, Eq. 10 (after Karr et al. 2006):

        I = (Uᵢ − Lᵢ) / (2 (U_c − L_c)) + (Uᵢ − Lᵢ) / (2 (U_s − L_s)),   Uᵢ = min(U_c, U_s),   Lᵢ = max(L_c, L_s),

    with [L_c, U_c] the confidential interval and [L_s, U_s] the synthetic one. 1 for identical intervals;
    negative when they do not overlap.

    Each term is half the share of one interval that the intersection covers; the formula is applied as written
    (so disjoint intervals give a negative value, the further apart the more negative). Our one addition: a
    zero-width interval (a quantile without bootstrap variation, such as a 25% quantile on a floor of zeros),
    where the formula would divide by 0, counts as fully covered (term ½) when it lies inside the other
    interval and not at all (term 0) otherwise; two identical points give 1.
    """
    lo_c, hi_c, lo_s, hi_s = (np.asarray(v, dtype=float) for v in (lo_c, hi_c, lo_s, hi_s))
    inter = np.minimum(hi_c, hi_s) - np.maximum(lo_c, lo_s)

    def term(width: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(width > 0, inter / (2 * np.where(width > 0, width, 1.0)), np.where(inter >= 0, 0.5, 0.0))

    return term(hi_c - lo_c) + term(hi_s - lo_s)


def regression_estimates(
    frame: pd.DataFrame, response: str, regressors: Sequence[FieldSpec], reference: pd.DataFrame | None = None
) -> pd.DataFrame:
    """OLS coefficients of log(response) on ``regressors`` with variances σ̂² (XᵀX)⁻¹, the intercept left out
    (Guo & Hu, Section 3.2, regress Price on Neighborhood, RoomType, ReviewsCount and AvailableDays).

    The response is logged only when all its values are > 0 (else it is used as it is, and the quantity names
    say so). Categorical regressors enter as indicators of every level but the most frequent one of
    ``reference`` (default ``frame``; pass the confidential data so both fits name the same terms), numeric
    ones as they are. σ̂² = RSS / (n − p); collinear columns are handled by the pseudo-inverse.
    """
    reference = frame if reference is None else reference
    y = frame[response].to_numpy(dtype=float)
    logged = bool((y > 0).all())
    y = np.log(y) if logged else y
    cols, names = [np.ones(len(frame))], ["(intercept)"]
    for f in regressors:
        if f.name == response:
            continue
        if f.kind == "categorical":
            values = frame[f.name].astype(str).to_numpy()
            for level in levels_by_frequency(reference[f.name])[1:]:
                cols.append((values == level).astype(float))
                names.append(f"{f.name}={level}")
        else:
            cols.append(frame[f.name].to_numpy(dtype=float))
            names.append(f.name)
    X = np.column_stack(cols)
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    dof = max(len(y) - X.shape[1], 1)
    cov = float(resid @ resid / dof) * np.linalg.pinv(X.T @ X)
    lhs = f"log({response})" if logged else response
    return pd.DataFrame(
        {
            "quantity": [f"{lhs} ~ {n}" for n in names[1:]],
            "kind": "coefficient",
            "field": response,
            "term": names[1:],
            "estimate": beta[1:],
            "variance": np.diag(cov)[1:],
        },
        columns=ESTIMATE_COLUMNS,
    )


def _bootstrap_quantiles(values: list[np.ndarray], rng: np.random.Generator, bootstrap: int) -> list[np.ndarray]:
    """For each array of ``values`` (all of one length n), its `QUANTILES` in each of ``bootstrap`` resamples of
    the records (shape: quantiles × resamples). The same resampled records serve every array, and the resamples
    are drawn in blocks so that memory stays near a few million values however large n is."""
    n = len(values[0])
    block = max(1, min(bootstrap, 2_000_000 // max(n, 1)))
    out: list[list[np.ndarray]] = [[] for _ in values]
    done = 0
    while done < bootstrap:
        idx = rng.integers(0, n, size=(min(block, bootstrap - done), n))
        for k, x in enumerate(values):
            out[k].append(np.quantile(x[idx], QUANTILES, axis=1))
        done += len(idx)
    return [np.concatenate(o, axis=1) for o in out]


def inferential_estimates(
    frame: pd.DataFrame,
    targets: Sequence[FieldSpec],
    predictors: Sequence[FieldSpec],
    response: str | None,
    rng: np.random.Generator,
    bootstrap: int = 200,
    reference: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The quantities of Guo & Hu, Section 3.2, with estimates and variances, one row each (columns quantity,
    kind, field, term, estimate, variance):

    - for every count / continuous field of ``targets``: its mean (variance s²/n) and its 25% and 90%
      quantiles (R's default type-7 quantile; variance over ``bootstrap`` nonparametric bootstrap resamples of
      the records drawn from ``rng``, as Guo & Hu do after Hu et al.);
    - when ``response`` names a continuous field, the coefficients of `regression_estimates`: log(response) on
      all other fields (``predictors`` and the other targets), categorical levels from ``reference``.
    """
    rows = []
    n = len(frame)
    numeric = [f for f in targets if f.kind in ("count", "continuous")]
    values = [frame[f.name].to_numpy(dtype=float) for f in numeric]
    boots = _bootstrap_quantiles(values, rng, bootstrap) if values and bootstrap > 1 and n > 0 else None
    for k, (f, x) in enumerate(zip(numeric, values)):
        rows.append(
            {
                "quantity": f"mean of {f.name}",
                "kind": "mean",
                "field": f.name,
                "term": "mean",
                "estimate": float(x.mean()),
                "variance": float(x.var(ddof=1) / n),
            }
        )
        for q_at, q in enumerate(QUANTILES):
            rows.append(
                {
                    "quantity": f"{round(100 * q)}% quantile of {f.name}",
                    "kind": "quantile",
                    "field": f.name,
                    "term": f"q{round(100 * q)}",
                    "estimate": float(np.quantile(x, q)),
                    "variance": float(boots[k][q_at].var(ddof=1)) if boots is not None else float("nan"),
                }
            )
    out = pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)
    specs = {f.name: f for f in [*predictors, *targets]}
    if response is not None and response in specs and specs[response].kind == "continuous":
        others = [f for f in [*predictors, *targets] if f.name != response]
        others = list({f.name: f for f in others}.values())  # a field listed twice enters once
        out = pd.concat([out, regression_estimates(frame, response, others, reference)], ignore_index=True)
    return out


def ci_overlap(confidential: pd.DataFrame, synthetic: pd.DataFrame) -> MetricResult:
    """Interval overlap (Guo & Hu, Eq. 10; Karr et al. 2006) of every quantity in the two tables of
    `inferential_estimates`, with 95% intervals estimate ± 1.96 √variance; the value is the mean overlap over the
    quantities. A quantity only one table has (a regression term whose level is absent) is left out.

    Detail: one row per quantity with quantity, kind, field, term, the synthetic estimate, variance, lo and hi,
    confidential_estimate, confidential_lo, confidential_hi and overlap. Stacked over the M releases it combines
    with ``combine_table(detail, ["quantity"])`` (Reiter 2003) into one synthetic interval per quantity.
    """
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
