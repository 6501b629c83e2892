"""Plotly figures of synthesized counts and amounts (Guo & Hu), shared by the report and the dashboard.

Histograms of the count and densities of the amount, confidential against a few synthetic datasets
(Figs. 1, 7–8); point estimates and 95% intervals with their overlap (Figs. 2–3, 5–6, 9–12); attribute and
identification risk against the confidential data (Tables 3–4); and the risk measures as the intruder's
knowledge gets noisier (Fig. 4). Data-derived strings are HTML-escaped as in `engine.figures.text`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import stats

from engine.figures.field_synthesis import PALETTE
from engine.figures.text import COLOURS, UIREVISION, plain

CONFIDENTIAL = "#222222"


MAX_BINS = 60
"""Most bins a count's histogram draws at the paper's width before it widens them and gathers the long tail."""


def _nice_width(raw: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is at least ``raw``."""
    power = 10.0 ** np.floor(np.log10(raw))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def count_bins(confidential: np.ndarray, synthetic: Sequence[np.ndarray], bin_width: float) -> tuple[np.ndarray, bool]:
    """The bin edges of `count_histogram_figure`, and whether the last bin gathers a long tail. The paper's width
    (25 days of 0–365) where it gives at most `MAX_BINS` bins; a long-tailed count (favourites 0–296,007: 11,841
    bins, every bar too thin to see) gets about 40 bins of a round width up to the confidential 99th
    percentile, and one last bin for every value beyond."""
    lo = float(min([confidential.min(), *[np.min(s) for s in synthetic]]))
    hi = float(max([confidential.max(), *[np.max(s) for s in synthetic]]))
    if (hi - lo) / bin_width <= MAX_BINS:
        edges = np.arange(lo, hi + bin_width, bin_width)
        return (edges if len(edges) >= 2 else np.array([lo, lo + bin_width])), False
    top = max(float(np.quantile(confidential, 0.99)), lo + 1.0)
    width = _nice_width((top - lo) / 40)
    edges = np.arange(lo, top + width, width)
    if edges[-1] < top:
        edges = np.append(edges, edges[-1] + width)
    return np.append(edges, edges[-1] + width), bool(hi >= edges[-1])


def count_histogram_figure(
    confidential: np.ndarray, synthetic: Sequence[np.ndarray], field: str, bin_width: float = 25.0
) -> go.Figure:
    """Histogram outlines of a count field: confidential (filled) and each synthetic dataset (lines), the
    paper's bin width of 25 (Fig. 1, left), wider bins with the tail gathered in the last for a long-tailed
    count (`count_bins`)."""
    conf = np.asarray(confidential, dtype=float)
    edges, tail = count_bins(conf, synthetic, bin_width)
    width = float(edges[1] - edges[0])
    counted = edges.copy()
    if tail:
        counted[-1] = np.inf  # the last bin holds every value from its left edge on
    mids = (edges[:-1] + edges[1:]) / 2
    names = [f"{a:,.0f}–{b:,.0f}" for a, b in zip(edges[:-1], edges[1:])]
    if tail:
        names[-1] = f"{edges[-2]:,.0f} or more"
    fig = go.Figure(
        go.Bar(
            x=mids,
            y=np.histogram(conf, counted)[0],
            width=width,
            name="Confidential",
            marker_color="#cccccc",
            customdata=names,
            hovertemplate="%{customdata}: %{y} records<extra>confidential</extra>",
        )
    )
    for i, s in enumerate(synthetic):
        fig.add_trace(
            go.Scatter(
                x=mids,
                y=np.histogram(np.asarray(s, float), counted)[0],
                mode="lines+markers",
                line=dict(color=PALETTE[i % len(PALETTE)], width=2, shape="hvh"),
                name=f"Synthetic dataset {i + 1}",
                customdata=names,
                hovertemplate="%{customdata}: %{y} records<extra>synthetic " + str(i + 1) + "</extra>",
            )
        )
    bins = f"bins of {width:,g}" + (f"; the last holds {edges[-2]:,.0f} and more" if tail else "")
    fig.update_layout(
        uirevision=UIREVISION,
        height=360,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=f"{plain(field)}: confidential and synthetic", font=dict(size=15)),
        xaxis=dict(title=f"{plain(field)} ({bins})", tickformat=",~g"),  # the title of a half-width chart is short
        yaxis_title="Records",
        bargap=0.05,
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
    )
    return fig


DENSITY_RANGE = (0.005, 0.995)
"""The quantiles of the confidential amounts between which `amount_density_figure` draws its curves."""


