"""Plotly figures shared by the reviewer report and the dashboard (no Streamlit here).

Every string that comes from the data (names, labels) is HTML-escaped before it reaches Plotly, because
Plotly renders a subset of HTML in text and the data is not ours to trust.
"""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from engine.frontier import frontier
from engine.measures.base import metric_info
from engine.protect import is_method, method_class
from engine.protect.base import Knob
from engine.results import SweepResult

if TYPE_CHECKING:
    from engine.compare import Comparison

UIREVISION = "textsdc"
"""Fixed so that the dashboard keeps the user's zoom and legend choices when a figure is rebuilt."""

TEMPLATE = "plotly_white"
# Every figure is drawn on this template, as plotly's default: a new figure takes the default without checking it
# again, where a template named in a figure's layout is copied and validated (25 ms a figure, seconds for the
# views a page prepares at each knob value).
pio.templates.default = TEMPLATE


def on_our_template() -> None:
    """Make `TEMPLATE` plotly's default again: importing Streamlit after this module sets its own ("streamlit"),
    so a report drawn in such a process would embed another template and replay to other bytes."""
    pio.templates.default = TEMPLATE


TOP_LEGEND = dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0)
"""A legend in one line between the title and the plot, for figures whose slanted category names fill the space
below the plot (the title then needs a taller top margin)."""
FOOT_LEGEND = dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0, xanchor="left")
"""A legend at the foot of the figure, below the axis labels however they slant (placed in the figure's own
coordinates, it makes room for itself): for a figure whose title takes two lines, on which a legend of several
rows between the title and the plot would sit."""
MODEBAR_PX = 34
"""Height of the band at a figure's top where Plotly shows its toolbar when the pointer is over the figure."""

COLOURS: dict[str, str] = {
    "true_positive": "#2ca02c",  # green
    "false_positive": "#d62728",  # red
    "false_negative": "#ff7f0e",  # orange
    "other": "#9e9e9e",  # grey
    "point": "#1f77b4",
    "frontier": "#1f77b4",
    "current": "#d62728",
    "chosen": "#2ca02c",
    "baseline": "#444444",
}

_ATTACK_CATEGORIES: tuple[tuple[str, str, str], ...] = (
    # (category, legend name, marker symbol on top of the bar: shapes as well as colours, as in the paper)
    ("true_positive", "Target picked out correctly (true positive)", "circle"),
    ("false_positive", "Wrong person picked (false positive)", "square"),
    ("false_negative", "Target missed (false negative)", "triangle-up"),
    ("other", "Other released user", "line-ew"),
)


def plain(value: object) -> str:
    return html.escape(str(value), quote=False)


def knob_axis(knob: Knob) -> dict:
    """The x axis of a figure along a knob: its label, symbol, which way is more private, and its scale; a log
    axis ticked at `log_tick_values` and labelled as the slider writes them (1,000,000 and 1e-8, not Plotly's
    "1e+6" or SI "10n")."""
    more = "higher" if knob.more_privacy == "higher" else "lower"
    axis: dict[str, Any] = dict(
        title=f"{plain(knob.label)} ({plain(knob.symbol)}; {more} = more privacy)",
        type="log" if knob.scale == "log" else "linear",
        exponentformat="e",
    )
    if knob.scale == "log" and 0 < knob.low < knob.high:
        values = log_tick_values(knob.low, knob.high)
        axis.update(tickvals=values, ticktext=[knob.format(v) for v in values], automargin=True)  # the last label too
    return axis


def log_tick_values(low: float, high: float) -> list[float]:
    """Ticks of a log axis from ``low`` to ``high`` (> 0): 1, 2 and 5 of each power of ten when the range spans
    under three of them (with powers of ten only, a range of 30 to 900 had one tick, "100"), else the powers of
    ten; one at or below ``low`` and one at or above ``high``."""
    first, last = math.floor(math.log10(low)), math.floor(math.log10(high)) + 1
    steps = (1, 2, 5) if last - first <= 3 else (1,)
    values = [float(f"{m * 10.0**e:.12g}") for e in range(first, last + 1) for m in steps]
    below = [v for v in values if v <= low][-1:]
    above = [v for v in values if v >= high][:1]
    return list(dict.fromkeys(below + [v for v in values if low < v < high] + above))


def vertical(
    fig: go.Figure, x: float, ys: list[float], name: str, colour: str, dash: str = "solid", role: str = ""
) -> None:
    """A vertical marker at knob value ``x`` spanning ``ys``, as a two-point trace (shapes need log10
    coordinates on a log axis); ``role`` ("current", "best") lets the dashboard find it."""
    if not ys:
        return
    fig.add_trace(
        go.Scatter(
            x=[x, x],
            y=[min(ys), max(ys)],
            mode="lines",
            name=name,
            hoverinfo="skip",
            line=dict(color=colour, width=2, dash=dash),
            meta={"role": role, "knob": float(x)},
        )
    )


def current_vertical(fig: go.Figure, knob: Knob, current: float | None, ys: list[float]) -> None:
    """The steward's current knob value as a vertical marker (nothing when there is none)."""
    if current is not None:
        name = f"Current: {plain(knob.symbol)} = {knob.format(current)}"
        vertical(fig, current, ys, name, COLOURS["current"], role="current")


