"""Exporting the chosen release from the dashboard, through the engine's one export step."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from dashboard.compute import get_evaluator, get_fitted, protector
from dashboard.loading import Origin
from dashboard.session import Chosen
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.export.bundle import ExportResult
from engine.export.chosen import export_chosen as engine_export_chosen
from engine.progress import Progress, no_progress
from engine.protect import METHODS
from engine.replay import replay_command as engine_replay_command


def default_export_dir(chosen: Chosen) -> str:
    knob = METHODS[chosen.method].knob
    return f"./exports/{chosen.dataset}-{chosen.method}-{knob.format(chosen.knob)}"


def schema_file_name(dataset: Dataset, origin: Origin | None) -> str | None:
    """The schema file a replay needs, or None when the CLI finds the schema itself (a demo as shipped)."""
    if origin is None or (origin.kind in ("demo", "file") and not origin.custom_schema):
        return None
    stem = Path(origin.data).stem if origin.kind != "demo" else origin.data
    return f"{stem}.schema.toml"


def replay_command(dataset: Dataset, origin: Origin | None, chosen: Chosen, out_dir: str, with_frontier: bool) -> str:
    """The `textsdc release ...` command that writes the same release (the engine's own formatting)."""
    data = origin.data if origin is not None else dataset.name
    if origin is not None and origin.kind == "upload":
        data = Path(origin.data).name
    encoding = origin.encoding if origin is not None and origin.encoding not in (None, "", "utf-8") else None
    return engine_replay_command(
        data=data,
        schema=schema_file_name(dataset, origin),
        encoding=encoding,
        method=chosen.method,
        params=chosen.params,
        options=chosen.options,
        knob=chosen.knob,
        seed=chosen.seed,
        replicates=chosen.replicates,
        out=out_dir,
        with_frontier=with_frontier,
    )


def export_chosen(
    dataset: Dataset,
    origin: Origin | None,
    chosen: Chosen,
    out_dir: str,
    with_frontier: bool,
    progress: Progress = no_progress,
) -> ExportResult:
    """Write the chosen release with its manifest and report (ConfigError / DataError as the engine raises),
    through the engine's one export step, reading the measures from the page's sweep."""
    if not out_dir.strip():
        raise ConfigError("give an output folder for the export")
    fitted = get_fitted(dataset, chosen.method, progress, chosen.params)
    return engine_export_chosen(
        Path(out_dir).expanduser(),
        dataset=dataset,
        protector=protector(chosen.method, chosen.params),
        fitted=fitted,
        knob=chosen.knob,
        seed=chosen.seed,
        replicates=chosen.replicates,
        options=chosen.options,
        evaluator=get_evaluator(
            dataset, progress, tuple(fitted.synthesized_fields), chosen.options, fitted, chosen.params
        ),
        sweep=chosen.sweep,
        with_frontier=with_frontier,
        risk_metric=chosen.risk,
        utility_metric=chosen.utility,
        replay_command=replay_command(dataset, origin, chosen, out_dir, with_frontier),
        progress=progress,
    )


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