def amount_density_figure(confidential: np.ndarray, synthetic: Sequence[np.ndarray], field: str) -> go.Figure:
    """Kernel densities of a positive amount on a log axis: confidential and each synthetic dataset (Fig. 1,
    right). Densities are of log values, so the right tail is visible. They are drawn between the confidential
    `DENSITY_RANGE` quantiles, not from its smallest to its largest value: the curve's ends would otherwise give
    the exact amounts of two records (the report that leaves with the release draws this figure)."""
    conf = np.log(np.asarray(confidential, dtype=float))
    low, high = (float(q) for q in np.quantile(conf, DENSITY_RANGE))
    grid = np.linspace(low, high, 300)
    fig = go.Figure()
    for i, (name, values) in enumerate(
        [("Confidential", conf)]
        + [(f"Synthetic dataset {k + 1}", np.log(np.asarray(s, float))) for k, s in enumerate(synthetic)]
    ):
        density = stats.gaussian_kde(values)(grid) if np.ptp(values) > 0 else np.zeros_like(grid)
        fig.add_trace(
            go.Scatter(
                x=np.exp(grid),
                y=density,
                mode="lines",
                name=name,
                line=dict(
                    color=CONFIDENTIAL if i == 0 else PALETTE[(i - 1) % len(PALETTE)],
                    width=3 if i == 0 else 2,
                    dash="solid" if i == 0 else "dot",
                ),
                hovertemplate="%{x:.4g}: %{y:.3f}<extra>" + plain(name) + "</extra>",
            )
        )
    fig.update_layout(
        uirevision=UIREVISION,
        height=360,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=f"{plain(field)}: density of the logarithm", font=dict(size=15)),
        xaxis=dict(title=f"{plain(field)} (log scale; 0.5% to 99.5% of the confidential values)", type="log"),
        yaxis_title=f"Density of log {plain(field)}",
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
    )
    return fig


