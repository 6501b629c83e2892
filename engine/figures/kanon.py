"""Figures of the k-anonymity method: the sizes of the equivalence classes of the release at the current k (how
many records sit in groups of each size, on a log scale: one group — the posts that state no attribute — is
usually most of the data), from the per-release detail of `smallest_class`; and the privacy-attribute tagger's
quality per label on held-out gold posts, as a table (how far to trust what the method found)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from engine.figures.text import COLOURS, UIREVISION, log_tick_values, plain
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
    title = f"Records by the size of their group ({plain(knob.symbol)} = {knob.format(at)}"
    title += f"; {gone:,} suppressed, not shown)" if gone else ")"
    fig = go.Figure(
        go.Bar(
            x=[f"{int(v):,}" for v in d["class_size"]],
            y=d["records"],
            marker_color=COLOURS["point"],
            hovertemplate="groups of %{x}: %{y:,} records<extra></extra>",
            name="records",
        )
    )
    fig.update_layout(
        uirevision=UIREVISION,
        height=340,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=title, font=dict(size=15)),
        xaxis=dict(title="Records sharing the released attributes (group size)", type="category"),
        yaxis=dict(
            title="Records (log scale)", type="log", **log_ticks(int(d["records"].min()), int(d["records"].max()))
        ),
        showlegend=False,
    )
    return fig


def log_ticks(low: int, high: int) -> dict:
    """Tick values and labels of a log axis of counts from ``low`` to ``high`` (`log_tick_values`), labelled with
    thousands separators."""
    values = [int(v) for v in log_tick_values(max(1, low), max(1, high))]
    return {"tickvals": values, "ticktext": [f"{v:,}" for v in values]}


PAPER_MACRO_F1 = 0.74
"""Abeywardana & Thayasivam, Table 5: their decision tree's macro F1 on 3,000 annotated tweets."""


def _f1_colour(f1: float) -> str:
    """A cell background that says how far to trust a label: red below 0.5, amber below 0.7, else green."""
    return "#fde0dc" if f1 < 0.5 else "#fff1cc" if f1 < 0.7 else "#dff3dc"


def tagger_quality_figure(table: pd.DataFrame, names: dict[str, str]) -> go.Figure:
    """Per label: what it marks, precision, recall, F1 and held-out tokens (``table``: `tagger.quality_table`'s rows,
    NONE among them as the paper's Table 5 has it, the macro row last), F1 cells coloured by how far to trust
    them."""
    rows = table[table["support"] > 0]
    labels = [str(x) for x in rows["label"]]
    what = [names.get(x, {"NONE": "no attribute", "macro": "mean over the rows above"}.get(x, x)) for x in labels]
    f1 = rows["f1"].astype(float).tolist()
    macro = float(rows.loc[rows["label"] == "macro", "f1"].iloc[0]) if "macro" in labels else float("nan")
    white = ["white"] * len(labels)
    fig = go.Figure(
        go.Table(
            columnwidth=[70, 150, 70, 70, 60, 90],
            header=dict(
                values=["Label", "What it marks", "Precision", "Recall", "F1", "Held-out tokens"],
                fill_color="#f0f2f6",
                align="left",
                font=dict(size=13),
            ),
            cells=dict(
                values=[
                    labels,
                    what,
                    [f"{v:.2f}" for v in rows["precision"]],
                    [f"{v:.2f}" for v in rows["recall"]],
                    [f"{v:.2f}" for v in f1],
                    [f"{int(v):,}" for v in rows["support"]],
                ],
                fill_color=[white, white, white, white, [_f1_colour(v) for v in f1], white],
                align="left",
                font=dict(size=13),
                height=26,
            ),
        )
    )
    fig.update_layout(
        height=90 + 26 * (len(labels) + 1),
        margin=dict(l=10, r=10, t=60, b=10),
        title=dict(
            text=(
                f"How far to trust the extraction: the tagger on held-out gold posts<br><sup>macro F1 {macro:.2f} "
                f"(the paper's {PAPER_MACRO_F1:.2f} on 3,000 tweets); what it misses stays in the text as written</sup>"
            ),
            font=dict(size=15),
        ),
    )
    return fig
