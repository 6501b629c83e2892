"""Plans page: a release made of two methods in order, a text method then a field synthesizer (redaction, then
the shrinkage GLM fitted on the redacted text), with one slider per step.

Each value of the first step's knob (`coarse_grid`) has its sweep along the second's (`engine.plan_grid`), a
line of the frontier over the grid of both knobs. The line the first slider stands at is swept first and shown;
the others are swept in the background (`compute.sweep_later`) and join the frontier when the steward adds them
(a button once they are ready; the page is not redrawn under a moving knob), the page saying which are still being
computed. The second slider and every view at its values (the whole-release
measures, the frontier with the current point, the identification bars, sample records of the whole release)
are the knob view the other pages have (`dashboard.knob_view`): a move of it is switched in the browser. A move
of the first slider shows another line's views, built once.
"""

from __future__ import annotations

import streamlit as st

from dashboard import compute, display, knob_view, session, widgets
from dashboard.prepared import prepared
from engine.data.dataset import Dataset
from engine.figures.field_synthesis import identification_bars_figure
from engine.figures.plans import plan_frontier_figure
from engine.measures.base import MetricResult, metric_info
from engine.measures.evaluate import MeasureSettings
from engine.plan_grid import PlanGrid, coarse_grid
from engine.protect import METHODS, method_class
from engine.protect.base import Knob, Protector
from engine.protect.plan.steps import step_ident
from engine.results import SweepResult

FIRST_KEY, THEN_KEY = "plan_first", "plan_then"
RISK = "release_identification_probability"
SHOWN = (RISK, "identification_probability", "classifier_f1_ratio", "pmse_ratio")
SAMPLE_ROWS = 20
POLL_SECONDS = 3.0  # how often the page looks whether a line swept in the background is ready


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
        # The measures' settings as the other pages start them (their quick values: 5 pMSE projections).
        values = widgets.setting_widgets(("text", "categorical", "release"), dataset)
        intruder = widgets.intruder_picker(dataset)
    options = session.guarded(
        lambda: MeasureSettings.from_values(values | {"intruder": intruder, "background": session.background()})
    )
    return None if options is None else (f"{first}+{then}", options, seed)


def _first_step(plan: str) -> type[Protector]:
    return method_class(plan).step_classes[0]  # type: ignore[attr-defined, no-any-return]  # a plan's class


def _line_param(plan: str, value: float) -> dict:
    """The plan's parameter holding its first step's knob at ``value`` (``{"redact__level": 2}``)."""
    first = _first_step(plan)
    return {f"{step_ident(first.name)}__{first.knob.name}": int(value) if first.knob.integer else value}


def _upstream(plan: str) -> float:
    """The first step's slider (a Streamlit widget: the line it names is swept first, the others after)."""
    first = _first_step(plan)
    knob = first.knob
    values = [float(v) for v in coarse_grid(knob)]
    key = f"plan_up::{plan}"
    if st.session_state.get(key) not in values:
        st.session_state[key] = compute.nearest_grid_value(values, knob.default)
    more = "higher" if knob.more_privacy == "higher" else "lower"
    return float(
        st.select_slider(
            f"{first.title}: {knob.label.lower()} ({knob.symbol}) · {more} = more privacy",
            options=values,
            format_func=knob.format,
            key=key,
            help=knob.help or None,
        )
    )


def _grid(
    dataset: Dataset, plan: str, up: float, options: MeasureSettings, seed: int
) -> tuple[PlanGrid, list[float]] | None:
    """The plan's sweep along its last knob at the first knob's value ``up`` (made now, with a progress bar),
    with the lines at the other values of `coarse_grid` this process holds; the lines still being made in the
    background (`compute.sweep_later`) second. One replicate, as every line of the grid (the Plans page's
    sweeps are a grid of them)."""
    knob = _first_step(plan).knob
    if compute.in_background(dataset, plan, 1, seed, _line_param(plan, up), options):
        # The slider moved to a line the background has not finished: waiting on it here would show no progress.
        st.info(
            f"The line at {display.knob_text(knob, up)} is being swept in the background, after the lines before it; "
            "the page shows it when it is ready."
        )
        _wait_for(dataset, plan, [up], options, seed)
        return None
    sweep = compute.sweep_with_progress(dataset, plan, 1, seed, _line_param(plan, up), options)
    if sweep is None:
        return None
    sweeps: dict[float, SweepResult] = {up: sweep}
    pending = []
    for value in (float(v) for v in coarse_grid(knob)):
        if value == up:
            continue
        # (sweep,) when ready, (None,) while it is being made, None when it failed (the error is shown).
        held = session.guarded(
            lambda v=value: (compute.sweep_later(dataset, plan, 1, seed, _line_param(plan, v), options),),  # type: ignore[misc]
            prefix=f"The line at {display.knob_text(knob, value)} could not be swept: ",
        )
        if held is not None and held[0] is not None:
            sweeps[value] = held[0]
        elif held is not None:
            pending.append(value)
    return PlanGrid(plan, knob, dict(sorted(sweeps.items()))), pending