def interval_overlap_figure(
    combined: pd.DataFrame, confidential: pd.DataFrame, kinds: Sequence[str] = (), max_rows: int = 40
) -> go.Figure:
    """Per quantity, the synthetic 95% interval combined over the M datasets (Reiter 2003) against the
    confidential one, with the interval overlap I (Eq. 10) in the label (Figs. 2–3). Means, quantiles and
    coefficients live on very different scales, so each is drawn relative to its confidential estimate, in
    confidential standard errors: the confidential interval is always −1.96 to 1.96; hovering shows the values."""
    c = confidential.set_index("quantity")
    rows = combined[combined["quantity"].isin(c.index)]
    if kinds and "kind" in rows.columns:
        rows = rows[rows["kind"].isin(kinds)]
    rows = rows.head(max_rows)
    conf = c.loc[rows["quantity"]]
    se = ((conf["hi"] - conf["lo"]) / (2 * 1.959964)).to_numpy()
    se = np.where(se > 0, se, 1.0)
    centre = conf["estimate"].to_numpy()

    def z(v: pd.Series | np.ndarray) -> np.ndarray:
        return (np.asarray(v, dtype=float) - centre) / se

    labels = [f"{plain(q)}  (I = {o:.2f})" for q, o in zip(rows["quantity"], rows["overlap"])]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.zeros(len(rows)),
            y=labels,
            mode="markers",
            name="Confidential",
            marker=dict(symbol="square", size=10, color=CONFIDENTIAL),
            error_x=dict(
                type="data",
                symmetric=False,
                array=z(conf["hi"]),
                arrayminus=-z(conf["lo"]),
                color=CONFIDENTIAL,
                thickness=2,
            ),
            customdata=np.column_stack([centre, conf["lo"], conf["hi"]]),
            hovertemplate="%{y}<br>confidential %{customdata[0]:.4g} [%{customdata[1]:.4g}, %{customdata[2]:.4g}]"
            "<extra></extra>",
        )
    )
    zs = z(rows["estimate"])
    fig.add_trace(
        go.Scatter(
            x=zs,
            y=labels,
            mode="markers",
            name="Synthetic, combined over the datasets",
            marker=dict(symbol="x", size=10, color=COLOURS["point"]),
            error_x=dict(
                type="data",
                symmetric=False,
                array=z(rows["hi"]) - zs,
                arrayminus=zs - z(rows["lo"]),
                color=COLOURS["point"],
                thickness=2,
            ),
            customdata=np.column_stack([rows["estimate"], rows["lo"], rows["hi"]]),
            hovertemplate="%{y}<br>synthetic %{customdata[0]:.4g} [%{customdata[1]:.4g}, %{customdata[2]:.4g}]"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        uirevision=UIREVISION,
        height=140 + 30 * max(len(rows), 1),
        margin=dict(l=20, r=20, t=40, b=70),
        title=dict(text="95% intervals and their overlap I (1 = the same interval)", font=dict(size=15)),
        xaxis=dict(title="Difference from the confidential estimate, in confidential standard errors", zeroline=True),
        yaxis=dict(autorange="reversed", automargin=True),
        legend=dict(orientation="h", yanchor="top", y=-0.35 if len(rows) < 8 else -0.1, x=0),
    )
    return fig


def risk_against_confidential_figure(
    synthetic: pd.DataFrame, confidential: dict[str, float], labels: dict[str, str], title: str
) -> go.Figure:
    """Bars of risk measures in the release (mean with its 95% range over the datasets) against the same
    measure on the confidential data (stars) — Tables 3–4 as a picture. ``synthetic`` has metric, mean, lo, hi."""
    s = synthetic.set_index("metric")
    ids = [m for m in labels if m in s.index]
    names = _short_names([plain(labels[m]) for m in ids])
    mean = s.loc[ids, "mean"].to_numpy()
    fig = go.Figure(
        go.Bar(
            x=names,
            y=mean,
            name="Synthetic release",
            marker_color=COLOURS["point"],
            error_y=dict(
                type="data",
                symmetric=False,
                array=s.loc[ids, "hi"].to_numpy() - mean,
                arrayminus=mean - s.loc[ids, "lo"].to_numpy(),
            ),
            hovertemplate="%{x}: %{y:.4g}<extra>synthetic</extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=names,
            y=[confidential.get(m, np.nan) for m in ids],
            mode="markers",
            name="Confidential data",
            marker=dict(symbol="star", size=14, color=COLOURS["true_positive"], line=dict(width=1, color="white")),
            hovertemplate="%{x}: %{y:.4g}<extra>confidential</extra>",
        )
    )
    fig.update_layout(
        uirevision=UIREVISION,
        height=340,
        margin=dict(l=60, r=20, t=40, b=60),
        title=dict(text=plain(title), font=dict(size=15)),
        xaxis=dict(automargin=True, tickangle=0),
        yaxis=dict(rangemode="tozero"),
        legend=dict(orientation="h", yanchor="top", y=-0.3, x=0),
    )
    return fig


def _short_names(names: list[str]) -> list[str]:
    """Labels without the words they share ("Attribute risk AR (count ±5, amount ±5%)" and the like become
    "count ±5<br>amount ±5%"), so that they fit under their bars; the title says what they share."""
    if len(names) < 2:
        return names
    shared = os.path.commonprefix(names)
    if "(" not in shared:
        return names
    cut = shared.rindex("(") + 1
    return [n[cut:].removesuffix(")").replace(", ", "<br>") or n for n in names]


CURVE_PANELS = (
    ("emr", "Expected match risk (EMR)"),
    ("tmr", "True match rate (TMR)"),
    ("fmr", "False match rate (FMR)"),
    ("unique_matches", "Unique matches"),
)


def uncertainty_curves_figure(curves: pd.DataFrame, current_s: float | None = None) -> go.Figure:
    """EMR, TMR, FMR and unique matches against the intruder's uncertainty S (Guo & Hu, Fig. 4), synthetic
    (mean over datasets, band = range) and confidential. ``curves`` has columns data, S, emr, tmr, fmr,
    unique_matches (several rows per S for the synthetic datasets)."""
    fig = make_subplots(
        rows=2, cols=2, subplot_titles=[t for _, t in CURVE_PANELS], horizontal_spacing=0.12, vertical_spacing=0.24
    )
    for k, (col, _) in enumerate(CURVE_PANELS):
        r, c = divmod(k, 2)
        for data, colour in (("synthetic", COLOURS["point"]), ("confidential", CONFIDENTIAL)):
            g = curves[curves["data"] == data].groupby("S")[col]
            if g.ngroups == 0:
                continue
            mean, lo, hi = g.mean(), g.min(), g.max()
            if data == "synthetic" and (hi > lo).any():
                fig.add_trace(
                    go.Scatter(
                        x=list(mean.index) + list(mean.index[::-1]),
                        y=list(hi) + list(lo[::-1]),
                        fill="toself",
                        line=dict(width=0),
                        fillcolor="rgba(31,119,180,0.15)",
                        hoverinfo="skip",
                        showlegend=False,
                    ),
                    row=r + 1,
                    col=c + 1,
                )
            fig.add_trace(
                go.Scatter(
                    x=mean.index,
                    y=mean,
                    mode="lines+markers",
                    name=data.capitalize(),
                    line=dict(color=colour, width=2),
                    showlegend=k == 0,
                    legendgroup=data,
                    hovertemplate="S = %{x:.2f}: %{y:.4g}<extra>" + data + "</extra>",
                ),
                row=r + 1,
                col=c + 1,
            )
        if current_s is not None:
            fig.add_vline(x=current_s, line=dict(color=COLOURS["current"], dash="dash"), row=r + 1, col=c + 1)
    fig.update_xaxes(title_text="Intruder uncertainty S")
    fig.update_layout(
        uirevision=UIREVISION,
        height=640,
        margin=dict(l=60, r=20, t=70, b=60),
        title=dict(text="Identification risk as the intruder's knowledge gets noisier (Eq. 11)", font=dict(size=15)),
        legend=dict(orientation="h", yanchor="top", y=-0.12, x=0),
    )
    return fig
