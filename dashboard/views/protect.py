"""Protect page: pick a method, drag its knob, and watch risk, utility, the attack and sample texts move.

The sweep over the knob's grid runs once per (dataset, method, replicates, seed). What the page shows at each
grid value is built once from the sweep and the releases it kept and sent to the browser together
(`dashboard.knob_view`), so a slider move is drawn there and nothing is refitted, re-swept or redrawn here.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from dashboard import compute, display, knob_view, scaled, session, widgets
from dashboard.prepared import prepared
from dashboard.views import annotate, gold_check
from engine.annotation.detectors import detector_names
from engine.annotation.residual import with_annotations
from engine.annotation.store import annotations_stamp
from engine.data.dataset import Dataset
from engine.export.registry import release_warnings
from engine.export.safe_csv import safe_csv
from engine.figures.text import (
    attack_bars_figure,
    comparison_figure,
    cosine_by_author_figure,
    frontier_figure,
    metric_along_knob_figure,
)
from engine.knob_range import onset_text, utility_onset
from engine.measures.attacks import WORST_ATTACK
from engine.measures.base import MetricResult, metric_info
from engine.measures.registry import measure_class
from engine.measures.risk.background_attack import swap_target_reached
from engine.measures.settings import MeasureSettings
from engine.protect import METHODS, get_protector
from engine.protect.base import Knob, Release
from engine.protect.detection import DetectionShare
from engine.report import samples as sampling
from engine.report.registry import page_figures
from engine.results import SweepResult

ATTACK = "attack_identification_rate"
MAX_SAMPLES = 10


def _valid_choice(key: str, options: list, default) -> None:
    """Reset a stored widget value that the current options no longer hold (another dataset or method)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else options[0]


def _measure_pickers(sweep: SweepResult, risk_col, utility_col) -> tuple[str | None, str | None]:
    """The risk and utility measures of the frontier: the method's own first (`Protector.shown_first`), else
    the page's defaults; the choice is kept per method."""
    risks, utilities = compute.metric_ids(sweep, "risk"), compute.metric_ids(sweep, "utility")
    first = METHODS[sweep.method].shown_first
    default_risk = next((m for m in first if m in risks), session.DEFAULT_RISK)
    default_utility = next((m for m in first if m in utilities), session.DEFAULT_UTILITY)
    own = f"::{sweep.method}" if first else ""
    chosen: list[str | None] = []
    for col, options, default, key, label in (
        (risk_col, risks, default_risk, session.RISK_KEY + own, "Risk measure"),
        (utility_col, utilities, default_utility, session.UTILITY_KEY + own, "Utility measure"),
    ):
        with col:
            if not options:
                st.selectbox(label, ["not measured"], disabled=True, key=f"{key}::none")
                chosen.append(None)
                continue
            _valid_choice(key, options, default)
            chosen.append(
                st.selectbox(label, options, format_func=display.metric_label, key=key, persist_state="session")
            )
    return chosen[0], chosen[1]


def _metric_card(sweep: SweepResult, mid: str, m: MetricResult, base: MetricResult | None) -> dict:
    info = metric_info(mid)
    delta, tone = None, "off"
    if base is not None and display.compares_with_unprotected(mid, base, m):
        delta = display.change_text(m.value - base.value, info.integer)
        tone = display.delta_tone(info, m.value, base.value)
    lo, hi = m.lo, m.hi
    ranged = sweep.replicates > 1 and lo is not None and hi is not None
    if lo is not None and hi is not None and ranged:
        interval = f"95% interval over {sweep.replicates} replicates: {info.format(lo)} to {info.format(hi)}"
    else:
        interval = "One release per setting, so no interval (deterministic method or M = 1)"
    meaning = " ".join(filter(None, [info.meaning, sweep.notes.get(mid, "")]))
    # what it means, and why there is no interval, are behind the "?"
    note = f"{info.kind.capitalize()}, {info.better_text}." + (f" {interval}." if ranged else "")
    if m.chance is not None:  # an attack: its own interval and chance level, as on every page's cards
        interval = "95% interval: the attack's own (Wilson), widened by the spread over replicates where wider"
        note, meaning = knob_view.interval_and_chance(info, lo, hi, m.chance), f"{note} {meaning}"
    return knob_view.card(info.label, info.format(m.value), delta, tone, note=note, help=f"{meaning}\n\n{interval}.")


