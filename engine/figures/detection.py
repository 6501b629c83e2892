"""The detection-quality figure: precision, recall and F2 per identifier type (`engine.text.detection_quality`)."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from plotly.subplots import make_subplots

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
