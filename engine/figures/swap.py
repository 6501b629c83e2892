"""Figures of the named-entity swap along its rate r: what the intruder names before and after the swap (Greve &
Sablica, Tables 2–3) and how many of the chunks unique in the swapped categories a release swapped (the table
behind DR, Eq. 2.16). Both read the per-release detail a sweep keeps for every replicate."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from engine.figures.text import COLOURS, UIREVISION, plain
from engine.results import SweepResult

ATTACK = "swap_attack_accuracy"
RISK = "swap_dr"


def _details(sweep: SweepResult, metric: str) -> pd.DataFrame:
    parts = [d.assign(knob=v) for v in sweep.grid if (d := sweep.detail(v, metric)) is not None and len(d)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _current_line(fig: go.Figure, sweep: SweepResult, current: float | None, low: float, high: float) -> None:
    if current is None:
        return
    knob = sweep.knob
    fig.add_trace(
        go.Scatter(
            x=[current, current],
            y=[low, high],
            mode="lines",
            name=f"Current: {plain(knob.symbol)} = {knob.format(current)}",
            line=dict(color=COLOURS["current"], width=2),
            hoverinfo="skip",
            meta={"role": "current", "knob": float(current)},
        )
    )


def _layout(fig: go.Figure, sweep: SweepResult, title: str, yaxis: str) -> go.Figure:
    knob = sweep.knob
    fig.update_layout(
        uirevision=UIREVISION,
        height=380,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=title, font=dict(size=15)),
        xaxis=dict(title=f"{plain(knob.label)} ({plain(knob.symbol)}; higher = more privacy)"),
        yaxis_title=yaxis,
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
    )
    return fig


def attack_along_rate_figure(sweep: SweepResult, current: float | None = None) -> go.Figure | None:
    """The intruder's accuracy along r: on every attacked chunk, and on the swapped ones before and after the
    swap (means over replicates); None when the sweep kept no attack detail."""
    d = _details(sweep, ATTACK)
    if d.empty:
        return None
    mean = d.groupby(["knob", "chunks"], sort=True)[["accuracy_pre", "accuracy_post", "n", "p_value"]].mean()
    mean = mean.reset_index()
    fig = go.Figure()
    every = mean[mean["chunks"] == "all targets"]
    swapped = mean[(mean["chunks"] == "swapped targets") & (mean["n"] > 0)]
    lines = (
        (every, "accuracy_post", "All attacked chunks, released", COLOURS["point"], "solid"),
        (swapped, "accuracy_pre", "Swapped chunks, before the swap", COLOURS["baseline"], "dash"),
        (swapped, "accuracy_post", "Swapped chunks, after the swap", COLOURS["current"], "solid"),
    )
    for part, column, name, colour, dash in lines:
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["knob"],
                y=part[column],
                mode="lines+markers",
                name=name,
                line=dict(color=colour, dash=dash, width=2),
                customdata=part[["n", "p_value"]].to_numpy(),
                hovertemplate=(
                    f"{plain(sweep.knob.symbol)} = %{{x:.3g}}<br>accuracy %{{y:.3f}} on %{{customdata[0]:.0f}} "
                    "chunks<br>McNemar p = %{customdata[1]:.2g}<extra></extra>"
                ),
            )
        )
    _current_line(fig, sweep, current, 0.0, 1.0)
    fig.update_yaxes(range=[0, 1.02])
    return _layout(fig, sweep, "Protected value named by the intruder", "Share named correctly")


def uniques_figure(sweep: SweepResult, current: float | None = None) -> go.Figure | None:
    """The chunks unique in the swapped categories' table, swapped and not, along r (replicate means); None
    without DR detail."""
    d = _details(sweep, RISK)
    if d.empty:
        return None
    mean = d.groupby("knob", sort=True)[["swapped_uniques", "unswapped_uniques", "sample_uniques"]].mean()
    mean = mean.reset_index()
    fig = go.Figure()
    for column, name, colour in (
        ("swapped_uniques", "Swapped", COLOURS["point"]),
        ("unswapped_uniques", "Not swapped", COLOURS["baseline"]),
    ):
        fig.add_trace(
            go.Bar(
                x=mean["knob"],
                y=mean[column],
                name=name,
                marker_color=colour,
                hovertemplate=f"{plain(sweep.knob.symbol)} = %{{x:.3g}}<br>{name}: %{{y:.1f}} chunks<extra></extra>",
            )
        )
    _current_line(fig, sweep, current, 0.0, float(mean["sample_uniques"].max()))
    fig.update_layout(barmode="stack")
    return _layout(fig, sweep, "Chunks unique in the swapped categories", "Chunks (sample uniques)")