@st.fragment(run_every=POLL_SECONDS)
def _wait_for(dataset: Dataset, plan: str, pending: list[float], options: MeasureSettings, seed: int) -> None:
    """Polls the lines swept in the background (a fragment, every few seconds) and offers to add the ready ones to
    the frontier. The page is not redrawn on its own: adding lines rebuilds every view of the knob (some seconds),
    and a steward moving the knob then would wait behind it. Any run of the page (the first slider, a setting)
    adds them too."""
    knob = _first_step(plan).knob
    ready = [v for v in pending if compute.sweep_ready(dataset, plan, 1, seed, _line_param(plan, v), options)]
    if not ready:
        return
    running = [v for v in pending if v not in ready]
    text = ", ".join(knob.format(v) for v in ready)
    if running:
        text += f" ready; still being swept: {', '.join(knob.format(v) for v in running)}"
    else:
        text += " ready: every line is swept"
    st.caption(f"Lines of {knob.label.lower()} {text}.")
    if st.button(f"Add {display.counted(len(ready), 'ready line')} to the frontier", key=f"plan_add::{plan}"):
        st.rerun(scope="app")


def _lines_caption(grid: PlanGrid, pending: list[float]) -> str:
    up = grid.upstream
    shown = ", ".join(up.format(v) for v in grid.sweeps)
    text = f"Lines of the frontier ({up.label.lower()}): {shown}."
    if pending:
        text += (
            f" Still being swept in the background: {', '.join(up.format(v) for v in pending)}; each can be "
            "added to the frontier when it is ready."
        )
    return text


def _cards(metrics: dict[str, MetricResult]) -> knob_view.Block:
    items = []
    for mid in [m for m in SHOWN if m in metrics]:
        info, m = metric_info(mid), metrics[mid]
        base = metrics.get(mid + "_confidential")
        delta = None
        if base is not None and display.compares_with_unprotected(mid, base, m):
            delta = display.change_text(m.value - base.value)
        items.append(knob_view.card(info.label, display.measure_text(mid, m.value), delta, help=info.meaning))
    return knob_view.cards(items)


def _view_at(
    dataset: Dataset, grid: PlanGrid, up: float, last: float, seed: int, pair: tuple[str | None, str | None]
) -> list[knob_view.Block]:
    """What the page shows at the point (``up``, ``last``): the whole-release cards, the frontier over the grid
    with the point marked, the identification bars, and the first records of the whole release."""
    plan, sweep = grid.method, grid.sweeps[up]
    up_knob, knob = grid.upstream, grid.knob
    out = [_cards(compute.metrics_at(sweep, last))]
    risk, utility = pair
    if risk is not None and utility is not None:
        out.append(knob_view.plot(plan_frontier_figure(grid, risk, utility, current=(up, last)), "plan_frontier"))
    ident = sweep.detail(last, "identification_probability")
    if ident is not None:
        base = sweep.baseline.get("identification_probability_confidential")
        title = (
            f"Identification probability per target at {display.knob_text(up_knob, up)}, "
            f"{display.knob_text(knob, last)}"
        )
        figure = identification_bars_figure(ident, None if base is None else base.detail, title=title)
        out.append(knob_view.plot(figure, "plan_identification"))
    release = compute.get_release(dataset, plan, last, seed, 1, _line_param(plan, up))
    columns = [c for c in release.protected_columns if c in release.data.columns]
    out += [
        knob_view.text("Sample records of the whole release", "heading"),
        knob_view.text(
            "The text and the fields as this plan releases them (replicate 0); the first records.", "caption"
        ),
        knob_view.table(release.data[columns].head(SAMPLE_ROWS), long=["text"]),
    ]
    return out


def _knob(
    dataset: Dataset, grid: PlanGrid, up: float, options: MeasureSettings, seed: int, pending: list[float]
) -> None:
    """The second step's knob with every view at its grid values on the line at ``up`` (built once per set of
    lines ready: the frontier draws them all)."""
    plan, sweep = grid.method, grid.sweeps[up]
    knob = grid.knob
    chosen = grid.chosen(up)
    utilities = compute.metric_ids(sweep, "utility")
    utility = "classifier_f1_ratio" if "classifier_f1_ratio" in utilities else next(iter(utilities), None)
    risk = RISK if RISK in sweep.metric_ids else next(iter(compute.metric_ids(sweep, "risk")), None)

    def build() -> str:
        views = knob_view.each_value(sweep.grid, lambda g: _view_at(dataset, grid, up, g, seed, (risk, utility)))
        return knob_view.payload(knob, sweep.grid, views, label=_knob_label(plan, knob, chosen))

    lines = tuple(sorted(grid.sweeps))
    views = session.guarded(lambda: prepared(sweep, ("plan-views", 1, lines, risk, utility), build, persist=True))
    if views is None:
        return
    st.caption(_lines_caption(grid, pending))
    key = f"plan_last::{plan}::{dataset.fingerprint}"
    session.live_knob(dataset, plan, _line_param(plan, up), options, seed, sweep, views, key, chosen, risk, utility)


def _knob_label(plan: str, knob: Knob, chosen: float) -> str:
    then = method_class(plan).step_classes[-1]  # type: ignore[attr-defined]  # a plan's class
    more = "higher" if knob.more_privacy == "higher" else "lower"
    return (
        f"{then.title}: {knob.label.lower()} ({knob.symbol}) · {more} = more privacy · "
        f"{knob.symbol}* = {knob.format(chosen)} on this line"
    )


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
    up = _upstream(plan)
    got = _grid(dataset, plan, up, options, seed)
    if got is None:
        return
    grid, pending = got
    _knob(dataset, grid, up, options, seed, pending)
    if pending:
        _wait_for(dataset, plan, pending, options, seed)


if __name__ == "__main__":
    render()
