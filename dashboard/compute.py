"""Cached engine calls shared by the pages, following the engine's split of `fit` from `release`: fitted
protectors and Evaluators are process-wide, keyed by the dataset's fingerprint and the method's parameters;
sweeps by (fingerprint, method and parameters, replicates, seed, measure options); releases by knob too.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from dashboard.caching import (
    Slot,
    evaluator_slot,
    fit_slot,
    kept_slot,
    options_key,
    params_key,
    progress_reporter,
    release_slot,
    replicates_slot,
    samples_slot,
    sweep_slot,
)
from dashboard.display import counted, md_escape
from dashboard.prepared import persist_as, prepared
from dashboard.session import area, guarded, page_dataset
from dashboard.sweep_backend import PROCESSES, RunOn, chosen
from engine.cache import fit_cached, sweep_cached, sweep_name, sweep_on_disk
from engine.compare import Comparison
from engine.data.dataset import Dataset
from engine.frontier import Choice, frontier, select_by_risk_threshold, select_by_tradeoff
from engine.measures import registry
from engine.measures.base import MetricResult, metric_info
from engine.measures.evaluate import Evaluator, MeasureSettings
from engine.progress import Progress, no_progress
from engine.protect import METHODS, get_protector, method_class
from engine.protect.base import Fitted, Protector, Release
from engine.releases_on_disk import ReleasesOnDisk
from engine.report.samples import SAMPLE_RECORDS
from engine.report.samples import sample_records as engine_sample_records
from engine.results import SweepResult
from engine.sweep import make_release, run_sweep
from engine.workers import giving_way, interacting, lower_this_thread, wait_while_interacting, warm_workers


def method_names(changes: str = "text", kinds: tuple[str, ...] = ()) -> list[str]:
    """Registered methods that change the text (``"text"``) or synthesize fields (``"fields"``), and of those
    the ones that synthesize fields of one of ``kinds`` (categorical, count, continuous)."""
    return [
        m for m, cls in METHODS.items() if cls.changes == changes and (not kinds or set(kinds) & set(cls.field_kinds))
    ]


def protector(method: str, params: dict | None = None) -> Protector:
    """The method with the steward's parameters (fields to synthesize, vendor keywords, ...)."""
    return get_protector(method, **(params or {}))


def get_fitted(dataset: Dataset, method: str, progress: Progress = no_progress, params: dict | None = None) -> Fitted:
    """The fitted protector (memory, then the engine's disk cache, then a fit)."""
    p = protector(method, params)
    slot = fit_slot(dataset.fingerprint, method, params_key(p))
    return slot.get(lambda: fit_cached(p, dataset, progress))


def get_evaluator(
    dataset: Dataset,
    progress: Progress = no_progress,
    fields: tuple[str, ...] = (),
    options: MeasureSettings | None = None,
    fitted: Fitted | None = None,
    params: dict | None = None,
) -> Evaluator:
    """The Evaluator of a dataset for a method that changes the text (no ``fields``) or synthesizes ``fields``,
    with every metric that applies (the intruder's classifiers, distances and topics prepared once). Methods
    without measures of their own share one; a method with its own (`Measure.methods`), or whose releases
    withhold fields (`Measure.reads_withheld`), gets its own, keyed by fit (the method and its ``params``)."""
    own = fitted is not None and (
        any(fitted.method in m.methods for m in registry.MEASURES) or bool(fitted.withheld_columns())
    )
    if own and fitted is not None:  # the measures every method has come from the shared Evaluator
        shared = get_evaluator(dataset, progress, fields, options)
        slot = evaluator_slot(
            dataset.fingerprint,
            tuple(fields),
            options_key(options),
            f"{fitted.method}:{params_key(protector(fitted.method, params))}",
        )
        return slot.get(
            lambda: Evaluator(
                dataset, None, progress, fields=list(fields), options=options, fitted=fitted, shared=shared
            )
        )
    slot = evaluator_slot(dataset.fingerprint, tuple(fields), options_key(options), "")
    return slot.get(lambda: Evaluator(dataset, None, progress, fields=list(fields), options=options))


def effective_replicates(method: str, replicates: int) -> int:
    """A deterministic method gives the same release every time, so it is measured once per knob value."""
    return 1 if method_class(method).deterministic else int(replicates)


