"""Exporting the release a steward chose: the one step the CLI's `release` and `export`, `textsdc verify` and the
dashboard's Export page all call, so the bundle is the same whichever wrote it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.annotation.residual import AnnotatedDetection, with_annotations
from engine.cache import fit_cached
from engine.data.dataset import Dataset
from engine.data.load import load_dataset
from engine.export.bundle import ExportResult, export_release, release_record
from engine.export.ledgered import LedgerUse
from engine.measures.evaluate import Evaluator, check_options
from engine.progress import Progress, no_progress
from engine.protect import get_protector
from engine.protect.base import Fitted, Protector
from engine.protect.guard import guarded
from engine.protect.plan import Plan
from engine.record.decision import Decision
from engine.record.manifest import MethodStep
from engine.record.replay import ReplaySpec
from engine.report.context import ReleaseReport
from engine.report.samples import SAMPLE_RECORDS, sample_records
from engine.results import SweepResult
from engine.sweep import make_release, metrics_with_intervals, run_sweep


@dataclass(frozen=True)
class Prepared:
    """What the caller already holds for a release: the data, the protector and its fit, and — where it has them
    — the measures' evaluator and a sweep of the knob's grid with the same seed and M (the dashboard's)."""

    dataset: Dataset
    protector: Protector
    fitted: Fitted
    evaluator: Evaluator | None = None
    sweep: SweepResult | None = None


@dataclass(frozen=True)
class Run:
    """How the work of an export runs: parallel workers, progress, the audit log (default: in the cache folder),
    whether the report is also printed to PDF, the pseudonym key (default: the cache folder's) and the file to
    export it to, whether a bundle already in the target folder may be replaced, and the release ledger."""

    jobs: int = 1
    progress: Progress = no_progress
    audit_log: str | Path | None = None
    pdf: bool = True
    key: bytes | None = field(default=None, repr=False)
    key_out: str | Path | None = None
    replace: bool = False
    annotated: tuple[AnnotatedDetection, ...] | None = None
    """The annotation scores a release record kept, for a replay (`with_annotations`' ``recorded``); None: those
    of the annotations this machine keeps."""
    ledger: LedgerUse = LedgerUse()
    """The release ledger the export is checked against and recorded in, and the steward's reason to export over
    its findings (`engine.export.ledgered`)."""


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
    spec: ReplaySpec,
    prepared: Prepared,
    decision: Decision | None = None,
    run: Run = Run(),  # noqa: B008 - a frozen value
) -> ExportResult:
    """Measure the release ``spec`` names (read from ``prepared.sweep`` when it measured that knob value with the
    same seed and M, measured now otherwise), make its replicate and write its bundle into ``out_dir`` with the
    sample records the dashboard shows. With ``spec.with_frontier`` the report draws the frontier of the sweep
    (swept now if there is none); ``decision`` is the steward's decision note the manifest and report carry.
    The record's replay command names ``spec.out``, the replay folder of the bundle (`replay_folder`), wherever
    the bundle is written: a replay into another folder makes the same record."""
    dataset, protector = prepared.dataset, prepared.protector
    fitted = guarded(prepared.fitted, protector, dataset)  # a fit made by hand passes the release guard too
    value = fitted.snap(spec.knob)
    sweep = prepared.sweep

    def evaluator() -> Evaluator:
        return prepared.evaluator or Evaluator(
            dataset, None, run.progress, fields=fitted.synthesized_fields, options=spec.options, fitted=fitted
        )

    if spec.with_frontier and sweep is None:
        sweep = run_sweep(
            dataset,
            protector,
            replicates=spec.replicates,
            seed=spec.seed,
            jobs=run.jobs,
            progress=run.progress,
            fitted=fitted,
            evaluator=evaluator(),
        )
    if _on_grid(sweep, value, spec.seed, spec.replicates):
        assert sweep is not None
        point, at = sweep, min(sweep.grid, key=lambda g: abs(g - value))
    else:
        point = run_sweep(
            dataset,
            protector,
            grid=[value],
            replicates=spec.replicates,
            seed=spec.seed,
            jobs=run.jobs,
            progress=run.progress,
            fitted=fitted,
            evaluator=evaluator(),
        )
        at = point.grid[0]
    replicate = min(spec.replicate, point.replicates - 1)  # a deterministic method has one release per knob value
    release = make_release(fitted, value, spec.seed, point.replicates, replicate)
    release = with_annotations(release, dataset, protector, run.progress, run.annotated)  # the steward's own gold
    along = [make_release(fitted, v, spec.seed, point.replicates, replicate) for v in fitted.knob.default_grid()]
    metrics = metrics_with_intervals(point, at)
    knob = fitted.knob
    steps = protector.step_record(release.knob) if isinstance(protector, Plan) else ()
    method = MethodStep(
        protector.name, protector.title or None, protector.params(), knob.name, knob.symbol, release.knob, steps
    )
    drawn = sweep if spec.with_frontier else None
    record = release_record(dataset, release, metrics, method, point.replicates, spec, decision, drawn)
    report = ReleaseReport(
        record=record,
        dataset=dataset,
        release=release,
        metrics=metrics,
        knob=knob,
        point=point,
        sweep=drawn,
        records=tuple(sample_records(dataset, along, SAMPLE_RECORDS)),
        risk_metric=first_measure(point, "risk"),
        utility_metric=first_measure(point, "utility"),
    )
    return export_release(out_dir, report, run.audit_log, run.pdf, run.key, run.key_out, run.replace, run.ledger)


def release_again(
    spec: ReplaySpec,
    out_dir: str | Path,
    data: str | None = None,
    decision: Decision | None = None,
    use_cache: bool = True,
    run: Run = Run(),  # noqa: B008 - a frozen value
) -> ExportResult:
    """What `textsdc release` does: load ``spec.data`` (or ``data``, where the data is now), check the method and
    the measure settings against it, fit (from the cache where it holds the fit) and `export_chosen` into
    ``out_dir``. The record keeps ``spec``'s data and replay folder, so the bundle names what the steward named."""
    dataset = load_dataset(
        data or spec.data, spec.schema, encoding=spec.encoding, delimiter=spec.delimiter, bad_rows=spec.bad_rows
    )
    protector = get_protector(spec.method, **spec.params)
    protector.knob.validate(spec.knob)  # the method's general range, before the costly fit
    check_options(dataset, protector.check(dataset), spec.options)
    fitted = fit_cached(protector, dataset, run.progress, use_cache=use_cache)
    return export_chosen(
        out_dir, replace(spec, knob=fitted.snap(spec.knob)), Prepared(dataset, protector, fitted), decision, run
    )
