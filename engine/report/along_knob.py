"""The report sections every method has: risk and utility along the knob (the frontier, when the grid was
swept), and — in the internal review only — how the attack went for named targets and the utility per author."""

from __future__ import annotations

from engine.figures.text import attack_bars_figure, cosine_by_author_figure, frontier_figure, metric_along_knob_figure
from engine.measures.base import CONFIDENTIAL_SUFFIX, metric_info
from engine.report.context import ReleaseReport, escaped, figure_html
from engine.report.samples import attack_targets
from engine.report.sections import ReportSection
from engine.results import SweepResult


def default_metric(sweep: SweepResult, kind: str) -> str | None:
    """The first measure of ``kind`` (risk or utility) the sweep measured, in the registry's order."""
    for m in sweep.metric_ids:
        if not m.endswith(CONFIDENTIAL_SUFFIX) and metric_info(m).kind == kind:
            return m
    return None


def frontier_axes(report: ReleaseReport) -> tuple[str, str] | None:
    """The risk and the utility measure the report's frontier is drawn on; None when it draws none (the grid was
    not swept, or not both kinds were measured)."""
    if report.sweep is None:
        return None
    risk = report.risk_metric or default_metric(report.sweep, "risk")
    utility = report.utility_metric or default_metric(report.sweep, "utility")
    return (risk, utility) if risk and utility else None


class AlongKnobSection(ReportSection):
    """The frontier and the chosen risk and utility measures along the knob, when the whole grid was swept."""

    id = "along-knob"
    title = "Risk and utility across the knob"

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        return report.sweep is not None

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        sweep, knob = report.sweep, report.release.knob
        if sweep is None:
            return []
        out = []
        risk = report.risk_metric or default_metric(sweep, "risk")
        utility = report.utility_metric or default_metric(sweep, "utility")
        axes = frontier_axes(report)
        if axes is not None:
            out.append(f"<h2>{escaped(cls.title)}</h2>")
            out.append(figure_html(frontier_figure(sweep, *axes, chosen=knob), "fig-frontier"))
        for mid, div in ((risk, "fig-risk-along-knob"), (utility, "fig-utility-along-knob")):
            if mid:
                out.append(figure_html(metric_along_knob_figure(sweep, mid, current=knob), div))
        return out


class PerTargetSection(ReportSection):
    """For the steward's eyes: the intruder's scores on named targets and the utility per author."""

    id = "per-target"
    title = "How the attack went"
    internal_only = True

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        return any(m.detail is not None for m in report.metrics.values())

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        out = []
        for mid, m in report.metrics.items():
            d = m.detail
            if d is None or mid.endswith(CONFIDENTIAL_SUFFIX):
                continue
            if "replicate" in d.columns and {"target", "candidate"} <= set(d.columns):
                d = d[d["replicate"] == d["replicate"].min()]
            if {"target", "candidate", "score", "is_true", "is_guess"} <= set(d.columns):
                out.append(f"<h2>{escaped(cls.title)}: {escaped(metric_info(mid).label)}</h2>")
                out.append(figure_html(attack_bars_figure(d, attack_targets(d)), f"fig-attack-{mid}"))
            elif {"author", "cosine"} <= set(d.columns):
                out.append(figure_html(cosine_by_author_figure(d, metric_info(mid).label), f"fig-cosine-{mid}"))
        return out