# Measure cards side by side at most: the swap's nine, five to a row, cut "Swap disclosure risk (DR)" short.
MAX_CARDS_PER_ROW = 4


def _metric_cards(sweep: SweepResult, metrics: dict[str, MetricResult]) -> list[knob_view.Block]:
    """One card per measure at a grid value: value, change from the unprotected data, interval over replicates
    and what the measure means."""
    worst_id = knob_view.worst_attack_id(metrics)
    measured = [m for m in sweep.metric_ids if m not in (WORST_ATTACK, worst_id)]  # the worst attack's card: first
    own = [m for m in measured if sweep.method in measure_class(m).methods]
    ids = own + [m for m in measured if m not in own]  # the method's own measures first
    worst = (
        None
        if worst_id is None
        else knob_view.worst_attack_card(
            metrics, _metric_card(sweep, worst_id, metrics[worst_id], metrics.get(worst_id + "_confidential"))
        )
    )
    items = ([] if worst is None else [worst]) + [
        _metric_card(sweep, mid, metrics[mid], metrics.get(mid + "_confidential")) for mid in ids
    ]
    per_row = math.ceil(len(items) / math.ceil(len(items) / MAX_CARDS_PER_ROW))  # more rows rather than clipped labels
    return [knob_view.cards(items, per_row)]


def _detection_cards(release: Release) -> list[knob_view.Block]:
    """The residual detection risk of a method whose protection depends on finding things in the text
    (`engine.protect.detection.DetectionShare`): one card per kind, the share its detector finds on gold with
    the interval, or why it is not measured; the whole statement behind the "?"."""
    shares = [d for d in release.details if isinstance(d, DetectionShare)]
    if not shares:
        return []
    items = []
    for d in shares:
        kind = d.what.split(" (")[0]
        if d.measured:
            lo, hi = d.interval()
            on = f"in {d.gold}" if d.annotated else "on gold"
            note = f"95% interval {lo:.0%}–{hi:.0%}: {d.found:,} of {d.total:,} {on}"
            items.append(
                knob_view.card(f"{kind[:1].upper()}{kind[1:]} found", f"{d.share:.0%}", note=note, help=d.describe())
            )
        else:
            items.append(knob_view.card("Detection", "not measured", note=f"no gold for {kind}", help=d.describe()))
    return [
        knob_view.text("What the detector finds", "heading"),
        knob_view.cards(items, MAX_CARDS_PER_ROW - 1),  # as wide as the measure cards above
        *(knob_view.text(display.as_sentence(d.describe()), "caption") for d in shares),
    ]


