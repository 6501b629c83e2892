"""Text and HTML the pages show: knob and measure labels, Markdown escaping, sample records side by side."""

from __future__ import annotations

import math
import string
from collections.abc import Mapping

import pandas as pd

from engine.data.dataset import Dataset
from engine.measures.base import METRICS, MetricInfo, MetricResult, metric_info
from engine.protect import get_protector
from engine.protect.base import Knob, Release
from engine.protect.plan import Plan


def knob_text(knob: Knob, value: float) -> str:
    return f"{knob.symbol} = {knob.format(value)}"


def release_setting_text(method: str, params: Mapping[str, object], knob: Knob, value: float) -> str:
    """Where a release is made: its knob at ``value`` (``λ = 0.0085``), after the knob of each step before the
    last for a plan (``level = 2, λ = 0.0085``)."""
    p = get_protector(method, **params)
    earlier = (
        [knob_text(c.knob, v) for c, v in zip(p.step_classes[:-1], p.upstream_values())] if isinstance(p, Plan) else []
    )
    return ", ".join([*earlier, knob_text(knob, value)])


def delta_tone(info: MetricInfo, value: float, base: float) -> str:
    """Whether ``value`` of the measure ``info`` is better (good), worse (bad) or no different (off) than
    ``base``; no different when the two read the same on a card (`MetricInfo.format`), so that two values a card
    shows apart are never coloured alike for being close."""
    if info.format(value) == info.format(base):
        return "off"
    if info.better == "one":
        return "good" if abs(value - 1) < abs(base - 1) else "bad"
    return "good" if (value < base) == (info.better == "lower") else "bad"


def as_sentence(message: object) -> str:
    """An engine message (one line, lower case for the command line's "textsdc: error: ...") as a sentence on
    a page: capital first letter, full stop at the end."""
    text = str(message).strip()
    if not text:
        return text
    if "a" <= text[0] <= "z":  # not a knob's symbol: "ε = 5" stays, never "Ε = 5"
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def warning_line(warning: str) -> str:
    """An export check's warning (`engine.export.registry.release_warnings`) as the pages show it, plain text."""
    return f"Warning: {warning}."


def compares_with_unprotected(metric_id: str, base: MetricResult | None, m: MetricResult) -> bool:
    """Whether a card shows a measure's change from the unprotected data: both values are numbers, and the
    unprotected value is not at an end of the measure's range — a measure that compares the release with the
    confidential data is there by construction (cell differences 0, similarities 1, the swap's DR and DU 1, a
    McNemar p of 1: nothing changed), and a change from an end only repeats the value — nor is the measure one
    whose ideal is 1 (a pMSE ratio is 0 on the unprotected data, so a change from it says nothing of how close
    to 1 the release is)."""
    if base is None or math.isnan(base.value) or math.isnan(m.value):
        return False
    info = metric_info(metric_id)
    return info.better != "one" and base.value not in (info.low, info.high)


def change_text(change: float, integer: bool = False) -> str:
    """A measure's change from the unprotected data, as a card shows it: "+0.123 vs unprotected"; a change that
    rounds to nothing is said so rather than shown as "-0.000"."""
    shown = f"{change:+,.0f}" if integer else f"{change:+.3f}"
    if float(shown.replace(",", "")) != 0:
        return f"{shown} vs unprotected"
    return (
        "same as unprotected"
        if change == 0
        else ("under 1 from unprotected" if integer else "within 0.001 of unprotected")
    )


def measure_text(metric_id: str, value: float | None) -> str:
    """A measure's value as every page, the report and the CLI show it (`MetricInfo.format`); "—" for none."""
    return "—" if value is None else metric_info(metric_id).format(value)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless one: "1 record", "6,555 records"."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def in_sentence(label: str) -> str:
    """A label inside a sentence: its first letter lower-cased unless it starts an acronym ("Swap disclosure
    risk (DR)" → "swap disclosure risk (DR)"; "EMR" stays)."""
    if len(label) > 1 and label[1].isupper():
        return label
    return label[:1].lower() + label[1:]


def metric_label(metric_id: str) -> str:
    return metric_info(metric_id).label if metric_id.removesuffix("_confidential") in METRICS else metric_id


