"""Synthesize page: replace sensitive categorical fields by draws from a model of each field given the text.

Choose and order the fields and the method (shrinkage GLM, knob λ; CART, knob α), drag the knob on its log
scale, and read what the paper reads: model size along the knob, the pMSE ratio and the λ* it recommends,
identification probabilities per target against the unprotected data, cell differences, topic content and
prevalence, and sample records with their confidential and synthetic values. The sweep over the knob's grid
runs once per setting; every grid value's view is built from it once and a slider move is drawn in the browser
(`dashboard.knob_view`).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import compute, display, knob_view, session, widgets
from dashboard.prepared import prepared
from engine.data.dataset import Dataset
from engine.figures.field_synthesis import (
    cell_difference_figure,
    complexity_figure,
    content_correlation_figure,
    identification_bars_figure,
    pmse_ratio_figure,
    prevalence_figure,
)
from engine.frontier import PmseChoice, select_by_pmse_ratio
from engine.measures.base import MetricResult, metric_info
from engine.measures.evaluate import MeasureSettings
from engine.measures.utility.topics import prevalence_intervals
from engine.protect import METHODS
from engine.protect.base import Release
from engine.protect.field_synthesis.sequential import FieldDraws
from engine.results import SweepResult

METHOD_KEY = session.SYNTH_METHOD_KEY


def knob_key(method: str, fingerprint: str) -> str:
    return f"synth_knob::{method}::{fingerprint[:12]}"


def _settings(dataset: Dataset) -> compute.Settings | None:
    categorical = [f.name for f in dataset.schema.fields if f.kind == "categorical"]
    if not categorical:
        st.info("This dataset has no categorical field to synthesize. Mark one as categorical on the Data page.")
        return None
    methods = compute.method_names("fields", ("categorical",))
    c1, c2 = st.columns([1, 2])
    with c1:
        if st.session_state.get(METHOD_KEY) not in methods:
            st.session_state[METHOD_KEY] = methods[0]
        method = st.radio(
            "Synthesizer", methods, key=METHOD_KEY, format_func=lambda m: METHODS[m].title, persist_state="session"
        )
        st.caption(display.md_escape(METHODS[method].description))
    with c2:
        params = widgets.parameter_widgets(method, dataset, kinds=("categorical",))
        fields = list(params.get("fields") or ())
        if fields:
            st.caption(
                "Order: " + " → ".join(display.md_escape(f) for f in fields) + ". The first field is "
                "modelled on the text alone; each later one on the text and the fields before it."
            )
    with st.expander("Replicates, measures and seed"):
        a, b = st.columns(2)
        st.session_state.setdefault("synth_replicates", 3)
        st.session_state.setdefault("synth_seed", 0)
        replicates = int(
            a.number_input(
                "Synthetic datasets M",
                1,
                20,
                step=1,
                key="synth_replicates",
                persist_state="session",
                help="Releases per knob value; the paper uses 20. Measures are averaged over them.",
            )
        )
        seed = int(b.number_input("Seed", 0, 2**31 - 1, step=1, key="synth_seed", persist_state="session"))
        values = widgets.setting_widgets(("categorical", "release"), dataset, fields)
    options = session.guarded(
        lambda: MeasureSettings.from_values(
            values | {"intruder": widgets.intruder_picker(dataset), "background": session.background()},
            tuple(params.get("vendor_keywords", ())),
        )
    )
    if options is None:
        return None
    return method, params, options, replicates, seed


def _use_best(method: str, fingerprint: str, value: float) -> None:
    st.session_state[knob_key(method, fingerprint)] = value


def _cards(method: str, metrics: dict[str, MetricResult], replicates: int) -> knob_view.Block:
    """The worst applicable attack's card, a card for each measure the method declares first
    (`Protector.shown_first`) of categorical fields, and the risks every page shows (`Measure.on_every_page`)."""
    items = []
    first = [m for m in METHODS[method].shown_first if m in metrics and metric_info(m).applies_to == "categorical"]
    for mid in [m for m in first if m != knob_view.worst_attack_id(metrics)]:  # the worst attack: its own card
        info, m = metric_info(mid), metrics[mid]
        base = metrics.get(mid + "_confidential")
        delta, tone = None, "off"
        if base is not None and display.compares_with_unprotected(mid, base, m):
            delta = display.change_text(m.value - base.value)
            tone = display.delta_tone(info, m.value, base.value)
        interval = (
            f"95% range over {replicates} synthetic datasets: "
            f"{display.measure_text(mid, m.lo)} to {display.measure_text(mid, m.hi)}"
            if replicates > 1
            else "One synthetic dataset per setting"
        )
        help_text = f"{info.meaning}\n\n{interval}. {info.better_text.capitalize()}."
        items.append(knob_view.card(info.label, display.measure_text(mid, m.value), delta, tone, help=help_text))
    worst = knob_view.worst_attack_card(metrics)
    items = ([] if worst is None else [worst]) + items + knob_view.every_page_cards(metrics)
    return knob_view.cards(items, per_row=3)  # six cards side by side would cut their labels short


def _sample_blocks(dataset: Dataset, release: Release, only_changed: bool) -> list[knob_view.Block]:
    draws = release.detail(FieldDraws)
    if draws is None:
        return []
    d = draws.table
    wide = d.pivot(index="record", columns="field")
    table = pd.DataFrame(
        {"row": wide.index + 1, "text": dataset.frame[dataset.schema.text].iloc[wide.index].astype(str).to_numpy()}
    )
    bars = []
    for f in dict.fromkeys(d["field"]):
        table[f"{f}: confidential"] = wide[("original", f)].to_numpy()
        table[f"{f}: released"] = wide[("synthetic", f)].to_numpy()
        table[f"{f}: P(confidential)"] = wide[("p_original", f)].to_numpy()
        bars.append(f"{f}: P(confidential)")
    if only_changed:
        table = table[(wide["original"] != wide["synthetic"]).any(axis=1).to_numpy()]
    shown = min(len(table), knob_view.MAX_TABLE_ROWS)
    return [
        knob_view.text("Sample records", "heading"),
        knob_view.text(
            f"Replicate 0 at this setting; P(confidential) is the probability the synthesizer gave the confidential "
            f"value (Schneider et al. 2023, Table 6). The first {shown:,} of {len(table):,} records.",
            "caption",
        ),
        knob_view.table(table, bars=bars, long=["text"]),
    ]


def figures_at(sweep: SweepResult, at: float, choice: PmseChoice | None) -> dict[str, go.Figure]:
    """The page's figures at grid value ``at`` by name."""
    knob = sweep.knob
    out: dict[str, go.Figure] = {}
    if sweep.complexity is not None:
        best = None if choice is None else choice.best
        out["synth_complexity"] = complexity_figure(sweep.complexity, knob, current=at, best=best)
    if "pmse_ratio" in sweep.metric_ids:
        out["synth_pmse"] = pmse_ratio_figure(sweep, choice, current=at)
    ident = sweep.detail(at, "identification_probability")
    if ident is not None:
        base = sweep.baseline.get("identification_probability_confidential")
        out["synth_identification"] = identification_bars_figure(
            ident,
            None if base is None else base.detail,
            title=f"Identification probability per target at {knob.symbol} = {knob.format(at)}",
        )
    one, two = sweep.detail(at, "cell_difference_1way"), sweep.detail(at, "cell_difference_2way")
    if one is not None or two is not None:
        out["synth_cells"] = cell_difference_figure(one, two)
    content = sweep.detail(at, "topic_content_correlation")
    if content is not None:
        out["synth_content"] = content_correlation_figure(content)
    prev = sweep.detail(at, "topic_prevalence_ratio")
    base = sweep.baseline.get("topic_prevalence_ratio_confidential")
    if prev is not None and base is not None and base.detail is not None:
        conf = base.detail[base.detail["chosen"]] if "chosen" in base.detail.columns else base.detail
        out["synth_prevalence"] = prevalence_figure(conf, prevalence_intervals(prev))
    return out