def _choose_for_me(sweep: SweepResult, risk: str, utility: str, knob: Knob, method: str) -> float | None:
    """The steward's rule; returns the knob value it picks (None if it picks none)."""
    if prepared(sweep, ("unprotected", risk, utility), lambda: compute.unprotected_everywhere(sweep, risk, utility)):
        st.warning(
            f"Every setting leaves the {display.in_sentence(metric_info(risk).label)} at its level on the unprotected data, so "
            "no setting is suggested: this method does not protect against this risk."
        )
        return None
    rule = st.radio(
        "Rule",
        ["threshold", "tradeoff"],
        horizontal=True,
        key="choose_rule",
        persist_state="session",
        format_func=lambda r: "Risk limit" if r == "threshold" else "Trade-off slope",
    )
    if rule == "threshold":
        risks = sweep.summary[sweep.summary["metric"] == risk]["mean"].dropna()
        start = float(math.ceil(float(risks.median()) * 1000) / 1000) if len(risks) else 0.1
        info = metric_info(risk)
        label = {
            "lower": f"Highest acceptable {display.in_sentence(info.label)}",
            "higher": f"Lowest acceptable {display.in_sentence(info.label)}",
            "one": f"Acceptable {display.in_sentence(info.label)} (as far from 1 as)",
        }[info.better]
        limit = st.number_input(
            label,
            min_value=0.0,
            value=float(math.ceil(start)) if info.integer else start,
            step=1.0 if info.integer else 0.005,
            format="%.0f" if info.integer else "%.3f",
            key=f"choose_max::{risk}",
            help=info.better_text,
        )
        choice = session.guarded(
            lambda: prepared(
                sweep,
                ("choice", risk, utility, "threshold", float(limit)),
                lambda: compute.risk_utility_choice(sweep, risk, utility, "threshold", float(limit)),
            )
        )
    else:
        a = st.number_input(
            "Risk accepted per unit of utility (a)",
            min_value=0.001,
            value=1.0,
            step=0.1,
            format="%.3f",
            key="choose_slope",
            help="The frontier point tangent to risk = c + a·utility (Greve & Sablica, Eq. 2.8).",
        )
        choice = session.guarded(
            lambda: prepared(
                sweep,
                ("choice", risk, utility, "tradeoff", float(a)),
                lambda: compute.risk_utility_choice(sweep, risk, utility, "tradeoff", float(a)),
            )
        )
    if choice is None:
        return None
    st.markdown(
        f"Suggested: **{display.md_escape(display.knob_text(knob, choice.knob))}** — {display.md_escape(choice.why)}."
    )
    st.button("Use this knob", key="choose_use", on_click=_set_knob, args=(method, choice.knob))
    return choice.knob


def _set_knob(method: str, value: float) -> None:
    st.session_state[session.knob_key(method)] = float(value)


def _targets_picker(sweep: SweepResult, dataset: Dataset, method: str) -> list[str]:
    """The people whose attack panels the views show (the same at every grid value)."""
    details = (sweep.detail(g, ATTACK, replicate=0) for g in sweep.grid)
    detail = next((d for d in details if d is not None and not d.empty), None)
    if detail is None:
        return []
    targets = sorted(map(str, detail["target"].unique()))
    key = f"targets::{dataset.fingerprint[:12]}::{method}"
    stored = st.session_state.get(key)
    if not isinstance(stored, list) or any(t not in targets for t in stored):
        st.session_state[key] = sampling.attack_targets(detail)
    chosen = st.multiselect(
        "Targets of the intruder",
        targets,
        key=key,
        max_selections=8,
        persist_state="session",
        help="People the intruder holds other texts of. Each panel shows, for every released "
        "user, the share of their records the intruder's classifier assigns to the target.",
    )
    return list(chosen)


# Authors the picker lists, those with the most records first. The browser redraws a list's every option: with
# the 114,094 authors of 200,000 posts each knob move took about 40 ms more and the page's first drawing had a
# 384 ms task (a Streamlit page with that one list, measured apart). A comment: a page module keeps no bare string.
MAX_AUTHOR_CHOICES = 1_000


def _author_picker(dataset: Dataset) -> str | None:
    """The author whose texts the views show before and after."""
    author = dataset.schema.author
    if author is None:
        return None
    counts = dataset.frame[author].astype(str).value_counts()
    authors = counts.index[:MAX_AUTHOR_CHOICES].tolist()
    key = f"author_texts::{dataset.fingerprint[:12]}"
    _valid_choice(key, authors, authors[0])
    more = len(counts) - len(authors)
    return st.selectbox(
        "Author whose texts are shown",
        authors,
        key=key,
        persist_state="session",
        help="Authors with the most records first"
        + (f" (the {len(authors):,} with the most; {more:,} more are not listed)." if more else "."),
    )


def _attack_blocks(sweep: SweepResult, at: float, targets: list[str]) -> list[knob_view.Block]:
    detail = sweep.detail(at, ATTACK, replicate=0)
    if detail is None or detail.empty:
        return []
    out = [knob_view.text("Who the intruder picks out", "heading")]
    if not targets:
        return [
            *out,
            knob_view.text("Choose one or more targets (beside the view) to see the intruder's scores.", "info"),
        ]
    figure = attack_bars_figure(detail, list(targets))
    return [
        *out,
        knob_view.plot(figure, "attack_bars"),
        knob_view.text("Per-target detail of replicate 0 at this setting.", "caption"),
    ]


