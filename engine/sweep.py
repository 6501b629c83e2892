"""A knob grid × M replicates: fit once, release and measure many times, in parallel with joblib (on this
machine or a Dask cluster, `engine.backends`).

Replicate m of a run with seed s draws from ``SeedSequence(s).spawn(M)[m]``, the same stream at every knob
value, so differences along the knob are not blurred by different random draws.

Releases and measures run with one BLAS/OpenMP thread (`fixed_threads`) in the main process and in joblib's
workers alike: a floating reduction split over another number of threads rounds differently, and the bundle of
``--jobs 2`` must be byte-identical to the one of ``--jobs 1``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import TypeVar

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits

from engine.backends import parallel_backend
from engine.cache import fit_cached
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.knob_range import refine as refine_grid
from engine.measures.attacks import WORST_ATTACK, advantage_result
from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult
from engine.measures.evaluate import Evaluator, MeasureSettings, check_options
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Protector, Release
from engine.releases_on_disk import ReleasesOnDisk
from engine.results import ROW_COLUMNS, SweepResult, result_row, summarize
from engine.text.kept import sharing
from engine.workers import Report, Shipped, in_worker, map_reporting, return_free_memory, shipped_once

T = TypeVar("T")

MAX_DETAIL_ROWS = 20_000
SHARE_HERE_BYTES = 100 * 2**20
"""From this size of the fitted model and the measures pickled, the sweep's own process, which holds them,
takes a share of the tasks beside one worker fewer (`map_reporting`'s ``here``), rather than every worker
holding a copy. The swap of the 306 earnings calls of 2021 Q3 ships 129 MB (178 MB with its intruder's
coefficients in double precision): two workers grew to 840–890 MB each while this process waited with the
originals; sharing, the sweep's peak fell from 2,610 to 1,892 MB. Below it the fit's warm workers do all the
work, as this process would first load what they already hold (a k-anonymity worker loading spaCy and the word
lists again cost its page 6.6 s: `engine.workers.WORKER_GROWTH_BYTES`)."""
RELEASE_THREADS = 1  # BLAS/OpenMP threads while releasing and measuring, whatever --jobs and the machine


@contextmanager
def fixed_threads() -> Iterator[None]:
    """BLAS and OpenMP limited to `RELEASE_THREADS` threads, so sums are taken in the same order in the main
    process and in every joblib worker (whose default thread count is cores / jobs)."""
    with threadpool_limits(limits=RELEASE_THREADS):
        yield


def replicate_rng(seed: int, replicates: int, replicate: int) -> np.random.Generator:
    """The generator of replicate ``replicate`` of ``replicates`` under ``seed``."""
    if not 0 <= replicate < replicates:
        raise ConfigError(f"replicate must be between 0 and {replicates - 1}, got {replicate}")
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(replicates)[replicate])


def make_release(fitted: Fitted, value: float, seed: int, replicates: int = 1, replicate: int = 0) -> Release:
    """One reproducible release: knob ``value``, replicate ``replicate`` of ``replicates`` under ``seed``, passed
    through the release guard the fit carries (`Fitted.guard`), so what is measured is what would be written."""
    with fixed_threads():
        release = fitted.release(
            fitted.knob.validate(value), replicate_rng(seed, replicates, replicate), replicate=replicate
        )
    if fitted.guard is not None:
        release = fitted.guard.apply(release)
    return replace(release, seed=seed, replicate=replicate)


def _measure(
    fitted: Fitted,
    evaluator: Evaluator,
    value: float,
    seed: int,
    replicates: int,
    m: int,
    keep: bool,
    report: Report | None = None,
) -> tuple[float, int, dict[str, MetricResult], Release | None]:
    """Release ``m`` at ``value`` and its measures; ``report`` hears of the release (1), then of each measure."""
    with fixed_threads():
        release = make_release(fitted, value, seed, replicates, m)
        if report is not None:
            report(1)
        measured = evaluator.evaluate(release, None if report is None else lambda k: report(1 + k))
        return value, m, measured, release.compact() if keep else None


SweepPiece = tuple[Shipped | tuple[Fitted, Evaluator], int, int, float | None, int, bool, str | None]
"""What a sweep's task is given: the fitted model and the Evaluator (or a handle to them shipped once), the
seed, the number of replicates, then the knob value (None: the baseline), the replicate, whether the release
is kept, and the folder the sweep's worker processes share values in (`engine.text.kept.sharing`; None in one
process)."""


def _sweep_piece(
    piece: SweepPiece, report: Report | None
) -> tuple[float | None, int, dict[str, MetricResult], Release | None]:
    """One task of a sweep, in a worker or this process: the baseline's measures (value None) or a release's;
    ``report`` hears of the objects loaded or the release made (1), then of each measure."""
    objects, seed, replicates, value, m, keep, folder = piece
    fitted, evaluator = objects.load() if isinstance(objects, Shipped) else objects
    with sharing(folder):
        if value is None:
            if report is not None:
                report(1)
            with fixed_threads():
                return None, 0, evaluator.baseline(None if report is None else lambda k: report(1 + k)), None
        return _measure(fitted, evaluator, value, seed, replicates, m, keep, report)


def _dask_piece(
    fitted: Fitted, evaluator: Evaluator, seed: int, replicates: int, value: float | None, m: int, keep: bool
) -> tuple[float | None, int, dict[str, MetricResult], Release | None]:
    return _sweep_piece(((fitted, evaluator), seed, replicates, value, m, keep, None), None)


def _counted(results: Iterator[T], steps: int, total: int, progress: Progress, what: str) -> Iterator[T]:
    """``results`` passed on, the bar moved ``steps`` (of ``total``) at each."""
    for done, result in enumerate(results, start=1):
        progress(done * steps, total, what)
        yield result


MAX_REPLICATES = 1000


def check_replicates(replicates: int) -> int:
    if not isinstance(replicates, (int, np.integer)) or replicates < 1 or replicates > MAX_REPLICATES:
        raise ConfigError(f"replicates must be a whole number from 1 to {MAX_REPLICATES}, got {replicates!r}")
    return int(replicates)


def run_sweep(
    dataset: Dataset,
    protector: Protector,
    grid: list[float] | str | None = None,
    replicates: int = 1,
    seed: int = 0,
    jobs: int = 1,
    progress: Progress = no_progress,
    metrics: list[str] | None = None,
    use_cache: bool = True,
    fitted: Fitted | None = None,
    evaluator: Evaluator | None = None,
    options: MeasureSettings | None = None,
    keep_releases: int = 0,
    backend: str = "local",
    scheduler: str | None = None,
    refine: int | None = None,
    measure_baseline: bool = True,
    keep_on_disk: bool = False,
) -> SweepResult:
    """Measure every knob value of ``grid`` over ``replicates`` releases.

    ``grid`` is a list of knob values, ``"path"`` for every value the fit prepared (the whole λ or α path),
    or None for the knob's default grid; a value printed from the path (λ* with six digits) is taken as that
    path value. A deterministic method gives the same release at every replicate, so it is measured once per
    knob value. Detail is kept for every replicate (column ``replicate``) where it has at most
    `MAX_DETAIL_ROWS` rows, otherwise for replicate 0. The releases of the first ``keep_releases`` replicates
    are kept too, compact (`Release.compact`), so that a page can show the release at any grid value without
    making it again; with ``keep_on_disk`` (a large table's) in files rather than memory (`ReleasesOnDisk`).
    ``backend`` and ``scheduler`` say where the tasks run (`engine.backends`); the result does
    not depend on them, nor on ``jobs``.
    """
    replicates = check_replicates(replicates)
    if protector.deterministic:
        replicates = 1
    if isinstance(grid, str) and grid != "path":
        raise ConfigError(f"grid must be knob values or 'path', got {grid!r}")
    if grid is not None and not isinstance(grid, str):
        grid = [protector.knob.validate(v) for v in grid]  # the method's general range, before the costly fit
        if not grid:
            raise ConfigError("the knob grid is empty; give at least one value")
    if fitted is None:
        check_options(dataset, protector.check(dataset), options)
        progress(0, 1, f"fitting {protector.title}")
        fitted = fit_cached(protector, dataset, progress, use_cache=use_cache)
    knob = fitted.knob
    if isinstance(grid, str) and grid != "path":
        raise ConfigError(f'grid {grid!r} is not accepted; give knob values, "path" or nothing (the default grid)')
    raw = fitted.path_grid() if isinstance(grid, str) else (knob.default_grid() if grid is None else grid)
    values = sorted({fitted.snap(v) for v in raw})
    if evaluator is None:
        evaluator = Evaluator(
            dataset, metrics, progress, fields=fitted.synthesized_fields, options=options, fitted=fitted
        )
    if not evaluator.available:
        raise ConfigError(
            "no metric applies to this dataset: " + "; ".join(f"{k} {v}" for k, v in evaluator.skipped.items())
        )

    # The bar's steps: the unprotected data's measures (the baseline), then each release made and measured.
    steps = 1 + len(evaluator.available)
    what = "protecting and measuring"
    with ExitStack() as stack:
        n_jobs = stack.enter_context(parallel_backend(backend, scheduler, jobs, shared=(fitted, evaluator)))
        shipped: list[tuple[Shipped, str]] = []  # the objects and the shared folder, made once for every round
        store = ReleasesOnDisk() if keep_on_disk and keep_releases > 0 else None  # every round's releases

        def run(items: list[tuple]) -> Iterator[tuple[float | None, int, dict[str, MetricResult], Release | None]]:
            """The pieces of ``items`` (knob value or None, replicate, kept), in the order given."""
            if backend != "local":  # Dask scatters the shared objects itself; the bar moves per release
                calls = (delayed(_dask_piece)(fitted, evaluator, seed, replicates, *item) for item in items)
                return _counted(
                    Parallel(n_jobs=n_jobs, return_as="generator")(calls), steps, steps * len(items), progress, what
                )
            # in a worker, or a thread that counts as one (a large table's full sweep, `giving_way`'s held_once),
            # nothing is shipped: every piece runs here
            processes = 1 if in_worker() else min(effective_n_jobs(n_jobs), len(items))
            if processes > 1 and not shipped:  # the refining rounds reuse them: their workers hold them already
                objects = stack.enter_context(shipped_once((fitted, evaluator)))
                return_free_memory()  # what the fit freed goes back before the workers load their copies
                shipped.append((objects, stack.enter_context(tempfile.TemporaryDirectory(prefix="textsdc-shared-"))))
            one: tuple[Shipped | tuple[Fitted, Evaluator], str | None] = (
                shipped[0] if processes > 1 else ((fitted, evaluator), None)
            )
            pieces = [(one[0], seed, replicates, *item, one[1]) for item in items]
            here = isinstance(one[0], Shipped) and one[0].size >= SHARE_HERE_BYTES
            return iter(map_reporting(_sweep_piece, pieces, steps, progress, what, processes, here=here))

        def sweep_of(grid_values: list[float], with_baseline: bool) -> SweepResult:
            tasks = [(v, m) for v in grid_values for m in range(replicates)]
            progress(0, steps * (len(tasks) + 1), what)
            first: list[tuple] = [(None, 0, False)] if with_baseline else []
            return _collected(
                grid_values, run(first + [(v, m, m < keep_releases) for v, m in tasks]), with_baseline, meta, store
            )

        meta = SweepResult(
            dataset=dataset.name,
            fingerprint=dataset.fingerprint,
            method=protector.name,
            knob=knob,
            grid=values,
            replicates=replicates,
            seed=seed,
            rows=pd.DataFrame(columns=ROW_COLUMNS),
            summary=pd.DataFrame(),
            skipped=dict(evaluator.skipped),
            notes=dict(evaluator.notes),
            complexity=fitted.complexity(),
            tasks=dict(evaluator.tasks),
            withheld=tuple(fitted.withheld_columns()),
        )
        result = sweep_of(values, measure_baseline)
        budget = (knob.refine if grid is None else 0) if refine is None else refine
        if budget <= 0 or knob.integer:
            return result
        added: list[SweepResult] = []

        def measure(new: list[float]) -> pd.DataFrame:
            added.append(sweep_of(sorted({fitted.snap(knob.validate(v)) for v in new}), False))
            return added[-1].summary

        refine_grid(knob, result.summary, measure, budget)
        return merged(result, added)


def _collected(
    values: list[float],
    results: Iterator[tuple[float | None, int, dict[str, MetricResult], Release | None]],
    with_baseline: bool,
    meta: SweepResult,
    store: ReleasesOnDisk | None = None,
) -> SweepResult:
    """The sweep of knob ``values`` from the pieces' ``results`` (the baseline's first, when ``with_baseline``),
    its other fields from ``meta``; the releases kept are added to ``store`` as they come, where one is given."""
    rows: list[dict] = []
    details: dict[float, dict[str, list[pd.DataFrame]]] = {}
    kept: dict[float, dict[int, Release]] = {}
    baseline: dict[str, MetricResult] = next(results)[2] if with_baseline else {}
    unprotected = advantage_result({k.removesuffix(CONFIDENTIAL_SUFFIX): v for k, v in baseline.items()})
    if unprotected is not None:
        baseline[unprotected.as_confidential().id] = unprotected.as_confidential()
    for value, m, measured, release in results:
        v = float(value)  # type: ignore[arg-type]  # a release's value (the baseline, None, came first)
        if release is not None and store is not None:
            store.add(v, m, release)
        elif release is not None:
            kept.setdefault(v, {})[m] = release
        worst = advantage_result(measured)
        for mid, res in measured.items():
            rows.append(result_row(v, m, replace(res, id=mid)))
            # Per-record detail (one row per record) is kept for replicate 0 only: M copies of it would hold
            # the data M times over; detail per target, cell or topic is small and kept for every replicate.
            if res.detail is not None and (m == 0 or len(res.detail) <= MAX_DETAIL_ROWS):
                details.setdefault(v, {}).setdefault(mid, []).append(res.detail.assign(replicate=m))
        if worst is not None:  # the worst applicable attack over chance, a risk axis like any measure
            rows.append(result_row(v, m, worst))
    table = pd.DataFrame(rows, columns=ROW_COLUMNS)
    return replace(
        meta,
        grid=values,
        rows=table,
        summary=summarize(table),
        baseline=baseline,
        details={v: {mid: pd.concat(parts, ignore_index=True) for mid, parts in d.items()} for v, d in details.items()},
        releases=store if store is not None else {v: [by_m[m] for m in sorted(by_m)] for v, by_m in kept.items()},
    )


def merged(base: SweepResult, added: list[SweepResult]) -> SweepResult:
    """``base`` with the knob values of the sweeps ``added`` (of the same fit, measures and replicates)."""
    if not added:
        return base
    rows = pd.concat([base.rows, *(a.rows for a in added)], ignore_index=True).sort_values(
        ["knob", "replicate", "metric"], kind="stable"
    )
    return replace(
        base,
        grid=sorted({*base.grid, *(v for a in added for v in a.grid)}),
        rows=rows.reset_index(drop=True),
        summary=summarize(rows),
        details={**base.details, **{v: d for a in added for v, d in a.details.items()}},
        releases=(
            base.releases  # one store every round added to
            if isinstance(base.releases, ReleasesOnDisk) and all(a.releases is base.releases for a in added)
            else {**base.releases, **{v: r for a in added for v, r in a.releases.items()}}
        ),
    )


def metrics_with_intervals(sweep: SweepResult, value: float) -> dict[str, MetricResult]:
    """The metrics at one knob value (mean and interval over replicates) plus the unprotected baselines: the
    measures a release records. The worst attack's success beyond its baseline (`WORST_ATTACK`, a sweep's row for the
    frontier) is left out: a release record derives its worst attack from the attacks themselves."""
    out = sweep.metrics_at(value)
    out.update(sweep.baseline)
    return {k: v for k, v in out.items() if k.removesuffix(CONFIDENTIAL_SUFFIX) != WORST_ATTACK}
