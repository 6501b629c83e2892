"""A knob grid × M replicates: fit once, release and measure many times, in parallel with joblib (on this
machine or a Dask cluster, `engine.backends`).

Replicate m of a run with seed s draws from ``SeedSequence(s).spawn(M)[m]``, the same stream at every knob
value, so differences along the knob are not blurred by different random draws.

Releases and measures run with one BLAS/OpenMP thread (`fixed_threads`) in the main process and in joblib's
workers alike: a floating reduction split over another number of threads rounds differently, and the bundle of
``--jobs 2`` must be byte-identical to the one of ``--jobs 1``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from engine.backends import parallel_backend
from engine.cache import fit_cached
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.base import MetricResult, metric_info
from engine.measures.evaluate import Evaluator, MeasureOptions, check_options
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Protector, Release
from engine.results import SweepResult, summarize
from engine.workers import Shipped, shipped_once

MAX_DETAIL_ROWS = 20_000
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
    """One reproducible release: knob ``value``, replicate ``replicate`` of ``replicates`` under ``seed``."""
    with fixed_threads():
        release = fitted.release(
            fitted.knob.validate(value), replicate_rng(seed, replicates, replicate), replicate=replicate
        )
    return replace(release, seed=seed, replicate=replicate)


def _measure(
    fitted: Fitted, evaluator: Evaluator, value: float, seed: int, replicates: int, m: int, keep: bool
) -> tuple[float, int, dict[str, MetricResult], Release | None]:
    with fixed_threads():
        release = make_release(fitted, value, seed, replicates, m)
        return value, m, evaluator.evaluate(release), release.compact() if keep else None


def _measure_shipped(
    shipped: Shipped, value: float, seed: int, replicates: int, m: int, keep: bool
) -> tuple[float, int, dict[str, MetricResult], Release | None]:
    fitted, evaluator = shipped.load()
    return _measure(fitted, evaluator, value, seed, replicates, m, keep)


def _baseline(evaluator: Evaluator | Shipped) -> dict[str, MetricResult]:
    """The measures of the unprotected data (a task beside the releases' when they run in workers)."""
    with fixed_threads():
        return (evaluator.load()[1] if isinstance(evaluator, Shipped) else evaluator).baseline()


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
    options: MeasureOptions | None = None,
    keep_releases: int = 0,
    backend: str = "local",
    scheduler: str | None = None,
) -> SweepResult:
    """Measure every knob value of ``grid`` over ``replicates`` releases.

    ``grid`` is a list of knob values, ``"path"`` for every value the fit prepared (the whole λ or α path),
    or None for the knob's default grid; a value printed from the path (λ* with six digits) is taken as that
    path value. A deterministic method gives the same release at every replicate, so it is measured once per
    knob value. Detail is kept for every replicate (column ``replicate``) where it has at most
    `MAX_DETAIL_ROWS` rows, otherwise for replicate 0. The releases of the first ``keep_releases`` replicates
    are kept too, compact (`Release.compact`), so that a page can show the release at any grid value without
    making it again. ``backend`` and ``scheduler`` say where the tasks run (`engine.backends`); the result does
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

    tasks = [(v, m) for v in values for m in range(replicates)]
    # The steps of the bar: the unprotected data's measures (the baseline), then each release's.
    total = len(tasks) + 1
    progress(0, total, "protecting and measuring")
    rows: list[dict] = []
    details: dict[float, dict[str, list[pd.DataFrame]]] = {}
    kept: dict[float, dict[int, Release]] = {}
    with ExitStack() as stack:
        n_jobs = stack.enter_context(parallel_backend(backend, scheduler, jobs, shared=(fitted, evaluator)))
        if backend == "local" and n_jobs != 1 and total > 1:  # Dask scatters them itself
            shipped = stack.enter_context(shipped_once((fitted, evaluator)))
            first = delayed(_baseline)(shipped)
            calls = (delayed(_measure_shipped)(shipped, v, seed, replicates, m, m < keep_releases) for v, m in tasks)
        else:
            first = delayed(_baseline)(evaluator)
            calls = (delayed(_measure)(fitted, evaluator, v, seed, replicates, m, m < keep_releases) for v, m in tasks)
        results = Parallel(n_jobs=n_jobs, return_as="generator")(itertools.chain([first], calls))
        baseline: dict[str, MetricResult] = next(results)  # type: ignore[assignment]
        progress(1, total, "protecting and measuring")
        for done, (v, m, measured, release) in enumerate(results, start=2):
            if release is not None:
                kept.setdefault(v, {})[m] = release
            for mid, res in measured.items():
                rows.append(
                    {"knob": v, "replicate": m, "metric": mid, "kind": metric_info(mid).kind, "value": res.value}
                )
                # Per-record detail (one row per record) is kept for replicate 0 only: M copies of it would hold
                # the data M times over; detail per target, cell or topic is small and kept for every replicate.
                if res.detail is not None and (m == 0 or len(res.detail) <= MAX_DETAIL_ROWS):
                    details.setdefault(v, {}).setdefault(mid, []).append(res.detail.assign(replicate=m))
            progress(done, total, "protecting and measuring")
    table = pd.DataFrame(rows, columns=["knob", "replicate", "metric", "kind", "value"])
    return SweepResult(
        dataset=dataset.name,
        fingerprint=dataset.fingerprint,
        method=protector.name,
        knob=knob,
        grid=values,
        replicates=replicates,
        seed=seed,
        rows=table,
        summary=summarize(table),
        baseline=baseline,
        details={v: {mid: pd.concat(parts, ignore_index=True) for mid, parts in d.items()} for v, d in details.items()},
        skipped=dict(evaluator.skipped),
        notes=dict(evaluator.notes),
        complexity=fitted.complexity(),
        releases={v: [by_m[m] for m in sorted(by_m)] for v, by_m in kept.items()},
    )


def metrics_with_intervals(sweep: SweepResult, value: float) -> dict[str, MetricResult]:
    """The metrics at one knob value (mean and interval over replicates) plus the unprotected baselines."""
    out = sweep.metrics_at(value)
    out.update(sweep.baseline)
    return out
