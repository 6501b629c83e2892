"""The risk–utility frontier and the rules that pick one knob value from it.

Following Greve & Sablica (2024), Eqs. 2.6–2.8 (after Gomatam et al. 2005): a release R2 is at least as good
as R1 when its risk is no higher and its utility no lower (Eq. 2.7); the frontier is the set of releases no
other release beats on both; a steward either maximizes utility subject to a risk ceiling (Eq. 2.6), or
states a linear trade-off DR = c + a·DU (Eq. 2.8) and takes the frontier point tangent to such a line.

Both axes are oriented by the measures' own direction before any comparison: ``risk_score`` is the risk turned so
that lower is less risk (the false match rate, where higher is safer, is negated) and ``utility_score`` the
utility turned so that higher is better. Figures show the raw means, ``risk`` and ``utility``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from engine.errors import ConfigError
from engine.measures.base import Better, MetricInfo, metric_info, oriented


@dataclass(frozen=True)
class Choice:
    knob: float
    risk: float
    utility: float
    rule: str
    why: str


def _info(metric: str) -> MetricInfo | None:
    try:
        return metric_info(metric)
    except ConfigError:  # a measure outside the registry: risk taken as lower-, utility as higher-is-better
        return None


def risk_utility_table(summary: pd.DataFrame, risk: str, utility: str) -> pd.DataFrame:
    """One row per knob value with the mean risk and mean utility (and their intervals).

    ``risk_score`` is the risk turned so that lower is less risk (a higher-is-safer measure negated, a ratio
    whose ideal is 1 as |ratio − 1|) and ``utility_score`` the utility turned so that larger is better (a
    lower-is-better measure negated, a ratio whose ideal is 1 as −|ratio − 1|); ``risk_better`` is the risk
    measure's direction. Frontiers and choices use the scores, figures show ``risk`` and ``utility``.
    """
    have = set(summary["metric"])
    for m, what in ((risk, "risk"), (utility, "utility")):
        if m not in have:
            raise ConfigError(f"{what} metric '{m}' was not measured; measured: {', '.join(sorted(have))}")
    r = summary[summary["metric"] == risk].set_index("knob")[["mean", "lo", "hi"]]
    u = summary[summary["metric"] == utility].set_index("knob")[["mean", "lo", "hi"]]
    t = r.add_prefix("risk_").join(u.add_prefix("utility_"), how="inner").reset_index()
    t = t.rename(columns={"risk_mean": "risk", "utility_mean": "utility"})
    r_info, u_info = _info(risk), _info(utility)
    t["risk_score"] = t["risk"] if r_info is None else [r_info.badness(v) for v in t["risk"]]
    t["utility_score"] = t["utility"] if u_info is None else [u_info.goodness(v) for v in t["utility"]]
    t["risk_better"] = "lower" if r_info is None else r_info.better
    return t


def pareto_mask(risk: np.ndarray, utility: np.ndarray) -> np.ndarray:
    """True where no other point has risk ≤ and utility ≥ with one of them strict (Greve & Sablica, Eq. 2.7).

    ``risk`` must be oriented so that lower is less risk and ``utility`` so that higher is better (the
    ``risk_score`` and ``utility_score`` of `risk_utility_table`)."""
    risk = np.asarray(risk, float)
    utility = np.asarray(utility, float)
    n = len(risk)
    keep = np.ones(n, dtype=bool)
    for i in range(n):
        dominated = (risk <= risk[i]) & (utility >= utility[i]) & ((risk < risk[i]) | (utility > utility[i]))
        keep[i] = not dominated.any()
    return keep


def frontier(summary: pd.DataFrame, risk: str, utility: str, unprotected_risk: float | None = None) -> pd.DataFrame:
    """The risk–utility table with a boolean column ``pareto`` marking the frontier and ``unprotected``
    marking knob values whose risk equals ``unprotected_risk`` (the measure on the unprotected data): there the
    method protects nothing on this measure (redaction level 0), and the selection rules pass them over."""
    t = risk_utility_table(summary, risk, utility)
    t["pareto"] = pareto_mask(t["risk_score"].to_numpy(), t["utility_score"].to_numpy())
    t["unprotected"] = (
        np.isclose(t["risk"].to_numpy(dtype=float), unprotected_risk, rtol=1e-12, atol=1e-12)
        if unprotected_risk is not None and np.isfinite(unprotected_risk)
        else False
    )
    return t


def _protecting(table: pd.DataFrame, allow_unprotected: bool) -> pd.DataFrame:
    """The rows a rule may pick: all with ``allow_unprotected``, else those that protect (ConfigError if none)."""
    if allow_unprotected or "unprotected" not in table:
        return table
    kept = table[~table["unprotected"].astype(bool)]
    if kept.empty:
        raise ConfigError(
            "every knob value leaves the risk at its unprotected level, so no protecting setting can be suggested"
        )
    return kept


def _columns(table: pd.DataFrame) -> tuple[str, str, Better]:
    """The oriented risk and utility columns of a table (the raw ones where it has no scores) and the risk
    measure's direction."""
    risk = "risk_score" if "risk_score" in table else "risk"
    utility = "utility_score" if "utility_score" in table else "utility"
    better = table["risk_better"].iloc[0] if "risk_better" in table and len(table) else "lower"
    return risk, utility, cast(Better, better)


