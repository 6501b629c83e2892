"""The detection-quality figures: precision, recall and F2 per identifier type on a gold file
(`engine.text.detection_quality`), and precision against recall per type as its threshold moves, on a steward's
annotated records (`engine.annotation.thresholds`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.annotation.thresholds import TypeCurve
from engine.figures.text import UIREVISION
from engine.text.detection_quality import DetectionQuality

TYPE_NAMES = {
    "ALL": "All types",
    "NORP": "Nationalities, religious, political groups",
    "CREATIVE_WORK": "Creative works",
    "CREDIT_CARD": "Card numbers",
    "US_SSN": "US Social Security numbers",
    "IBAN": "IBANs",
    "DATE": "Dates",
    "PERSON": "Person names",
    "LOCATION": "Places",
    "ORGANIZATION": "Organizations",
    "PRODUCT": "Products",
    "EVENT": "Events",
    "IP_ADDRESS": "IP addresses",
    "STREET_ADDRESS": "Street addresses",
    "URL": "URLs",
    "EMAIL": "E-mail addresses",
    "PHONE": "Phone numbers",
    "HANDLE": "@handles",
    "HASHTAG": "#hashtags",
}


def type_name(kind: str) -> str:
    """How a scored type reads in a figure: `TYPE_NAMES`, else the type in sentence case ("Person")."""
    return TYPE_NAMES.get(kind, kind.replace("_", " ").capitalize())


_SCORES = (("precision", "Precision", "#1f77b4"), ("recall", "Recall", "#ff7f0e"), ("f2", "F2", "#2ca02c"))


def detection_figure(quality: DetectionQuality, level: str = "token") -> go.Figure:
    """One panel per type (all types first), bars of precision, recall and F2 at ``level`` ("token" or
    "span"); a score a type cannot have (recall of a type no gold span has) is left out and said so."""
    table = quality.table
    n = len(table)
    cols = min(4, n)
    rows = math.ceil(n / cols)
    titles = [
        f"{type_name(t)}<br><sup>{g:,} gold, {f:,} found tokens</sup>"
        for t, g, f in zip(table["type"], table["gold_tokens"], table["found_tokens"])
    ]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, vertical_spacing=0.16, horizontal_spacing=0.06)
    for i, row in enumerate(table.itertuples(index=False)):
        r, c = divmod(i, cols)
        for key, name, colour in _SCORES:
            value = getattr(row, f"{level}_{key}")
            shown = not (isinstance(value, float) and math.isnan(value))
            fig.add_trace(
                go.Bar(
                    x=[name],
                    y=[value if shown else 0.0],
                    marker_color=colour,
                    name=name,
                    text=[f"{value:.2f}" if shown else "n/a"],
                    textposition="outside",
                    cliponaxis=False,
                    hovertemplate=f"{row.type} {name.lower()}: "
                    + (f"{value:.3f}" if shown else "no such tokens")
                    + "<extra></extra>",
                ),
                row=r + 1,
                col=c + 1,
            )
    fig.update_yaxes(range=[0, 1.15], tickvals=[0, 0.5, 1], showgrid=True)
    fig.update_layout(
        uirevision=UIREVISION,
        height=240 * rows + 80,
        margin=dict(l=40, r=20, t=90, b=30),
        title=dict(text=f"Detection quality per type, {level} level", font=dict(size=15)),
        showlegend=False,  # each bar is named on its axis
        bargap=0.3,
    )
    fig.update_annotations(font_size=12)
    return fig


def precision_recall_figure(curves: Sequence[TypeCurve], chosen: Mapping[str, float] | None = None) -> go.Figure:
    """One panel per type: precision against recall on the steward's annotated records as the type's threshold
    rises (`engine.annotation.thresholds`), each point's Wilson intervals as error bars and its threshold beside
    it; the point at the type's ``chosen`` threshold (default: the one it runs with) ringed. A threshold that finds
    nothing (no precision) is a hollow point on the recall axis. A type the detector does not score is one point,
    said so under its title."""
    chosen = dict(chosen or {})
    n = max(1, len(curves))
    cols = min(3, n)
    rows = math.ceil(n / cols)
    titles = [f"{type_name(c.label)}<br><sup>{'scored' if c.scored else 'not scored: one point'}</sup>" for c in curves]
    fig = make_subplots(
        rows=rows, cols=cols, subplot_titles=titles or None, vertical_spacing=0.22, horizontal_spacing=0.1
    )
    for i, curve in enumerate(curves):
        r, c = divmod(i, cols)
        shown = [p for p in curve.points if p.recall.total or p.precision.total]
        xs = [p.recall.value if p.recall.total else 0.0 for p in shown]
        # a threshold that finds nothing has no precision: drawn on the axis, hollow
        ys = [p.precision.value if p.precision.total else 0.0 for p in shown]
        hollow = [not p.precision.total for p in shown]
        fig.add_trace(  # the curve joins the thresholds that find something (no line to one without precision)
            go.Scatter(
                x=[x for x, h in zip(xs, hollow) if not h],
                y=[y for y, h in zip(ys, hollow) if not h],
                mode="lines",
                line=dict(color="#1f77b4", width=1.5),
                hoverinfo="skip",
                showlegend=False,
            ),
            row=r + 1,
            col=c + 1,
        )
        bounds = [(p.recall.interval(), p.precision.interval()) for p in shown]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers+text" if curve.scored else "markers",
                marker=dict(size=7, color="#1f77b4", symbol=["circle-open" if h else "circle" for h in hollow]),
                text=[f"{p.threshold:g}" if curve.scored else "" for p in shown],
                textposition="top right",
                textfont=dict(size=10),
                cliponaxis=False,
                error_x=dict(
                    type="data",
                    symmetric=False,
                    array=[hi - x if hi == hi else 0.0 for x, ((_, hi), _) in zip(xs, bounds)],
                    arrayminus=[x - lo if lo == lo else 0.0 for x, ((lo, _), _) in zip(xs, bounds)],
                    thickness=1,
                    color="#9ecae1",
                ),
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[hi - y if hi == hi else 0.0 for y, (_, (_, hi)) in zip(ys, bounds)],
                    arrayminus=[y - lo if lo == lo else 0.0 for y, (_, (lo, _)) in zip(ys, bounds)],
                    thickness=1,
                    color="#9ecae1",
                ),
                customdata=[
                    [p.recall.text(), p.precision.text() if p.precision.total else "– (none found)"] for p in shown
                ],
                hovertemplate=(f"{type_name(curve.label)}" + (", threshold %{text}" if curve.scored else ""))
                + "<br>recall %{customdata[0]}<br>precision %{customdata[1]}<extra></extra>",
                showlegend=False,
            ),
            row=r + 1,
            col=c + 1,
        )
        at = chosen.get(curve.label, curve.current)
        if at is not None and shown:
            point = curve.at(at)
            if point in shown:
                k = shown.index(point)
                fig.add_trace(
                    go.Scatter(
                        x=[xs[k]],
                        y=[ys[k]],
                        mode="markers",
                        marker=dict(size=15, color="rgba(0,0,0,0)", line=dict(width=2, color="#d62728")),
                        hoverinfo="skip",
                        showlegend=False,
                    ),
                    row=r + 1,
                    col=c + 1,
                )
    fig.update_xaxes(range=[-0.05, 1.1], tickvals=[0, 0.5, 1], tickformat=".0%", title_text="Recall", showgrid=True)
    fig.update_yaxes(range=[-0.05, 1.15], tickvals=[0, 0.5, 1], tickformat=".0%", title_text="Precision")
    fig.update_layout(
        uirevision=UIREVISION,
        height=260 * rows + 90,
        margin=dict(l=60, r=30, t=90, b=50),
        title=dict(text="Precision and recall per type on your annotated records", font=dict(size=15)),
    )
    fig.update_annotations(font_size=12)
    return fig