def _measure_figures(sweep: SweepResult, at: float) -> list[knob_view.Block]:
    """The figures of the report sections whose measures the sweep measured (`page_figures`: the k-anonymity
    groups and tagger, the swap's uniques and attack along r), drawn as the reviewer's report draws them."""
    return [knob_view.plot(figure, f"detail::{key}") for key, figure in page_figures(sweep, at)]


def _utility_blocks(sweep: SweepResult, utility: str | None, at: float, dataset: Dataset) -> list[knob_view.Block]:
    detail = sweep.detail(at, utility, replicate=0) if utility else None
    if utility is None or detail is None or "cosine" not in detail.columns:
        return []
    unit = "author" if dataset.schema.author is not None else "record"  # without authors, each record is one
    figure = cosine_by_author_figure(detail, metric_info(utility).label, unit)
    return [knob_view.details(f"Utility per {unit}", [knob_view.plot(figure, "cosine_by_author")])]


def _sample_blocks(dataset: Dataset, release: Release, knob: Knob, records: list[int]) -> list[knob_view.Block]:
    """The sample records the release changed, original and protected side by side with the changes marked."""
    at = release.knob
    out = [knob_view.text("Sample protected records", "heading")]
    setting = display.knob_text(knob, at)
    captions = [text for d in release.details if d.block == "caption" for _, text in d.facts()]
    for info in captions:
        if info:  # "At ε = 1000: ε = 1000 split over ..." said the setting twice
            text = info if info.startswith(setting) else f"At {setting}: {info}"
            out.append(knob_view.text(display.as_sentence(text), "caption"))
    labels = METHODS[release.method].change_labels
    changed = [
        display.sample_html(dataset, release, r, labels) for r in sampling.changed_records(dataset, release, records)
    ]
    if not changed:
        return [*out, knob_view.text(f"No sample record is changed at {display.knob_text(knob, at)}.", "info")]
    how = _how_marked(release, labels)
    shown = (
        f"{display.counted(len(changed), 'record')} of the {len(records)} in the sample changed at this setting (the same "
        f"sample at every setting; a long text scrolls in its box). {how}"
    )
    out.append(knob_view.text(shown, "caption"))
    legend = display.label_legend(labels) if labels else ""
    return [*out, knob_view.html(display.SAMPLE_CSS + legend + "".join(changed[:MAX_SAMPLES]))]


def _how_marked(release: Release, labels: dict[str, str]) -> str:
    """What the marks of the sample records mean. A release that records no changed spans (`Release.changes`
    None: the text synthesizers, whose texts are drawn anew rather than edited from the original) has none to
    mark, and the caption says so instead of promising colours."""
    if release.changes is None:
        return (
            "These texts are generated anew by the synthesizer, not edited from the originals, so nothing in them "
            "is marked: each original is shown beside the synthetic text released in its place."
        )
    if labels:
        return (
            "Each value the method found is coloured by what it is, in the original (left) and as released "
            "(right); a value kept as written is coloured on both sides alike."
        )
    return "Red: what was removed; green: what replaced it."


def _author_blocks(dataset: Dataset, release: Release, knob: Knob, who: str | None) -> list[knob_view.Block]:
    """One author's original texts beside their released texts."""
    author = dataset.schema.author
    if author is None or who is None:
        return []
    mine = dataset.frame[author].astype(str).to_numpy() == who
    rows = np.flatnonzero(mine)[:MAX_SAMPLES]
    text = dataset.schema.text
    out = [
        knob_view.text("One author's texts, original and released", "heading"),
        knob_view.columns(
            ("Original", dataset.frame[text].iloc[rows].astype(str).tolist()),
            (
                f"Released at {display.knob_text(knob, release.knob)}",
                release.data[text].iloc[rows].astype(str).tolist(),
            ),
        ),
    ]
    if mine.sum() > MAX_SAMPLES:
        out.append(knob_view.text(f"The first {MAX_SAMPLES} of {int(mine.sum()):,} records by this author.", "caption"))
    return out