def add_replicate_band(fig: go.Figure, summary: pd.DataFrame) -> None:
    """The shaded 95% range over replicates of a metric's ``summary`` rows (knob, lo, hi) sorted by knob; nothing
    when no row has a range (one replicate)."""
    band = summary.dropna(subset=["lo", "hi"])
    if band.empty:
        return
    fig.add_trace(
        go.Scatter(
            x=band["knob"].tolist() + band["knob"].tolist()[::-1],
            y=band["hi"].tolist() + band["lo"].tolist()[::-1],
            fill="toself",
            fillcolor="rgba(31,119,180,0.18)",
            line=dict(width=0),
            mode="lines",
            name="95% range over replicates",
            hoverinfo="skip",
        )
    )


def _err(mean: pd.Series, lo: pd.Series, hi: pd.Series) -> tuple[list[float], list[float]]:
    """Error-bar lengths above and below the mean; 0 where the interval is unknown."""
    up = (hi - mean).clip(lower=0).fillna(0.0)
    down = (mean - lo).clip(lower=0).fillna(0.0)
    return up.tolist(), down.tolist()


def _row_at(table: pd.DataFrame, knob: float | None) -> pd.Series | None:
    """The grid row at ``knob`` (tolerating float noise); None when the knob is off the grid."""
    if knob is None or table.empty:
        return None
    hit = table[np.isclose(table["knob"].to_numpy(float), float(knob), rtol=1e-9, atol=1e-12)]
    return None if hit.empty else hit.iloc[0]


def uncluttered_labels(
    x: np.ndarray,
    y: np.ndarray,
    labels: list[str],
    extent_x: Sequence[float | None] = (),
    extent_y: Sequence[float | None] = (),
    gap_x: float = 0.1,
    gap_y: float = 0.08,
    min_span: float = 0.0,
) -> list[str]:
    """``labels`` with those of points too close to an already labelled one blanked (first come, first
    labelled), so that knob values whose measures coincide (every ε that releases noise) do not print on top of
    each other. A label is a box wider than tall: two points are too close when they are within ``gap_x`` of
    the x axis's span and ``gap_y`` of the y axis's span of each other — the spans of the points and of what
    else the axes show (``extent_x``, ``extent_y``: a star, error bars), which squeeze the points together, and
    at least ``min_span`` (an axis drawn wider than its values, `MIN_AXIS_SPAN`). Every point keeps its value on
    hover."""
    finite = np.isfinite(x) & np.isfinite(y)

    def span(v: np.ndarray, extent: Sequence[float | None]) -> tuple[float, float]:
        values = [float(a) for a in [*v[finite], *extent] if a is not None and math.isfinite(float(a))]
        if not values:
            return 0.0, 0.0
        low, high = min(values), max(values)
        widened = max(high - low, min_span)
        return (low + high - widened) / 2, widened

    (x0, span_x), (y0, span_y) = span(x, extent_x), span(y, extent_y)
    px = (x - x0) / span_x if span_x > 0 else np.zeros_like(x)
    py = (y - y0) / span_y if span_y > 0 else np.zeros_like(y)
    kept: list[int] = []
    out = []
    for i, label in enumerate(labels):
        close = any(abs(px[i] - px[j]) < gap_x and abs(py[i] - py[j]) < gap_y for j in kept) if finite[i] else True
        out.append("" if close else label)
        if not close:
            kept.append(i)
    return out


