"""Exporting the release a steward chose: the one step the CLI's `release` and the dashboard's Export page
both call, so the bundle is the same whichever wrote it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.data.dataset import Dataset
from engine.export.bundle import ExportResult, export_release
from engine.export.decision import Decision
from engine.measures.evaluate import Evaluator
from engine.measures.options import MeasureOptions
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Protector
from engine.report.samples import SAMPLE_RECORDS, sample_records
from engine.results import SweepResult
from engine.sweep import make_release, metrics_with_intervals, run_sweep


def _on_grid(sweep: SweepResult | None, value: float, seed: int, replicates: int) -> bool:
    return (
        sweep is not None
        and sweep.seed == seed
        and sweep.replicates == replicates
        and any(np.isclose(value, g, rtol=1e-9, atol=0) for g in sweep.grid)
    )


def first_measure(sweep: SweepResult, kind: str) -> str | None:
    """The first measure of ``kind`` (risk or utility) that ``sweep`` measured (the registry's order)."""
    kinds = dict(zip(sweep.rows["metric"], sweep.rows["kind"]))
    return next((m for m in sweep.metric_ids if kinds.get(m) == kind), None)


def export_chosen(
    out_dir: str | Path,
    *,
    dataset: Dataset,
    protector: Protector,
    fitted: Fitted,
    knob: float,
    seed: int,
    replicates: int,
    replay_command: str,
    replicate: int = 0,
    options: MeasureOptions | None = None,
    evaluator: Evaluator | None = None,
    sweep: SweepResult | None = None,
    with_frontier: bool = False,
    risk_metric: str | None = None,
    utility_metric: str | None = None,
    audit_log: str | Path | None = None,
    jobs: int = 1,
    progress: Progress = no_progress,
    decision: Decision | None = None,
) -> ExportResult:
    """Measure the release at ``knob`` (read from ``sweep`` when it measured that value with the same seed and
    M, measured now otherwise), make replicate ``replicate`` and write its bundle with the sample records the
    dashboard shows. With ``with_frontier`` the report draws the frontier of ``sweep`` (swept now if None);
    ``decision`` is the steward's decision note the manifest and report carry.
    """
    value = fitted.snap(knob)
    if with_frontier and sweep is None:
        evaluator = evaluator or Evaluator(
            dataset, None, progress, fields=fitted.synthesized_fields, options=options, fitted=fitted
        )
        sweep = run_sweep(
            dataset,
            protector,
            replicates=replicates,
            seed=seed,
            jobs=jobs,
            progress=progress,
            fitted=fitted,
            evaluator=evaluator,
        )
    if _on_grid(sweep, value, seed, replicates):
        assert sweep is not None
        point, at = sweep, min(sweep.grid, key=lambda g: abs(g - value))
    else:
        evaluator = evaluator or Evaluator(
            dataset, None, progress, fields=fitted.synthesized_fields, options=options, fitted=fitted
        )
        point = run_sweep(
            dataset,
            protector,
            grid=[value],
            replicates=replicates,
            seed=seed,
            jobs=jobs,
            progress=progress,
            fitted=fitted,
            evaluator=evaluator,
        )
        at = point.grid[0]
    replicate = min(replicate, point.replicates - 1)  # a deterministic method has one release per knob value
    release = make_release(fitted, value, seed, point.replicates, replicate)
    along = [make_release(fitted, v, seed, point.replicates, replicate) for v in fitted.knob.default_grid()]
    return export_release(
        out_dir,
        dataset=dataset,
        release=release,
        metrics=metrics_with_intervals(point, at),
        method_params=protector.params(),
        replicates=point.replicates,
        sweep=sweep if with_frontier else None,
        point=point,
        risk_metric=risk_metric or first_measure(point, "risk"),
        utility_metric=utility_metric or first_measure(point, "utility"),
        replay_command=replay_command,
        audit_log=audit_log,
        knob=fitted.knob,
        method_title=protector.title,
        records=sample_records(dataset, along, SAMPLE_RECORDS),
        options=options,
        decision=decision,
    )
