"""Every report section, registered in one line each; the order here is the order of the report
(`engine.report.sections.ReportSection`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import plotly.graph_objects as go

from engine.report.along_knob import AlongKnobSection, PerTargetSection
from engine.report.annotation import AnnotatedDetectionSection
from engine.report.attacks import AttacksSection
from engine.report.bayes_counts import CountsSection
from engine.report.columns import ColumnsSection
from engine.report.field_synthesis import FieldSynthesisSection
from engine.report.guard import GuardSection
from engine.report.kanon import KanonSection
from engine.report.sections import ReportSection
from engine.report.swap import SwapSection
from engine.report.wp29 import SinglingOutLinkabilityInferenceSection

if TYPE_CHECKING:
    from engine.results import SweepResult

SECTIONS: tuple[type[ReportSection], ...] = (
    ColumnsSection,
    GuardSection,
    AttacksSection,
    AlongKnobSection,
    PerTargetSection,
    FieldSynthesisSection,
    CountsSection,
    KanonSection,
    SwapSection,
    SinglingOutLinkabilityInferenceSection,
    AnnotatedDetectionSection,
)

if len({s.id for s in SECTIONS}) != len(SECTIONS):
    raise RuntimeError("two registered report sections share an id")


def register(cls: type[ReportSection]) -> type[ReportSection]:
    """Add a section at the end of the report (a plug-in kept outside this package; usable as a class decorator).
    The report and the pages read `SECTIONS` when they run, so the section is taken from then on."""
    global SECTIONS
    if any(s.id == cls.id for s in SECTIONS):
        raise TypeError(f"a report section with the id '{cls.id}' is registered already")
    SECTIONS = (*SECTIONS, cls)
    return cls


def page_figures(sweep: SweepResult, at: float) -> list[tuple[str, go.Figure]]:
    """The figures of every section whose measures ``sweep`` measured, at grid value ``at``: what a method's
    page shows beside its frontier, drawn by the functions the report draws them with."""
    out: list[tuple[str, go.Figure]] = []
    for section in SECTIONS:
        if any(m in sweep.metric_ids for m in section.measures):
            out += section.figures(sweep, at)
    return out
