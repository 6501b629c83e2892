"""Compare page: several protection methods on the loaded data, one seed and one frontier (`engine.compare`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import compute, display, pins, session, widgets
from engine.compare import Comparison, applicable_methods
from engine.figures.text import comparison_figure
from engine.measures.base import metric_info
from engine.measures.settings import MeasureSettings
from engine.protect import method_class

CHOSEN_KEY = "compare_methods"
PLAN_FIRST_KEY, PLAN_THEN_KEY = "plan_first", "plan_then"  # the Plans page's steps
STARTED_KEY = "compare_started"
REQUESTED_KEY = "compare_requested"


def _request() -> None:
    """The Compare button's callback: Streamlit calls it at the start of the next run, before the page is drawn
    and whether or not the button is drawn again, so a click made while the page still shows the previous
    selection is not lost, and the run it starts compares the methods chosen by then."""
    st.session_state[REQUESTED_KEY] = True


def _applicable(dataset) -> list[str]:
    """The methods whose settings can apply to this data at their defaults (the others say why on their page),
    and the plan the Plans page shows (its first step at its default), where both its steps apply."""
    names = [name for name, refused in applicable_methods(dataset).items() if not refused]
    first, then = st.session_state.get(PLAN_FIRST_KEY, "redact"), st.session_state.get(PLAN_THEN_KEY, "glm")
    return names + ([f"{first}+{then}"] if first in names and then in names else [])


def render() -> None:
    st.title("Compare methods")
    dataset = session.page_dataset()
    if dataset is None:
        return
    _methods_frontier(dataset)
    pins.panel(dataset)


def _methods_frontier(dataset) -> None:
    """Several methods swept on the loaded data and put on one frontier."""
    st.caption(
        f"Dataset: {display.md_escape(dataset.name)} · {display.counted(dataset.n_records, 'record')} · each method swept along its "
        "knob at its default settings, with the same seed, replicates and measures; those measured on the same task on "
        "one frontier"
    )
    options = _applicable(dataset)
    if not options:
        st.info("No protection method applies to this data at its default settings; map its columns on the Data page.")
        return
    before = st.session_state.get(CHOSEN_KEY)
    kept = [m for m in before if m in options] if isinstance(before, list) else []  # those this data allows
    if kept != before:
        st.session_state[CHOSEN_KEY] = (
            kept or [m for m in options if method_class(m).changes == "text"][:3] or options[:2]
        )
    chosen = st.multiselect(
        "Methods",
        options,
        format_func=lambda m: method_class(m).title,
        key=CHOSEN_KEY,
        persist_state="session",
        help="Each is swept once and kept (the neural generator trains for a few minutes).",
    )
    c1, c2 = st.columns(2)
    st.session_state.setdefault(session.REPLICATES_KEY, 1)
    st.session_state.setdefault(session.SEED_KEY, 0)
    replicates = int(
        c1.number_input("Replicates (M)", 1, 20, step=1, key=session.REPLICATES_KEY, persist_state="session")
    )
    seed = int(c2.number_input("Seed", 0, 2**31 - 1, step=1, key=session.SEED_KEY, persist_state="session"))
    if len(chosen) < 2:
        st.info("Choose at least two methods to compare.")
        return
    measures = MeasureSettings(intruder=widgets.intruder_picker(dataset), background=session.background())
    ready = all(compute.sweep_ready(dataset, m, replicates, seed, {}, measures) for m in chosen)
    settings = (dataset.fingerprint, tuple(chosen), replicates, seed)
    if st.session_state.pop(REQUESTED_KEY, False):
        st.session_state[STARTED_KEY] = settings
    started = st.session_state.get(STARTED_KEY) == settings
    # The button's place. While the methods are swept it holds the same button (one key: the page redraws it in
    # place), disabled and saying so, rather than leaving the faded button of the last run to invite a second
    # click; emptied once they are.
    start = st.empty()
    if not ready and not started:
        start.button("Compare", type="primary", key="compare_start", on_click=_request)
        return
    if not ready:
        label = f"Comparing {display.counted(len(chosen), 'method')}…"
        start.button(label, type="primary", key="compare_start", disabled=True)
    comparison = compute.comparison(dataset, [(m, {}) for m in chosen], replicates, seed, measures)
    start.empty()
    if len(comparison.sweeps) < len(chosen):
        return
    pair = session.guarded(comparison.default_pair)
    if pair is None:
        return
    risks, utilities = comparison.common("risk"), comparison.common("utility")
    c_risk, c_utility = st.columns(2)
    risk = c_risk.selectbox("Risk", risks, index=risks.index(pair[0]), format_func=display.metric_label)
    utility = c_utility.selectbox(
        "Utility", utilities, index=utilities.index(pair[1]), format_func=display.metric_label
    )
    st.plotly_chart(comparison_figure(comparison, risk, utility), key="compare_frontier")
    st.caption(display.md_escape(comparison.task_line(risk, utility)))
    for why in comparison.apart(risk, utility).values():
        st.warning(display.md_escape(why))
    st.dataframe(_table(comparison, risk, utility), hide_index=True, key="compare_table")
    detection = _detection_table(comparison)
    if len(detection):
        st.caption(
            display.md_escape(
                "Detection found: where a method's protection depends on finding things in the text, the share its "
                f"detector finds on {' and '.join(comparison.detection_golds())}, with its 95% interval; what it "
                "misses is left in the release."
            )
        )
        st.dataframe(detection, hide_index=True, key="compare_detection")


def _with_interval(metric_id: str, mean: float, lo: float, hi: float) -> str:
    """ "0.070 [0.061, 0.079]", or the mean alone where the replicates did not differ, each number as the measure
    is shown everywhere (`MetricInfo.format`: a count whole)."""
    info = metric_info(metric_id)
    if abs(hi - lo) < 5e-4:
        return info.format(mean)
    return f"{info.format(mean)} [{info.format(lo)}, {info.format(hi)}]"


def _on_frontier(unprotected: bool, pareto: bool) -> str:
    return "protects nothing" if unprotected else ("yes" if pareto else "")


def _table(comparison: Comparison, risk: str, utility: str) -> pd.DataFrame:
    """The frontier's points as the page lists them: method, knob value, both measures with their intervals,
    and whether the point is on the frontier across methods (or measured on another task, `Comparison.apart`)."""
    front = comparison.frontier(risk, utility)
    rows = []
    for r in front.itertuples(index=False):
        knob = comparison.sweeps[r.method].knob
        rows.append(
            {
                "Method": method_class(r.method).title,
                "Knob": display.knob_text(knob, r.knob),
                display.metric_label(risk): _with_interval(risk, r.risk, r.risk_lo, r.risk_hi),
                display.metric_label(utility): _with_interval(utility, r.utility, r.utility_lo, r.utility_hi),
                "On the frontier": "another task" if r.apart else _on_frontier(r.unprotected, r.pareto),
            }
        )
    return pd.DataFrame(rows)


def _detection_table(comparison: Comparison) -> pd.DataFrame:
    """What each method whose protection depends on detection finds on gold, per knob value of its sweep
    (`Comparison.detection_text`); a value whose release replaces nothing says so."""
    rows = [
        {
            "Method": method_class(m).title,
            "Knob": display.knob_text(comparison.sweeps[m].knob, knob),
            "Detection found": comparison.detection_text(m, knob, gold=False) or "nothing replaced",
        }
        for m in comparison.sweeps
        for knob in comparison.detection(m)
    ]
    return pd.DataFrame(rows)


if __name__ == "__main__":
    render()
