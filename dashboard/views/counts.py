"""Counts and amounts page: synthesize a count field (days available) and an amount (price) given the other
fields, with Guo & Hu's measures.

Choose the method (the Bayesian zero-inflated truncated Poisson + log-linear synthesizer, knob λ; or CART as the
comparator, knob α), the fields and predictors and M; drag the knob and the intruder's uncertainty S; read the
synthetic distributions against the confidential ones, estimates and their interval overlap, attribute and
identification risk against the confidential data, the risk curves in S, the model along the knob with its
MCMC diagnostics, and sample records side by side. The sweep runs once per setting; every grid value's view is
built from it once and a move of the knob is drawn in the browser (`dashboard.knob_view`).
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import compute, display, knob_view, session, widgets
from dashboard.prepared import prepared
from engine.data.dataset import Dataset
from engine.figures.bayes_counts import (
    amount_density_figure,
    count_histogram_figure,
    interval_overlap_figure,
    risk_against_confidential_figure,
    uncertainty_curves_figure,
)
from engine.figures.field_synthesis import complexity_figure
from engine.measures.base import MetricResult, metric_info
from engine.measures.bayes_counts import ATTRIBUTE_RISK_METRICS, UNCERTAINTY_LEVELS
from engine.measures.evaluate import MeasureSettings
from engine.protect import METHODS
from engine.report.bayes_counts import combined_intervals, confidential_intervals, risk_rows
from engine.results import SweepResult

PREFIX = "counts_"


def _settings(dataset: Dataset) -> compute.Settings | None:
    schema = dataset.schema
    if not any(f.kind in ("count", "continuous") for f in schema.fields):
        st.info("This dataset has no count or continuous field. Mark one as count or continuous on the Data page.")
        return None
    # Methods made for counts and amounts first, general ones (CART, the comparator) after.
    methods = sorted(
        compute.method_names("fields", ("count", "continuous")), key=lambda m: "categorical" in METHODS[m].field_kinds
    )
    c1, c2 = st.columns([1, 2])
    with c1:
        if st.session_state.get(session.COUNTS_METHOD_KEY) not in methods:
            st.session_state[session.COUNTS_METHOD_KEY] = methods[0]
        method = st.radio(
            "Synthesizer",
            methods,
            key=session.COUNTS_METHOD_KEY,
            format_func=lambda m: METHODS[m].title,
            persist_state="session",
        )
        st.caption(display.md_escape(METHODS[method].description))
    with c2:
        params = widgets.parameter_widgets(method, dataset, kinds=("count", "continuous"))
    chosen = session.guarded(lambda: compute.protector(method, params).check(dataset))
    if not chosen:
        return None
    with st.expander("Synthetic datasets, measures and seed"):
        a, b = st.columns(2)
        st.session_state.setdefault(PREFIX + "replicates", 5)
        st.session_state.setdefault(PREFIX + "seed", 0)
        replicates = int(
            a.number_input(
                "Synthetic datasets m",
                1,
                20,
                step=1,
                key=PREFIX + "replicates",
                persist_state="session",
                help="Each uses its own posterior draw; the paper uses m = 20.",
            )
        )
        seed = int(b.number_input("Seed", 0, 2**31 - 1, step=1, key=PREFIX + "seed", persist_state="session"))
        values = widgets.setting_widgets(("numeric", "release"), dataset, chosen)
    options = session.guarded(
        lambda: MeasureSettings.from_values(
            values | {"intruder": widgets.intruder_picker(dataset), "background": session.background()}
        )
    )
    if options is None:
        return None
    return method, params, options, replicates, seed


def shown_first(method: str, metric_ids: list[str]) -> list[str]:
    """The measures of counts and amounts the method declares first (`Protector.shown_first`) that were measured."""
    return [m for m in METHODS[method].shown_first if m in metric_ids and metric_info(m).applies_to == "numeric"]


def _cards(method: str, metrics: dict[str, MetricResult], replicates: int) -> knob_view.Block:
    """The worst applicable attack's card, a card for each measure the method declares first, by its card name
    (each says whether it is a risk or a utility and which direction is better; the full meaning is in its help),
    and the risks every page shows (`Measure.on_every_page`)."""
    items = []
    for mid in [m for m in shown_first(method, list(metrics)) if m != knob_view.worst_attack_id(metrics)]:
        info, m = metric_info(mid), metrics[mid]
        base = metrics.get(mid + "_confidential")
        delta, tone = None, "off"
        if base is not None and not math.isnan(base.value):
            delta = f"unprotected: {display.measure_text(mid, base.value)}"
            tone = "off" if math.isnan(m.value) else display.delta_tone(info, m.value, base.value)
        interval = (
            f"95% range over {replicates} synthetic datasets: "
            f"{display.measure_text(mid, m.lo)} to {display.measure_text(mid, m.hi)}"
            if replicates > 1
            else "One synthetic dataset per setting"
        )
        help_text = f"{info.label}: {info.meaning}\n\n{interval}. {info.better_text.capitalize()}."
        note = f"{info.kind.capitalize()} · {info.better_text}"
        items.append(
            knob_view.card(info.card, display.measure_text(mid, m.value), delta, tone, note=note, help=help_text)
        )
    worst = knob_view.worst_attack_card(metrics)
    items = ([] if worst is None else [worst]) + items + knob_view.every_page_cards(metrics)
    return knob_view.cards(items, per_row=math.ceil(len(items) / math.ceil(len(items) / 4)))  # labels not clipped


def distribution_figures(dataset: Dataset, releases: list, fields: list[str]) -> dict[str, go.Figure]:
    """Histogram of each count field and density of each positive amount, confidential against the first
    synthetic datasets, by name."""
    out: dict[str, go.Figure] = {}
    for f in fields:
        conf = dataset.frame[f].to_numpy(float)
        syn = [r.data[f].to_numpy(float) for r in releases]
        if dataset.schema.field(f).kind == "count":
            out[f"{PREFIX}hist_{f}"] = count_histogram_figure(conf, syn, f)
        elif (conf > 0).all() and all((s > 0).all() for s in syn):
            out[f"{PREFIX}density_{f}"] = amount_density_figure(conf, syn, f)
    return out


KINDS = ["mean", "quantile", "coefficient"]


def _distribution_blocks(dataset: Dataset, releases: list, fields: list[str], replicates: int) -> list:
    figures = distribution_figures(dataset, releases, fields)
    return [
        knob_view.row(*([knob_view.plot(f, name)] for name, f in figures.items())),
        knob_view.text(f"The first {len(releases)} of the {replicates} synthetic datasets at this setting.", "caption"),
    ]


def _estimate_blocks(sweep: SweepResult, value: float, kinds: list[str]) -> list:
    detail = sweep.detail(value, "ci_overlap")
    if detail is None or not len(detail):
        return [knob_view.text("Interval overlap not measured.", "caption")]
    figure = interval_overlap_figure(combined_intervals(detail), confidential_intervals(detail), kinds, max_rows=40)
    return [
        knob_view.plot(figure, PREFIX + "overlap"),
        knob_view.text(
            "Synthetic estimates combined over the datasets with Reiter's (2003) rules; I is Guo & Hu's interval "
            "overlap (Eq. 10): 1 = the same interval, 0 or below = none.",
            "caption",
        ),
    ]


def _ar_figure(sweep: SweepResult, value: float) -> go.Figure | None:
    metrics = compute.metrics_at(sweep, value)
    ar = risk_rows(metrics, ATTRIBUTE_RISK_METRICS)
    if not len(ar):
        return None
    base = {m.removesuffix("_confidential"): v.value for m, v in metrics.items() if m.endswith("_confidential")}
    labels = {m: metric_info(m).label for m in ATTRIBUTE_RISK_METRICS}
    return risk_against_confidential_figure(ar, base, labels, "Attribute disclosure risk AR (Table 3)")


def _risk_blocks(sweep: SweepResult, value: float, s_level: float, curves: pd.DataFrame | None) -> list:
    figure = _ar_figure(sweep, value)
    left = [] if figure is None else [knob_view.plot(figure, PREFIX + "ar")]
    right: list = []
    if curves is not None:
        at = curves[curves["S"].round(2) == round(s_level, 2)]
        table = at.groupby("data")[["emr", "tmr", "fmr", "unique_matches"]].mean().reset_index()
        right = [
            knob_view.text(
                f"Identification risk at S = {s_level:.2f} (Table 4; mean over the synthetic datasets)", "body"
            ),
            knob_view.table(
                table.rename(columns={"emr": "EMR", "tmr": "TMR", "fmr": "FMR", "unique_matches": "unique"})
            ),
            knob_view.text(
                "EMR: expected number of records correctly identified; TMR: share of records with a unique, true "
                "match; FMR: share of unique matches that are false (higher = safer).",
                "caption",
            ),
        ]
    return [knob_view.row(left, right)]


def _model_blocks(sweep: SweepResult, fitted, value: float) -> list:
    out: list = []
    if sweep.complexity is not None and len(sweep.complexity):
        out.append(
            knob_view.plot(complexity_figure(sweep.complexity, sweep.knob, current=value), PREFIX + "complexity")
        )
    at = fitted.snap(value)
    # Neither depends on S or the quantities compared: computed once per grid value, not once per view built.
    diag = prepared(sweep, ("diagnostics", at), lambda: fitted.diagnostics([at]))
    if diag is not None:
        poor = diag[diag["poor"]]
        if len(poor):
            out.append(
                knob_view.text(
                    f"{len(poor)} parameter(s) mixed poorly at {display.knob_text(sweep.knob, value)} (split R-hat "
                    f"above 1.05 or fewer than 100 effective draws): {', '.join(poor['parameter'])}. Increase the "
                    "MCMC draws.",
                    "warning",
                )
            )
        else:
            out.append(
                knob_view.text(
                    f"MCMC converged at {display.knob_text(sweep.knob, value)}: largest split R-hat "
                    f"{diag['rhat'].max():.3f}, smallest effective sample size {diag['ess'].min():.0f}.",
                    "success",
                )
            )
    coef = prepared(sweep, ("coefficients", at), lambda: fitted.coefficients(at))
    if coef is None:
        return out
    if diag is not None:
        coef = coef.merge(diag[["parameter", "rhat", "ess"]], on="parameter", how="left")
    names = {"mean": "posterior mean", "lo": "2.5%", "hi": "97.5%", "rhat": "R-hat", "ess": "ESS"}
    return [*out, knob_view.table(coef.rename(columns=names))]


def _sample_table(dataset: Dataset, release, fields: list[str]) -> pd.DataFrame:
    """The first records: text, up to four other fields, and each synthesized field before and after."""
    schema, n = dataset.schema, min(dataset.n_records, knob_view.MAX_TABLE_ROWS)
    keys = [f.name for f in schema.fields if f.name not in fields][:4]
    table = pd.DataFrame({"row": range(1, n + 1), "text": dataset.frame[schema.text].iloc[:n].astype(str).to_numpy()})
    for k in keys:
        table[k] = dataset.frame[k].iloc[:n].to_numpy()
    for f in fields:
        table[f"{f}: confidential"] = dataset.frame[f].iloc[:n].to_numpy()
        table[f"{f}: released"] = release.data[f].iloc[:n].to_numpy()
    return table


def _view_at(
    sweep: SweepResult,
    dataset: Dataset,
    fitted,
    releases: list,
    value: float,
    fields: list[str],
    kinds: list[str],
    s_level: float,
    pair: tuple[str | None, str | None],
) -> list[knob_view.Block]:
    """What the page shows at grid value ``value``: the cards, the frontier of the measures ``pair`` and six
    tabs of the paper's figures and tables."""
    curves = prepared(sweep, ("curves", value), lambda: sweep.uncertainty_curves([value]))  # S only selects
    uncertainty = (
        [knob_view.text("No un-synthesized key count to perturb, so there are no curves.", "caption")]
        if curves is None
        else [knob_view.plot(uncertainty_curves_figure(curves, s_level), PREFIX + "curves")]
    )
    samples = [
        knob_view.text(
            "Synthetic dataset 1 at this setting; the text and the other fields are released as they are, but for the "
            "identifiers the release guard takes out.",
            "caption",
        ),
        knob_view.table(_sample_table(dataset, releases[0], fields), long=["text"]),
    ]
    return [
        _cards(sweep.method, compute.metrics_at(sweep, value), sweep.replicates),
        *compute.frontier_blocks(sweep, *pair, value, PREFIX + "frontier"),
        knob_view.tabs(
            {
                "Distributions": _distribution_blocks(dataset, releases, fields, sweep.replicates),
                "Estimates": _estimate_blocks(sweep, value, kinds),
                "Risk": _risk_blocks(sweep, value, s_level, curves),
                "Intruder uncertainty": uncertainty,
                "Model": _model_blocks(sweep, fitted, value),
                "Samples": samples,
            }
        ),
    ]


