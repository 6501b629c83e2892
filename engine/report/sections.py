"""Report sections as plug-ins: what a method family or a measure adds to the reviewer report, between the
summary and the table of measures. A section is a `ReportSection` subclass declared beside the figures it draws
and listed once in `engine.report.registry.SECTIONS` (the order there is the report's).

A section applies to a release that carries a detail naming it (`ReleaseDetail.section`) or for which one of its
``measures`` was measured; `figures` draws what it shows along the knob — the same function the method's page
calls (`engine.report.registry.page_figures`), so the steward and the reviewer see the same figures — and `html` writes the section.
"""

from __future__ import annotations

from abc import ABC
from typing import TYPE_CHECKING, ClassVar

import plotly.graph_objects as go

from engine.report.context import ReleaseReport, escaped, figure_html

if TYPE_CHECKING:
    from engine.results import SweepResult


class ReportSection(ABC):
    """One section of the reviewer report.

    ``id`` names it (a `ReleaseDetail.section` names the section that shows it); ``measures`` are the measures
    whose detail it draws; ``internal_only`` sections hold record-level detail and appear in the steward's
    internal review report only. By default a section writes its `figures` at the released knob under its
    ``title``; a section with more to say overrides `html`.
    """

    id: ClassVar[str]
    title: ClassVar[str]
    measures: ClassVar[tuple[str, ...]] = ()
    internal_only: ClassVar[bool] = False

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        """Whether the section belongs in this release's report."""
        if any(d.section == cls.id for d in report.release.details):
            return True
        return any(m in report.metrics for m in cls.measures)

    @classmethod
    def figures(cls, sweep: SweepResult, at: float) -> list[tuple[str, go.Figure]]:
        """The figures the section draws from ``sweep`` with the knob value ``at`` marked, each with a key (its
        report div is ``fig-<key>``); none by default."""
        return []

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        """The section's HTML parts; by default its title and its `figures` at the released knob."""
        along = report.along
        drawn = [] if along is None else cls.figures(along, report.release.knob)
        if not drawn:
            return []
        return [f"<h2>{escaped(cls.title)}</h2>", *(figure_html(fig, f"fig-{key}") for key, fig in drawn)]
