"""Plotly figures of the field synthesizers (GLM λ, CART α), shared by the report and the dashboard.

After Schneider, Hu, Mankad & Bale (2023): model size along the knob (Fig. 2), the pMSE ratio along the knob
with λ* (Fig. 3, Table 1), cell-difference densities (Fig. 4), topic content correlations (Figs. 5–6), the
topic prevalence coefficients with their intervals (Table 4) and per-target identification probabilities,
confidential against synthetic (Figs. 7–8). Data-derived strings are HTML-escaped as in `engine.figures.text`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from engine.figures.text import (
    COLOURS,
    FOOT_LEGEND,
    METHOD_COLOURS,
    TOP_LEGEND,
    UIREVISION,
    add_replicate_band,
    current_vertical,
    knob_axis,
    plain,
    vertical,
)
from engine.frontier import PmseChoice
from engine.measures.risk.identification import by_target
from engine.protect.base import Knob
from engine.results import SweepResult

PALETTE = list(METHOD_COLOURS)


def complexity_figure(
    complexity: pd.DataFrame, knob: Knob, current: float | None = None, best: float | None = None
) -> go.Figure:
    """Model size along the knob, one line per synthesized field (Schneider et al. 2023, Fig. 2)."""
    fig = go.Figure()
    what = str(complexity["what"].iloc[0]) if len(complexity) else "model size"
    for i, (field, g) in enumerate(complexity.groupby("field", sort=False)):
        g = g.sort_values("knob")
        fig.add_trace(
            go.Scatter(
                x=g["knob"],
                y=g["size"],
                mode="lines",
                name=f"{plain(field)} model",
                line=dict(color=PALETTE[i % len(PALETTE)], width=2),
                hovertemplate=f"{plain(knob.symbol)} = %{{x:.3g}}<br>{plain(what)}: %{{y}}<extra>{plain(field)}</extra>",
            )
        )
    ys = complexity["size"].tolist()
    if best is not None:
        vertical(fig, best, ys, f"{plain(knob.symbol)}* = {knob.format(best)}", COLOURS["chosen"], "dash", "best")
    current_vertical(fig, knob, current, ys)
    fig.update_layout(
        uirevision=UIREVISION,
        height=340,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=f"Model size along {plain(knob.symbol)}: {plain(what)}", font=dict(size=15)),
        xaxis=knob_axis(knob),
        yaxis_title=plain(what).capitalize(),
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
    )
    return fig


def pmse_ratio_figure(sweep: SweepResult, choice: PmseChoice | None = None, current: float | None = None) -> go.Figure:
    """Mean pMSE ratio along the knob with its 95% range over replicates, the ideal ratio 1 and λ*."""
    knob = sweep.knob
    s = sweep.summary[sweep.summary["metric"] == "pmse_ratio"].sort_values("knob")
    fig = go.Figure()
    add_replicate_band(fig, s)
    fig.add_trace(
        go.Scatter(
            x=s["knob"],
            y=s["mean"],
            mode="lines+markers",
            name="Mean pMSE ratio",
            line=dict(color=COLOURS["point"]),
            hovertemplate=f"{plain(knob.symbol)} = %{{x:.3g}}<br>pMSE ratio %{{y:.3f}}<extra></extra>",
        )
    )
    if len(s):
        fig.add_trace(
            go.Scatter(
                x=[s["knob"].min(), s["knob"].max()],
                y=[1, 1],
                mode="lines",
                name="Ratio 1: synthetic like confidential",
                hoverinfo="skip",
                line=dict(color=COLOURS["baseline"], dash="dash", width=1.5),
            )
        )
    ys = pd.concat([s["lo"], s["hi"], s["mean"]]).dropna().tolist() + [1.0]
    if choice is not None:
        vertical(
            fig,
            choice.best,
            ys,
            f"{plain(knob.symbol)}* = {knob.format(choice.best)} (closest to 1)",
            COLOURS["chosen"],
            "dash",
            "best",
        )
    current_vertical(fig, knob, current, ys)
    fig.update_layout(
        uirevision=UIREVISION,
        height=360,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text="pMSE ratio: below 1 over-fits, above 1 under-fits", font=dict(size=15)),
        xaxis=knob_axis(knob),
        yaxis=dict(title="pMSE ratio", type="log" if (s["mean"] > 0).all() and len(s) else "linear"),
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
    )
    return fig


def identification_bars_figure(
    synthetic: pd.DataFrame, confidential: pd.DataFrame | None, max_targets: int = 30, title: str = ""
) -> go.Figure:
    """Per target, the identification probability in the release (bar, mean over records and replicates)
    against the unprotected data (star), as the paper's Figs. 7–8; targets most at risk first."""
    syn = by_target(synthetic)
    conf = by_target(confidential) if confidential is not None and len(confidential) else pd.Series(dtype=float)
    order = (conf.reindex(syn.index).fillna(0) if len(conf) else syn).sort_values(ascending=False).index[:max_targets]
    names = [plain(t) for t in order]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=syn.reindex(order).to_numpy(),
            name="Protected release",
            marker_color=COLOURS["point"],
            hovertemplate="%{x}: %{y:.3f}<extra>protected release</extra>",
        )
    )
    if len(conf):
        fig.add_trace(
            go.Scatter(
                x=names,
                y=conf.reindex(order).to_numpy(),
                mode="markers",
                name="Unprotected data",
                marker=dict(symbol="star", size=13, color=COLOURS["true_positive"], line=dict(width=1, color="white")),
                hovertemplate="%{x}: %{y:.3f}<extra>unprotected data</extra>",
            )
        )
    shown = f" (the {len(order)} most at risk of {len(syn)})" if len(syn) > len(order) else ""
    fig.update_layout(
        uirevision=UIREVISION,
        height=420,
        margin=dict(l=70, r=20, t=72, b=40),
        title=dict(text=plain(title or "Identification probability per target") + shown, font=dict(size=15)),
        xaxis=dict(title="Target", type="category", tickangle=-45, showticklabels=len(order) <= 40, automargin=True),
        yaxis=dict(title="Probability on the target's record", rangemode="tozero"),
        legend=TOP_LEGEND,  # below the plot it would sit on the slanted target names
    )
    return fig


