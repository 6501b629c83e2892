"""The parts of the reviewer report particular to synthesized counts and amounts (Guo & Hu).

The synthetic distributions against the confidential ones, estimates with intervals and their overlap,
attribute and identification risk against the confidential data, the risk curves in the intruder's
uncertainty S, and — for a posterior-sampling method — the MCMC convergence diagnostics.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.figures.bayes_counts import (
    amount_density_figure,
    count_histogram_figure,
    interval_overlap_figure,
    risk_against_confidential_figure,
    uncertainty_curves_figure,
)
from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult, metric_info
from engine.measures.bayes_counts import ATTRIBUTE_RISK_METRICS, IDENTIFICATION_METRICS
from engine.measures.utility.combining import combine_table
from engine.measures.utility.inference import interval_overlap
from engine.protect.base import Release
from engine.protect.bayes_counts.count_bayes import PosteriorDraw
from engine.report.context import ReleaseReport, figure_html
from engine.report.sections import ReportSection


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _n(v: float | None, digits: int = 4) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.{digits}g}"


def combined_intervals(detail: pd.DataFrame) -> pd.DataFrame:
    """Synthetic estimates of every quantity combined over the replicate datasets (Reiter 2003) with the
    overlap (Eq. 10) of the combined interval and the confidential one."""
    combined = combine_table(detail, ["quantity"])
    first = detail.drop_duplicates("quantity").set_index("quantity")
    combined["kind"] = first.loc[combined["quantity"], "kind"].to_numpy()
    combined["overlap"] = interval_overlap(
        first.loc[combined["quantity"], "confidential_lo"].to_numpy(),
        first.loc[combined["quantity"], "confidential_hi"].to_numpy(),
        combined["lo"].to_numpy(),
        combined["hi"].to_numpy(),
    )
    return combined


def confidential_intervals(detail: pd.DataFrame) -> pd.DataFrame:
    first = detail.drop_duplicates("quantity")
    return pd.DataFrame(
        {
            "quantity": first["quantity"],
            "estimate": first["confidential_estimate"],
            "lo": first["confidential_lo"],
            "hi": first["confidential_hi"],
        }
    )


def risk_rows(metrics: Mapping[str, MetricResult], ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "metric": m,
                "mean": metrics[m].value,
                "lo": metrics[m].lo if metrics[m].lo is not None else metrics[m].value,
                "hi": metrics[m].hi if metrics[m].hi is not None else metrics[m].value,
            }
            for m in ids
            if m in metrics
        ],
        columns=["metric", "mean", "lo", "hi"],
    )


class CountsSection(ReportSection):
    """What a synthesis of counts and amounts did (Guo & Hu): the synthetic distributions, the estimates and their
    overlap, the risks against the confidential data and along the intruder's uncertainty, MCMC convergence."""

    id = "counts"
    title = "Synthetic distributions"

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        return bool(synthesized_numbers(report.dataset, report.release))

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        return numeric_sections(report.dataset, report.release, report.metrics, report.curves)


def synthesized_numbers(dataset: Dataset, release: Release) -> list[str]:
    """The count and continuous fields the release replaced."""
    schema = dataset.schema
    return [
        f
        for f in release.protected_columns
        if f in schema.field_names and schema.field(f).kind in ("count", "continuous")
    ]