def frontier_figure(
    sweep: SweepResult,
    risk: str,
    utility: str,
    current: float | None = None,
    chosen: float | None = None,
) -> go.Figure:
    """Risk (y) against utility (x), one point per knob value; good releases sit at the lower right (each
    axis is reversed where its measure's direction needs it: fmr, where higher is safer, runs downwards).

    The convention of Greve & Sablica (2024, Fig. 1) after Gomatam et al. (2005): the Pareto frontier
    (Eq. 2.7) is drawn as a line; the unprotected data as a star; ``current`` and ``chosen`` knob values,
    when they are on the grid, as large markers.
    """
    knob = sweep.knob
    r_info, u_info = metric_info(risk), metric_info(utility)
    t = frontier(sweep.summary, risk, utility).sort_values("knob").reset_index(drop=True)
    labels = [knob.format(k) for k in t["knob"]]
    r0, u0 = sweep.baseline_value(risk), sweep.baseline_value(utility)
    xs, x_cut = _spanned([*t["utility"], u0], [*t["utility_lo"].dropna(), *t["utility_hi"].dropna()])
    ys, y_cut = _spanned([*t["risk"], r0], [*t["risk_lo"].dropna(), *t["risk_hi"].dropna()])
    ex_up, ex_down = _err(t["utility"], t["utility_lo"], t["utility_hi"])
    ey_up, ey_down = _err(t["risk"], t["risk_lo"], t["risk_hi"])
    hover = (
        f"{plain(knob.symbol)} = %{{customdata}}<br>{plain(u_info.label)}: %{{x:.3f}}"
        f"<br>{plain(r_info.label)}: %{{y:.3f}}<extra></extra>"
    )

    # Each axis is turned by its measure's direction, so better is always to the right and down: a utility
    # where lower is better runs right to left, a risk measure where higher is safer (fmr) top to bottom.
    x_rev, y_rev = u_info.better == "lower", r_info.better == "higher"
    # The chosen and current knob values are drawn as large open markers, their values written beside them
    # (clear of the marker) rather than by the small point's label, which the marker would cover.
    big = [
        (what, symbol, size, row)
        for what, value, symbol, size in (
            ("Chosen", chosen, "diamond-open", 22),
            ("Current", current, "circle-open", 20),
        )
        if (row := _row_at(t, value)) is not None
    ]
    marked = {float(r["knob"]) for *_, r in big}

    fig = go.Figure()
    pareto = t[t["pareto"]].sort_values(["utility", "risk"])
    fig.add_trace(
        go.Scatter(
            x=pareto["utility"],
            y=pareto["risk"],
            mode="lines",
            name="Frontier (not beaten on both measures)",
            line=dict(color=COLOURS["frontier"], width=2, dash="dot"),
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=t["utility"],
            y=t["risk"],
            mode="markers+text",
            name=f"{plain(knob.label)} ({plain(knob.symbol)})",
            text=[
                "" if k in marked else label
                for k, label in zip(
                    t["knob"],
                    uncluttered_labels(
                        t["utility"].to_numpy(float), t["risk"].to_numpy(float), labels, xs, ys, min_span=MIN_AXIS_SPAN
                    ),
                )
            ],
            customdata=labels,
            textposition="top right",
            hovertemplate=hover,
            marker=dict(color=COLOURS["point"], size=9),
            error_x=dict(type="data", array=ex_up, arrayminus=ex_down, thickness=1, width=3, color="#9ab"),
            error_y=dict(type="data", array=ey_up, arrayminus=ey_down, thickness=1, width=3, color="#9ab"),
        )
    )

    if r0 is not None and u0 is not None:
        fig.add_trace(
            go.Scatter(
                x=[u0],
                y=[r0],
                mode="markers",
                name="Unprotected data",
                marker=dict(symbol="star", size=16, color=COLOURS["baseline"]),
                hovertemplate=f"Unprotected data<br>{plain(u_info.label)}: %{{x:.3f}}"
                f"<br>{plain(r_info.label)}: %{{y:.3f}}<extra></extra>",
            )
        )
    elif r0 is not None:
        fig.add_hline(
            y=r0,
            line=dict(color=COLOURS["baseline"], dash="dash", width=1),
            annotation_text="unprotected data",
            annotation_position="top left",
        )
    elif u0 is not None:
        fig.add_vline(
            x=u0,
            line=dict(color=COLOURS["baseline"], dash="dash", width=1),
            annotation_text="unprotected data",
            annotation_position="top right",
        )

    labelled: set[float] = set()
    for what, symbol, size, row in big:
        at = float(row["knob"])
        text = "" if at in labelled else knob.format(at)  # chosen and current at one value: written once
        labelled.add(at)
        fig.add_trace(
            go.Scatter(
                x=[row["utility"]],
                y=[row["risk"]],
                mode="markers+text",
                text=[text],
                textposition=_clear_side(row["utility"], row["risk"], xs, ys, x_rev, y_rev),
                textfont=dict(color=COLOURS[what.lower()], size=13),
                cliponaxis=False,
                name=f"{what}: {plain(knob.symbol)} = {knob.format(at)}",
                marker=dict(symbol=symbol, size=size, color=COLOURS[what.lower()], line=dict(width=3)),
                hovertemplate=f"{what} {plain(knob.symbol)} = {knob.format(at)}<extra></extra>",
                meta={"role": what.lower(), "knob": at},
            )
        )
    oriented_both = "one" not in (u_info.better, r_info.better)
    fig.update_layout(
        uirevision=UIREVISION,
        height=480,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(
            text="Risk against utility" + (": lower right is better" if oriented_both else ""), font=dict(size=15)
        ),
        xaxis=dict(
            title=_axis_title(u_info.label, u_info.better, x_rev),
            **_axis_range(xs, x_rev, LABEL_ROOM, (u_info.low, u_info.high), fixed=x_cut),
        ),
        yaxis=dict(
            title=_axis_title(r_info.label, r_info.better, y_rev),
            **_axis_range(ys, y_rev, bounds=(r_info.low, r_info.high), fixed=y_cut),
        ),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )
    return fig


def _clear_side(x: float, y: float, xs: Sequence[float], ys: Sequence[float], x_rev: bool, y_rev: bool) -> str:
    """Where a large marker's label goes so that the figure's edge does not cut it: above and to the right, but
    to the left of a point in the rightmost fifth of the drawn x axis and below one in the top tenth of the y
    axis (each axis as drawn: a reversed one runs the other way)."""

    def share(v: float, values: Sequence[float], reversed_: bool) -> float:
        finite = [float(a) for a in values if a is not None and math.isfinite(float(a))]
        low, high = (min(finite), max(finite)) if finite else (v, v)
        at = 0.5 if high - low <= 0 else (float(v) - low) / (high - low)
        return 1 - at if reversed_ else at

    vertical = "bottom" if share(y, ys, y_rev) > 0.9 else "top"
    horizontal = "left" if share(x, xs, x_rev) > 0.8 else "right"
    return f"{vertical} {horizontal}"


