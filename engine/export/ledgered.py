"""An export checked against the release ledger (`engine.ledger`) before anything is written, and recorded in it
once its bundle is.

`check_ledger` drafts the ledger entry of the release (its records, its step, the treatment of every column, ε,
and for each synthesized field how close the average of its synthetic releases so far comes to the confidential
values, read from the earlier bundles where they still are), runs the ledger's checks against the earlier
releases of the same records and stops the export with a `LedgerRefusal` naming each finding unless the steward
gave a reason to export over them. The manifest records the cumulative figures (`LedgerNote`); `record_export`
adds the entry, with the reason, after the bundle's files and manifest are written and before it is put in
place. A release made again byte for byte (the same records, method, knob, seed and replicate) discloses nothing
new: it is recorded as a repeat, with the figures and reason of the release it repeats, so its manifest is the
same. A replay by `textsdc verify` takes the note its bundle recorded (``recorded``) and a ledger of its own."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.export.checks import unchanged_protected_columns
from engine.export.files import RELEASE_PARQUET
from engine.export.identifiers import as_written, column_treatments
from engine.ledger.averaging import averaging
from engine.ledger.checks import epsilon_total, ledger_findings
from engine.ledger.entry import Averaging, Entry, Step, make_step, records_digest
from engine.ledger.store import Ledger, append_entry, read_ledger
from engine.protect import METHODS
from engine.protect.base import Release
from engine.protect.claims import EpsilonClaim
from engine.protect.guard import GuardCounts
from engine.record.manifest import MANIFEST_JSON, LedgerNote, MethodStep, ReleaseRecord

OVERRIDE_FLAG = "--ledger-override"
OVERRIDE_PAGE = 'the reason box and "Export over the ledger\'s findings" on the Export page'


class LedgerRefusal(ConfigError):
    """An export the ledger's checks stopped: each finding, and how to export over them."""


@dataclass(frozen=True)
class LedgerUse:
    """How an export uses the ledger: which file (None: `default_ledger`), the steward's reason to export over
    its findings, and for a replay of a bundle the note that bundle recorded (its checks then are not run)."""

    path: str | Path | None = None
    override: str | None = None
    recorded: LedgerNote | None = None
    noted: bool = True
    """Whether the manifest carries the ledger's note (False: the replay of a bundle written before the ledger)."""


@dataclass(frozen=True)
class Gate:
    """A release checked against the ledger: the ledger as read, the entry it will add, the earlier releases of
    the same records, the findings and the note the manifest will carry."""

    ledger: Ledger
    entry: Entry
    earlier: tuple[Entry, ...]
    findings: tuple[str, ...]
    note: LedgerNote


def _more_privacy(method: str) -> str:
    """The direction of ``method``'s knob that protects more (a plan's knob is its last step's)."""
    cls = METHODS.get(method.split("+")[-1])
    return "higher" if cls is None else cls.knob.more_privacy


def _earlier_values(entry: Entry, column: str, n: int) -> pd.Series | None:
    """``column`` as the bundle of ``entry`` released it, when the bundle is still where it was written and is
    the one recorded (its manifest's SHA-256), with one value per record."""
    folder = Path(entry.location)
    manifest = folder / MANIFEST_JSON
    try:
        if hashlib.sha256(manifest.read_bytes()).hexdigest() != entry.manifest_sha256:
            return None
        frame = pd.read_parquet(folder / RELEASE_PARQUET, columns=[column])
    except (OSError, ValueError, KeyError):
        return None
    return frame[column] if len(frame) == n else None


def _averaging(dataset: Dataset, release: Release, earlier: tuple[Entry, ...], step: Step) -> tuple[Averaging, ...]:
    """For each field this release synthesizes, the distances of one release and of the average of all of them
    (the earlier bundles that still are where they were written) from the confidential values."""
    schema = dataset.schema
    kinds = {f.name: "categorical" if f.kind == "categorical" else "numeric" for f in schema.fields}
    columns = [c for c, t in step.columns.items() if t == "synthesized" and c in kinds and c in release.data.columns]
    if not columns or len(release.data) != dataset.n_records:
        return ()
    confidential = as_written(dataset.frame[columns], schema)
    released = as_written(release.data[columns].reset_index(drop=True), schema)
    out = []
    for column in columns:
        series = [released[column]]
        for e in earlier:
            if e.columns.get(column) == "synthesized":
                values = _earlier_values(e, column, dataset.n_records)
                if values is not None:
                    series.insert(-1, values.reset_index(drop=True))
        out.append(averaging(column, str(kinds[column]), confidential[column].reset_index(drop=True), series))
    return tuple(out)


