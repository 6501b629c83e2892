"""The parts of the reviewer report that are particular to field synthesis (GLM λ, CART α).

Model size along the knob, the pMSE ratio along the knob and the knob it recommends (λ*, with the high and low
comparison points), per-target identification probabilities against the unprotected data, the utility
tables of Schneider, Hu, Mankad & Bale (2023) and sample records with their confidential and synthetic values.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.figures.field_synthesis import (
    cell_difference_figure,
    complexity_figure,
    content_correlation_figure,
    identification_bars_figure,
    pmse_ratio_figure,
    prevalence_figure,
)
from engine.frontier import select_by_pmse_ratio
from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult
from engine.measures.utility.pmse import projection_interval
from engine.measures.utility.topics import content_by_topic, prevalence_intervals
from engine.protect.base import Knob, Release
from engine.protect.field_synthesis.sequential import FieldDraws
from engine.report.context import ReleaseReport, figure_html
from engine.report.sections import ReportSection
from engine.results import SweepResult

TEXT_EXCERPT = 300


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _n(v: float | None, digits: int = 3) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.{digits}f}"


def _detail(metrics: Mapping[str, MetricResult], mid: str) -> pd.DataFrame | None:
    m = metrics.get(mid)
    return None if m is None else m.detail


class FieldSynthesisSection(ReportSection):
    """What a synthesis of categorical fields did: model size and the pMSE ratio along the knob, the utility
    tables, and (internal review only) the identification probability of each named target."""

    id = "field-synthesis"
    title = "The synthesizer along the knob"

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        return report.release.detail(FieldDraws) is not None or report.complexity is not None

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        return synthesis_sections(
            release=report.release,
            metrics=report.metrics,
            sweep=report.sweep,
            complexity=report.complexity,
            knob=report.knob,
            per_target=internal,
        )


def synthesis_sections(
    *,
    release: Release,
    metrics: Mapping[str, MetricResult],
    sweep: SweepResult | None,
    complexity: pd.DataFrame | None,
    knob: Knob | None,
    per_target: bool = False,
) -> list[str]:
    """HTML sections about a synthesis release. ``per_target`` adds the identification probability of each
    named target (internal review report only)."""
    figure = figure_html
    out: list[str] = []
    choice = None
    if sweep is not None and "pmse_ratio" in sweep.metric_ids:
        choice = select_by_pmse_ratio(sweep.summary, sweep.knob.symbol)
    if complexity is not None and len(complexity) and knob is not None:
        out.append(f"<h2>The synthesizer along {_e(knob.symbol)}</h2>")
        out.append(
            figure(
                complexity_figure(complexity, knob, current=release.knob, best=None if choice is None else choice.best),
                "fig-complexity",
            )
        )
    if choice is not None and sweep is not None:
        sym = _e(sweep.knob.symbol)
        out.append(f"<h2>Choosing {sym}: the pMSE ratio</h2>")
        out.append(
            f"<p>{sym}* = {_e(sweep.knob.format(choice.best))}: {_e(choice.why)}. For comparison, {sym}<sup>h</sup> = {_e(sweep.knob.format(choice.high))} "
            f"(most private evaluated) and {sym}<sup>l</sup> = {_e(sweep.knob.format(choice.low))} "
            f"(least private). This release uses {sym} = {_e(sweep.knob.format(release.knob))}.</p>"
        )
        out.append(figure(pmse_ratio_figure(sweep, choice, current=release.knob), "fig-pmse-ratio"))
    ident = _detail(metrics, "identification_probability") if per_target else None
    if ident is not None and len(ident):
        out.append("<h2>Identification probability per target</h2>")
        out.append(
            "<p>For each target the intruder holds another text by, the probability she puts on the "
            "target's own record after matching the released fields and weighting by writing style "
            "(bars, mean over the target's records and the replicate releases), against the same on the "
            "unprotected data (stars).</p>"
        )
        out.append(
            figure(
                identification_bars_figure(ident, _detail(metrics, "identification_probability" + CONFIDENTIAL_SUFFIX)),
                "fig-identification",
            )
        )
    out.extend(_utility_tables(metrics))
    return out


def _utility_tables(metrics: Mapping[str, MetricResult]) -> list[str]:
    figure = figure_html
    out: list[str] = []
    rows = []
    pmse = _detail(metrics, "pmse_ratio")
    if pmse is not None and len(pmse):
        mean, lo, hi = projection_interval(pmse)
        rows.append(
            (
                "pMSE ratio (mean over projections; 95% range over projections of the replicate mean)",
                f"{_n(mean)} [{_n(lo)}, {_n(hi)}]",
            )
        )
    for mid, label in (
        ("cell_difference_1way", "Sum of absolute relative differences, one-way tables"),
        ("cell_difference_2way", "Sum of absolute relative differences, two-way tables"),
        ("confidential_value_rate", "Share of synthesized values equal to the confidential value"),
    ):
        m = metrics.get(mid)
        if m is not None:
            rows.append((label, _n(m.value)))
    if rows:
        out.append("<h2>Utility of the synthetic fields</h2>")
        out.append(
            "<table>" + "".join(f'<tr><th>{_e(a)}</th><td class="num">{_e(b)}</td></tr>' for a, b in rows) + "</table>"
        )
    one, two = _detail(metrics, "cell_difference_1way"), _detail(metrics, "cell_difference_2way")
    if one is not None or two is not None:
        out.append(figure(cell_difference_figure(one, two), "fig-cell-differences"))
    content = _detail(metrics, "topic_content_correlation")
    if content is not None and len(content):
        per = content_by_topic(content)
        out.append("<h3>Topic content correlation (Eq. 5), averaged over levels and replicates</h3>")
        out.append(
            "<table><tr><th>Field</th><th>Topic</th><th>Top words</th><th>Correlation</th></tr>"
            + "".join(
                f'<tr><td>{_e(r.field)}</td><td class="num">{r.topic}</td><td>{_e(r.topic_words)}</td>'
                f'<td class="num">{_n(r.correlation)}</td></tr>'
                for r in per.itertuples(index=False)
            )
            + "</table>"
        )
        out.append(figure(content_correlation_figure(content), "fig-content-correlation"))
    prev = _detail(metrics, "topic_prevalence_ratio")
    conf = _detail(metrics, "topic_prevalence_ratio" + CONFIDENTIAL_SUFFIX)
    if prev is not None and conf is not None and len(prev):
        combined = prevalence_intervals(prev)
        c = conf[conf["chosen"]] if "chosen" in conf.columns else conf
        if len(combined):
            field, level = combined["field"].iloc[0], combined["level"].iloc[0]
            merged = combined.merge(c[["topic", "estimate", "variance"]], on="topic", suffixes=("", "_confidential"))
            out.append(f"<h3>Topic prevalence coefficient of {_e(field)} = {_e(level)} (Table 4)</h3>")
            out.append(
                "<table><tr><th>Topic</th><th>Top words</th><th>Confidential [95% CI]</th>"
                "<th>Synthetic, combined [95% CI]</th><th>Ratio</th></tr>"
                + "".join(
                    f'<tr><td class="num">{r.topic}</td><td>{_e(r.topic_words)}</td>'
                    f'<td class="num">{_n(r.estimate_confidential)} [{_n(r.estimate_confidential - 1.96 * np.sqrt(r.variance_confidential))}, '
                    f"{_n(r.estimate_confidential + 1.96 * np.sqrt(r.variance_confidential))}]</td>"
                    f'<td class="num">{_n(r.estimate)} [{_n(r.lo)}, {_n(r.hi)}]</td>'
                    f'<td class="num">{_n(r.estimate / r.estimate_confidential if r.estimate_confidential else float("nan"), 2)}</td></tr>'
                    for r in merged.itertuples(index=False)
                )
                + "</table>"
            )
            out.append(figure(prevalence_figure(c, combined), "fig-prevalence"))
    return out


def synthesis_samples(dataset: Dataset, release: Release, records: Sequence[int]) -> str:
    """Sample ``records`` (Table 6): an excerpt of the text, then per synthesized field the confidential value,
    the released value and the probability the synthesizer gave the confidential value."""
    draws = release.detail(FieldDraws)
    if draws is None or not records:
        return ""
    detail = draws.table
    fields = list(dict.fromkeys(detail["field"]))
    wide = detail.pivot(index="record", columns="field")
    head = "".join(f"<th>{_e(f)}: confidential → released (probability of confidential)</th>" for f in fields)
    rows = []
    for rec in sorted(records):
        text = str(dataset.frame[dataset.schema.text].iloc[rec])
        excerpt = text if len(text) <= TEXT_EXCERPT else text[:TEXT_EXCERPT] + "…"
        cells = "".join(
            f"<td>{_e(wide.loc[rec, ('original', f)])} → <b>{_e(wide.loc[rec, ('synthetic', f)])}</b> "
            f"({100 * float(wide.loc[rec, ('p_original', f)]):.1f}%)</td>"
            for f in fields
        )
        rows.append(f'<tr><td class="num">{rec + 1}</td><td>{_e(excerpt)}</td>{cells}</tr>')
    return (
        f"<p>The sample records the dashboard shows (rows counted from 1). The text is released "
        f"unchanged.</p><table><tr><th>Row</th><th>Text</th>{head}</tr>" + "".join(rows) + "</table>"
    )
