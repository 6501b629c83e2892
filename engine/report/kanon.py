"""The k-anonymity method's report section: the sizes of the groups at the released k, and how well the tagger
that found the quasi-identifiers does on held-out gold posts (how far to trust the k, which holds over the
attributes found). The Protect page shows the same figures beside its frontier."""

from __future__ import annotations

import plotly.graph_objects as go

from engine.figures.kanon import class_size_figure, tagger_quality_figure
from engine.protect.kanon.gold import LABEL_NAMES
from engine.protect.kanon.tagger import held_out_quality
from engine.report.sections import ReportSection
from engine.results import SweepResult


class KanonSection(ReportSection):
    id = "kanon"
    title = "k-anonymity: the tagger's quality and the groups"
    measures = ("qi_unique_share", "smallest_class")

    @classmethod
    def figures(cls, sweep: SweepResult, at: float) -> list[tuple[str, go.Figure]]:
        out = [("kanon-tagger-quality", tagger_quality_figure(held_out_quality(), LABEL_NAMES))]
        sizes = class_size_figure(sweep, at) if "smallest_class" in sweep.metric_ids else None
        return out + ([("kanon-group-sizes", sizes)] if sizes is not None else [])