@st.fragment
def _at_knob(
    dataset: Dataset, method: str, params: dict, options: MeasureSettings, seed: int, sweep: SweepResult
) -> None:
    """The intruder's uncertainty, the quantities compared, the knob and every view that follows it
    (`dashboard.knob_view`), rerun alone when a setting beside the views changes (a Streamlit fragment): the
    sweep and the releases it kept are read, not recomputed."""
    fitted = compute.get_fitted(dataset, method, params=params)
    fields = [f for f in fitted.synthesized_fields if dataset.schema.field(f).kind in ("count", "continuous")]
    for line in display.not_measured_lines(sweep.skipped):
        st.caption(line)
    a, b = st.columns([1, 1])
    with a:
        st.session_state.setdefault(PREFIX + "s", 0.0)
        s_level = float(
            st.select_slider(
                "Intruder uncertainty S (Eq. 11)",
                list(UNCERTAINTY_LEVELS),
                key=PREFIX + "s",
                format_func=lambda v: f"{v:.2f}",
                help="Noise of the intruder's knowledge of the key count: the standard "
                "deviation on the log scale is S times the count.",
            )
        )
    with b:
        kinds = st.multiselect("Quantities compared (Estimates)", KINDS, default=KINDS, key=PREFIX + "kinds")

    first = shown_first(sweep.method, sweep.metric_ids)
    risk = next((m for m in first if metric_info(m).kind == "risk"), None) or next(
        iter(compute.metric_ids(sweep, "risk")), None
    )
    utility = next((m for m in first if metric_info(m).kind == "utility"), None) or next(
        iter(compute.metric_ids(sweep, "utility")), None
    )

    def build() -> str:
        def view_at(g: float) -> list[knob_view.Block]:
            releases = compute.get_replicate_releases(dataset, method, g, seed, sweep.replicates, params, 3)
            return _view_at(sweep, dataset, fitted, releases, g, fields, kinds, s_level, (risk, utility))

        views = knob_view.each_value(sweep.grid, view_at)
        more = "higher" if sweep.knob.more_privacy == "higher" else "lower"
        label = f"{sweep.knob.label} ({sweep.knob.symbol}) · log scale · {more} = more privacy"
        return knob_view.payload(sweep.knob, sweep.grid, views, label=label)

    payload = session.guarded(
        lambda: prepared(sweep, ("counts-views", 2, tuple(fields), tuple(kinds), s_level), build, persist=True)
    )
    if payload is None:
        return
    key = f"{PREFIX}knob::{method}::{dataset.fingerprint[:12]}"
    default = compute.nearest_grid_value(sweep.grid, sweep.knob.default)
    session.live_knob(dataset, method, params, options, seed, sweep, payload, key, default, risk, utility)


def render() -> None:
    """The Counts and amounts page."""
    st.title("Counts and amounts")
    started = compute.page_sweep(
        "a count field and an amount are replaced by synthetic values; the text and the "
        "predictors are released as they are, but for the identifiers the release guard takes out.",
        _settings,
    )
    if started is None:
        return
    dataset, (method, params, options, replicates, seed), sweep, body = started
    with body:
        _at_knob(dataset, method, params, options, seed, sweep)


if __name__ == "__main__":
    render()
