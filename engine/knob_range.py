"""Where along a knob the measures change (issue 50: md's usable range).

A base grid can put all of a measure's change between two neighbours: md on reviews keeps its unigram utility
near 0 up to ε ≈ 3,000 and its attack at 0 up to ε ≈ 100, so the frontier shows two plateaus. `refine` adds knob
values, round after round, in the gaps where a measure changes most between neighbours, until no gap holds a
large share of any measure's change or a budget of points is spent; `utility_onset` says where utility begins
along the knob and what the risk reads there.

Both read a sweep's summary (columns knob, metric, mean, lo, hi) and nothing else, so any method whose knob is
continuous can use them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.measures.base import metric_info
from engine.protect.base import Knob

SHARE = 0.2
"""A gap is refined when a measure changes there by more than this share of its whole change over the grid."""
ONSET = 0.1
"""Utility begins where it has risen by this share of its rise along the grid."""
FINEST = 0.02
"""A gap is not halved again once its ends lie this close: within 2% of each other on a log scale, or 2% of the
knob's range on a linear one (a value shown with three significant digits would also snap onto its
neighbour, `Fitted.snap`)."""
ROUND = 2
"""The fewest values a refining round measures while the budget lasts: a round waits for its slowest value, and
md's rounds of one value on the airline tweets (a release and its nine measures, 1.2 s) left one of two cores
idle. Fixed, not the number of processes, so that the values added do not depend on where the sweep runs."""


def midpoint(knob: Knob, a: float, b: float) -> float | None:
    """The knob value halfway between ``a`` < ``b`` on the knob's scale (geometric on a log scale), rounded as
    the knob shows it (three significant digits, a whole number for an integer knob) so that the value shown
    is the value measured; None when no such value lies strictly between them or they are already within
    `FINEST` of each other."""
    log = knob.scale == "log" and a > 0
    if (b / a if log else (b - a) / (knob.high - knob.low)) < (1 + FINEST if log else FINEST):
        return None
    mid = math.sqrt(a * b) if log else (a + b) / 2
    if knob.integer:
        mid = float(round(mid))
    elif mid != 0:
        digits = 2 - math.floor(math.log10(abs(mid)))
        mid = round(mid, digits)
    return mid if a < mid < b and knob.low <= mid <= knob.high else None


def gap_scores(summary: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.Series:
    """For each gap between neighbouring knob values of ``summary`` (indexed by its lower end), the largest
    share of a measure's whole change over the grid that happens in it. A change counts beyond the two values'
    intervals (their half-widths over replicates); a measure whose whole change is within its intervals (noise)
    counts for none."""
    knobs = sorted(summary["knob"].unique())
    scores = np.zeros(max(len(knobs) - 1, 0))
    for metric, rows in summary.groupby("metric", sort=True):
        if metrics is not None and metric not in metrics:
            continue
        rows = rows.set_index("knob").reindex(knobs)
        mean = rows["mean"].to_numpy(dtype=float)
        half = ((rows["hi"] - rows["lo"]).abs() / 2).fillna(0).to_numpy(dtype=float)
        if np.isnan(mean).any():
            continue
        whole = float(mean.max() - mean.min())
        if whole <= max(1e-12, 2 * float(half.max())):
            continue
        change = np.abs(np.diff(mean)) - (half[:-1] + half[1:])
        scores = np.maximum(scores, np.clip(change, 0, None) / whole)
    return pd.Series(scores, index=knobs[:-1], dtype=float)


def refine_points(knob: Knob, summary: pd.DataFrame, budget: int, share: float = SHARE) -> list[float]:
    """Up to ``budget`` new knob values: the midpoints of the gaps whose score (`gap_scores`) exceeds
    ``share``, the largest first (ties: the lower gap first)."""
    if budget <= 0:
        return []
    scores = gap_scores(summary)
    knobs = sorted(summary["knob"].unique())
    upper = dict(zip(knobs[:-1], knobs[1:]))
    order = sorted((s for s in scores.items() if s[1] > share), key=lambda s: (-s[1], s[0]))
    out = []
    for low, _ in order:
        mid = midpoint(knob, float(low), float(upper[low]))
        if mid is not None and mid not in out:
            out.append(mid)
        if len(out) == budget:
            break
    return sorted(out)


def refine(
    knob: Knob,
    summary: pd.DataFrame,
    measure: Callable[[list[float]], pd.DataFrame],
    budget: int,
    share: float = SHARE,
) -> pd.DataFrame:
    """``summary`` with up to ``budget`` more knob values, added round after round where a measure changes most
    between neighbours (`refine_points`, at most half the budget left in a round, so a later round can follow
    a change the earlier one narrowed down, but at least `ROUND` values while the budget lasts);
    ``measure(values)`` gives the summary rows of new values. Deterministic for a deterministic ``measure``."""
    left = budget
    while left > 0:
        new = refine_points(knob, summary, min(left, max(ROUND, left // 2)), share)
        if not new:
            break
        summary = pd.concat([summary, measure(new)], ignore_index=True).sort_values(["knob", "metric"])
        summary = summary.reset_index(drop=True)
        left -= len(new)
    return summary


@dataclass(frozen=True)
class Onset:
    """Where utility begins along the knob: the first grid value, from the most private end, where the
    ``utility`` measure reaches ``level`` (a share `ONSET` of the way from no utility, ``least``, to its best on
    the grid, ``most``), and the ``risk`` measure's value there."""

    knob: float
    utility: str
    level: float
    least: float
    most: float
    risk: str | None
    risk_value: float | None
    first: bool
    """Whether it is the most private grid value (no plateau before it)."""


