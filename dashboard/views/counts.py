"""Counts and amounts page: synthesize a count field (days available) and an amount (price) given the other
fields, with Guo & Hu's measures.

Choose the method (the Bayesian zero-inflated truncated Poisson + log-linear synthesizer, knob λ; or CART as the
comparator, knob α), the fields and predictors and M; drag the knob and the intruder's uncertainty S; read the
synthetic distributions against the confidential ones, estimates and their interval overlap, attribute and
identification risk against the confidential data, the risk curves in S, the model along the knob with its
MCMC diagnostics, and sample records side by side. The sweep runs once per setting; sliders read the cache.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import compute, display, session, widgets
from dashboard.prepared import Job, prepare_in_background, prepared
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
from engine.measures.evaluate import MeasureOptions
from engine.protect import METHODS
from engine.report.bayes_counts import combined_intervals, confidential_intervals, risk_rows
from engine.results import SweepResult

# The cards, with the paper's short names (the full meaning is in each card's help).
CARDS = {
    "attribute_risk_r5_p5": "AR (±5, ±5%)",
    "emr": "EMR",
    "fmr": "FMR",
    "propensity_up": "Up",
    "ci_overlap": "Interval overlap",
}
PREFIX = "counts_"


def _fmt(v: float | None) -> str:
    """Three significant digits; whole numbers with thousands separators from 1,000 (no exponents)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


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
        if st.session_state.get(PREFIX + "method") not in methods:
            st.session_state[PREFIX + "method"] = methods[0]
        method = st.radio(
            "Synthesizer",
            methods,
            key=PREFIX + "method",
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
        a, b, c = st.columns(3)
        st.session_state.setdefault(PREFIX + "replicates", 5)
        st.session_state.setdefault(PREFIX + "seed", 0)
        st.session_state.setdefault(PREFIX + "clusters", 20)
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
        clusters = int(
            c.number_input("Clusters for Uc", 2, 200, step=1, key=PREFIX + "clusters", persist_state="session")
        )
        key_counts = [f.name for f in schema.fields if f.role == "key" and f.kind == "count" and f.name not in chosen]
        uk = f"{PREFIX}uncertain::{dataset.fingerprint[:12]}"
        if st.session_state.get(uk) not in key_counts:
            st.session_state[uk] = key_counts[0] if key_counts else None
        noisy = (
            st.selectbox(
                "Key count the intruder knows with noise (Eq. 11)", key_counts, key=uk, persist_state="session"
            )
            if key_counts
            else None
        )
    options = MeasureOptions(clusters=clusters, uncertainty_field=noisy)
    return method, params, options, replicates, seed


def _cards(metrics: dict[str, MetricResult], replicates: int) -> None:
    ids = [m for m in CARDS if m in metrics]
    for mid, col in zip(ids, st.columns(max(len(ids), 1))):
        info, m = metric_info(mid), metrics[mid]
        base = metrics.get(mid + "_confidential")
        delta = None if base is None or math.isnan(base.value) else f"unprotected: {_fmt(base.value)}"
        interval = (
            f"95% range over {replicates} synthetic datasets: {_fmt(m.lo)} to {_fmt(m.hi)}"
            if replicates > 1
            else "One synthetic dataset per setting"
        )
        col.metric(
            CARDS[mid],
            _fmt(m.value),
            delta,
            delta_color="off",
            delta_arrow="off",
            border=True,
            help=f"{info.label}: {info.meaning}\n\n{interval}. {info.better_text.capitalize()}.",
        )


def _slider(sweep: SweepResult, key: str) -> float:
    knob = sweep.knob
    if st.session_state.get(key) not in sweep.grid:
        st.session_state[key] = compute.nearest_grid_value(sweep.grid, knob.default)
    more = "higher" if knob.more_privacy == "higher" else "lower"
    return float(
        st.select_slider(
            f"{knob.label} ({knob.symbol}) · log scale · {more} = more privacy",
            sweep.grid,
            format_func=knob.format,
            key=key,
            help=knob.help or None,
        )
    )


def distribution_figures(dataset: Dataset, releases: list, fields: list[str]) -> dict[str, go.Figure]:
    """Histogram of each count field and density of each positive amount, confidential against the first
    synthetic datasets, by chart key."""
    out: dict[str, go.Figure] = {}
    for f in fields:
        conf = dataset.frame[f].to_numpy(float)
        syn = [r.data[f].to_numpy(float) for r in releases]
        if dataset.schema.field(f).kind == "count":
            out[f"{PREFIX}hist_{f}"] = count_histogram_figure(conf, syn, f)
        elif (conf > 0).all() and all((s > 0).all() for s in syn):
            out[f"{PREFIX}density_{f}"] = amount_density_figure(conf, syn, f)
    return out


def _distributions(
    sweep: SweepResult, dataset: Dataset, method: str, value: float, seed: int, params: dict, fields: list[str]
) -> None:
    replicates = sweep.replicates
    releases = session.guarded(
        lambda: compute.get_replicate_releases(dataset, method, value, seed, replicates, params, 3)
    )
    if not releases:
        return
    figures = prepared(sweep, *_distributions_job(dataset, releases, fields))
    for col, (key, figure) in zip(st.columns(max(len(figures), 1)), figures.items()):
        with col:
            st.plotly_chart(figure, key=key)
    st.caption(f"The first {len(releases)} of the {replicates} synthetic datasets at this setting.")


KINDS = ["mean", "quantile", "coefficient"]


def _overlap_job(sweep: SweepResult, value: float, kinds: list[str]) -> Job:
    def build() -> go.Figure:
        detail = sweep.detail(value, "ci_overlap")
        return interval_overlap_figure(combined_intervals(detail), confidential_intervals(detail), kinds, max_rows=40)

    return ("overlap", value, tuple(kinds)), build


def _ar_job(sweep: SweepResult, value: float) -> Job:
    def build() -> go.Figure | None:
        metrics = compute.metrics_at(sweep, value)
        ar = risk_rows(metrics, ATTRIBUTE_RISK_METRICS)
        if not len(ar):
            return None
        base = {m.removesuffix("_confidential"): v.value for m, v in metrics.items() if m.endswith("_confidential")}
        labels = {m: metric_info(m).label for m in ATTRIBUTE_RISK_METRICS}
        return risk_against_confidential_figure(ar, base, labels, "Attribute disclosure risk AR (Table 3)")

    return ("ar", value), build


def _curves_job(sweep: SweepResult, value: float) -> Job:
    return ("curves", value), lambda: sweep.uncertainty_curves([value])


def _curves_figure_job(sweep: SweepResult, value: float, s_level: float) -> Job:
    def build() -> go.Figure | None:
        curves = prepared(sweep, *_curves_job(sweep, value))
        return None if curves is None else uncertainty_curves_figure(curves, s_level)

    return ("curves_figure", value, s_level), build


def _distributions_job(dataset: Dataset, releases: list, fields: list[str]) -> Job:
    return ("distributions", releases[0].knob, tuple(fields)), lambda: distribution_figures(dataset, releases, fields)


def _model_jobs(fitted, at: float) -> tuple[Job, Job]:
    """The MCMC diagnostics and the coefficients at grid value ``at`` (None where the method has none)."""
    return (("diagnostics", at), lambda: fitted.diagnostics([at])), (
        ("coefficients", at),
        lambda: fitted.coefficients(at),
    )


def _samples_job(dataset: Dataset, release, fields: list[str]) -> Job:
    return ("samples", release.knob, tuple(fields)), lambda: _sample_table(dataset, release, fields)


def _complexity_job(sweep: SweepResult, value: float) -> Job:
    return ("complexity", value), lambda: complexity_figure(sweep.complexity, sweep.knob, current=value)


def _estimates(sweep: SweepResult, value: float) -> None:
    detail = sweep.detail(value, "ci_overlap")
    if detail is None or not len(detail):
        st.caption("Interval overlap not measured.")
        return
    kinds = st.multiselect("Quantities", KINDS, default=KINDS, key=PREFIX + "kinds")
    st.plotly_chart(prepared(sweep, *_overlap_job(sweep, value, kinds)), key=PREFIX + "overlap")
    st.caption(
        "Synthetic estimates combined over the datasets with Reiter's (2003) rules; I is Guo & Hu's "
        "interval overlap (Eq. 10): 1 = the same interval, 0 or below = none."
    )


def _curves(sweep: SweepResult, value: float) -> pd.DataFrame | None:
    return prepared(sweep, *_curves_job(sweep, value))


def _risk(sweep: SweepResult, value: float, s_level: float) -> None:
    left, right = st.columns(2)
    figure = prepared(sweep, *_ar_job(sweep, value))
    if figure is not None:
        left.plotly_chart(figure, key=PREFIX + "ar")
    curves = _curves(sweep, value)
    if curves is not None:
        at = curves[curves["S"].round(2) == round(s_level, 2)]
        table = at.groupby("data")[["emr", "tmr", "fmr", "unique_matches"]].mean()
        right.markdown(f"**Identification risk at S = {s_level:.2f}** (Table 4; mean over the synthetic datasets)")
        right.dataframe(
            table.rename(columns={"emr": "EMR", "tmr": "TMR", "fmr": "FMR", "unique_matches": "unique"}),
            key=PREFIX + "ident_table",
        )
        right.caption(
            "EMR: expected number of records correctly identified; TMR: share of records with a unique, "
            "true match; FMR: share of unique matches that are false (higher = safer)."
        )


def _model(dataset: Dataset, method: str, sweep: SweepResult, value: float, params: dict) -> None:
    if sweep.complexity is not None and len(sweep.complexity):
        st.plotly_chart(prepared(sweep, *_complexity_job(sweep, value)), key=PREFIX + "complexity")
    fitted = session.guarded(lambda: compute.get_fitted(dataset, method, params=params))
    if fitted is None:
        return
    at = fitted.snap(value)
    diagnostics, coefficients = _model_jobs(fitted, at)
    diag = prepared(sweep, *diagnostics)
    if diag is not None:
        poor = diag[diag["poor"]]
        if len(poor):
            st.warning(
                f"{len(poor)} parameter(s) mixed poorly at {display.knob_text(sweep.knob, value)} (split R-hat "
                f"above 1.05 or fewer than 100 effective draws): {', '.join(poor['parameter'])}. Increase "
                "the MCMC draws."
            )
        else:
            st.success(
                f"MCMC converged at {display.knob_text(sweep.knob, value)}: largest split R-hat "
                f"{diag['rhat'].max():.3f}, smallest effective sample size {diag['ess'].min():.0f}."
            )
    coef = prepared(sweep, *coefficients)
    if coef is None:
        return
    if diag is not None:
        coef = coef.merge(diag[["parameter", "rhat", "ess"]], on="parameter", how="left")
    st.dataframe(
        coef,
        hide_index=True,
        key=PREFIX + "coefficients",
        column_config={
            "mean": st.column_config.NumberColumn("posterior mean", format="%.4f"),
            "lo": st.column_config.NumberColumn("2.5%", format="%.4f"),
            "hi": st.column_config.NumberColumn("97.5%", format="%.4f"),
            "rhat": st.column_config.NumberColumn("R-hat", format="%.3f"),
            "ess": st.column_config.NumberColumn("ESS", format="%.0f"),
        },
    )


def _sample_table(dataset: Dataset, release, fields: list[str]) -> pd.DataFrame:
    """The first 500 records: text, up to four other fields, and each synthesized field before and after."""
    schema, n = dataset.schema, min(dataset.n_records, 500)
    keys = [f.name for f in schema.fields if f.name not in fields][:4]
    table = pd.DataFrame({"row": range(1, n + 1), "text": dataset.frame[schema.text].iloc[:n].astype(str).to_numpy()})
    for k in keys:
        table[k] = dataset.frame[k].iloc[:n].to_numpy()
    for f in fields:
        table[f"{f}: confidential"] = dataset.frame[f].iloc[:n].to_numpy()
        table[f"{f}: released"] = release.data[f].iloc[:n].to_numpy()
    return table


def _samples(
    sweep: SweepResult, dataset: Dataset, method: str, value: float, seed: int, params: dict, fields: list[str]
) -> None:
    replicates = sweep.replicates
    release = session.guarded(lambda: compute.get_release(dataset, method, value, seed, replicates, params))
    if release is None:
        return
    st.caption("Synthetic dataset 1 at this setting; the text and the other fields are released unchanged.")
    st.dataframe(
        prepared(sweep, *_samples_job(dataset, release, fields)),
        hide_index=True,
        key=PREFIX + "samples",
        column_config={"text": st.column_config.TextColumn("text", width="large")},
    )


@st.fragment
def _at_knob(
    dataset: Dataset, method: str, params: dict, options: MeasureOptions, seed: int, sweep: SweepResult
) -> None:
    """The knob, the intruder's uncertainty and everything that follows them, rerun alone when a slider moves
    (a Streamlit fragment): the sweep and the releases it kept are read, not recomputed."""
    fitted = compute.get_fitted(dataset, method, params=params)
    fields = [f for f in fitted.synthesized_fields if dataset.schema.field(f).kind in ("count", "continuous")]
    a, b = st.columns([3, 2])
    with a:
        value = _slider(sweep, f"{PREFIX}knob::{method}::{dataset.fingerprint[:12]}")
    with b:
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
    st.caption(
        f"Current knob: {display.md_escape(display.knob_text(sweep.knob, value))} · intruder uncertainty "
        f"S = {s_level:.2f}"
    )
    metrics = compute.metrics_at(sweep, value)
    _cards(metrics, sweep.replicates)
    for line in display.not_measured_lines(sweep.skipped):
        st.caption(line)
    session.choose(
        dataset,
        method,
        value,
        seed,
        sweep,
        params,
        options,
        risk="attribute_risk_r5_p5"
        if "attribute_risk_r5_p5" in sweep.metric_ids
        else next(iter(compute.metric_ids(sweep, "risk")), None),
        utility="ci_overlap"
        if "ci_overlap" in sweep.metric_ids
        else next(iter(compute.metric_ids(sweep, "utility")), None),
    )
    tabs = st.tabs(["Distributions", "Estimates", "Risk", "Intruder uncertainty", "Model", "Samples"])
    with tabs[0]:
        _distributions(sweep, dataset, method, value, seed, params, fields)
    with tabs[1]:
        _estimates(sweep, value)
    with tabs[2]:
        _risk(sweep, value, s_level)
    with tabs[3]:
        curves = _curves(sweep, value)
        if curves is None:
            st.caption("No un-synthesized key count to perturb, so there are no curves.")
        else:
            st.plotly_chart(prepared(sweep, *_curves_figure_job(sweep, value, s_level)), key=PREFIX + "curves")
    with tabs[4]:
        _model(dataset, method, sweep, value, params)
    with tabs[5]:
        _samples(sweep, dataset, method, value, seed, params, fields)
    _prepare_other_values(sweep, dataset, method, seed, params, fields, s_level)


def _prepare_other_values(
    sweep: SweepResult, dataset: Dataset, method: str, seed: int, params: dict, fields: list[str], s_level: float
) -> None:
    """Every grid value's figures and tables, built in the background with the quantities and S now chosen,
    so that the first move to any value draws what is ready."""
    kinds = [k for k in st.session_state.get(PREFIX + "kinds", KINDS) if k in KINDS]

    def jobs() -> list[Job]:
        fitted = compute.get_fitted(dataset, method, params=params)
        out: list[Job] = []
        for g in sweep.grid:
            releases = compute.get_replicate_releases(dataset, method, g, seed, sweep.replicates, params, 3)
            out += [_ar_job(sweep, g), _curves_job(sweep, g), _overlap_job(sweep, g, kinds)]
            out += [_distributions_job(dataset, releases, fields), _curves_figure_job(sweep, g, s_level)]
            if sweep.complexity is not None and len(sweep.complexity):
                out.append(_complexity_job(sweep, g))
            out += [*_model_jobs(fitted, fitted.snap(g)), _samples_job(dataset, releases[0], fields)]
        return out

    prepare_in_background(sweep, ("counts", tuple(fields), tuple(kinds), s_level), jobs)


def render() -> None:
    """The Counts and amounts page."""
    st.title("Counts and amounts")
    started = compute.page_sweep(
        "a count field and an amount are replaced by synthetic values; the text and the "
        "predictors are released unchanged.",
        _settings,
    )
    if started is None:
        return
    dataset, (method, params, options, replicates, seed), sweep = started
    _at_knob(dataset, method, params, options, seed, sweep)


if __name__ == "__main__":
    render()