SWEEP_JOBS = max(1, min(os.cpu_count() or 1, 4))
"""Processes a dashboard sweep releases and measures in (the result does not depend on it)."""
SWEEP_MODULES = ("engine.sweep", "engine.measures.registry", "engine.protect")
"""What a sweep's piece imports in its worker (`engine.workers.warm_workers`)."""
KEPT_REPLICATES = 3
"""Releases the dashboard's sweeps keep per knob value (the Counts page overlays three synthetic datasets), so
that a slider move shows a release without making it again."""
KEPT_ON_DISK_RECORDS = 50_000
"""From this many records a sweep's kept releases are held in files, not in memory (`ReleasesOnDisk`): a redaction
of 20,000 posts pickles to 6–7 MB a knob value, ten times that at 200,000. A page reads one when it needs it."""


def _sweep_slot_for(
    dataset: Dataset, method: str, replicates: int, seed: int, params: dict | None, options: MeasureSettings | None
) -> tuple[Slot, Protector, int]:
    p = protector(method, params)
    reps = effective_replicates(method, replicates)
    return sweep_slot(dataset.fingerprint, method, params_key(p), reps, int(seed), options_key(options)), p, reps


def get_sweep(
    dataset: Dataset,
    method: str,
    replicates: int,
    seed: int,
    progress: Progress = no_progress,
    params: dict | None = None,
    options: MeasureSettings | None = None,
    run_on: RunOn | None = None,
) -> SweepResult:
    """The sweep over the fitted knob's grid; computed once per (dataset, method and parameters, replicates,
    seed, measure options) and kept on disk, so a restarted dashboard finds it (`engine.cache.sweep_cached`).
    It runs where ``run_on`` says (None: where the steward chose, `dashboard.sweep_backend`); the results do not
    depend on it, and neither does the cache key."""
    slot, p, reps = _sweep_slot_for(dataset, method, replicates, seed, params, options)
    where = chosen() if run_on is None else run_on

    def compute() -> SweepResult:
        where.check()
        if where.kind == PROCESSES:  # while this process fits and prepares the measures
            warm_workers(SWEEP_MODULES, SWEEP_JOBS)
        beside = _measures_beside_fit(dataset, method, params, options)
        fitted = get_fitted(dataset, method, progress, params)
        if beside is not None and beside.is_alive():
            progress(0, 1, "preparing the measures (begun beside the fit)")
        evaluator = get_evaluator(dataset, progress, tuple(fitted.synthesized_fields), options, fitted, params)
        backend = where.sweep_arguments(local_jobs=min(SWEEP_JOBS, len(fitted.knob.default_grid()) * reps))
        return run_sweep(
            dataset,
            p,
            None,
            reps,
            int(seed),
            progress=progress if where.kind == PROCESSES else _placed(progress, where),
            fitted=fitted,
            evaluator=evaluator,
            keep_releases=KEPT_REPLICATES,
            keep_on_disk=dataset.n_records >= KEPT_ON_DISK_RECORDS,
            **backend,
        )

    settings = _sweep_settings(reps, seed, options)
    sweep = slot.get(lambda: sweep_cached(p, dataset, settings, compute))
    persist_as(sweep, sweep_name(p, dataset, settings))
    kept_slot(dataset.fingerprint, method, params_key(p), int(seed), reps).get(lambda: sweep.releases)
    return sweep


def _measures_beside_fit(
    dataset: Dataset, method: str, params: dict | None, options: MeasureSettings | None
) -> threading.Thread | None:
    """A thread preparing the measures every method shares (`get_evaluator` without fields) while ``method``
    fits, when its fit leaves cores idle (`Protector.fits_in_threads`: rnn's JAX training uses about 1.6 of 2)
    and neither is made yet; None otherwise. Its progress is not drawn (only the page's own thread draws); an
    error it meets is raised again, and shown, when the page asks for the measures after the fit. On the
    airline tweets rnn's fit and measures took 32.5 s one after the other, 29.7 s side by side."""
    cls = method_class(method)
    shared = evaluator_slot(dataset.fingerprint, (), options_key(options), "")
    if not cls.fits_in_threads or cls.changes != "text" or shared.filled:
        return None
    if fit_slot(dataset.fingerprint, method, params_key(protector(method, params))).filled:
        return None

    def prepare() -> None:
        with contextlib.suppress(Exception):
            get_evaluator(dataset, no_progress, (), options)

    thread = threading.Thread(target=prepare, name="textsdc-measures-beside-fit", daemon=True)
    thread.start()
    return thread


def _placed(progress: Progress, where: RunOn) -> Progress:
    """``progress`` with its steps' labels saying where the sweep runs."""

    def update(done: int, total: int, what: str = "") -> None:
        progress(done, total, f"{what} {where.describe()}" if what else where.describe())

    return update