MIN_AXIS_SPAN = 0.01
"""The least span a frontier's axis shows: values that differ by less (a risk of 0.9999999970 against
0.9999999995) are drawn as one level, not stretched into a slope of rounding noise."""


LABEL_ROOM = 0.1
"""Room at the right of a frontier's x axis, as a share of its values' span, for the knob value written to the
right of the rightmost point (it was cut by the figure's edge)."""


INTERVAL_ROOM = 0.5
"""How far past the points' own span (as a share of it) intervals may widen a frontier's axis."""


def _spanned(points: Sequence[float | None], bounds: Sequence[float]) -> tuple[list[float], bool]:
    """What an axis spans: the ``points`` and their intervals' ``bounds``, a bound no further than
    `INTERVAL_ROOM` of the points' span beyond them (one wide interval running from −12 to 2 would otherwise
    crowd six points into a tenth of the axis; its bar runs on past the edge); also whether a bound was cut so
    (then the axis needs a range of its own: Plotly's would span the whole bar)."""
    finite = [float(v) for v in points if v is not None and math.isfinite(float(v))]
    ends = [float(b) for b in bounds if math.isfinite(float(b))]
    if not finite:
        return ends, False
    low, high = min(finite), max(finite)
    room = INTERVAL_ROOM * max(high - low, MIN_AXIS_SPAN)
    kept = [min(max(b, low - room), high + room) for b in ends]
    return finite + kept, kept != ends


def _axis_range(
    values: Sequence[float],
    reversed_: bool,
    room: float = 0.0,
    bounds: tuple[float, float] | None = None,
    fixed: bool = False,
) -> dict:
    """An axis's range settings: Plotly's own (reversed where better is lower) unless ``values`` span less than
    `MIN_AXIS_SPAN` — then that span around their middle, moved inside the measure's ``bounds`` where the values
    sit at one (a utility of 1.000 is not drawn on an axis running to 1.004) — or ``room`` is asked for, or the
    range is to be ``fixed`` to ``values``: then their span with 5% at the left and ``room`` (or 5%) at the right,
    as drawn."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return {"autorange": "reversed" if reversed_ else True}
    low, high = min(finite), max(finite)
    if high - low < MIN_AXIS_SPAN:
        middle = (high + low) / 2
        low, high = middle - MIN_AXIS_SPAN / 2, middle + MIN_AXIS_SPAN / 2
        if bounds is not None and bounds[1] - bounds[0] >= MIN_AXIS_SPAN:
            shift = max(bounds[0] - low, 0.0) - max(high - bounds[1], 0.0)
            pad = 0.03 * MIN_AXIS_SPAN  # so that a marker at the bound is drawn whole
            low, high = low + shift - pad, high + shift + pad
    elif room or fixed:
        span = high - low
        left, right = 0.05 * span, (room or 0.05) * span
        low, high = (low - right, high + left) if reversed_ else (low - left, high + right)
    else:
        return {"autorange": "reversed" if reversed_ else True}
    return {"range": [high, low] if reversed_ else [low, high]}


METHOD_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
"""One colour per method of a comparison (no red: the frontier's ring is red), and per line elsewhere."""
METHOD_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "star-triangle-up", "x", "pentagon")
MARKER_PX, MARKER_STEP_PX, LINE_STEP_PX = 9, 3.5, 0.75
"""A comparison's last method's marker size, and how much larger each method's marker and wider its line is than
the next one's, drawn over it: two methods whose releases coincide (k-anonymity and redaction that change
little, two text generators) both show, the first as a rim round the second."""
PARETO_RING = "#d62728"
"""The ring around a release on the frontier across methods: a red no method's line has."""
SUBTITLE_WIDTH = 130
"""Characters a line of a comparison's subtitle (why a method is apart) holds at most."""
SUBTITLE_LINE_PX = 17


def _away_from_line(x: np.ndarray, y: np.ndarray, x_rev: bool = False, y_rev: bool = False) -> list[str]:
    """A text position per point of a line that puts each end's label on the side away from its neighbour, as
    drawn (``x_rev``, ``y_rev``: the axis runs the other way)."""
    out = ["top right"] * len(x)
    for end, neighbour in ((0, 1), (len(x) - 1, len(x) - 2)):
        if 0 <= neighbour < len(x) and end != neighbour:
            vertical = "bottom" if (y[neighbour] > y[end]) != y_rev else "top"
            horizontal = "left" if (x[neighbour] > x[end]) != x_rev else "right"
            out[end] = f"{vertical} {horizontal}"
    return out


