"""Figures of the k-anonymity method: the sizes of the equivalence classes of the release at the current k (how
many records sit in groups of each size, on a log scale: one group — the posts that state no attribute — is
usually most of the data), from the per-release detail of `smallest_class`."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from engine.figures.text import COLOURS, TEMPLATE, UIREVISION, _plain
from engine.results import SweepResult

SMALLEST = "smallest_class"


def class_size_figure(sweep: SweepResult, current: float | None = None) -> go.Figure | None:
    """Records by the size of their group at the grid value nearest ``current`` (the smallest k when None),
    first replicate; None when the sweep kept no detail."""
    if not sweep.grid:
        return None
    at = min(sweep.grid, key=lambda g: abs(g - (current if current is not None else min(sweep.grid))))
    d = sweep.detail(at, SMALLEST, replicate=0)
    if d is None or not len(d):
        return None
    d = pd.DataFrame(d).sort_values("class_size")
    knob = sweep.knob
    gone = int(d["suppressed"].iloc[0]) if "suppressed" in d.columns else 0
    title = f"Records by the size of their group ({_plain(knob.symbol)} = {knob.format(at)}"
    title += f"; {gone:,} suppressed, not shown)" if gone else ")"
    fig = go.Figure(
        go.Bar(
            x=d["class_size"].astype(str),
            y=d["records"],
            marker_color=COLOURS["point"],
            hovertemplate="groups of %{x}: %{y:,} records<extra></extra>",
            name="records",
        )
    )
    fig.update_layout(
        template=TEMPLATE,
        uirevision=UIREVISION,
        height=340,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(
            text=f"Records by the size of their group ({_plain(knob.symbol)} = {knob.format(at)})", font=dict(size=15)
        ),
        xaxis=dict(title="Records sharing the released attributes (group size)", type="category"),
        yaxis=dict(title="Records (log scale)", type="log"),
        showlegend=False,
    )
    return fig