def cell_difference_figure(one_way: pd.DataFrame | None, two_way: pd.DataFrame | None) -> go.Figure:
    """How the relative cell differences are spread over the cells of the one-way and two-way tables, all
    replicates together (the paper's Fig. 4 draws their densities; a violin with every cell as a dot)."""
    fig = go.Figure()
    for name, d, colour in (("One-way tables", one_way, PALETTE[0]), ("Two-way tables", two_way, PALETTE[1])):
        if d is None or d.empty:
            continue
        fig.add_trace(
            go.Violin(
                y=d["relative_difference"],
                name=name,
                box_visible=True,
                meanline_visible=True,
                points="all",
                jitter=0.4,
                pointpos=0,
                marker=dict(size=3, opacity=0.5),
                line_color=colour,
                text=[plain(f"{t}: {c}") for t, c in zip(d["table"], d["cell"])],
                hovertemplate="%{text}<br>relative difference %{y:.3f}<extra></extra>",
            )
        )
    fig.add_hline(y=0, line=dict(color=COLOURS["baseline"], dash="dash", width=1))
    fig.update_layout(
        uirevision=UIREVISION,
        height=360,
        margin=dict(l=60, r=20, t=40, b=40),
        showlegend=False,
        title=dict(text="Relative cell differences (0 = same count)", font=dict(size=15)),
        yaxis_title="(synthetic − confidential) / confidential",
    )
    return fig


def _topic_labels(detail: pd.DataFrame) -> dict[int, str]:
    if "topic_words" in detail.columns:
        pairs = detail[["topic", "topic_words"]].drop_duplicates().itertuples(index=False)
        return {int(t): f"T{int(t)}: {', '.join(str(w).split(', ')[:2])}" for t, w in pairs}
    return {int(t): f"Topic {int(t)}" for t in detail["topic"].unique()}


