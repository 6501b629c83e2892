"""The report section "Detection measured on your data": where the steward annotated a sample of the data
(`engine.annotation`), each annotated detector's recall and precision per label on it, at the released knob,
with Wilson 95% intervals. Counts and shares only: no annotated record, span or text."""

from __future__ import annotations

from engine.annotation.residual import SECTION, AnnotatedDetection
from engine.annotation.scores import ALL
from engine.report.context import ReleaseReport, escaped
from engine.report.sections import ReportSection


class AnnotatedDetectionSection(ReportSection):
    id = SECTION
    title = "Detection measured on your data"

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        found = [d for d in report.release.details if isinstance(d, AnnotatedDetection)]
        if not found:
            return []
        parts = [
            f"<h2>{escaped(cls.title)}</h2>",
            "<p>The steward drew a stratified random sample of the records, corrected what the detector found in "
            "each and marked what it missed. Recall is the share of what the steward marked that the detector "
            "finds; precision the share of what it finds that the steward marked. Token level: each word or sign "
            "counted; span level: a marked value counts as found only when all of it is, a found value as right "
            "only when all of it was marked. Brackets: Wilson 95% intervals.</p>",
        ]
        for d in found:
            scores = d.scores
            how = "under its own label" if scores.by_label else "under any label (it hides whatever it finds)"
            rows = []
            for label in scores.labels:
                token, span = scores.get(label, "token"), scores.get(label, "span")
                if token is None or span is None:
                    continue
                name = "All labels" if label == ALL else label
                rows.append(
                    f"<tr><td>{escaped(name)}</td><td class='num'>{token.recall.total:,}</td>"
                    f"<td class='num'>{escaped(token.recall.text())}</td>"
                    f"<td class='num'>{escaped(token.precision.text())}</td>"
                    f"<td class='num'>{span.recall.total:,}</td>"
                    f"<td class='num'>{escaped(span.recall.text())}</td>"
                    f"<td class='num'>{escaped(span.precision.text())}</td></tr>"
                )
            parts += [
                f"<h3>{escaped(d.detector.capitalize())}, on {scores.records:,} annotated records</h3>",
                f"<p>A marked token counts as found {escaped(how)}.</p>",
                "<table class='facts'><tr><th>Label</th><th>Marked tokens</th><th>Token recall</th>"
                "<th>Token precision</th><th>Marked spans</th><th>Span recall</th><th>Span precision</th></tr>"
                + "".join(rows)
                + "</table>",
            ]
        return parts