def _view_at(
    sweep: SweepResult,
    dataset: Dataset,
    release: Release,
    at: float,
    choice: PmseChoice | None,
    only_changed: bool,
    pair: tuple[str | None, str | None],
) -> list[knob_view.Block]:
    """What the page shows at grid value ``at``: the cards, the frontier of the measures ``pair``, the paper's
    figures and sample records."""
    figures = figures_at(sweep, at, choice)
    metrics = compute.metrics_at(sweep, at)

    def charts(*names: str) -> list[knob_view.Block]:
        return [knob_view.plot(figures[n], n) for n in names if n in figures]

    out = [_cards(sweep.method, metrics, sweep.replicates)]
    out += compute.frontier_blocks(sweep, *pair, at, "synth_frontier")
    out.append(knob_view.row(charts("synth_complexity"), charts("synth_pmse")))
    out += charts("synth_identification")
    if "synth_identification" not in figures and "identification_probability" in sweep.skipped:
        out.append(
            knob_view.text(
                f"Identification probability not measured: {sweep.skipped['identification_probability']}.", "caption"
            )
        )
    out.append(knob_view.row(charts("synth_cells"), charts("synth_content")))
    out += charts("synth_prevalence")
    if "topic_prevalence_ratio" in metrics:
        m = metrics["topic_prevalence_ratio"]
        out.append(
            knob_view.text(
                f"Average ratio of the synthetic to the confidential prevalence coefficient: {display.measure_text('topic_prevalence_ratio', m.value)} "
                "(Table 5; 1 = kept, below 1 = shrunk).",
                "caption",
            )
        )
    return out + _sample_blocks(dataset, release, only_changed)