_MD_SPECIAL = set("\\`*_[]#|$<>~")


def not_measured_lines(skipped: dict[str, str]) -> list[str]:
    """One Markdown line per measure that could not apply, with its reason (a page shows them as captions)."""
    return [f"Not measured: {md_escape(metric_label(mid))} — {md_escape(why)}." for mid, why in skipped.items()]


def md_escape(text: object) -> str:
    """``text`` with Markdown's special characters escaped (data-derived names go into Markdown as text)."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


_PUNCTUATION = frozenset(string.punctuation)


def md_literal(text: object) -> str:
    """``text`` shown as it is written: every ASCII punctuation character escaped, which Markdown renders as
    the character itself, so that nothing in it (a column named ``[click](http://…)``, a bare link, an HTML
    tag, an entity, Streamlit's ``:red[…]``) becomes a link, markup or a colour. For messages that quote
    the steward's data, as every error message may."""
    return "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in str(text))


def error_text(message: object) -> str:
    """An engine message as a page's error alert shows it: a sentence (`as_sentence`), written literally
    (`md_literal`)."""
    return md_literal(as_sentence(message))


SAMPLE_CSS = """<style>
.textsdc-sample{display:grid;grid-template-columns:1fr 1fr;gap:.6rem;margin:.2rem 0 .9rem 0}
.textsdc-sample .textsdc-head{grid-column:1/3;font-size:.85rem;color:#666;margin-bottom:-.3rem}
.textsdc-sample .textsdc-original,.textsdc-sample .textsdc-protected{border:1px solid #ddd;border-radius:.4rem;
padding:.45rem .6rem;white-space:pre-wrap;word-wrap:break-word;font-size:.95rem;max-height:24rem;overflow-y:auto}
.textsdc-sample mark.orig{background:#ffd6d6;padding:0 .1rem}
.textsdc-sample mark.repl{background:#d6f5d6;padding:0 .1rem}
.textsdc-fields{grid-column:1/3;font-size:.85rem;color:#444}
.textsdc-sample .textsdc-protected mark[data-label]::after{content:attr(data-label);font-size:.68rem;color:#444;
margin-left:.2rem;vertical-align:super;white-space:nowrap}
.textsdc-legend{font-size:.85rem;margin:.1rem 0 .5rem 0}
.textsdc-legend span{padding:0 .35rem;margin-right:.4rem;border-radius:.2rem;white-space:nowrap}
</style>"""


def _html_block(fragment: str) -> str:
    """An HTML fragment made safe to pass through st.markdown as one raw block.

    A blank line would end the HTML block and hand the rest to Markdown, and ``$`` would start LaTeX.
    """
    return fragment.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>").replace("$", "&#36;")


def _release_changes(release: Release, record: int, column: str) -> pd.DataFrame:
    changes = release.changes
    if changes is None or changes.empty:
        return pd.DataFrame(columns=["record", "column", "start", "end", "original", "replacement", "label"])
    return changes[(changes["record"] == record) & (changes["column"].astype(str) == str(column))]


def label_legend(labels: Mapping[str, str]) -> str:
    """The colours of `sample_html`'s marks with what each label names (escaped HTML)."""
    import html as _html

    from engine.figures.text import label_colours

    colours = label_colours(list(labels))
    chips = "".join(
        f'<span style="background:{colours[label]}">{_html.escape(name)}</span>' for label, name in labels.items()
    )
    return f'<div class="textsdc-legend">{chips}</div>'


def sample_html(dataset: Dataset, release: Release, record: int, labels: Mapping[str, str] | None = None) -> str:
    """One sample record, original and protected side by side with the changed spans marked (escaped HTML);
    with ``labels`` (`Protector.change_labels`) each change is coloured by its label and named."""
    import html as _html
    import re

    from engine.figures.text import highlight_changes

    text_col = dataset.schema.text
    original = str(dataset.frame[text_col].iloc[record])
    protected = str(release.data[text_col].iloc[record])
    try:
        orig_html, prot_html = highlight_changes(original, _release_changes(release, record, text_col), labels)
        if _html.unescape(re.sub(r"<[^>]+>", "", prot_html)) != protected:
            raise ValueError("the recorded changes do not rebuild the released text")
    except (ValueError, KeyError):
        # Spans that do not describe the release exactly: show the two texts without marks.
        orig_html, prot_html = _html.escape(original), _html.escape(protected)
    fields = []
    for col in release.protected_columns:
        if col == text_col or col not in dataset.frame.columns or col not in release.data.columns:
            continue
        a, b = dataset.frame[col].iloc[record], release.data[col].iloc[record]
        if str(a) != str(b):
            fields.append(f"{_html.escape(str(col))}: {_html.escape(str(a))} → {_html.escape(str(b))}")
    fields_html = f'<div class="textsdc-fields">{"; ".join(fields)}</div>' if fields else ""
    return _html_block(
        f'<div class="textsdc-sample" data-record="{record}">'
        f'<div class="textsdc-head">Row {record + 1}: original (left) and protected (right)</div>'
        f'<div class="textsdc-original">{orig_html}</div>'
        f'<div class="textsdc-protected">{prot_html}</div>{fields_html}</div>'
    )


PAGE_CSS = """<style>
[data-testid="stMultiSelectTagsContainer"]{flex-wrap:wrap;overflow-x:visible;height:auto;row-gap:4px;padding:4px 0;
mask-image:none;-webkit-mask-image:none}
[data-testid="stMultiSelect"] [role="group"]:has(> [data-testid="stMultiSelectTagsContainer"]){height:auto;max-height:none}
[data-testid="stMultiSelectTagsContainer"] [data-tag]{max-width:100%;height:auto}
[data-testid="stMultiSelectTagsContainer"] [data-tag] > span[title]{white-space:normal;overflow-wrap:anywhere;
text-overflow:clip;height:auto}
</style>"""
"""What every page adds to Streamlit's own styles: a multiselect's chips (the intruder's targets, the methods
compared) wrap onto more lines, each name whole, rather than being cut short in one scrolled line."""


DIFF_CSS = """<style>
.textsdc-diff-box{max-height:36rem;overflow:auto;border:1px solid #ddd;border-radius:.4rem}
table.textsdc-diff{border-collapse:collapse;width:100%;table-layout:fixed;font-size:.9rem}
table.textsdc-diff th{position:sticky;top:0;background:#f6f6f8;text-align:left;font-weight:600;padding:.35rem .5rem}
table.textsdc-diff td{border-top:1px solid #eee;padding:.35rem .5rem;vertical-align:top;white-space:pre-wrap;
word-wrap:break-word}
table.textsdc-diff .narrow{width:5.5rem}
table.textsdc-diff mark.orig{background:#ffc9c9;padding:0 .1rem}
table.textsdc-diff mark.repl{background:#c8f0c8;padding:0 .1rem}
</style>"""


def diff_html(records: pd.DataFrame, names: tuple[str, str]) -> str:
    """The differing cells of two releases (`engine.candidates.ReleaseDiff.records`) as an HTML table whose long
    values wrap, what differs marked word by word (`engine.text.word_diff`): red in the first release's value,
    green in the second's (escaped HTML)."""
    import html as _html

    from engine.text.word_diff import word_diff

    def marked(pieces, css: str) -> str:
        return "".join(
            f'<mark class="{css}">{_html.escape(p.text)}</mark>' if p.changed else _html.escape(p.text) for p in pieces
        )

    rows = []
    for r in records.itertuples(index=False):
        a, b = ("" if pd.isna(v) else str(v) for v in (r[2], r[3]))
        left, right = word_diff(a, b)
        rows.append(
            f"<tr><td>{int(r[0])}</td><td>{_html.escape(str(r[1]))}</td>"
            f"<td>{marked(left, 'orig')}</td><td>{marked(right, 'repl')}</td></tr>"
        )
    head = "".join(
        f'<th class="narrow">{h}</th>' if i < 2 else f"<th>{_html.escape(h)}</th>"
        for i, h in enumerate(("record", "column", *names))
    )
    return (
        f'{DIFF_CSS}<div class="textsdc-diff-box"><table class="textsdc-diff"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