def methods_frontier_figure(
    sweeps: list[tuple[str, SweepResult]], risk: str, utility: str, apart: Collection[str] = ()
) -> go.Figure:
    """Risk (y) against utility (x) of several methods on the same data, one line per method along its knob
    (Ororbia, Linder & Snoke, Fig. 3), its two ends labelled with their knob values (every point on hover);
    the unprotected data as a star.
    ``sweeps`` pairs each method's title with its sweep; a sweep that did not measure both measures is left
    out. The methods titled in ``apart`` were measured on another task (`engine.compare`): their lines are
    dotted, named so, and their unprotected data is not the star."""
    r_info, u_info = metric_info(risk), metric_info(utility)
    x_rev, y_rev = u_info.better == "lower", r_info.better == "higher"
    fig = go.Figure()
    xs: list[float] = []
    ys: list[float] = []
    baseline = None
    drawn = [(i, title, sweep) for i, (title, sweep) in enumerate(sweeps) if {risk, utility} <= set(sweep.metric_ids)]
    for order, (i, title, sweep) in enumerate(drawn):
        under = len(drawn) - 1 - order  # methods drawn over this one: its marker and line show round theirs
        knob = sweep.knob
        t = frontier(sweep.summary, risk, utility).sort_values("knob").reset_index(drop=True)
        labels = [f"{plain(knob.symbol)} {knob.format(k)}" for k in t["knob"]]
        x, y = t["utility"].to_numpy(float), t["risk"].to_numpy(float)
        xs += list(x)
        ys += list(y)
        other = title in apart
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines+markers+text",
                name=f"{plain(title)} (along {plain(knob.symbol)}{'; another task, not compared' if other else ''})",
                text=labels,
                customdata=labels,
                textposition=_away_from_line(x, y, x_rev, y_rev),
                textfont=dict(size=10, color=METHOD_COLOURS[i % len(METHOD_COLOURS)]),
                hovertemplate=f"{plain(title)}, %{{customdata}}<br>{plain(u_info.label)}: %{{x:.3f}}"
                f"<br>{plain(r_info.label)}: %{{y:.3f}}<extra></extra>",
                line=dict(
                    color=METHOD_COLOURS[i % len(METHOD_COLOURS)],
                    width=1.5 + under * LINE_STEP_PX,
                    dash="dot" if other else None,
                ),
                marker=dict(
                    symbol=METHOD_SYMBOLS[i % len(METHOD_SYMBOLS)] + "-open",
                    size=MARKER_PX + under * MARKER_STEP_PX,
                    line=dict(width=2),
                ),
            )
        )
        r0, u0 = sweep.baseline_value(risk), sweep.baseline_value(utility)
        if baseline is None and not other and r0 is not None and u0 is not None:
            baseline = (u0, r0)
    # Each line's two ends are labelled, thinned over all methods together so that no two labels overlap.
    texts = [label for trace in fig.data for label in trace.text]
    ends = np.array([i in (0, len(trace.text) - 1) for trace in fig.data for i in range(len(trace.text))], dtype=bool)
    shown = np.full(len(texts), "", dtype=object)
    if ends.any():
        drawn_x, drawn_y = [*xs, *(baseline[:1] if baseline else ())], [*ys, *(baseline[1:] if baseline else ())]
        ends_x, ends_y = np.asarray(xs)[ends], np.asarray(ys)[ends]
        shown[ends] = uncluttered_labels(ends_x, ends_y, list(np.asarray(texts)[ends]), drawn_x, drawn_y)
    start = 0
    for trace in fig.data:
        trace.text = list(shown[start : start + len(trace.text)])
        start += len(trace.text)
    if baseline is not None:
        fig.add_trace(
            go.Scatter(
                x=[baseline[0]],
                y=[baseline[1]],
                mode="markers",
                name="Unprotected data",
                marker=dict(symbol="star", size=16, color=COLOURS["baseline"]),
                hovertemplate="Unprotected data<extra></extra>",
            )
        )
    fig.update_layout(
        uirevision=UIREVISION,
        height=520,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text="Methods compared: lower right is better", font=dict(size=15)),
        xaxis=dict(title=_axis_title(u_info.label, u_info.better, x_rev), autorange="reversed" if x_rev else True),
        yaxis=dict(title=_axis_title(r_info.label, r_info.better, y_rev), autorange="reversed" if y_rev else True),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )
    return fig


def comparison_figure(comparison: Comparison, risk: str, utility: str) -> go.Figure:
    """`methods_frontier_figure` of a comparison's methods, with the frontier across methods ringed: the
    (method, knob value) pairs no other pair beats on both measures. A method measured on another task
    (`Comparison.apart`) is drawn dotted, never ringed, and the subtitle says why."""

    titles = {m: method_class(m).title if is_method(m) else m for m in comparison.sweeps}
    apart = comparison.apart(risk, utility)
    fig = methods_frontier_figure(
        [(titles[m], s) for m, s in comparison.sweeps.items()], risk, utility, [titles[m] for m in apart]
    )
    front = comparison.frontier(risk, utility)
    best = front[front["pareto"]]
    names = [
        f"{titles[m]}, {plain(comparison.sweeps[m].knob.symbol)} {comparison.sweeps[m].knob.format(k)}"
        for m, k in zip(best["method"], best["knob"])
    ]
    fig.add_trace(
        go.Scatter(
            x=best["utility"],
            y=best["risk"],
            mode="markers",
            name="Best across methods (no other release has both lower risk and higher utility)",
            customdata=names,
            hovertemplate="%{customdata}: on the frontier across methods<extra></extra>",
            marker=dict(symbol="circle-open", size=20, color=PARETO_RING, line=dict(width=2.5)),
        )
    )
    lines = [
        line
        for why in apart.values()
        for line in textwrap.wrap(plain(why), SUBTITLE_WIDTH, break_long_words=False, break_on_hyphens=False)
    ]
    fig.update_layout(title=dict(text="Methods compared on one frontier: lower right is better"))
    if lines:
        fig.update_layout(
            title=dict(
                subtitle=dict(text="<br>".join(lines), font=dict(size=12)),
                yref="container",
                y=1,
                yanchor="top",
                pad=dict(t=12),
            ),
            height=fig.layout.height + SUBTITLE_LINE_PX * len(lines),
            margin=dict(t=56 + SUBTITLE_LINE_PX * len(lines)),
        )
    return fig


