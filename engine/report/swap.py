"""The named-entity swap's report section: the chunks unique in the swapped categories, and the share of the
protected value an intruder names, along the swap rate r with the released rate marked (Greve & Sablica, Eq.
2.16 and Table 2). The Protect page shows the same figures beside its frontier."""

from __future__ import annotations

import plotly.graph_objects as go

from engine.figures.swap import attack_along_rate_figure, uniques_figure
from engine.report.sections import ReportSection
from engine.results import SweepResult


class SwapSection(ReportSection):
    id = "swap"
    title = "The swap along r: unique chunks and the intruder"
    measures = ("swap_dr", "swap_attack_accuracy")

    @classmethod
    def figures(cls, sweep: SweepResult, at: float) -> list[tuple[str, go.Figure]]:
        drawn = [
            ("swap-uniques", uniques_figure(sweep, at) if "swap_dr" in sweep.metric_ids else None),
            (
                "swap-attack",
                attack_along_rate_figure(sweep, at) if "swap_attack_accuracy" in sweep.metric_ids else None,
            ),
        ]
        return [(key, fig) for key, fig in drawn if fig is not None]
