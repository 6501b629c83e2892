"""The reviewer report: one self-contained, deterministic HTML page about one release.

Plotly.js is inlined once and every figure has a fixed div id, so the same inputs give the same bytes and the
page opens without a network connection.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
from plotly.offline import get_plotlyjs

from engine import __version__
from engine.data.dataset import Dataset
from engine.figures.text import highlight_changes, on_our_template
from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult, measured_number, metric_info
from engine.protect.base import Knob, Release
from engine.protect.field_synthesis.sequential import FieldDraws
from engine.record.decision import Decision
from engine.record.manifest import INTRUDER_DESCRIPTION
from engine.report import registry
from engine.report.along_knob import frontier_axes
from engine.report.bayes_counts import numeric_samples
from engine.report.context import FIGURE_DIV, ReleaseReport, escaped
from engine.report.field_synthesis import synthesis_samples

CONFIDENTIAL_NOTICE = (
    "Internal review document: contains excerpts of the confidential data. Keep it with the steward; it is "
    "never part of the release bundle. Do not publish."
)
PUBLIC_NOTICE = (
    "This report travels with the release. It shows aggregates only: measures of risk and utility, and "
    "estimates over many records of the original and the released data (means, quantiles, model coefficients, "
    "histograms) that the utility measures compare; no value or text of a record, no record-level comparison with "
    "the original data, no identifier."
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0 auto;
max-width:1100px;padding:1.5rem;color:#222;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.3rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
.notice{background:#fff4e5;border:1px solid #f0a030;padding:.6rem .9rem;border-radius:4px;font-weight:600}
.warning{background:#fde8e8;border:1px solid #d33;padding:.6rem .9rem;border-radius:4px;margin-top:.8rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.facts{width:auto}table.facts th{width:12rem}
.sample{display:grid;grid-template-columns:1fr 1fr;gap:.8rem;margin-bottom:1rem}
.sample div{border:1px solid #ddd;border-radius:4px;padding:.5rem;white-space:pre-wrap;word-wrap:break-word}
.sample h3{grid-column:1/3;font-size:1rem;margin:.6rem 0 0}
mark.orig{background:#ffd6d6}mark.repl{background:#d6f5d6}
pre{background:#f5f5f5;padding:.6rem;overflow-x:auto;white-space:pre-wrap}
.figure{margin:.5rem 0 1rem}.muted{color:#666}
table.candidates{overflow-wrap:break-word}table.candidates th{font-weight:normal;text-align:left}
@page{size:A4;margin:14mm}
@media print{body{max-width:none;padding:0;font-size:11px}.modebar-container{display:none!important}
.figure,pre,tr,.warning,.notice{break-inside:avoid}h2,h3{break-after:avoid}}
"""


_e = escaped


def _isnum(v: float | None) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _num(v: float | None) -> str:
    return "—" if v is None or not _isnum(v) else measured_number(v)


def _knob_text(knob: Knob | None, value: float) -> str:
    if knob is None:
        return f"knob = {value:g}"
    named = knob.label if knob.label.lower().endswith(knob.symbol.lower()) else f"{knob.label} {knob.symbol}"
    return f"{named} = {knob.format(value)}"


def _summary(report: ReleaseReport) -> str:
    dataset, release, metrics, knob = report.dataset, report.release, report.metrics, report.knob
    replicates, method_title = report.record.replicates, report.record.method.title or ""
    parts = [
        f"This release of {len(release.data):,} records from <b>{_e(dataset.name)}</b> was protected with "
        f"<b>{_e(method_title or release.method)}</b> at {_e(_knob_text(knob, release.knob))}."
    ]
    if knob is not None:
        parts.append(f"Moving {_e(knob.symbol)} {'up' if knob.more_privacy == 'higher' else 'down'} protects more.")
    if release.changes is not None:
        changed = release.changes
        if len(changed):
            changed = changed[changed["original"].astype(str) != changed["replacement"].astype(str)]
        n_rec = changed["record"].nunique() if len(changed) else 0
        parts.append(f"The method changed {len(changed):,} passages in {n_rec:,} of {dataset.n_records:,} records.")
    for mid, m in metrics.items():
        if mid.endswith(CONFIDENTIAL_SUFFIX):
            continue
        info = metric_info(mid)
        s = f"{_e(info.label)} is {_num(m.value)}"
        if _isnum(m.lo) and _isnum(m.hi) and replicates > 1:
            s += f" (between {_num(m.lo)} and {_num(m.hi)} across {replicates} replicate releases)"
        base = metrics.get(mid + CONFIDENTIAL_SUFFIX)
        if base is not None and _isnum(base.value):
            s += f", against {_num(base.value)} on the unprotected data"
        parts.append(s + f"; {info.better_text}.")
    return "<p>" + " ".join(parts) + "</p>"


