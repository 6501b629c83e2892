"""The frontier of a plan over the grid of its two knobs: risk (y) against utility (x), one line along the last
step's knob per value of the knob before it (coloured by that value, on a sequential scale from the least to
the most private), the points no other grid point beats on both ringed, and the current point marked."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from engine.figures.text import COLOURS, PARETO_RING, UIREVISION, plain
from engine.measures.base import metric_info
from engine.plan_grid import PlanGrid

SCALE = "Viridis"


def plan_frontier_figure(
    grid: PlanGrid, risk: str, utility: str, current: tuple[float, float] | None = None
) -> go.Figure:
    """The 2-D frontier of ``grid``; ``current`` is the (upstream, last) knob point shown, marked where it is a
    grid point."""
    r_info, u_info = metric_info(risk), metric_info(utility)
    up, knob = grid.upstream, grid.knob
    table = grid.frontier(risk, utility)
    values = sorted(grid.sweeps)
    if up.more_privacy == "lower":
        values = values[::-1]
    colours = sample_colorscale(SCALE, [i / max(len(values) - 1, 1) for i in range(len(values))])
    fig = go.Figure()
    for value, colour in zip(values, colours):
        line = table[table["upstream"] == value].sort_values("knob")
        labels = [f"{plain(up.symbol)} {up.format(value)}, {plain(knob.symbol)} {knob.format(k)}" for k in line["knob"]]
        fig.add_trace(
            go.Scatter(
                x=line["utility"],
                y=line["risk"],
                mode="lines+markers",
                name=f"{plain(up.label)} {up.format(value)} (along {plain(knob.symbol)})",
                customdata=labels,
                hovertemplate=f"%{{customdata}}<br>{plain(u_info.label)}: %{{x:.3f}}<br>{plain(r_info.label)}: "
                "%{y:.3f}<extra></extra>",
                line=dict(color=colour, width=2),
                marker=dict(color=colour, size=7),
            )
        )
    best = table[table["pareto"]]
    fig.add_trace(
        go.Scatter(
            x=best["utility"],
            y=best["risk"],
            mode="markers",
            name="Best over both knobs (no other point has both lower risk and higher utility)",
            hoverinfo="skip",
            marker=dict(symbol="circle-open", size=18, color=PARETO_RING, line=dict(width=2.5)),
        )
    )
    if current is not None:
        at = table[(table["upstream"] == current[0]) & (table["knob"] == current[1])]
        if not at.empty:
            fig.add_trace(
                go.Scatter(
                    x=at["utility"],
                    y=at["risk"],
                    mode="markers",
                    name=f"This release: {plain(up.symbol)} {up.format(current[0])}, "
                    f"{plain(knob.symbol)} {knob.format(current[1])}",
                    hoverinfo="skip",
                    marker=dict(symbol="x", size=14, color=COLOURS["current"], line=dict(width=1)),
                )
            )
    fig.update_layout(
        uirevision=UIREVISION,
        height=520,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(
            text=f"{plain(up.label)} and {plain(knob.label.lower())} together: lower right is better",
            font=dict(size=15),
        ),
        xaxis=dict(title=plain(u_info.label)),
        yaxis=dict(title=plain(r_info.label)),
        legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0),
    )
    return fig