def numeric_sections(
    dataset: Dataset,
    release: Release,
    metrics: Mapping[str, MetricResult],
    curves: pd.DataFrame | None,
) -> list[str]:
    """HTML sections about a release of synthesized counts and amounts."""
    figure = figure_html
    out: list[str] = []
    schema, frame = dataset.schema, dataset.frame
    fields = synthesized_numbers(dataset, release)
    if not fields:
        return out
    out.append("<h2>Synthetic distributions</h2>")
    for f in fields:
        conf, syn = frame[f].to_numpy(float), release.data[f].to_numpy(float)
        if schema.field(f).kind == "count":
            out.append(figure(count_histogram_figure(conf, [syn], f), f"fig-histogram-{f}"))
        elif (conf > 0).all() and (syn > 0).all():
            out.append(figure(amount_density_figure(conf, [syn], f), f"fig-density-{f}"))
    overlap = metrics.get("ci_overlap")
    if overlap is not None and overlap.detail is not None and len(overlap.detail):
        combined = combined_intervals(overlap.detail)
        conf = confidential_intervals(overlap.detail)
        out.append("<h2>Estimates and their interval overlap (Eq. 10)</h2>")
        out.append(
            "<p>Synthetic estimates are combined over the synthetic datasets with the partial-synthesis "
            "rules (Reiter 2003). I is the interval overlap: 1 for the same interval, 0 or below for "
            "none.</p>"
        )
        out.append(figure(interval_overlap_figure(combined, conf), "fig-interval-overlap"))
        merged = combined.merge(conf, on="quantity", suffixes=("", "_confidential"))
        out.append(
            "<table><tr><th>Quantity</th><th>Confidential [95% CI]</th><th>Synthetic, combined [95% CI]</th>"
            "<th>Overlap I</th></tr>"
            + "".join(
                f'<tr><td>{_e(r.quantity)}</td><td class="num">{_n(r.estimate_confidential)} '
                f'[{_n(r.lo_confidential)}, {_n(r.hi_confidential)}]</td><td class="num">{_n(r.estimate)} '
                f'[{_n(r.lo)}, {_n(r.hi)}]</td><td class="num">{_n(r.overlap, 3)}</td></tr>'
                for r in merged.itertuples(index=False)
            )
            + "</table>"
        )
    base = {m.removesuffix(CONFIDENTIAL_SUFFIX): v.value for m, v in metrics.items() if m.endswith(CONFIDENTIAL_SUFFIX)}
    # Each figure keeps measures of one scale: sums over records, counts of records, rates.
    sections = (
        (
            ATTRIBUTE_RISK_METRICS,
            "Attribute disclosure risk AR (sum over records)",
            [(ATTRIBUTE_RISK_METRICS, "fig-ar")],
        ),
        (
            IDENTIFICATION_METRICS,
            "Identification disclosure risk",
            [(["emr", "unique_matches"], "fig-identification-counts"), (["tmr", "fmr"], "fig-identification-rates")],
        ),
    )
    for ids, title, figures in sections:
        rows = risk_rows(metrics, ids)
        if rows.empty:
            continue
        out.append(f"<h2>{_e(title)}</h2>")
        out.append(
            "<table><tr><th>Measure</th><th>Synthetic (mean [95% range])</th><th>Confidential</th></tr>"
            + "".join(
                f'<tr><td>{_e(metric_info(r.metric).label)}</td><td class="num">{_n(r.mean)} [{_n(r.lo)}, {_n(r.hi)}]</td>'
                f'<td class="num">{_n(base.get(r.metric))}</td></tr>'
                for r in rows.itertuples(index=False)
            )
            + "</table>"
        )
        for shown, div in figures:
            part = rows[rows["metric"].isin(shown)]
            if len(part):
                out.append(
                    figure(
                        risk_against_confidential_figure(part, base, {m: metric_info(m).label for m in shown}, title),
                        div,
                    )
                )
    if curves is not None:
        out.append("<h2>Identification risk under intruder uncertainty (Section 4.3)</h2>")
        out.append(
            "<p>The intruder's knowledge of a key count is perturbed as in Eq. 11 with level S; a noisier "
            "intruder should find fewer true matches (EMR, TMR fall) and more false ones (FMR rises).</p>"
        )
        out.append(figure(uncertainty_curves_figure(curves), "fig-uncertainty"))
    draw = release.detail(PosteriorDraw)
    diag = None if draw is None else draw.diagnostics
    if diag is not None and len(diag):
        poor = diag[diag["poor"]]
        out.append("<h2>MCMC convergence</h2>")
        out.append(
            f"<p>Split R-hat and effective sample size of every parameter at this setting (Gelman et al. "
            f"2013). Largest R-hat {_n(diag['rhat'].max())}, smallest effective sample size "
            f"{_n(diag['ess'].min())}.</p>"
        )
        if len(poor):
            out.append(
                f'<div class="warning">{len(poor)} parameter(s) mixed poorly (R-hat above 1.05 or fewer than '
                "100 effective draws): " + _e(", ".join(poor["parameter"])) + ". Sample longer chains "
                "(--draws) before relying on this release.</div>"
            )
        out.append(
            "<table><tr><th>Parameter</th><th>Posterior mean</th><th>sd</th><th>R-hat</th><th>ESS</th></tr>"
            + "".join(
                f'<tr><td>{_e(r.parameter)}</td><td class="num">{_n(r.mean)}</td>'
                f'<td class="num">{_n(r.sd)}</td><td class="num">{_n(r.rhat)}</td>'
                f'<td class="num">{_n(r.ess, 3)}</td></tr>'
                for r in diag.itertuples(index=False)
            )
            + "</table>"
        )
    return out


def numeric_samples(dataset: Dataset, release: Release, records: Sequence[int]) -> str:
    """Sample records: the text excerpt and, per synthesized count or amount, confidential → released."""
    schema = dataset.schema
    fields = synthesized_numbers(dataset, release)
    if not fields or not records:
        return ""
    rows = []
    for rec in records:
        text = str(dataset.frame[schema.text].iloc[rec])[:200]
        cells = "".join(
            f'<td class="num">{_e(dataset.frame[f].iloc[rec])} → <b>{_e(release.data[f].iloc[rec])}</b></td>'
            for f in fields
        )
        rows.append(f'<tr><td class="num">{rec + 1}</td><td>{_e(text)}</td>{cells}</tr>')
    head = "".join(f"<th>{_e(f)}: confidential → released</th>" for f in fields)
    return (
        f"<p>The sample records the dashboard shows (rows counted from 1); the text and the predictors are "
        "released unchanged.</p>"
        f"<table><tr><th>Row</th><th>Text</th>{head}</tr>" + "".join(rows) + "</table>"
    )