def _request_comparison(key: str) -> None:
    """The "Compare the methods" button's callback: the comparison of this data (``key``) is asked for."""
    st.session_state[key] = True


def _compare_methods(
    dataset: Dataset,
    method: str,
    params: dict,
    replicates: int,
    seed: int,
    options: MeasureSettings,
    risk: str | None,
    utility: str | None,
) -> None:
    """Every text method's sweep on this data in one risk–utility figure (the paper's Fig. 3): the method in
    use with its settings, the others with their defaults; computed on request, then kept."""
    methods = compute.method_names()
    if len(methods) < 2 or risk is None or utility is None:
        return
    st.subheader("Methods compared")
    settings = [(m, params if m == method else {}) for m in methods]
    key = f"compare::{dataset.fingerprint[:12]}"
    ready = all(compute.sweep_ready(dataset, m, replicates, seed, p, options) for m, p in settings)
    # The button's place (as the Compare page's): its click is taken by a callback, which Streamlit runs at the
    # start of the next run and keeps in the session, so a click is not lost when that run is cut short by
    # another (the knob's view reporting its value reruns the page); while the methods are swept the place
    # holds the same button, disabled and saying so, and no faded button is left to invite a second click.
    start = st.empty()
    if not ready and not st.session_state.get(key):
        titles = ", ".join(METHODS[m].title for m in methods)
        with start.container():
            st.caption(
                f"One figure with every text method along its knob on this data: {display.md_escape(titles)}. Each "
                "sweep runs once (training the neural generator takes a few minutes) and is kept for this session."
            )
            st.button("Compare the methods", key=f"{key}::go", on_click=_request_comparison, args=(key,))
        return
    if not ready:
        label = f"Comparing {display.counted(len(methods), 'method')}…"
        start.button(label, key=f"{key}::go", disabled=True)
    comparison = compute.comparison(dataset, settings, replicates, seed, options)
    start.empty()
    figure = session.guarded(lambda: comparison_figure(comparison, risk, utility))
    if figure is not None:
        st.plotly_chart(figure, key="methods_frontier")
    st.caption(
        f"Same data, measures, replicates (M = {replicates}) and seed for every method; "
        f"the method in use with the settings above, the others with their defaults."
    )
    if figure is not None:
        st.caption(display.md_escape(comparison.task_line(risk, utility)))
        for why in comparison.apart(risk, utility).values():
            st.warning(display.md_escape(why))


def _view_at(
    sweep: SweepResult,
    dataset: Dataset,
    release: Release,
    at: float,
    risk: str | None,
    utility: str | None,
    chosen_knob: float | None,
    targets: list[str],
    records: list[int],
    who: str | None,
) -> list[knob_view.Block]:
    """What the page shows at grid value ``at``: the measures, the frontier, the attack, samples and texts."""
    knob = sweep.knob
    metrics = compute.metrics_at(sweep, at)
    out: list[knob_view.Block] = []
    point = " · ".join(
        f"{what} {metric_info(m).format(metrics[m].value)}"
        for what, m in (("Risk", risk), ("Utility", utility))
        if m is not None
    )
    if point:
        names = " · ".join(metric_info(m).label for m in (risk, utility) if m is not None)
        out.append(knob_view.text(f"{point} ({names})", "caption"))
    # what Export will say of this release (its export checks: a setting that protects nothing, a risk left at
    # its unprotected level), said here beside the knob that makes it
    out += [knob_view.text(display.warning_line(w), "warning") for w in release_warnings(dataset, release, metrics)]
    reached = swap_target_reached(metrics)
    if reached is not None:
        out.append(knob_view.text(reached, "success"))
    out += _metric_cards(sweep, metrics)
    out += _detection_cards(release)
    if risk is not None and utility is not None:
        out.append(knob_view.plot(frontier_figure(sweep, risk, utility, current=at, chosen=chosen_knob), "frontier"))
    else:
        out += [
            knob_view.plot(metric_along_knob_figure(sweep, mid, current=at), f"along::{mid}")
            for mid in sweep.metric_ids
        ]
        if risk is None:
            out.append(
                knob_view.text(
                    "No risk measure applies to this dataset, so there is no risk–utility frontier; the reasons "
                    "are listed above.",
                    "info",
                )
            )
    out += _measure_figures(sweep, at)
    out += _attack_blocks(sweep, at, targets)
    out += _utility_blocks(sweep, utility, at, dataset)
    out += _sample_blocks(dataset, release, knob, records)
    out += _author_blocks(dataset, release, knob, who)
    return out


