"""The report section of the release guard (`engine.protect.guard`): what it replaced after the method, per type
and column, and the types the steward left alone."""

from __future__ import annotations

from engine.protect.guard import TYPE_WORDS, GuardCounts
from engine.report.context import ReleaseReport, escaped
from engine.report.sections import ReportSection


class GuardSection(ReportSection):
    id = "guard"
    title = "What the release guard replaced"

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        counts = report.release.detail(GuardCounts)
        if counts is None:
            return []
        rows = "".join(
            f'<tr><td>{escaped(TYPE_WORDS.get(kind, (kind, kind))[1].capitalize())}</td><td class="num">{n:,}</td></tr>'
            for kind, n in counts.replaced.items()
        )
        columns = ", ".join(counts.columns) or "none"
        off = (
            f"<p>Left alone at the steward's request: {escaped(', '.join(counts.off))}. What the method left of "
            "those is released as it is.</p>"
            if counts.off
            else ""
        )
        return [
            f"<h2>{escaped(cls.title)}</h2>",
            "<p>After the method, before anything was measured or written, the release guard looked in every "
            "released text and string field for identifiers with a format (each confirmed by its validator) and "
            "for the names the data's identifier columns and identifiers file hold, and replaced each it found "
            f"by a typed placeholder such as [URL]. Columns it changed: {escaped(columns)}.</p>",
            f'<table class="facts"><tr><th>Identifier</th><th>Replaced</th></tr>{rows}</table>',
            off,
        ]
