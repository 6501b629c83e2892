"""The risk–utility frontier and the rules that pick one knob value from it.

Following Greve & Sablica (2024), Eqs. 2.6–2.8 (after Gomatam et al. 2005): a release R2 is at least as good
as R1 when its risk is no higher and its utility no lower (Eq. 2.7); the frontier is the set of releases no
other release beats on both; a steward either maximizes utility subject to a risk ceiling (Eq. 2.6), or
states a linear trade-off DR = c + a·DU (Eq. 2.8) and takes the frontier point tangent to such a line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.errors import ConfigError
from engine.measures.base import metric_info


@dataclass(frozen=True)
class Choice:
    knob: float
    risk: float
    utility: float
    rule: str
    why: str


def risk_utility_table(summary: pd.DataFrame, risk: str, utility: str) -> pd.DataFrame:
    """One row per knob value with the mean risk and mean utility (and their intervals).

    ``utility_score`` is the utility turned so that larger is better (a lower-is-better measure negated, a
    ratio whose ideal is 1 as −|ratio − 1|); frontiers and choices use it, figures show ``utility``.
    """
    have = set(summary["metric"])
    for m, what in ((risk, "risk"), (utility, "utility")):
        if m not in have:
            raise ConfigError(f"{what} metric '{m}' was not measured; measured: {', '.join(sorted(have))}")
    r = summary[summary["metric"] == risk].set_index("knob")[["mean", "lo", "hi"]]
    u = summary[summary["metric"] == utility].set_index("knob")[["mean", "lo", "hi"]]
    t = r.add_prefix("risk_").join(u.add_prefix("utility_"), how="inner").reset_index()
    t = t.rename(columns={"risk_mean": "risk", "utility_mean": "utility"})
    try:
        info = metric_info(utility)
    except ConfigError:  # a measure outside the registry: taken as higher-is-better
        info = None
    t["utility_score"] = t["utility"] if info is None else [info.goodness(v) for v in t["utility"]]
    return t


def pareto_mask(risk: np.ndarray, utility: np.ndarray) -> np.ndarray:
    """True where no other point has risk ≤ and utility ≥ with one of them strict (Greve & Sablica, Eq. 2.7)."""
    risk = np.asarray(risk, float)
    utility = np.asarray(utility, float)
    n = len(risk)
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        dominated = (risk <= risk[i]) & (utility >= utility[i]) & ((risk < risk[i]) | (utility > utility[i]))
        keep[i] = not dominated.any()
    return keep


def frontier(summary: pd.DataFrame, risk: str, utility: str) -> pd.DataFrame:
    """The risk–utility table with a boolean column ``pareto`` marking the frontier."""
    t = risk_utility_table(summary, risk, utility)
    t["pareto"] = pareto_mask(t["risk"].to_numpy(), t["utility_score"].to_numpy())
    return t


def select_by_risk_threshold(table: pd.DataFrame, max_risk: float) -> Choice:
    """Maximize utility subject to risk ≤ ``max_risk`` (Greve & Sablica, Eq. 2.6); ties go to lower risk."""
    ok = table[table["risk"] <= max_risk]
    if ok.empty:
        lowest = table["risk"].min()
        raise ConfigError(f"no knob value has risk ≤ {max_risk:g}; the lowest risk reached is {lowest:.3g}")
    score = "utility_score" if "utility_score" in ok else "utility"
    best = ok.sort_values([score, "risk"], ascending=[False, True]).iloc[0]
    return Choice(
        float(best["knob"]), float(best["risk"]), float(best["utility"]), "risk threshold",
        f"best utility ({best['utility']:.3g}) among knob values whose risk is at most {max_risk:g}",
    )


def select_by_tradeoff(table: pd.DataFrame, a: float) -> Choice:
    """The frontier point tangent to a line DR = c + a·DU (Greve & Sablica, Eq. 2.8).

    With utility on the x-axis and risk on the y-axis, the tangent point of a supporting line of slope
    ``a`` > 0 is the point that minimizes DR − a·DU; its offset c is that minimum.
    """
    if not a > 0:
        raise ConfigError(f"trade-off slope a must be positive (risk accepted per unit of utility), got {a}")
    f = table[table["pareto"]] if "pareto" in table else table
    score = f["risk"] - a * f["utility_score" if "utility_score" in f else "utility"]
    best = f.loc[score.idxmin()]
    c = float(score.min())
    return Choice(
        float(best["knob"]), float(best["risk"]), float(best["utility"]), "linear trade-off",
        f"tangent to risk = {c:.3g} + {a:g}·utility: no other frontier point has lower risk − {a:g}·utility",
    )


@dataclass(frozen=True)
class PmseChoice:
    """The knob whose mean pMSE ratio is closest to 1, and the comparison points above and below it."""

    best: float
    high: float
    low: float
    ratio: float
    table: pd.DataFrame
    why: str


def select_by_pmse_ratio(summary: pd.DataFrame, symbol: str = "λ") -> PmseChoice:
    """Schneider, Hu, Mankad & Bale (2023), Section 5.3: λ* (or α*) is the knob value whose mean pMSE ratio
    over the M synthetic datasets is closest to 1 (a ratio below 1 over-fits, above 1 under-fits); λʰ and λˡ
    are the highest and the lowest knob values evaluated, the more and the less private comparison points.
    """
    r = summary[summary["metric"] == "pmse_ratio"].dropna(subset=["mean"]).sort_values("knob")
    if r.empty:
        raise ConfigError("the pMSE ratio was not measured, so λ* cannot be chosen; include the pmse_ratio metric")
    best = r.loc[(r["mean"] - 1.0).abs().idxmin()]
    hi_knob, lo_knob = float(r["knob"].max()), float(r["knob"].min())
    return PmseChoice(
        best=float(best["knob"]), high=hi_knob, low=lo_knob, ratio=float(best["mean"]),
        table=r[["knob", "mean", "lo", "hi"]].reset_index(drop=True),
        why=(f"its mean pMSE ratio ({float(best['mean']):.3g}) is the closest to 1 of the values measured; smaller "
             f"{symbol} over-fit (ratio below 1: the synthetic values copy the confidential ones), larger {symbol} "
             "under-fit (ratio above 1: the text's information is lost)"),
    )