def draft(
    ledger: Ledger, dataset: Dataset, release: Release, step: Step, seed: int | None, replicate: int, replicates: int
) -> Gate:
    """The release's entry checked against the earlier releases of the same records in ``ledger``."""
    digest = records_digest(dataset.frame)
    entry = Entry(
        fingerprint=dataset.fingerprint,
        dataset=dataset.name,
        text=dataset.schema.text,
        records=dataset.n_records,
        records_digest=digest,
        steps=(step,),
        seed=seed,
        replicate=replicate,
        replicates=replicates,
    )
    earlier = tuple(e for e in ledger.of_records(digest) if e.repeat_of is None)
    same = next((e for e in earlier if e.same_release(entry)), None)
    if same is not None and same.note is not None:
        repeat = replace(
            entry,
            averaging=same.averaging,
            findings=same.findings,
            override=same.override,
            note=same.note,
            repeat_of=same.number,
        )
        return Gate(ledger, repeat, earlier, (), same.note)
    entry = replace(entry, averaging=_averaging(dataset, release, earlier, step))
    findings = tuple(ledger_findings(earlier, entry))
    total, spending = epsilon_total(earlier, entry)
    note = LedgerNote(len(earlier) + 1, total, spending, findings)
    return Gate(ledger, replace(entry, findings=findings, note=note), earlier, findings, note)


def record_step(record: ReleaseRecord, text_column: str | None) -> Step:
    """The step a release record describes (``text_column``: the data's text column)."""
    return make_step(
        record.method,
        record.columns,
        record.epsilon,
        _more_privacy(record.method.name),
        text_column,
        record.unchanged_protected_columns,
    )


def release_step(dataset: Dataset, release: Release, method: MethodStep) -> Step:
    """The step of a release not yet recorded (the Export page's preview), described as its record will."""
    counts = release.detail(GuardCounts)
    columns = column_treatments(
        release.data,
        dataset.schema,
        release.protected_columns,
        release.withheld,
        () if counts is None else counts.columns,
    )
    claim = next((d for d in release.details if isinstance(d, EpsilonClaim)), None)
    unchanged = unchanged_protected_columns(dataset, release)
    return make_step(method, columns, claim, _more_privacy(method.name), dataset.schema.text, unchanged)


def preview(
    use: LedgerUse,
    dataset: Dataset,
    release: Release,
    method: MethodStep,
    seed: int | None,
    replicate: int,
    replicates: int,
) -> Gate:
    """What the ledger will say of ``release`` before it is exported (the Export page shows it above its button):
    the earlier releases of the same records, what this one adds and the findings that will stop it."""
    step = release_step(dataset, release, method)
    return draft(read_ledger(use.path), dataset, release, step, seed, replicate, replicates)


def refusal(gate: Gate) -> LedgerRefusal:
    """The message of an export the ledger stops."""
    named = "; ".join(f"({i}) {f}" for i, f in enumerate(gate.findings, 1))
    earlier = "; ".join(f"ledger release {e.number}: the bundle {e.bundle}, written {e.time_utc}" for e in gate.earlier)
    return LedgerRefusal(
        f"the release ledger ({gate.ledger.path}) stops this export, so nothing was written: {named} ({earlier}). "
        "To export it "
        f'anyway, give your reason: {OVERRIDE_FLAG} "reason" on the command line, or {OVERRIDE_PAGE}; the ledger '
        "keeps the reason, and the manifest and the report state the findings with it"
    )


def check_ledger(use: LedgerUse, dataset: Dataset, release: Release, record: ReleaseRecord) -> Gate:
    """The release of ``record`` checked against the ledger ``use`` names; a `LedgerRefusal` for findings the
    steward gave no reason to export over, a ConfigError for a reason that is blank."""
    step = record_step(record, dataset.schema.text)
    gate = draft(read_ledger(use.path), dataset, release, step, record.seed, record.replicate, record.replicates)
    if use.recorded is not None:
        entry = replace(gate.entry, note=use.recorded, override=use.recorded.override, findings=use.recorded.findings)
        return replace(gate, entry=entry, findings=(), note=use.recorded)
    reason = None if use.override is None else use.override.strip()
    if reason == "":
        raise ConfigError(
            f"{OVERRIDE_FLAG} needs a reason in words: why this release may leave over the ledger's findings"
        )
    if not gate.findings:
        return gate
    if reason is None:
        raise refusal(gate)
    note = replace(gate.note, override=reason)
    return replace(gate, note=note, entry=replace(gate.entry, override=reason, note=note))


def record_export(gate: Gate, out: Path, manifest_text: str) -> Entry:
    """Add the export's entry to the ledger: the bundle's folder (its name, and where it is on this machine, which
    the averaging check reads later) and its manifest's SHA-256."""
    sha = hashlib.sha256(manifest_text.encode("utf-8")).hexdigest()
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return append_entry(gate.ledger, gate.entry.written(0, now, out.name, str(out.resolve()), sha))