def _axis_title(label: str, better: str, reversed_: bool) -> str:
    """An axis title that says which way is better when the axis is reversed or its ideal is 1."""
    if reversed_:
        return f"{plain(label)} ({better} is better; axis reversed)"
    if better == "one":
        return f"{plain(label)} (closer to 1 is better)"
    return plain(label)


def metric_along_knob_figure(sweep: SweepResult, metric: str, current: float | None = None) -> go.Figure:
    """One metric against the knob: mean over replicates, shaded 95% range, unprotected-data baseline."""
    knob = sweep.knob
    info = metric_info(metric)
    s = sweep.summary[sweep.summary["metric"] == metric].sort_values("knob")
    x = s["knob"].tolist()

    fig = go.Figure()
    add_replicate_band(fig, s)
    fig.add_trace(
        go.Scatter(
            x=x,
            y=s["mean"],
            mode="lines+markers",
            name="Mean over replicates",
            line=dict(color=COLOURS["point"], width=2),
            text=[knob.format(k) for k in x],
            hovertemplate=f"{plain(knob.symbol)} = %{{text}}<br>{plain(info.label)}: %{{y:.3f}}<extra></extra>",
        )
    )
    b = sweep.baseline_value(metric)
    if b is not None and x:
        fig.add_trace(
            go.Scatter(
                x=[min(x), max(x)],
                y=[b, b],
                mode="lines",
                name="Unprotected data",
                line=dict(color=COLOURS["baseline"], dash="dash", width=1.5),
                hovertemplate=f"Unprotected data: {b:.3f}<extra></extra>",
            )
        )
    if x:
        ys = pd.concat([s["lo"], s["hi"], s["mean"]]).dropna().tolist() + ([b] if b is not None else [])
        current_vertical(fig, knob, current, ys)
    fig.update_layout(
        uirevision=UIREVISION,
        height=360,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=plain(info.label), font=dict(size=15)),
        xaxis=knob_axis(knob),
        yaxis_title=f"{plain(info.label)} ({info.better_text})",
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
    )
    return fig


def _sorted_names(values: pd.Series) -> list:
    uniq = list(pd.unique(values))
    try:
        return sorted(uniq)
    except TypeError:
        return sorted(uniq, key=str)


def _attack_category(is_true: bool, is_guess: bool) -> str:
    if is_true and is_guess:
        return "true_positive"
    if is_guess:
        return "false_positive"
    if is_true:
        return "false_negative"
    return "other"


MAX_ATTACK_USERS = 30
MAX_NAMED_USERS = 20
"""A panel of more users draws their bars without their names."""


def _panel_users(d: pd.DataFrame, max_users: int) -> pd.DataFrame:
    """The target, the attacker's guesses and then the highest scores: at most ``max_users`` rows of a panel
    (ties broken by name), so that a panel draws tens of bars, not one per released user."""
    if len(d) <= max_users:
        return d
    rank = d.assign(
        _first=~(d["is_true"].astype(bool) | d["is_guess"].astype(bool)),
        _name=[plain(c) for c in d["candidate"]],
    ).sort_values(["_first", "score", "_name"], ascending=[True, False, True], kind="stable")
    return d.loc[rank.index[:max_users]]