def _onset_note(sweep: SweepResult, risk: str | None, utility: str | None) -> str:
    """Under the knob: where the chosen utility begins along it on this data and what the chosen risk reads
    there (`engine.knob_range`), when utility sits on a plateau at the most private settings."""
    if utility is None:
        return ""
    return onset_text(sweep.knob, utility_onset(sweep.knob, sweep.summary, utility, risk))


SHOWN_METHOD_KEY = "protect_shown_method"  # the method the page drew its settings for last


@st.fragment
def _at_knob(
    dataset: Dataset,
    method: str,
    params: dict,
    options: MeasureSettings,
    seed: int,
    sweep: SweepResult,
    risk: str | None,
    utility: str | None,
    whole: Dataset,
) -> None:
    """The knob and every view that follows it (`dashboard.knob_view`: a move is drawn in the browser and only
    reported here), with the settings the views depend on beside them. A Streamlit fragment: changing those
    settings reruns this part alone, and the sweep and the releases it kept are read, not recomputed. The views
    show ``dataset`` (a large table's sample on its first view, `dashboard.scaled`); the release chosen for Pin
    and Export is of ``whole``, the dataset loaded."""
    view, side = st.columns([3, 1], gap="large")
    chosen_knob = None
    with side:
        if risk is not None and utility is not None:
            with st.container(border=True):
                st.markdown("**Choose for me**")
                chosen_knob = _choose_for_me(sweep, risk, utility, sweep.knob, method)
        targets = _targets_picker(sweep, dataset, method)
        who = _author_picker(dataset)
    records = session.guarded(
        lambda: compute.sample_records(dataset, method, seed, sweep.replicates, MAX_SAMPLES, params)
    )
    if records is None:
        return

    def build() -> str:
        def view_at(g: float) -> list[knob_view.Block]:
            release = compute.get_release(dataset, method, g, seed, sweep.replicates, params)
            # the residual detection risk measured on the steward's annotations where there are any
            release = with_annotations(release, dataset, protector)
            return _view_at(sweep, dataset, release, g, risk, utility, chosen_knob, targets, records, who)

        views = knob_view.each_value(sweep.grid, view_at)
        return knob_view.payload(sweep.knob, sweep.grid, views, note=_onset_note(sweep, risk, utility))

    protector = get_protector(method, **params)
    annotated = annotations_stamp(dataset.fingerprint, detector_names(protector))
    key = ("protect-views", risk, utility, chosen_knob, tuple(targets), tuple(records), who, annotated)
    with view:
        payload = session.guarded(lambda: prepared(sweep, key, build, persist=True))
        if payload is not None:
            state_key, default = session.knob_key(method), sweep.knob.default
            session.live_knob(whole, method, params, options, seed, sweep, payload, state_key, default, risk, utility)


def _review_tables(sweep: SweepResult, dataset: Dataset) -> None:
    """The method's tables for the steward's eyes only (`Release.review_tables`, as the sweep's first kept release
    has them), each in an expander with its CSV (formula-escaped, `engine.export.safe_csv`: a name that begins like
    a formula does not run in a spreadsheet): the swap's names that no identifiers file listed, ready to review
    and give as one."""
    kept = next((r for releases in sweep.releases.values() for r in releases), None)
    for k, (title, table) in enumerate(({} if kept is None else kept.review_tables).items()):
        with st.expander(f"{title}: {len(table):,}"):
            st.caption("Internal review: shown here and in the internal review report, never in the bundle.")
            st.dataframe(table, hide_index=True, key=f"review_table_{k}")
            st.download_button(
                "Download as CSV",
                safe_csv(table).content,
                file_name=f"{dataset.name}.{sweep.method}.review-{k + 1}.csv",
                mime="text/csv",
                on_click="ignore",
                key=f"review_table_download_{k}",
            )


