"""A toy report section written the way a contributor would add one: a module with a `ReportSection`,
registered in one line (by the tests that use it). It draws, along the knob, the unigram similarity the text
methods measure, and says how many records the release holds."""

from __future__ import annotations

import plotly.graph_objects as go

from engine.figures.text import metric_along_knob_figure
from engine.report.context import ReleaseReport, escaped
from engine.report.sections import ReportSection
from engine.results import SweepResult


class WordsKeptSection(ReportSection):
    id = "toy-words-kept"
    title = "Words kept (toy)"
    measures = ("unigram_cosine",)

    @classmethod
    def figures(cls, sweep: SweepResult, at: float) -> list[tuple[str, go.Figure]]:
        return [("toy-words-kept", metric_along_knob_figure(sweep, "unigram_cosine", current=at))]

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        records = f"The toy section of a release of {len(report.release.data):,} records."
        return [*super().html(report, internal), f"<p>{escaped(records)}</p>"]