@st.fragment
def _at_knob(
    dataset: Dataset, method: str, params: dict, options: MeasureSettings, seed: int, sweep: SweepResult
) -> None:
    """The recommendation, the knob and every view that follows it (`dashboard.knob_view`), rerun alone when
    the settings beside the views change (a Streamlit fragment): the sweep and the releases it kept are read,
    not recomputed."""
    knob = sweep.knob
    choice = None
    if "pmse_ratio" in sweep.metric_ids:
        choice = session.guarded(
            lambda: prepared(sweep, ("pmse_choice",), lambda: select_by_pmse_ratio(sweep.summary, knob.symbol))
        )
    if choice is not None:
        c1, c2 = st.columns([4, 1])
        c1.info(
            f"Recommended: **{display.md_escape(knob.symbol)}\\* = {knob.format(choice.best)}** — "
            f"{display.md_escape(choice.why)}."
        )
        c2.button(
            f"Use {knob.symbol}*",
            key="synth_use_best",
            on_click=_use_best,
            args=(method, dataset.fingerprint, choice.best),
        )
    for line in display.not_measured_lines(sweep.skipped):
        st.caption(line)
    only_changed = st.toggle("Sample records: only those whose released value differs", key="synth_only_changed")

    risk = next(iter(compute.metric_ids(sweep, "risk")), None)
    utility = (
        "topic_content_correlation"
        if "topic_content_correlation" in sweep.metric_ids
        else next(iter(compute.metric_ids(sweep, "utility")), None)
    )

    def build() -> str:
        def view_at(g: float) -> list[knob_view.Block]:
            release = compute.get_release(dataset, method, g, seed, sweep.replicates, params)
            return _view_at(sweep, dataset, release, g, choice, only_changed, (risk, utility))

        views = knob_view.each_value(sweep.grid, view_at)
        more = "higher" if knob.more_privacy == "higher" else "lower"
        label = f"{knob.label} ({knob.symbol}) · log scale · {more} = more privacy"
        return knob_view.payload(knob, sweep.grid, views, label=label)

    best = None if choice is None else choice.best
    payload = session.guarded(lambda: prepared(sweep, ("synthesize-views", 2, best, only_changed), build, persist=True))
    if payload is None:
        return
    default = best if best is not None else compute.nearest_grid_value(sweep.grid, knob.default)
    key = knob_key(method, dataset.fingerprint)
    session.live_knob(dataset, method, params, options, seed, sweep, payload, key, default, risk, utility)


def render() -> None:
    """The Synthesize page."""
    st.title("Synthesize fields")
    started = compute.page_sweep(
        "the text is released as it is but for the identifiers the release guard takes out; the chosen fields are "
        "replaced by synthetic values.",
        _settings,
    )
    if started is None:
        return
    dataset, (method, params, options, replicates, seed), sweep, body = started
    with body:
        _at_knob(dataset, method, params, options, seed, sweep)


if __name__ == "__main__":
    render()