def render() -> None:
    """The Protect page."""
    st.title("Protect text")
    dataset = session.page_dataset()
    if dataset is None:
        return
    st.caption(f"Dataset: {display.md_escape(dataset.name)} · {display.counted(dataset.n_records, 'record')}")

    methods = compute.method_names()
    _valid_choice(session.METHOD_KEY, methods, session.DEFAULT_METHOD)
    c_method, c_risk, c_utility = st.columns([2, 1, 1])
    with c_method:
        method = st.selectbox(
            "Protection method",
            methods,
            format_func=lambda m: METHODS[m].title,
            key=session.METHOD_KEY,
            persist_state="session",
        )
        st.caption(display.md_escape(METHODS[method].description))
    protector = METHODS[method]
    shown = st.session_state.get(SHOWN_METHOD_KEY)
    st.session_state[SHOWN_METHOD_KEY] = method
    # The secondary settings in two columns of expanders, so that the knob below them is in sight on a laptop's
    # screen (1280 × 800) without scrolling: the method's own settings and its gold check on the left; the
    # replicates, the seed, the intruder and the measures' settings on the right.
    c_settings, c_measures = st.columns(2)
    with c_settings, session.area("method_settings", fresh=shown != method):  # the last method's settings go at once
        params = widgets.parameter_widgets(method, dataset, folded=True)
        gold_check.render(method, params)
    with c_measures:
        with st.expander("Replicates and seed"):
            st.session_state.setdefault(session.REPLICATES_KEY, 1)
            st.session_state.setdefault(session.SEED_KEY, 0)
            replicates = int(
                st.number_input(
                    "Replicates (M protected releases per knob value)",
                    min_value=1,
                    max_value=20,
                    step=1,
                    key=session.REPLICATES_KEY,
                    persist_state="session",
                )
            )
            seed = int(
                st.number_input(
                    "Seed", min_value=0, max_value=2**31 - 1, step=1, key=session.SEED_KEY, persist_state="session"
                )
            )
            if protector.deterministic:
                st.caption(
                    "This method is deterministic: every replicate is the same release, so it is measured once per "
                    "setting."
                )
        with st.expander("Intruder and measure settings"):
            intruder = widgets.intruder_picker(dataset)
            values = widgets.setting_widgets(("text", "release"), dataset) | {
                "intruder": intruder,
                "background": session.background(),
            }
    # a setting refused is said in sight, not in the closed expander
    options = session.guarded(lambda: MeasureSettings.from_values(values))
    replicates = compute.effective_replicates(method, replicates)
    if options is None:
        return

    ready = compute.sweep_ready(dataset, method, replicates, seed, params, options) or (
        dataset.n_records > scaled.SAMPLE_FIRST_RECORDS
        and compute.sweep_ready(scaled.sample_of(dataset, seed), method, replicates, seed, params, options)
    )
    with compute.sweep_body(ready):
        # a large table: a sample's sweep first, the full sweep in the background (`dashboard.scaled`)
        shown = scaled.sweep_shown(dataset, method, replicates, seed, params, options)
        if shown is None:
            return
        scaled.note(shown, method, replicates, seed, params, options)
        sweep = shown.sweep
        risk, utility = _measure_pickers(sweep, c_risk, c_utility)
        for line in display.not_measured_lines(sweep.skipped):
            st.caption(line)
        _review_tables(sweep, shown.dataset)

        _at_knob(shown.dataset, method, params, options, seed, sweep, risk, utility, dataset)
        annotate.render(dataset, method, params, seed)
        if not shown.is_sample:  # every method swept on a sample would be another sample's comparison
            _compare_methods(dataset, method, params, replicates, seed, options, risk, utility)


if __name__ == "__main__":
    render()