def attack_bars_figure(
    detail: pd.DataFrame,
    targets: list[str] | None = None,
    max_targets: int = 4,
    max_users: int = MAX_ATTACK_USERS,
) -> go.Figure:
    """Per-target attack panels after Ororbia et al. (Fig. 2): one bar per released user.

    A bar's height is the share of that user's records the attacker's classifier assigns to the target
    (Eq. 4); the tallest bar is the attacker's guess. Green: the target picked out correctly; red: a wrong
    person picked; orange: the missed target; grey: everyone else, with zero-score users as dots on the floor.
    With more than ``max_users`` released users a panel shows the target, the guesses and the highest other
    scores, and its x-axis title says how many users are not drawn (the paper's figure has 50 users). A panel's
    title says whether the target was identified, lost in a tie, missed (and for how many others that tie), or
    met no guess at all (no released record classified as theirs).
    """
    if targets is None:
        targets = list(dict.fromkeys(detail["target"]))[:max_targets] if len(detail) else []
    if not targets:
        fig = go.Figure()
        fig.add_annotation(text="No attack detail to show", showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_layout(height=200, xaxis_visible=False, yaxis_visible=False)
        return fig

    cols = 1 if len(targets) == 1 else 2
    rows = math.ceil(len(targets) / cols)
    everyone = [detail[detail["target"] == t] for t in targets]
    panels = [_panel_users(d, max_users) for d in everyone]
    titles = []
    for t, d in zip(targets, everyone):
        hit = d[d["is_true"].astype(bool) & d["is_guess"].astype(bool)]
        n_guess = int(d["is_guess"].astype(bool).sum())
        if n_guess == 0:  # no released record is classified as the target's: the attacker names nobody
            status = "no guess"
        elif hit.empty:
            status = "missed" if n_guess == 1 else f"missed, {n_guess:,} others tie"
        elif n_guess == 1:
            status = "identified"
        else:  # the attacker cannot tell the target from the others that score as high: a 1-in-n guess
            status = f"a 1-in-{n_guess:,} tie"
        titles.append(f"{plain(t)}: {status}")
    # Room between rows for the slanted user names of the row above and the panel titles of the row below.
    row_px, gap_px = 240, 150
    height = rows * row_px + (rows - 1) * gap_px + 190
    spacing = gap_px / (height - 190) if rows > 1 else 0.0
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=spacing, horizontal_spacing=0.08)

    # Traces and axes are gathered and given to the figure at once, not panel by panel (``row=``, ``col=``, which
    # look each axis up again): the same figure, 76 ms instead of 82 for four panels, once per knob value's view.
    def axis(letter: str, k: int) -> str:  # the axis of panel k (0-based, row by row) as a trace names it
        return letter if k == 0 else f"{letter}{k + 1}"

    def layout_key(letter: str, k: int) -> str:
        return f"{letter}axis" if k == 0 else f"{letter}axis{k + 1}"

    traces: list[go.Bar | go.Scatter] = []
    axes: dict[str, dict] = {}
    shown: set[str] = set()
    for i, d in enumerate(panels):
        on = {"xaxis": axis("x", i), "yaxis": axis("y", i)}
        order = [plain(c) for c in _sorted_names(d["candidate"])]
        d = d.assign(
            x=[plain(c) for c in d["candidate"]],
            category=[_attack_category(bool(a), bool(b)) for a, b in zip(d["is_true"], d["is_guess"])],
        )
        for cat, name, symbol in _ATTACK_CATEGORIES:
            sel = d[d["category"] == cat]
            bars = sel[sel["score"] > 0] if cat == "other" else sel
            if not bars.empty:
                traces.append(
                    go.Bar(
                        x=bars["x"],
                        y=bars["score"],
                        name=name,
                        legendgroup=cat,
                        showlegend=cat not in shown,
                        marker_color=COLOURS[cat],
                        width=0.8,
                        meta={"category": cat},
                        hovertemplate="%{x}: %{y:.2f} of records assigned to the target<extra></extra>",
                        **on,
                    )
                )
                if cat != "other":
                    traces.append(
                        go.Scatter(
                            x=bars["x"],
                            y=bars["score"],
                            mode="markers",
                            legendgroup=cat,
                            showlegend=False,
                            marker=dict(symbol=symbol, size=9, color=COLOURS[cat], line=dict(width=1, color="white")),
                            hoverinfo="skip",
                            meta={"category": cat},
                            **on,
                        )
                    )
                shown.add(cat)
            zero = sel[sel["score"] <= 0] if cat == "other" else sel.iloc[0:0]
            if not zero.empty:
                traces.append(
                    go.Scatter(
                        x=zero["x"],
                        y=[0.0] * len(zero),
                        mode="markers",
                        name="No records assigned",
                        legendgroup="zero",
                        showlegend="zero" not in shown,
                        marker=dict(size=4, color=COLOURS["other"]),
                        meta={"category": "zero"},
                        hovertemplate="%{x}: no records assigned to the target<extra></extra>",
                        **on,
                    )
                )
                shown.add("zero")
        # Every name is written (plotly's automatic ticks skip every other one where names crowd), smaller
        # where a panel holds more than ten.
        x_axis = {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": order,
            "showticklabels": len(order) <= MAX_NAMED_USERS,
            "tickmode": "array",
            "tickvals": order,
            "ticktext": order,
            "tickfont": {"size": 12 if len(order) <= 10 else 10},
            "tickangle": -45,
        }
        hidden = len(everyone[i]) - len(d)
        if hidden:
            top = float(everyone[i].drop(index=d.index)["score"].max())
            x_axis["title"] = {
                "text": f"{len(d)} of {len(everyone[i]):,} users; the other {hidden:,} score ≤ {top:.2f}"
            }
        axes[layout_key("x", i)] = x_axis
        axes[layout_key("y", i)] = {"range": [-0.03, 1.05]}
    for k in range(rows * cols):  # every panel of the grid, an empty last one too
        if k % cols == 0:
            axes.setdefault(layout_key("y", k), {})["title"] = {"text": "Share assigned to target"}
        if k // cols == rows - 1 and not any(len(a) > len(b) for a, b in zip(everyone, panels)):
            axes.setdefault(layout_key("x", k), {})["title"] = {"text": "Released users (by name)"}
    fig.add_traces(traces)
    fig.update_layout(
        axes,
        uirevision=UIREVISION,
        barmode="overlay",
        bargap=0.1,
        height=height,
        margin=dict(l=60, r=20, t=116, b=110),
        # The legend above the panels, where no tick label or axis title can run into it, and below the band
        # where Plotly shows its toolbar on hover (it covered the legend's right end).
        legend=dict(orientation="h", yref="container", y=1 - MODEBAR_PX / height, yanchor="top", x=0),
    )
    return fig