def _metrics_table(metrics: Mapping[str, MetricResult], notes: Mapping[str, str]) -> str:
    ids = [m for m in metrics if not m.endswith(CONFIDENTIAL_SUFFIX)]
    ids += [
        m for m in metrics if m.endswith(CONFIDENTIAL_SUFFIX) and m.removesuffix(CONFIDENTIAL_SUFFIX) not in metrics
    ]
    rows = []
    for mid in ids:
        m, info = metrics[mid], metric_info(mid)
        interval = f"{_num(m.lo)} – {_num(m.hi)}" if _isnum(m.lo) and _isnum(m.hi) else "—"
        base = metrics.get(mid + CONFIDENTIAL_SUFFIX)
        meaning = " ".join(filter(None, [info.meaning, notes.get(mid.removesuffix(CONFIDENTIAL_SUFFIX), "")]))
        rows.append(
            f"<tr><td>{_e(info.label)}</td><td>{_e(info.kind)}, {_e(info.better_text)}</td>"
            f'<td class="num">{_num(m.value)}</td><td class="num">{interval}</td>'
            f'<td class="num">{_num(base.value) if base is not None else "—"}</td><td>{_e(meaning)}</td></tr>'
        )
    head = (
        "<tr><th>Measure</th><th>Kind</th><th>Value</th><th>95% interval</th>"
        "<th>Unprotected data</th><th>What it means</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _not_measured(skipped: Mapping[str, str]) -> str:
    """The measures that could not apply to this data, each with the reason."""
    if not skipped:
        return ""
    items = "".join(f"<li>{_e(metric_info(m).label)}: {_e(why)}</li>" for m, why in skipped.items())
    return f"<h3>Not measured</h3><ul>{items}</ul>"


def _field_changes(dataset: Dataset, release: Release, record: int, rows: pd.DataFrame) -> str:
    items = []
    for col in dict.fromkeys(rows["column"]):
        if col in dataset.frame.columns and col in release.data.columns and record < len(release.data):
            before, after = dataset.frame[col].iloc[record], release.data[col].iloc[record]
            items.append(f"<li>{_e(col)}: {_e(before)} → {_e(after)}</li>")
    return f"<ul>{''.join(items)}</ul>" if items else ""


def _samples(dataset: Dataset, release: Release, records: Sequence[int]) -> str:
    if release.detail(FieldDraws) is not None:
        return synthesis_samples(dataset, release, records)
    numeric = numeric_samples(dataset, release, records)
    if numeric:
        return numeric
    text_col = dataset.schema.text
    ch = release.changes
    if ch is None:
        return '<p class="muted">This method reports no per-record changes, so there are no before/after samples.</p>'
    if len(ch) == 0:
        return '<p class="muted">The method changed no record at this setting.</p>'
    records = [r for r in records if r in set(ch["record"].astype(int))]
    if not records:
        return '<p class="muted">None of the sample records is changed at this setting.</p>'
    out = []
    for rec in records:
        rows = ch[ch["record"] == rec]
        text_rows = rows[rows["column"] == text_col]
        original = dataset.frame[text_col].iloc[rec] if rec < dataset.n_records else ""
        orig_html, prot_html = highlight_changes(original, text_rows)
        out.append(
            f'<div class="sample"><h3>Record {rec}</h3>'
            f'<div><span class="muted">Original</span><br>{orig_html}</div>'
            f'<div><span class="muted">Protected</span><br>{prot_html}</div></div>'
            + _field_changes(dataset, release, rec, rows[rows["column"] != text_col])
        )
    return (
        f"<p>The {len(records)} sample records the dashboard shows: changed ones whose protected version "
        "differs at the most settings of the knob.</p>" + "".join(out)
    )


def _review_tables(release: Release) -> list[str]:
    """The method's tables for the internal review only (`Release.review_tables`), each under its title."""
    out = []
    for title, table in release.review_tables.items():
        head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
        rows = "".join(
            "<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in table.itertuples(index=False)
        )
        out += [f"<h2>{_e(title)}</h2>", f"<table><tr>{head}</tr>{rows}</table>"]
    return out


def _source_name(source: str | None) -> str:
    """Where the data came from, by file name only: a path can name people or places of the organization."""
    if not source:
        return "—"
    return Path(source).name or source


def _decision(decision: Decision | None, metrics: Mapping[str, MetricResult], knob: float) -> list[str]:
    """The steward's decision: who, when, why, and the chosen release beside the alternatives weighed."""
    if decision is None:
        return []
    chosen = {mid: {"value": m.value, "lo": m.lo, "hi": m.hi} for mid, m in metrics.items()}
    shown = [mid for mid in chosen if not mid.endswith(CONFIDENTIAL_SUFFIX)]
    # One column per candidate and one row per measure: a few candidates side by side fit the page however many
    # measures were taken, and no measure's name is squeezed into a column narrower than its words.
    columns: list[tuple[str, Mapping[str, Mapping[str, float | None]]]] = [
        (f"<b>{_e(decision.chosen)}</b> (chosen)", chosen)
    ]
    columns += [(f"{_e(a.name)}<br><small>{_e(a.describe)}</small>", a.metrics) for a in decision.alternatives]

    def cell(mid: str, values: Mapping[str, Mapping[str, float | None]]) -> str:
        m, info = values.get(mid) or {}, metric_info(mid)
        value, lo, hi = m.get("value"), m.get("lo"), m.get("hi")
        if value is None or not _isnum(value):
            return '<td class="num">—</td>'
        text = _e(info.format(float(value)))
        if lo is not None and hi is not None and _isnum(lo) and _isnum(hi) and hi > lo:
            text += f"<br><small>{_e(info.format(float(lo)))} – {_e(info.format(float(hi)))}</small>"
        return f'<td class="num">{text}</td>'

    head = "".join(f"<th>{name}</th>" for name, _ in columns)
    rows = [
        f"<tr><th>{_e(metric_info(mid).label)}<br><small>{_e(metric_info(mid).better_text)}</small></th>"
        + "".join(cell(mid, values) for _, values in columns)
        + "</tr>"
        for mid in shown
    ]
    replays = "".join(f"<p><b>{_e(a.name)}</b></p><pre>{_e(a.replay)}</pre>" for a in decision.alternatives)
    return [
        "<h2>Decision</h2>",
        f'<table class="facts"><tr><th>Decided by</th><td>{_e(decision.by)}</td></tr>'
        f"<tr><th>Date</th><td>{_e(decision.date)}</td></tr>"
        f"<tr><th>Why this release</th><td>{_e(decision.why)}</td></tr></table>",
        f'<h3>Candidates weighed</h3><table class="candidates"><tr><th>Measure</th>{head}</tr>{"".join(rows)}</table>',
        *([f"<h3>Make each alternative again</h3>{replays}"] if replays else []),
    ]


_HOW_TO_READ = """<ul>
<li><b>Risk</b> measures how much an intruder could learn about people in the data; lower is better.
<b>Utility</b> measures how much of what researchers need is kept; higher is better.</li>
{frontier}<li>The 95% interval shows how much the value moves between independent protected releases at the same
setting; with one replicate, or a deterministic method, it has no width.</li>
<li>“Unprotected data” is the same measure on the confidential data: the risk the protection starts from.</li>
{samples}<li>The replay command reproduces this release byte for byte from the same data and seed.</li>
</ul>"""


_FRONTIER_HELP = (
    "<li>On the risk–utility figure each point is one setting of the knob; the best releases sit at the lower right.\n"
    "The dotted line joins the settings that no other setting beats on both measures.</li>\n"
)
"""Said only of a report that draws the frontier (`frontier_axes`): a bundle made without ``--with-frontier`` has no
such figure."""

_SAMPLES_HELP = (
    "<li>In the samples, red marks what was removed from the original and green what replaced it in the release.</li>\n"
)


def _sections(report: ReleaseReport, internal: bool) -> list[str]:
    """Every registered section that applies to the release (`engine.report.registry.SECTIONS`), in order; the
    internal review's own sections only in the internal report."""
    out: list[str] = []
    for section in registry.SECTIONS:
        if (internal or not section.internal_only) and section.applies(report):
            out += section.html(report, internal)
    return out


def render_report(report: ReleaseReport, internal: bool = False) -> str:
    """The reviewer report for one release as a self-contained HTML string (same inputs, same bytes).

    The report in the bundle (``internal`` False) shows aggregates only (`PUBLIC_NOTICE`): no sample records, no
    per-target attack, no value of a record, the source by file name. The internal review report (``internal``
    True, written outside the bundle) adds the before/after samples the steward looked at and the per-target
    detail. Between the summary and the measures come the registered sections that apply (`_sections`)."""
    on_our_template()  # the same figures whatever imported Streamlit since (the report's bytes replay)
    record, dataset, release, knob = report.record, report.dataset, report.release, report.knob
    facts = [
        ("Dataset", dataset.name),
        ("Source", _source_name(dataset.source)),
        ("Fingerprint", dataset.fingerprint),
        ("Records", f"{dataset.n_records:,}"),
        ("Method", record.method.title or release.method),
        ("Setting", _knob_text(knob, release.knob)),
        (
            "Method parameters",
            ", ".join(
                f"{k} = {json.dumps(v, ensure_ascii=False, default=str)}"
                for k, v in sorted(record.method.params.items())
            )
            or "—",
        ),
        *release.facts(),
        ("Intruder assumed", record.measure_settings.get(INTRUDER_DESCRIPTION, "")),
        *(
            [("Swap against the background attacker", record.background.swap_target)]
            if record.background is not None and record.background.swap_target
            else []
        ),
        *([("Release ledger", record.ledger.describe())] if record.ledger is not None else []),
        ("Seed", "—" if release.seed is None else release.seed),
        ("Replicate", f"{release.replicate} of {record.replicates} (numbered from 0)"),
        ("textsdc", __version__),
    ]
    facts_html = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts)
    warning = "".join(f'<div class="warning">Warning: {_e(w)}.</div>' for w in record.warnings)
    figures = _sections(report, internal)
    drawn = any(part.startswith(FIGURE_DIV) for part in figures)
    plotly_js = f'<script type="text/javascript" id="plotly-js">{get_plotlyjs()}</script>' if drawn else ""
    title = f"textsdc {'internal review ' if internal else ''}report: {dataset.name}"
    samples = (
        ["<h2>Before and after</h2>", _samples(dataset, release, report.records)]
        if internal
        else [
            "<h2>Records</h2>",
            '<p class="muted">This report shows no record: the released records are in the bundle\'s data '
            "files. Before/after samples are in the steward's internal review report, which never leaves.</p>",
        ]
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(title)}</title><style>{_CSS}</style>",
            plotly_js,
            "</head><body>",
            f"<h1>{_e(title)}</h1>",
            f'<div class="notice">{_e(CONFIDENTIAL_NOTICE if internal else PUBLIC_NOTICE)}</div>',
            warning,
            f'<table class="facts">{facts_html}</table>',
            *_decision(record.decision, report.metrics, release.knob),
            "<h2>Summary</h2>",
            _summary(report),
            *figures,
            "<h2>Measures</h2>",
            _metrics_table(report.metrics, report.notes),
            _not_measured(report.skipped),
            *samples,
            *(_review_tables(release) if internal else []),
            "<h2>Reproduce this release</h2>",
            f"<pre>{_e(record.replay)}</pre>",
            "<h2>How to read this report</h2>",
            _HOW_TO_READ.format(
                frontier=_FRONTIER_HELP if frontier_axes(report) is not None else "",
                # the colours are explained where samples are marked: a method that records no changed spans (a
                # text synthesizer's texts are drawn anew) has its samples unmarked, or none
                samples=_SAMPLES_HELP if internal and release.changes is not None else "",
            ),
            f'<p class="muted">Written by textsdc {_e(__version__)}.</p>',
            "</body></html>",
            "",
        ]
    )