def _sweep_settings(replicates: int, seed: int, options: MeasureSettings | None) -> dict:
    """What besides the method and the data names a dashboard sweep on disk (`engine.cache.sweep_name`)."""
    return {"replicates": replicates, "seed": int(seed), "options": options_key(options), "kept": KEPT_REPLICATES}


def _kept_release(dataset: Dataset, p: Protector, value: float, seed: int, replicates: int, r: int) -> Release | None:
    """Replicate ``r`` at grid value ``value`` as a sweep with these settings kept it (None if none did)."""
    releases = _kept(dataset, p, seed, replicates)
    kept = releases.get(value, []) if releases is not None else []
    return kept[r].within(dataset.frame) if r < len(kept) else None


def _kept(dataset: Dataset, p: Protector, seed: int, replicates: int) -> Mapping[float, list[Release]] | None:
    """The releases a sweep with these settings kept (in memory, or in files for a large table), if one did."""
    slot = kept_slot(dataset.fingerprint, p.name, params_key(p), seed, replicates)
    return slot.value if slot.filled else None


def sweep_ready(
    dataset: Dataset,
    method: str,
    replicates: int,
    seed: int,
    params: dict | None = None,
    options: MeasureSettings | None = None,
) -> bool:
    """Whether `get_sweep` with these settings would return at once (computed before in this process)."""
    return _sweep_slot_for(dataset, method, replicates, seed, params, options)[0].filled


def sweep_body(ready: bool) -> DeltaGenerator:
    """Where a page draws a sweep's progress and every view that follows it (`session.area`): redrawn in place
    while the sweep is ``ready`` (`sweep_ready`), emptied at once when it must be made (another method or
    setting)."""
    return area("sweep", fresh=not ready)


Settings = tuple[str, dict, MeasureSettings, int, int]  # method, its parameters, measure options, replicates, seed


def page_sweep(
    releases: str, settings_of: Callable[[Dataset], Settings | None]
) -> tuple[Dataset, Settings, SweepResult, DeltaGenerator] | None:
    """The start of a page that sweeps a method's knob: the dataset (or a pointer to the Data page), a caption
    naming it and saying what the page ``releases``, the page's own settings, and the sweep with a progress bar,
    drawn in the `sweep_body` the page draws the rest in (returned last). None when any of them is missing (the
    page has then said why)."""
    dataset = page_dataset()
    if dataset is None:
        return None
    st.caption(f"Dataset: {md_escape(dataset.name)} · {counted(dataset.n_records, 'record')} · {releases}")
    settings = settings_of(dataset)
    if settings is None:
        return None
    method, params, options, replicates, seed = settings
    body = sweep_body(sweep_ready(dataset, method, replicates, seed, params, options))
    with body:
        sweep = sweep_with_progress(dataset, method, replicates, seed, params, options)
    return None if sweep is None else (dataset, settings, sweep, body)


def sweep_with_progress(
    dataset: Dataset,
    method: str,
    replicates: int,
    seed: int,
    params: dict | None = None,
    options: MeasureSettings | None = None,
) -> SweepResult | None:
    """`get_sweep` with a progress bar while it fills; an error is shown in place and gives None."""
    area = st.empty()
    sweep = guarded(lambda: get_sweep(dataset, method, replicates, seed, progress_reporter(area), params, options))
    area.empty()
    return sweep


_LATER: queue.SimpleQueue[tuple[Future, Callable[[], SweepResult], bool]] = queue.SimpleQueue()
"""The sweeps asked for in the background, made one at a time (the pages' own sweeps run beside them)."""
_LATER_JOBS: dict[int, tuple[Slot, Future]] = {}
_LATER_PROGRESS: dict[int, tuple[int, int, str]] = {}
"""How far each background sweep has got (done, total, what), as its progress callback last said."""
_LATER_LOCK = threading.Lock()
_LATER_THREAD: list[threading.Thread] = []


def _sweep_later_worker() -> None:
    lower_this_thread()  # a knob move's page run and the browser come first
    while True:
        future, make, held_once = _LATER.get()
        if future.set_running_or_notify_cancel():
            try:
                with giving_way(held_once):  # the page's runs come first (`engine.workers.giving_way`)
                    wait_while_interacting()
                    future.set_result(make())
            except BaseException as exc:  # noqa: BLE001 — kept for the page that asks again, which raises it
                future.set_exception(exc)