def content_correlation_figure(detail: pd.DataFrame) -> go.Figure:
    """Average content correlation per topic and field (Eq. 5), with each level's value as a dot."""
    fig = go.Figure()
    per_level = detail.groupby(["field", "level", "topic"], sort=True)["correlation"].mean().reset_index()
    labels = _topic_labels(detail)
    for i, (field, g) in enumerate(per_level.groupby("field", sort=False)):
        colour = PALETTE[i % len(PALETTE)]
        mean = g.groupby("topic")["correlation"].mean()
        fig.add_trace(
            go.Bar(
                x=[plain(labels[t]) for t in mean.index],
                y=mean.to_numpy(),
                name=f"{plain(field)}: mean over levels",
                marker_color=colour,
                opacity=0.75,
                hovertemplate="%{x}: %{y:.3f}<extra>" + plain(field) + "</extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[plain(labels[t]) for t in g["topic"]],
                y=g["correlation"],
                mode="markers",
                name=f"{plain(field)}: each level",
                marker=dict(color=colour, size=7, line=dict(width=1, color="white")),
                text=[plain(v) for v in g["level"]],
                hovertemplate="%{text}: %{y:.3f}<extra></extra>",
            )
        )
    fig.update_layout(
        uirevision=UIREVISION,
        barmode="group",
        height=440,
        margin=dict(l=60, r=20, t=76, b=20),
        title=dict(
            text="Topic content correlation, confidential vs synthetic<br>(1 = same words per level)",
            font=dict(size=15),
        ),
        xaxis=dict(automargin=True),
        yaxis=dict(
            title="Correlation",
            range=[min(0.0, float(np.nanmin(per_level["correlation"])) if len(per_level) else 0.0), 1.02],
        ),
        legend=FOOT_LEGEND,  # a legend of two rows per field would sit on the two-line title
    )
    return fig


def prevalence_figure(confidential: pd.DataFrame, combined: pd.DataFrame) -> go.Figure:
    """The chosen level's prevalence coefficient per topic: confidential estimate with its OLS interval against
    the synthetic estimate combined over replicates with its 95% interval (Table 4)."""
    fig = go.Figure()
    topics = sorted(combined["topic"].unique())
    names = _topic_labels(combined)
    labels = [plain(names[int(t)]) for t in topics]
    c = confidential.set_index("topic").reindex(topics)
    s = combined.set_index("topic").reindex(topics)
    half = 1.96 * np.sqrt(c["variance"].to_numpy())
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=c["estimate"],
            mode="markers",
            name="Confidential data",
            marker=dict(symbol="star", size=13, color=COLOURS["true_positive"]),
            error_y=dict(type="data", array=half, arrayminus=half, thickness=1.5),
            hovertemplate="%{x}: %{y:.3f}<extra>confidential</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=labels,
            y=s["estimate"],
            mode="markers",
            name="Synthetic, combined over replicates",
            marker=dict(size=10, color=COLOURS["point"]),
            error_y=dict(
                type="data",
                array=(s["hi"] - s["estimate"]).to_numpy(),
                arrayminus=(s["estimate"] - s["lo"]).to_numpy(),
                thickness=1.5,
            ),
            hovertemplate="%{x}: %{y:.3f}<extra>synthetic</extra>",
        )
    )
    fig.add_hline(y=0, line=dict(color="#999", width=1))
    level = f"{combined['field'].iloc[0]} = {combined['level'].iloc[0]}" if len(combined) else ""
    fig.update_layout(
        uirevision=UIREVISION,
        height=360,
        margin=dict(l=60, r=20, t=40, b=90),
        title=dict(text=f"Topic prevalence coefficient of {plain(level)} (95% intervals)", font=dict(size=15)),
        yaxis_title="Coefficient on the topic's share",
        legend=dict(orientation="h", yanchor="top", y=-0.3, x=0),
    )
    return fig