COSINE_BIN = 0.05
"""The width of a per-author cosine bar; the last bar, from 1 to 1.05, holds the authors left unchanged."""


def cosine_by_author_figure(detail: pd.DataFrame, metric_label: str, unit: str = "author") -> go.Figure:
    """How the per-author cosine similarity between original and release is spread across authors (``unit``
    "record" for data without an author column, where each record is its own author): bars of `COSINE_BIN`,
    counted here, so that the figure holds 21 bars whatever the number of authors (114,094 authors' values, drawn
    by the browser at each knob move, held the 200,000-post page's moves up 210 ms)."""
    values = pd.to_numeric(detail["cosine"], errors="coerce").dropna()
    edges = np.round(np.arange(0.0, 1.0 + 2 * COSINE_BIN - 1e-9, COSINE_BIN), 10)  # 0, 0.05, …, 1, 1.05
    counts, _ = np.histogram(values.to_numpy(dtype=float), bins=edges)  # [a, b) each; the last [1, 1.05]
    fig = go.Figure(
        go.Bar(
            x=(edges[:-1] + COSINE_BIN / 2).tolist(),
            y=counts.tolist(),
            width=COSINE_BIN,
            customdata=np.column_stack([edges[:-1], edges[1:]]).tolist(),
            marker_color=COLOURS["point"],
            name=f"{unit.capitalize()}s",
            hovertemplate=f"cosine %{{customdata[0]:.2f}}–%{{customdata[1]:.2f}}: %{{y:,}} {unit}(s)<extra></extra>",
        )
    )
    if len(values):
        mean = float(values.mean())
        fig.add_vline(
            x=mean,
            line=dict(color=COLOURS["baseline"], dash="dash"),
            annotation_text=f"average {mean:.3f}",
            annotation_position="top left",
        )
    fig.update_layout(
        uirevision=UIREVISION,
        height=320,
        margin=dict(l=60, r=20, t=40, b=50),
        title=dict(text=f"{plain(metric_label)} per {unit}", font=dict(size=15)),
        xaxis=dict(title=f"{plain(metric_label)} (1 = unchanged)", range=[-0.02, 1.02]),
        yaxis_title=f"{unit.capitalize()}s",
        bargap=0.05,
        showlegend=False,
    )
    return fig


LABEL_COLOURS = ("#ffe08a", "#b9dcff", "#ffc9e3", "#c8efc0", "#e0d2ff", "#ffd3ad", "#c9efee", "#ead8c3")
"""Pale backgrounds for changes coloured by their label (`label_colours`), dark text stays readable on each."""


def label_colours(labels: Sequence[str]) -> dict[str, str]:
    """A background colour per label, in the order given (the palette repeats after eight)."""
    return {label: LABEL_COLOURS[i % len(LABEL_COLOURS)] for i, label in enumerate(labels)}


def highlight_changes(text: str, changes: pd.DataFrame, labels: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Original and protected text of one record as HTML, with each changed span marked.

    ``changes`` holds this record's rows of `Release.changes`; ``start``/``end`` are offsets in ``text`` and
    must not overlap. Everything outside the marks is HTML-escaped, the labels included. With ``labels`` (label
    → what it names, `Protector.change_labels`) each mark is coloured by its label and carries its name as
    ``data-label`` (shown beside the mark by the page's style, not part of the text).
    """
    named = dict(labels or {})
    colours = label_colours(list(named))
    text = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    spans = changes.sort_values(["start", "end"]) if len(changes) else changes
    orig, prot = [], []
    pos = 0
    for row in spans.itertuples(index=False):
        start, end = int(row.start), int(row.end)
        if start < pos or end < start or end > len(text):
            raise ValueError(
                f"change span {start}–{end} overlaps another or lies outside the text (length {len(text)})"
            )
        label = "" if pd.isna(row.label) else str(row.label)
        repl = "" if pd.isna(row.replacement) else str(row.replacement)
        title = html.escape(label, quote=True)
        plain = html.escape(text[pos:start])
        extra = ""
        if label in colours:
            extra = f' data-label="{html.escape(named[label], quote=True)}" style="background:{colours[label]}"'
        orig.append(f'{plain}<mark class="orig" title="{title}"{extra}>{html.escape(text[start:end])}</mark>')
        prot.append(f'{plain}<mark class="repl" title="{title}"{extra}>{html.escape(repl)}</mark>')
        pos = end
    tail = html.escape(text[pos:])
    return "".join(orig) + tail, "".join(prot) + tail