def _submit_later(make: Callable[[], SweepResult], held_once: bool = False) -> Future:
    """``make()`` queued for the background thread (a daemon: a server or a test that ends does not wait for a
    sweep nobody will see), all its work in that thread with ``held_once`` (`engine.workers.giving_way`)."""
    future: Future = Future()
    _LATER.put((future, make, held_once))
    if not _LATER_THREAD:
        _LATER_THREAD.append(threading.Thread(target=_sweep_later_worker, name="textsdc-sweep-later", daemon=True))
        _LATER_THREAD[0].start()
    return future


def in_background(
    dataset: Dataset,
    method: str,
    replicates: int,
    seed: int,
    params: dict | None = None,
    options: MeasureSettings | None = None,
) -> bool:
    """Whether the sweep with these settings is being made (or waits to be) in the background (`sweep_later`)."""
    slot = _sweep_slot_for(dataset, method, replicates, seed, params, options)[0]
    with _LATER_LOCK:
        job = _LATER_JOBS.get(id(slot))
    return job is not None and job[0] is slot and not job[1].done()


def background_progress(
    dataset: Dataset,
    method: str,
    replicates: int,
    seed: int,
    params: dict | None = None,
    options: MeasureSettings | None = None,
) -> tuple[int, int, str] | None:
    """How far the background sweep with these settings has got: (done, total, what is being done) as its
    progress last said, or None before it has said anything (waiting its turn, or not asked for)."""
    slot = _sweep_slot_for(dataset, method, replicates, seed, params, options)[0]
    return _LATER_PROGRESS.get(id(slot)) if in_background(dataset, method, replicates, seed, params, options) else None


def sweep_later(
    dataset: Dataset,
    method: str,
    replicates: int,
    seed: int,
    params: dict | None = None,
    options: MeasureSettings | None = None,
    held_once: bool = False,
) -> SweepResult | None:
    """The sweep `get_sweep` would return, if this process holds it or an earlier run kept it on disk (read now:
    a restarted dashboard shows what it showed); else None, and the sweep is made in a background thread (once;
    queued behind the others asked for) and kept where `get_sweep` finds it (memory and disk). A page asks again
    on a later run; a sweep that failed raises its error then (and is not made again in this process). With
    ``held_once`` (a large table's) all its work runs in that thread, so that what it holds is held once."""
    slot, p, reps = _sweep_slot_for(dataset, method, replicates, seed, params, options)
    if slot.filled or sweep_on_disk(p, dataset, _sweep_settings(reps, seed, options)):
        return get_sweep(dataset, method, replicates, seed, no_progress, params, options)
    where = chosen()  # read here: the background thread has no session
    key = id(slot)

    def record(done: int, total: int, what: str) -> None:
        _LATER_PROGRESS[key] = (done, total, what)

    with _LATER_LOCK:
        job = _LATER_JOBS.get(id(slot))
        if job is None or job[0] is not slot:
            interacting()  # the page that asks for it is being drawn: the sweep starts once the steward pauses
            future = _submit_later(
                lambda: get_sweep(dataset, method, replicates, seed, record, params, options, where), held_once
            )
            _LATER_JOBS[id(slot)] = job = (slot, future)
    future = job[1]
    if not future.done():
        return None
    if future.exception() is None:
        with _LATER_LOCK:
            _LATER_JOBS.pop(id(slot), None)
    return future.result()  # raises the sweep's error


def get_release(
    dataset: Dataset, method: str, value: float, seed: int, replicates: int, params: dict | None = None
) -> Release:
    """Replicate 0 of the release at knob ``value`` (the one the sweep's per-record detail describes)."""
    p = protector(method, params)
    fitted = get_fitted(dataset, method, params=params)
    value = fitted.snap(value)
    slot = release_slot(dataset.fingerprint, method, params_key(p), float(value), int(seed), int(replicates))
    if not slot.filled and isinstance(_kept(dataset, p, int(seed), int(replicates)), ReleasesOnDisk):
        kept = _kept_release(dataset, p, value, int(seed), int(replicates), 0)
        if kept is not None:  # read from its file at each call: a large table's releases are not all held
            return kept
    return slot.get(
        lambda: (
            _kept_release(dataset, p, value, int(seed), int(replicates), 0)
            or make_release(fitted, value, int(seed), int(replicates))
        )
    )


