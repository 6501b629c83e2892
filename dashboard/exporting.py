"""Exporting a pinned candidate from the dashboard with the steward's decision note, through the engine's one
export step."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from dashboard.compute import get_evaluator, get_fitted, get_sweep, protector
from dashboard.loading import Origin
from engine.candidates import Candidate
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.export.bundle import MANIFEST_JSON, ExportResult
from engine.export.chosen import Prepared, Run
from engine.export.chosen import export_chosen as engine_export_chosen
from engine.export.keys import cached_key, key_check
from engine.export.ledgered import Gate, LedgerUse, preview
from engine.export.staging import check_target
from engine.progress import Progress, no_progress
from engine.project import Project
from engine.protect import method_class
from engine.record.decision import Decision, alternatives_of
from engine.record.manifest import MethodStep
from engine.record.replay import ReplaySpec
from engine.sweep import make_release


def default_export_dir(dataset: Dataset, candidate: Candidate) -> str:
    knob = method_class(candidate.method).knob
    setting = knob.format(candidate.knob).replace(",", "")  # a folder name: 10000, not 10,000
    return f"./exports/{dataset.name}-{candidate.method}-{setting}"


def schema_file_name(dataset: Dataset, origin: Origin | None) -> str | None:
    """The schema file a replay needs, or None when the CLI finds the schema itself (a demo as shipped)."""
    if origin is None or (origin.kind in ("demo", "file") and not origin.custom_schema):
        return None
    stem = Path(origin.data).stem if origin.kind != "demo" else origin.data
    return f"{stem}.schema.toml"


def holds_bundle(out_dir: str) -> bool:
    """Whether the output folder holds a bundle already (replaced only when the steward says so)."""
    return bool(out_dir.strip()) and (Path(out_dir).expanduser() / MANIFEST_JSON).is_file()


def replay_spec(
    dataset: Dataset, origin: Origin | None, candidate: Candidate, out_dir: str, with_frontier: bool
) -> ReplaySpec:
    """How `textsdc release` makes the candidate's release again (`ReplaySpec.command` is the command), into the
    replay folder of ``out_dir`` (`engine.record.replay.replay_folder`), as the CLI records it."""
    data = origin.data if origin is not None else dataset.name
    if origin is not None and origin.kind == "upload":
        data = Path(origin.data).name
    encoding = origin.encoding if origin is not None and origin.encoding not in (None, "", "utf-8") else None
    return ReplaySpec(
        data=data,
        schema=schema_file_name(dataset, origin),
        encoding=encoding,
        delimiter=origin.delimiter if origin is not None else None,
        bad_rows=origin.bad_rows if origin is not None else "error",
        method=candidate.method,
        params=candidate.params,
        options=candidate.measure_options(),
        knob=candidate.knob,
        seed=candidate.seed,
        replicates=candidate.replicates,
        replicate=candidate.replicate,
        out=out_dir,
        with_frontier=with_frontier,
    )


def decision_for(dataset: Dataset, origin: Origin | None, project: Project, chosen: str, by: str, why: str) -> Decision:
    """The decision note: who, why, the chosen pin, and the other pins as the alternatives weighed, each with
    the command that makes it again (ConfigError when who or why is missing)."""
    return Decision(
        by=by,
        why=why,
        chosen=chosen,
        alternatives=alternatives_of(
            project.pins, chosen, lambda c: replay_spec(dataset, origin, c, f"./{c.name}", False).command()
        ),
    )


def export_pin(
    dataset: Dataset,
    origin: Origin | None,
    candidate: Candidate,
    out_dir: str,
    with_frontier: bool,
    decision: Decision,
    progress: Progress = no_progress,
    replace: bool = False,
    override: str | None = None,
) -> ExportResult:
    """Write the pinned candidate's release with its manifest, report and decision note (ConfigError /
    DataError as the engine raises), through the engine's one export step, reading the measures from the
    method's sweep (the numbers the pin was made from). A bundle already in ``out_dir`` is replaced only with
    ``replace``; ``override`` is the steward's reason to export over the release ledger's findings."""
    if not out_dir.strip():
        raise ConfigError("give an output folder for the export")
    check_target(Path(out_dir).expanduser(), replace)
    params = dict(candidate.params)
    options = candidate.measure_options()
    fitted = get_fitted(dataset, candidate.method, progress, params)
    prepared = Prepared(
        dataset,
        protector(candidate.method, params),
        fitted,
        get_evaluator(dataset, progress, tuple(fitted.synthesized_fields), options, fitted, params),
        get_sweep(dataset, candidate.method, candidate.replicates, candidate.seed, progress, params, options),
    )
    spec = replay_spec(dataset, origin, candidate, out_dir, with_frontier)
    run = Run(progress=progress, replace=replace, ledger=LedgerUse(override=override))
    return engine_export_chosen(Path(out_dir).expanduser(), spec, prepared, decision, run)


def ledger_preview(dataset: Dataset, candidate: Candidate, progress: Progress = no_progress) -> Gate:
    """What the release ledger will say of the candidate's export: the earlier releases of the same records,
    what this one adds, the findings that will stop it (the release made as the export makes it)."""
    params = dict(candidate.params)
    fitted = get_fitted(dataset, candidate.method, progress, params)
    p = protector(candidate.method, params)
    replicates = 1 if p.deterministic else candidate.replicates  # as the sweep the export reads
    replicate = min(candidate.replicate, replicates - 1)
    release = make_release(fitted, fitted.snap(candidate.knob), candidate.seed, replicates, replicate)
    knob = fitted.knob
    method = MethodStep(p.name, p.title or None, p.params(), knob.name, knob.symbol, release.knob)
    return preview(LedgerUse(), dataset, release, method, candidate.seed, replicate, replicates)


def zip_bundle(result: ExportResult) -> bytes:
    """The bundle's files as a zip archive built in memory, under a folder named like the export folder."""
    buf = io.BytesIO()
    folder = result.out_dir.resolve().name or "export"
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, path in sorted(result.files.items()):
            info = zipfile.ZipInfo(f"{folder}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


def bundle_key(result: ExportResult) -> bytes | None:
    """The pseudonym key the bundle's pseudonyms were made with (the cache folder's, which the Export page's
    exports use: `engine.export.keys`), for the steward to download apart from the bundle, as `textsdc export
    --key-out` writes it; None when no column of the bundle is pseudonymized or the cache folder no longer holds
    that key (its check value differs from the manifest's)."""
    note = result.record.pseudonym_key
    if note is None:
        return None
    key = cached_key()
    return key if key is not None and key_check(key) == note.check else None