def utility_onset(knob: Knob, summary: pd.DataFrame, utility: str, risk: str | None = None) -> Onset | None:
    """Where the ``utility`` measure begins along the knob (`Onset`): the first grid value from the most
    private end that is a share `ONSET` of the way from no utility (the measure's worst possible value, where it
    declares one, else its worst on the grid) to its best on the grid. None when it is not measured or does
    not change along the grid."""
    rows = summary[summary["metric"] == utility].dropna(subset=["mean"])
    if rows.empty:
        return None
    ordered = rows.sort_values("knob", ascending=knob.more_privacy == "lower")  # the most private end first
    info = metric_info(utility)
    original = ordered["mean"].to_numpy(dtype=float)
    values = np.array([info.goodness(v) for v in original])  # larger is always better
    best = float(original[np.argmax(values)])
    worst = float(original[np.argmin(values)])
    if info.better == "higher" and math.isfinite(info.low):
        worst = min(worst, info.low)
    elif info.better == "lower" and math.isfinite(info.high):
        worst = max(worst, info.high)
    if abs(best - worst) <= 1e-9 or float(values.max() - values.min()) <= 1e-9:
        return None
    level = worst + ONSET * (best - worst)
    at = int(np.argmax(values >= info.goodness(level) - 1e-12))
    value = float(ordered["knob"].iloc[at])
    risk_value = None
    if risk is not None:
        hit = summary[(summary["metric"] == risk) & (summary["knob"] == value)]["mean"]
        risk_value = float(hit.iloc[0]) if len(hit) else None
    return Onset(value, utility, level, worst, best, risk, risk_value, first=at == 0)


def onset_text(knob: Knob, onset: Onset | None) -> str:
    """Where utility begins, in words, for the text under a knob: empty when it begins at the most private
    setting (there is no plateau to explain) or does not change."""
    if onset is None or onset.first:
        return ""
    u = metric_info(onset.utility)
    sign = "≥" if onset.most >= onset.least else "≤"
    said = (
        f"Utility begins near {knob.symbol} ≈ {knob.format(onset.knob)} on this data ({u.label.lower()} {sign} "
        f"{u.format(onset.level)}, a tenth of the way from {u.format(onset.least)} to its best on the grid, "
        f"{u.format(onset.most)})"
    )
    if onset.risk is not None and onset.risk_value is not None:
        r = metric_info(onset.risk)
        said += f"; the {r.label.lower()} reads {r.format(onset.risk_value)} there"
    return said + "."
