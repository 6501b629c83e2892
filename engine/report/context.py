"""What a report is written from (`ReleaseReport`): the release's record and what was measured beside it, and
how a report draws a figure (`figure_html`)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from engine.data.dataset import Dataset
from engine.measures.base import MetricResult
from engine.protect.base import Knob, Release
from engine.record.manifest import ReleaseRecord
from engine.results import SweepResult

FIGURE_WIDTH = 720
"""Pixels. A report's figures are drawn once at this width, which fits a printed Letter or A4 page, and never
again. A figure that followed its container was drawn anew when printing widened the page (the print style
lifts the body's width limit), and the PDF held the one drawing or the other by timing: two clean-clone test
runs printed other bytes on replay."""


@dataclass(frozen=True)
class ReleaseReport:
    """One release as its reports show it.

    ``record`` is what the manifest says (dataset, method, knob, seed, measures with intervals, warnings, decision,
    replay command); ``metrics`` the same measures with their per-record detail; ``point`` the measurement at the
    released knob (model size along the knob, measures not taken and how each was taken); ``sweep`` the
    measurement along the whole grid, when the report draws the frontier; ``records`` the sample records the
    internal review shows (`engine.report.samples.sample_records`); ``risk_metric`` and ``utility_metric`` the
    frontier's axes (default: the first of each kind measured).
    """

    record: ReleaseRecord
    dataset: Dataset
    release: Release
    metrics: Mapping[str, MetricResult]
    knob: Knob | None = None
    point: SweepResult | None = None
    sweep: SweepResult | None = None
    records: tuple[int, ...] = ()
    risk_metric: str | None = None
    utility_metric: str | None = None

    @property
    def complexity(self) -> pd.DataFrame | None:
        """A synthesizer's model size along the knob (non-zero coefficients, splits), when measured."""
        return next(
            (r.complexity for r in (self.point, self.sweep) if r is not None and r.complexity is not None), None
        )

    @property
    def along(self) -> SweepResult | None:
        """The measurement a figure along the knob draws: the whole grid when swept, else the released knob."""
        return self.sweep if self.sweep is not None else self.point

    @property
    def curves(self) -> pd.DataFrame | None:
        """The identification risks along the intruder's uncertainty S at the released knob (Guo & Hu, Eq. 11)."""
        if self.point is None:
            return None
        return self.point.uncertainty_curves([min(self.point.grid, key=lambda g: abs(g - self.release.knob))])

    @property
    def skipped(self) -> Mapping[str, str]:
        """The measures that could not apply, with the reason."""
        return {} if self.point is None else self.point.skipped

    @property
    def notes(self) -> Mapping[str, str]:
        """How each measure was taken on this data, where the data decided it."""
        return {} if self.point is None else self.point.notes


def escaped(value: Any) -> str:
    """``value`` as text safe inside HTML (quotes included)."""
    return html.escape(str(value), quote=True)


FIGURE_DIV = '<div class="figure">'
"""How each figure of a report begins (`figure_html`): the report holds Plotly.js only when one is drawn."""


def figure_html(fig: go.Figure, div_id: str) -> str:
    """A Plotly figure as the report holds it: drawn once at `FIGURE_WIDTH`, with a fixed div id (the same inputs
    give the same bytes)."""
    fixed = go.Figure(fig).update_layout(width=FIGURE_WIDTH, autosize=False)
    body = fixed.to_html(
        full_html=False, include_plotlyjs=False, div_id=div_id, config={"displaylogo": False, "responsive": False}
    )
    return f"{FIGURE_DIV}{body}</div>"