def select_by_risk_threshold(table: pd.DataFrame, max_risk: float, allow_unprotected: bool = False) -> Choice:
    """Maximize utility subject to risk at most ``max_risk`` (Greve & Sablica, Eq. 2.6); ties go to lower risk.

    ``max_risk`` is in the risk measure's own units and its direction says what "at most that risk" means:
    value ≤ max_risk for a lower-is-better measure, value ≥ max_risk for a higher-is-safer one (the false match
    rate), |value − 1| ≤ |max_risk − 1| for one whose ideal is 1. Knob values marked ``unprotected`` are
    passed over unless ``allow_unprotected``."""
    table = _protecting(table, allow_unprotected)
    risk, utility, better = _columns(table)
    ok = table[table[risk] <= -oriented(better, max_risk)]
    if ok.empty:
        safest = table.loc[table[risk].idxmin(), "risk"] if table[risk].notna().any() else float("nan")
        if better == "higher":
            raise ConfigError(
                f"no knob value has risk measure ≥ {max_risk:g} (higher is safer); the highest reached is {safest:.3g}"
            )
        raise ConfigError(f"no knob value has risk ≤ {max_risk:g}; the lowest risk reached is {safest:.3g}")
    best = ok.sort_values([utility, risk], ascending=[False, True]).iloc[0]
    bound = "at least" if better == "higher" else "at most"
    return Choice(
        float(best["knob"]),
        float(best["risk"]),
        float(best["utility"]),
        "risk threshold",
        f"best utility ({best['utility']:.3g}) among knob values whose risk is {bound} {max_risk:g}"
        + (" (higher is safer)" if better == "higher" else ""),
    )


def select_by_tradeoff(table: pd.DataFrame, a: float, allow_unprotected: bool = False) -> Choice:
    """The frontier point tangent to a line DR = c + a·DU (Greve & Sablica, Eq. 2.8).

    With utility on the x-axis and risk on the y-axis, the tangent point of a supporting line of slope
    ``a`` > 0 is the point that minimizes DR − a·DU; its offset c is that minimum. DR and DU are the oriented
    ``risk_score`` and ``utility_score``. Knob values marked ``unprotected`` are passed over unless
    ``allow_unprotected`` (the frontier is then taken among the others).
    """
    if not a > 0:
        raise ConfigError(f"trade-off slope a must be positive (risk accepted per unit of utility), got {a}")
    table = _protecting(table, allow_unprotected)
    if "pareto" in table:
        r, u, _ = _columns(table)
        table = table.assign(pareto=pareto_mask(table[r].to_numpy(), table[u].to_numpy()))
    f = table[table["pareto"]] if "pareto" in table else table
    risk, utility, _ = _columns(f)
    score = f[risk] - a * f[utility]
    best = f.loc[score.idxmin()]
    c = float(score.min())
    return Choice(
        float(best["knob"]),
        float(best["risk"]),
        float(best["utility"]),
        "linear trade-off",
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


EDGE_TREND = 0.01
"""How much nearer 1 the ratio at the grid's edge must be than at its neighbour for a value beyond the edge to be
worth measuring."""


def _beyond_the_edge(edge: float, neighbour: float, further: str, symbol: str) -> str:
    """Whether a knob value beyond the grid's edge might bring the pMSE ratio nearer 1: only if it was still
    coming nearer at the edge."""
    if abs(neighbour - 1) - abs(edge - 1) > EDGE_TREND:
        return f"so a {further} {symbol} might come closer"
    return f"and the ratio hardly moves there ({neighbour:.3g} next to it), so a {further} {symbol} would not help"


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
    knob, ratio = float(best["knob"]), float(best["mean"])
    why = f"its mean pMSE ratio ({ratio:.3g}) is the closest to 1 of the values measured; "
    means = r["mean"].to_numpy(float)
    if knob == lo_knob and ratio > 1 and len(r) > 1:
        why += f"it is the smallest {symbol} measured and still under-fits (ratio above 1: the text's information "
        why += f"is lost), {_beyond_the_edge(means[0], means[1], 'smaller', symbol)}"
    elif knob == hi_knob and ratio < 1 and len(r) > 1:
        why += f"it is the largest {symbol} measured and still over-fits (ratio below 1: the synthetic values copy "
        why += f"the confidential ones), {_beyond_the_edge(means[-1], means[-2], 'larger', symbol)}"
    else:
        why += (
            f"smaller {symbol} over-fit (ratio below 1: the synthetic values copy the confidential ones), larger "
            f"{symbol} under-fit (ratio above 1: the text's information is lost)"
        )
    return PmseChoice(
        best=knob,
        high=hi_knob,
        low=lo_knob,
        ratio=ratio,
        table=r[["knob", "mean", "lo", "hi"]].reset_index(drop=True),
        why=why,
    )