def get_replicate_releases(
    dataset: Dataset, method: str, value: float, seed: int, replicates: int, params: dict | None = None, k: int = 3
) -> list[Release]:
    """The first ``k`` of the M synthetic datasets at knob ``value`` (to overlay several, as Guo & Hu do)."""
    p = protector(method, params)
    fitted = get_fitted(dataset, method, params=params)
    value = fitted.snap(value)
    k = max(1, min(int(k), int(replicates)))
    slot = replicates_slot(dataset.fingerprint, method, params_key(p), float(value), int(seed), int(replicates), k)
    return slot.get(
        lambda: [
            _kept_release(dataset, p, value, int(seed), int(replicates), r)
            or make_release(fitted, value, int(seed), int(replicates), r)
            for r in range(k)
        ]
    )


def sample_records(
    dataset: Dataset, method: str, seed: int, replicates: int, n: int = SAMPLE_RECORDS, params: dict | None = None
) -> list[int]:
    """The sample records of the engine's choice (`engine.report.samples.sample_records`): the same records
    at every knob value, and the ones the exported report shows."""
    p = protector(method, params)

    def compute() -> list[int]:
        grid = get_fitted(dataset, method, params=params).knob.default_grid()
        return engine_sample_records(
            dataset, [get_release(dataset, method, v, seed, replicates, params) for v in grid], n
        )

    slot = samples_slot(dataset.fingerprint, method, params_key(p), int(seed), int(replicates))
    return slot.get(compute)


def nearest_grid_value(grid: list[float], value: float) -> float:
    """The grid value closest to ``value`` (the sweep measured the grid only)."""
    arr = np.asarray(grid, dtype=float)
    return float(arr[int(np.argmin(np.abs(arr - float(value))))])


def metrics_at(sweep: SweepResult, value: float) -> dict[str, MetricResult]:
    """Mean, interval and baseline of every metric at the grid value nearest ``value`` (kept with the sweep), the
    worst attack's success beyond its baseline among them (a risk measure the page's frontier may take)."""
    at = nearest_grid_value(sweep.grid, value)
    return dict(prepared(sweep, ("metrics", at), lambda: sweep.metrics_at(at) | sweep.baseline))


def metric_ids(sweep: SweepResult, kind: str) -> list[str]:
    return [m for m in sweep.metric_ids if metric_info(m).kind == kind]


def _frontier(sweep: SweepResult, risk: str, utility: str) -> pd.DataFrame:
    return frontier(sweep.summary, risk, utility, sweep.baseline_value(risk))


def comparison(
    dataset: Dataset, settings: list[tuple[str, dict]], replicates: int, seed: int, options: MeasureSettings
) -> Comparison:
    """The sweeps of several (method, parameters) with one seed, M and measure settings, each with its progress
    bar (the pages' own sweeps, shared with them), as one `engine.compare.Comparison`; a method whose sweep
    fails says why in place and is left out."""
    sweeps, params = {}, {}
    which = st.empty()
    for i, (m, p) in enumerate(settings, 1):
        which.caption(f"Method {i} of {len(settings)}: {md_escape(method_class(m).title)}")
        sweep = sweep_with_progress(dataset, m, replicates, seed, p, options)
        if sweep is not None:
            sweeps[m], params[m] = sweep, protector(m, p).params()
    which.empty()
    return Comparison(
        dataset=dataset.name,
        fingerprint=dataset.fingerprint,
        seed=seed,
        replicates=replicates,
        sweeps=sweeps,
        params=params,
        options=options.values(),
    )


def frontier_blocks(sweep: SweepResult, risk: str | None, utility: str | None, at: float, name: str) -> list:
    """The risk–utility frontier of ``sweep`` at ``at`` as a knob view block (none without both measures),
    drawn by the engine's one frontier figure."""
    from dashboard import knob_view
    from engine.figures.text import frontier_figure

    if risk is None or utility is None:
        return []
    return [knob_view.plot(frontier_figure(sweep, risk, utility, current=at), name)]


def unprotected_everywhere(sweep: SweepResult, risk: str, utility: str) -> bool:
    """Whether every knob value leaves ``risk`` at its level on the unprotected data."""
    return bool(_frontier(sweep, risk, utility)["unprotected"].all())


def risk_utility_choice(sweep: SweepResult, risk: str, utility: str, rule: str, value: float) -> Choice:
    """The knob the steward's rule picks: a risk ceiling (Eq. 2.6) or a trade-off slope (Eq. 2.8); knob values
    that leave the risk at its unprotected level are passed over."""
    table = _frontier(sweep, risk, utility)
    if rule == "threshold":
        return select_by_risk_threshold(table, value)
    return select_by_tradeoff(table, value)
