"""Protect page: pick a method, drag its knob, and watch risk, utility, the attack and sample texts move.

The sweep over the knob's grid runs once per (dataset, method, replicates, seed); a slider move reruns only the
part below the knob (a fragment), which reads the sweep and the releases it kept (no refit, no re-sweep).
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from dashboard import compute, display, loading, session, widgets
from dashboard.prepared import Job, prepare_in_background, prepared
from engine.data.dataset import Dataset
from engine.figures.text import (
    attack_bars_figure,
    cosine_by_author_figure,
    frontier_figure,
    methods_frontier_figure,
    metric_along_knob_figure,
)
from engine.measures.base import MetricResult, metric_info
from engine.measures.options import TEXT_OPTIONS, MeasureOptions
from engine.protect import METHODS
from engine.protect.base import Knob, Release
from engine.report import samples as sampling
from engine.results import SweepResult

ATTACK = "attack_identification_rate"
MAX_SAMPLES = 10


def _valid_choice(key: str, options: list, default) -> None:
    """Reset a stored widget value that the current options no longer hold (another dataset or method)."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else options[0]


def _measure_pickers(sweep: SweepResult, risk_col, utility_col) -> tuple[str | None, str | None]:
    risks, utilities = compute.metric_ids(sweep, "risk"), compute.metric_ids(sweep, "utility")
    chosen: list[str | None] = []
    for col, options, default, key, label in (
        (risk_col, risks, session.DEFAULT_RISK, session.RISK_KEY, "Risk measure"),
        (utility_col, utilities, session.DEFAULT_UTILITY, session.UTILITY_KEY, "Utility measure"),
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


def _knob_slider(knob: Knob, grid: list[float], method: str) -> float:
    """The knob's slider, built from its description; returns the current value."""
    key = session.knob_key(method)
    more = "higher" if knob.more_privacy == "higher" else "lower"
    label = f"{knob.label} ({knob.symbol}) · {more} = more privacy"
    default = compute.nearest_grid_value(grid, knob.default)
    if knob.integer or knob.grid or knob.scale == "log":
        # Grid values, evenly spaced on the slider: a log-scale knob moves by equal ratios.
        if st.session_state.get(key) not in grid:
            st.session_state[key] = default
        return float(
            st.select_slider(
                label, options=grid, format_func=knob.format, key=key, help=knob.help or None, persist_state="session"
            )
        )
    steps = np.diff(grid)
    step = float(steps[0]) if len(steps) and np.allclose(steps, steps[0]) else None
    stored = st.session_state.get(key)
    if not isinstance(stored, float) or not knob.low <= stored <= knob.high:
        st.session_state[key] = float(default)
    return float(
        st.slider(
            label,
            float(knob.low),
            float(knob.high),
            step=step,
            key=key,
            help=knob.help or None,
            persist_state="session",
        )
    )


def _fmt(v: float | None) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _metric_card(sweep: SweepResult, mid: str, m: MetricResult, base: MetricResult | None) -> None:
    info = metric_info(mid)
    delta, colour = None, "off"
    if base is not None and not math.isnan(base.value) and not math.isnan(m.value):
        d = m.value - base.value
        delta = f"{d:+.3f} vs unprotected"
        colour = "off" if abs(d) < 5e-4 else ("inverse" if info.better == "lower" else "normal")
    if sweep.replicates > 1 and m.lo is not None and m.hi is not None:
        interval = f"95% interval over {sweep.replicates} replicates: {_fmt(m.lo)} to {_fmt(m.hi)}"
    else:
        interval = "One release per setting, so no interval (deterministic method or M = 1)"
    better = info.better_text
    meaning = " ".join(filter(None, [info.meaning, sweep.notes.get(mid, "")]))
    st.metric(info.label, _fmt(m.value), delta, delta_color=colour, help=f"{meaning}\n\n{interval}.", border=True)
    st.caption(f"{info.kind.capitalize()}, {better}. {display.md_escape(meaning)} {interval}.")


def _metric_cards(sweep: SweepResult, metrics: dict[str, MetricResult]) -> None:
    """One card per measure at the current knob, side by side: value, change from the unprotected data,
    interval over replicates and what the measure means."""
    ids = sweep.metric_ids
    per_row = len(ids) if len(ids) <= 4 else math.ceil(len(ids) / 2)  # two rows rather than clipped labels
    for start in range(0, len(ids), max(per_row, 1)):
        row = ids[start : start + per_row]
        for mid, col in zip(row, st.columns(per_row)):
            with col:
                _metric_card(sweep, mid, metrics[mid], metrics.get(mid + "_confidential"))


def _choose_for_me(sweep: SweepResult, risk: str, utility: str, knob: Knob, method: str) -> float | None:
    """The steward's rule; returns the knob value it picks (None if it picks none)."""
    if prepared(sweep, ("unprotected", risk, utility), lambda: compute.unprotected_everywhere(sweep, risk, utility)):
        st.warning(
            f"Every setting leaves the {metric_info(risk).label.lower()} at its level on the unprotected data, so "
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
            "lower": f"Highest acceptable {info.label.lower()}",
            "higher": f"Lowest acceptable {info.label.lower()}",
            "one": f"Acceptable {info.label.lower()} (as far from 1 as)",
        }[info.better]
        limit = st.number_input(
            label,
            min_value=0.0,
            value=start,
            step=0.005,
            format="%.3f",
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


def _frontier_job(sweep: SweepResult, risk: str, utility: str, at: float, chosen: float | None) -> Job:
    return ("frontier", risk, utility, at, chosen), lambda: frontier_figure(
        sweep, risk, utility, current=at, chosen=chosen
    )


def _attack_job(sweep: SweepResult, at: float, targets: list[str]) -> Job:
    return ("attack", at, tuple(targets)), lambda: attack_bars_figure(
        sweep.detail(at, ATTACK, replicate=0), list(targets)
    )


def _cosine_job(sweep: SweepResult, utility: str, at: float) -> Job:
    return ("cosine", utility, at), lambda: cosine_by_author_figure(
        sweep.detail(at, utility, replicate=0), metric_info(utility).label
    )


def _samples_job(sweep: SweepResult, dataset: Dataset, release: Release, records: list[int]) -> Job:
    """The marked-up original and protected versions of the ``records`` the release changed."""
    return ("samples", release.knob, tuple(records)), lambda: [
        display.sample_html(dataset, release, r) for r in sampling.changed_records(dataset, release, records)
    ]


def _attack_section(sweep: SweepResult, dataset: Dataset, method: str, at: float) -> list[str]:
    """The intruder's per-target scores at ``at``; returns the targets shown."""
    detail = sweep.detail(at, ATTACK, replicate=0)
    if detail is None or detail.empty:
        return []
    st.subheader("Who the intruder picks out")
    targets = sorted(map(str, detail["target"].unique()))
    key = f"targets::{dataset.fingerprint[:12]}::{method}"
    stored = st.session_state.get(key)
    if not isinstance(stored, list) or any(t not in targets for t in stored):
        st.session_state[key] = sampling.attack_targets(detail)
    chosen = st.multiselect(
        "Targets",
        targets,
        key=key,
        max_selections=8,
        persist_state="session",
        help="People the intruder holds other texts of. Each panel shows, for every released "
        "user, the share of their records the intruder's classifier assigns to the target.",
    )
    if not chosen:
        st.info("Choose one or more targets to see the intruder's scores.")
        return []
    st.plotly_chart(prepared(sweep, *_attack_job(sweep, at, chosen)), key="attack_bars")
    st.caption("Per-target detail of replicate 0 at this setting.")
    return list(chosen)


def _utility_detail(sweep: SweepResult, utility: str | None, at: float) -> None:
    detail = sweep.detail(at, utility, replicate=0) if utility else None
    if detail is None or "cosine" not in detail.columns:
        return
    with st.expander("Utility per author"):
        st.plotly_chart(prepared(sweep, *_cosine_job(sweep, utility, at)), key="cosine_by_author")


def _samples(
    sweep: SweepResult, dataset: Dataset, method: str, value: float, seed: int, knob: Knob, params: dict
) -> None:
    replicates = sweep.replicates
    st.subheader("Sample protected records")
    release = session.guarded(lambda: compute.get_release(dataset, method, value, seed, replicates, params))
    chosen = session.guarded(lambda: compute.sample_records(dataset, method, seed, replicates, MAX_SAMPLES, params))
    if release is None or chosen is None:
        return
    for text in release.info.values():
        if isinstance(text, str) and text:
            st.caption(f"At {display.md_escape(display.knob_text(knob, value))}: {display.md_escape(text)}")
    changed = prepared(sweep, *_samples_job(sweep, dataset, release, chosen))
    if not changed:
        st.info(f"No sample record is changed at {display.knob_text(knob, value)}.")
        return
    st.caption(
        f"{len(changed)} records changed at this setting; the same records at every setting. "
        "Red: what was removed; green: what replaced it."
    )
    st.html(display.SAMPLE_CSS)
    for block in changed[:MAX_SAMPLES]:
        st.markdown(block, unsafe_allow_html=True)


def _compare_methods(
    dataset: Dataset,
    method: str,
    params: dict,
    replicates: int,
    seed: int,
    options: MeasureOptions,
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
    if not ready and not st.session_state.get(key):
        titles = ", ".join(METHODS[m].title for m in methods)
        st.caption(
            f"One figure with every text method along its knob on this data: {display.md_escape(titles)}. Each "
            "sweep runs once (training the neural generator takes a few minutes) and is kept for this session."
        )
        if not st.button("Compare the methods", key=f"{key}::go"):
            return
        st.session_state[key] = True
    sweeps = []
    for m, p in settings:
        sweep = compute.sweep_with_progress(dataset, m, replicates, seed, p, options)
        if sweep is not None:
            sweeps.append((METHODS[m].title, sweep))
    st.plotly_chart(methods_frontier_figure(sweeps, risk, utility), key="methods_frontier")
    st.caption(
        f"Same data, measures, replicates (M = {replicates}) and seed for every method; "
        f"the method in use with the settings above, the others with their defaults."
    )


def _author_texts(
    dataset: Dataset, method: str, value: float, seed: int, replicates: int, knob: Knob, params: dict
) -> None:
    """One author's original texts beside their released texts at the current knob."""
    author = dataset.schema.author
    if author is None:
        return
    release = session.guarded(lambda: compute.get_release(dataset, method, value, seed, replicates, params))
    if release is None:
        return
    st.subheader("One author's texts, original and released")
    counts = dataset.frame[author].astype(str).value_counts()
    authors = counts.index.tolist()
    key = f"author_texts::{dataset.fingerprint[:12]}"
    _valid_choice(key, authors, authors[0])
    who = st.selectbox("Author", authors, key=key, persist_state="session", help="Authors with the most records first.")
    rows = np.flatnonzero(dataset.frame[author].astype(str).to_numpy() == who)[:MAX_SAMPLES]
    text = dataset.schema.text
    left, right = st.columns(2)
    left.markdown("**Original**")
    right.markdown(f"**Released at {display.md_escape(display.knob_text(knob, value))}**")
    for row in rows:
        left.text(str(dataset.frame[text].iloc[row]))
        right.text(str(release.data[text].iloc[row]))
    if counts[who] > MAX_SAMPLES:
        st.caption(f"The first {MAX_SAMPLES} of {counts[who]:,} records by this author.")


@st.fragment
def _at_knob(
    dataset: Dataset,
    method: str,
    params: dict,
    options: MeasureOptions,
    seed: int,
    sweep: SweepResult,
    risk: str | None,
    utility: str | None,
) -> None:
    """Everything that follows the knob, rerun alone when the slider moves (a Streamlit fragment): the sweep,
    the releases it kept and the page's other settings are not touched."""
    knob = sweep.knob
    value = _knob_slider(knob, sweep.grid, method)
    at = compute.nearest_grid_value(sweep.grid, value)
    metrics = compute.metrics_at(sweep, value)
    st.caption(f"Current knob: {display.md_escape(display.knob_text(knob, value))}")
    if not np.isclose(at, value):
        st.caption(
            f"Measures are shown at the nearest measured setting, {display.md_escape(display.knob_text(knob, at))}."
        )
    point = " · ".join(
        f"{what} {_fmt(metrics[m].value)}" for what, m in (("Risk", risk), ("Utility", utility)) if m is not None
    )
    if point:
        names = " · ".join(metric_info(m).label for m in (risk, utility) if m is not None)
        st.caption(f"{point} ({display.md_escape(names)})")

    _metric_cards(sweep, metrics)
    left, right = st.columns([3, 1], gap="large")
    chosen_knob = None
    with right:
        if risk is not None and utility is not None:
            with st.container(border=True):
                st.markdown("**Choose for me**")
                chosen_knob = _choose_for_me(sweep, risk, utility, knob, method)
    with left:
        if risk is not None and utility is not None:
            st.plotly_chart(prepared(sweep, *_frontier_job(sweep, risk, utility, at, chosen_knob)), key="frontier")
        else:
            for mid in sweep.metric_ids:
                figure = prepared(
                    sweep, ("along", mid, value), lambda mid=mid: metric_along_knob_figure(sweep, mid, current=value)
                )
                st.plotly_chart(figure, key=f"along::{mid}")
            if risk is None:
                st.info(
                    "No risk measure applies to this dataset, so there is no risk–utility frontier; "
                    "the reasons are listed above."
                )

    session.choose(dataset, method, value, seed, sweep, params, options, risk=risk, utility=utility)

    targets = _attack_section(sweep, dataset, method, at)
    _utility_detail(sweep, utility, at)
    _samples(sweep, dataset, method, value, seed, knob, params)
    _author_texts(dataset, method, value, seed, sweep.replicates, knob, params)
    _prepare_other_values(sweep, dataset, method, params, seed, risk, utility, chosen_knob, targets)


def _prepare_other_values(
    sweep: SweepResult,
    dataset: Dataset,
    method: str,
    params: dict,
    seed: int,
    risk: str | None,
    utility: str | None,
    chosen_knob: float | None,
    targets: list[str],
) -> None:
    """The figures and samples of every other grid value, built in the background with the measures, targets
    and suggestion now on the page, so that the first move to any value draws what is ready."""

    def jobs() -> list[Job]:
        records = session.guarded(
            lambda: compute.sample_records(dataset, method, seed, sweep.replicates, MAX_SAMPLES, params)
        )
        out: list[Job] = []
        for g in sweep.grid:
            if risk is not None and utility is not None:
                out.append(_frontier_job(sweep, risk, utility, g, chosen_knob))
            if utility is not None and "cosine" in getattr(sweep.detail(g, utility, replicate=0), "columns", ()):
                out.append(_cosine_job(sweep, utility, g))
            if targets:
                out.append(_attack_job(sweep, g, targets))
            if records:
                release = compute.get_release(dataset, method, g, seed, sweep.replicates, params)
                out.append(_samples_job(sweep, dataset, release, records))
        return out

    prepare_in_background(sweep, ("protect", risk, utility, chosen_knob, tuple(targets)), jobs)


def render() -> None:
    """The Protect page."""
    st.title("Protect")
    dataset = session.page_dataset()
    if dataset is None:
        return
    counts = loading.dataset_counts(dataset)
    st.caption(f"Dataset: {display.md_escape(dataset.name)} · {counts['records']:,} records")

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
    params = widgets.parameter_widgets(method, dataset)
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
                "This method is deterministic: every replicate is the same release, so it is measured once per setting."
            )
    replicates = compute.effective_replicates(method, replicates)
    with st.expander("Measure settings"):
        options = session.guarded(lambda: MeasureOptions.from_values(widgets.option_widgets(TEXT_OPTIONS, dataset)))
    if options is None:
        return

    sweep = compute.sweep_with_progress(dataset, method, replicates, seed, params, options)
    if sweep is None:
        return
    risk, utility = _measure_pickers(sweep, c_risk, c_utility)
    for line in display.not_measured_lines(sweep.skipped):
        st.caption(line)

    _at_knob(dataset, method, params, options, seed, sweep, risk, utility)
    _compare_methods(dataset, method, params, replicates, seed, options, risk, utility)


if __name__ == "__main__":
    render()
