"""Plans page: a release made of two methods in order, a text method then a field synthesizer (redaction, then
the shrinkage GLM fitted on the redacted text), with one slider per step.

Each value of the first step's knob has its sweep along the second's (`engine.plan_grid`); the page draws the
frontier over the grid of both knobs (a line per value of the first knob, the current point marked), the
whole-release measures at the point, the identification bars and sample records of the whole release. A slider
move reads the sweeps, it does not release again.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import compute, display, session, widgets
from engine.data.dataset import Dataset
from engine.figures.field_synthesis import identification_bars_figure
from engine.figures.plans import plan_frontier_figure
from engine.measures.base import metric_info
from engine.measures.evaluate import MeasureSettings
from engine.plan_grid import PlanGrid, coarse_grid
from engine.protect import METHODS, method_class
from engine.protect.plan.steps import step_ident

FIRST_KEY, THEN_KEY = "plan_first", "plan_then"
RISK = "release_identification_probability"
SHOWN = (RISK, "identification_probability", "classifier_f1_ratio", "pmse_ratio")
SAMPLE_ROWS = 20


def _settings(dataset: Dataset) -> tuple[str, MeasureSettings, int] | None:
    """The plan (a text method, then a synthesizer of categorical fields), the measure settings and the seed."""
    if not any(f.kind == "categorical" for f in dataset.schema.fields):
        st.info("This dataset has no categorical field to synthesize. Mark one as categorical on the Data page.")
        return None
    texts = compute.method_names("text")
    fields = compute.method_names("fields", ("categorical",))
    c1, c2 = st.columns(2)
    st.session_state.setdefault(FIRST_KEY, "redact" if "redact" in texts else texts[0])
    st.session_state.setdefault(THEN_KEY, "glm" if "glm" in fields else fields[0])
    first = c1.selectbox("First: protect the text", texts, key=FIRST_KEY, format_func=lambda m: METHODS[m].title)
    then = c2.selectbox(
        "Then: synthesize the fields from the text as released",
        fields,
        key=THEN_KEY,
        format_func=lambda m: METHODS[m].title,
    )
    with st.expander("Measures and seed"):
        st.session_state.setdefault("plan_seed", 0)
        seed = int(st.number_input("Seed", 0, 2**31 - 1, step=1, key="plan_seed"))
        intruder = widgets.intruder_picker(dataset)
    options = session.guarded(
        lambda: MeasureSettings.from_values({"intruder": intruder, "background": session.background()})
    )
    return None if options is None else (f"{first}+{then}", options, seed)


def _grid(dataset: Dataset, plan: str, options: MeasureSettings, seed: int) -> PlanGrid | None:
    """The plan's sweep along its last knob at up to five values of its first knob's grid (`coarse_grid`; each
    kept as the pages' sweeps are: in memory and on disk)."""
    first = method_class(plan).step_classes[0]  # type: ignore[attr-defined]  # a plan's class
    knob = first.knob
    name = f"{step_ident(first.name)}__{knob.name}"
    sweeps = {}
    for value in coarse_grid(knob):
        params = {name: int(value) if knob.integer else value}
        sweep = compute.sweep_with_progress(dataset, plan, 1, seed, params, options)
        if sweep is None:
            return None
        sweeps[float(value)] = sweep
    return PlanGrid(plan, knob, sweeps)


def _cards(grid: PlanGrid, up: float, last: float) -> None:
    metrics = compute.metrics_at(grid.sweeps[up], last)
    shown = [m for m in SHOWN if m in metrics]
    for column, mid in zip(st.columns(max(len(shown), 1)), shown):
        info, m = metric_info(mid), metrics[mid]
        base = metrics.get(mid + "_confidential")
        delta = None
        if base is not None and display.compares_with_unprotected(mid, base, m):
            delta = display.change_text(m.value - base.value)
        column.metric(info.label, display.measure_text(mid, m.value), delta, delta_color="off", help=info.meaning)


def _sample(dataset: Dataset, plan: str, up_param: dict, last: float, seed: int) -> pd.DataFrame:
    """The first records of the whole release at the point: the text and the fields as released."""
    release = compute.get_release(dataset, plan, last, seed, 1, up_param)
    columns = [c for c in release.protected_columns if c in release.data.columns]
    return release.data[columns].head(SAMPLE_ROWS)


@st.fragment
def _at_knobs(dataset: Dataset, plan: str, grid: PlanGrid, seed: int) -> None:
    """One slider per step, and every view at the point they name (rerun alone when a slider moves)."""
    cls = method_class(plan)
    first, then = cls.step_classes  # type: ignore[attr-defined]  # a plan's class
    up_knob, knob = grid.upstream, grid.knob
    values = sorted(grid.sweeps)
    default_up = compute.nearest_grid_value(values, up_knob.default)
    up = st.select_slider(
        f"{first.title}: {up_knob.label.lower()} ({up_knob.symbol})",
        options=values,
        value=st.session_state.get(f"plan_up::{plan}", default_up),
        format_func=up_knob.format,
        key=f"plan_up::{plan}",
    )
    sweep = grid.sweeps[up]
    chosen = grid.chosen(up)
    last = st.select_slider(
        f"{then.title}: {knob.label.lower()} ({knob.symbol}); {knob.symbol}* = {knob.format(chosen)} on this line",
        options=sweep.grid,
        value=compute.nearest_grid_value(sweep.grid, st.session_state.get(f"plan_last::{plan}", chosen)),
        format_func=knob.format,
        key=f"plan_last_slider::{plan}::{up_knob.format(up)}",
    )
    st.session_state[f"plan_last::{plan}"] = last
    _cards(grid, up, last)
    utilities = compute.metric_ids(sweep, "utility")
    utility = "classifier_f1_ratio" if "classifier_f1_ratio" in utilities else next(iter(utilities), None)
    risk = RISK if RISK in sweep.metric_ids else next(iter(compute.metric_ids(sweep, "risk")), None)
    if risk is not None and utility is not None:
        st.plotly_chart(plan_frontier_figure(grid, risk, utility, current=(up, last)), key="plan_frontier")
    ident = sweep.detail(last, "identification_probability")
    if ident is not None:
        base = sweep.baseline.get("identification_probability_confidential")
        st.plotly_chart(
            identification_bars_figure(
                ident,
                None if base is None else base.detail,
                title=f"Identification probability per target at {up_knob.symbol} = {up_knob.format(up)}, "
                f"{knob.symbol} = {knob.format(last)}",
            ),
            key="plan_identification",
        )
    st.subheader("Sample records of the whole release")
    st.caption("The text and the fields as this plan releases them (replicate 0); the first records.")
    up_param = {f"{step_ident(first.name)}__{up_knob.name}": int(up) if up_knob.integer else up}
    table = session.guarded(lambda: _sample(dataset, plan, up_param, last, seed))
    if table is not None:
        st.dataframe(table, hide_index=True)


def render() -> None:
    """The Plans page."""
    st.title("Plans")
    dataset = session.page_dataset()
    if dataset is None:
        return
    st.caption(
        f"Dataset: {display.md_escape(dataset.name)} · {display.counted(dataset.n_records, 'record')} · the text "
        "protected first, then the sensitive fields synthesized from the text as released: one release"
    )
    settings = _settings(dataset)
    if settings is None:
        return
    plan, options, seed = settings
    st.caption(display.md_escape(method_class(plan).description))
    grid = _grid(dataset, plan, options, seed)
    if grid is not None:
        _at_knobs(dataset, plan, grid, seed)


if __name__ == "__main__":
    render()
