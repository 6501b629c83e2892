"""The release record: one typed object for what a bundle says about its release, written as ``manifest.json``.

`ReleaseRecord` holds the dataset's identity, the method with its parameters and knob, seed and replicate, the
measured point with its intervals, the measure settings, the column treatments, the warnings, the decision note,
the replay command, the files with their checksums, how many cells of each CSV file were escaped for
spreadsheets and what the release claims of its public tables (`AnonymityClaim`: k, ℓ, t). `to_manifest` writes
it with a ``manifest_version``; `from_manifest` reads a manifest back (a manifest written before the version was
recorded reads as version 0, the same layout without ``csv_escaped``). Export, the reports, `textsdc verify` and
the dashboard's Export page read and write the record, never the manifest's keys."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine import __version__
from engine.annotation.residual import AnnotatedDetection
from engine.errors import DataError
from engine.measures.attacks import WorstAttack, worst_attack
from engine.protect.claims import AnonymityClaim, EpsilonClaim, epsilon_text
from engine.protect.corrections import KeptCorrections
from engine.protect.detection import DetectionShare
from engine.protect.kanon.retrained import RetrainedTagger
from engine.record.decision import Decision
from engine.record.replay import ReplaySpec

MANIFEST_VERSION = 1
"""The manifest layout this textsdc writes. 1: the first with a version (the layout of the unversioned 0, plus
``manifest_version``, ``csv_escaped``, ``pseudonym_key`` and ``claims``; ``background``, ``epsilon_claim`` and an
attack's ``chance`` where there are, and ``ledger``, read as absent by an older reader's layout)."""
MANIFEST_JSON = "manifest.json"
INTRUDER_DESCRIPTION = "intruder_description"
"""The key of ``measure_settings`` that says, in words, which intruder the risk measures assumed."""


def jsonable(obj: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, NaN/inf as null, tuples as lists, anything else as text."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    return str(obj)


def detection_manifest(share: DetectionShare) -> dict[str, Any]:
    """A residual detection risk as plain JSON values: its counts, and the share, interval and statement they
    give (null where nothing is measured)."""
    lo, hi = share.interval()
    return {
        "detector": share.detector,
        "what": share.what,
        "gold": share.gold,
        "found": share.found,
        "total": share.total,
        "share": share.share if share.measured else None,
        "lo": lo if share.measured else None,
        "hi": hi if share.measured else None,
        "parts": [{"what": what, "found": f, "total": t} for what, f, t in share.parts],
        "guarantee": share.guarantee,
        "unmeasured": list(share.unmeasured),
        "annotated": share.annotated,
        "statement": share.describe(),
    }


def detection_from_manifest(entry: Mapping[str, Any]) -> DetectionShare:
    """A residual detection risk read back from its manifest entry (`detection_manifest`)."""
    return DetectionShare(
        detector=str(entry["detector"]),
        what=str(entry["what"]),
        gold=str(entry["gold"]),
        found=int(entry["found"]),
        total=int(entry["total"]),
        parts=tuple((str(p["what"]), int(p["found"]), int(p["total"])) for p in entry.get("parts", ())),
        guarantee=str(entry.get("guarantee", "")),
        unmeasured=tuple(entry.get("unmeasured", ())),
        annotated=bool(entry.get("annotated", False)),
    )


@dataclass(frozen=True)
class DatasetIdentity:
    """Which data a release was made from: its name, the file's name (never its path), its fingerprint, its
    records (and the intruder's external records beside them) and the column roles (`Schema.to_dict`)."""

    name: str
    source: str | None
    fingerprint: str
    n_records: int
    n_external: int
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class MethodStep:
    """The method a release applied, its parameters and its knob: name, symbol and value."""

    name: str
    title: str | None
    params: Mapping[str, Any]
    knob_name: str | None
    knob_symbol: str | None
    knob: float
    steps: tuple[Mapping[str, Any], ...] = ()
    """A plan's steps in order (`engine.protect.plan.Plan.step_record`): each method, its knob and value, and
    the seed it drew with; none for a single method."""


@dataclass(frozen=True)
class Measured:
    """A measure at the release's knob: its value, its 95% interval (over replicates, or an attack's own), risk
    or utility, and for an attack the chance level its value is read against."""

    value: float | None
    lo: float | None
    hi: float | None
    kind: str
    chance: float | None = None


@dataclass(frozen=True)
class BackgroundNote:
    """The background corpus the attacks assumed the intruder holds: its file's name (never its path), the
    SHA-256 of its bytes and its number of rows. Never its content."""

    file: str
    sha256: str
    rows: int
    swap_target: str | None = None
    """On a swap release, whether it reaches its target against the background attacker, in words (`SwapTarget`)."""


@dataclass(frozen=True)
class GuardRecord:
    """What the release guard replaced, per type, and the types the steward left alone."""

    replaced: Mapping[str, int]
    off: tuple[str, ...] = ()


@dataclass(frozen=True)
class SweepSpec:
    """The grid the report's frontier was swept over, with its replicates and seed."""

    grid: tuple[float, ...]
    replicates: int
    seed: int


@dataclass(frozen=True)
class KeyNote:
    """What a bundle says of the key its pseudonyms were made with: the key's check value
    (`engine.export.keys.key_check`: whether a key file is that key, and nothing of the key) and the files whose
    bytes depend on the key. Never the key, nor where a copy of it was written."""

    check: str
    files: tuple[str, ...]


@dataclass(frozen=True)
class LedgerNote:
    """What the release ledger (`engine.ledger`) says of a release beside the earlier ones of the same records:
    how many releases of these records it holds with this one (a replay of a recorded release counts once), the
    ε they spend together under sequential composition (None: no release of them spends ε) over how many
    releases, what its checks found and, where the steward exported over a finding, the reason given. Never a
    digest of the records, nor the names or places of the other bundles."""

    releases: int
    epsilon_total: float | None = None
    epsilon_releases: int = 0
    findings: tuple[str, ...] = ()
    override: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The note as plain JSON values."""
        return {
            "releases": self.releases,
            "epsilon_total": self.epsilon_total,
            "epsilon_releases": self.epsilon_releases,
            "findings": list(self.findings),
            "override": self.override,
        }

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> LedgerNote:
        """A note read back (`to_dict`)."""
        total = entry.get("epsilon_total")
        return cls(
            releases=int(entry["releases"]),
            epsilon_total=None if total is None else float(total),
            epsilon_releases=int(entry.get("epsilon_releases", 0)),
            findings=tuple(str(f) for f in entry.get("findings", ())),
            override=None if entry.get("override") is None else str(entry["override"]),
        )

    def describe(self) -> str:
        """The figures in words: releases of these records, ε spent on them together, findings exported over."""
        releases = (
            "1 release of these records (the first)"
            if self.releases == 1
            else f"{self.releases:,} releases of these records with this one"
        )
        eps = (
            ""
            if self.epsilon_total is None
            else f"; ε spent on them {epsilon_text(self.epsilon_total)} over {self.epsilon_releases:,} release(s) "
            "(sequential composition)"
        )
        over = "" if not self.override else f"; exported over {len(self.findings):,} finding(s) of the ledger"
        return releases + eps + over

    def warnings(self) -> tuple[str, ...]:
        """The findings a steward exported over, each as the warning the manifest, the CLI and the report give."""
        return tuple(
            f"the release ledger found: {f}; exported over it with the steward's reason: {self.override}"
            for f in self.findings
        )


def claim_manifest(claim: AnonymityClaim) -> dict[str, Any]:
    """A claim as plain JSON values."""
    return {
        "table": claim.table,
        "quasi_identifiers": list(claim.quasi_identifiers),
        "k": claim.k,
        "suppressed": claim.suppressed,
        "sensitive": claim.sensitive,
        "ell": claim.ell,
        "t": claim.t,
        "attributes": dict(claim.attributes),
        "separate": list(claim.separate),
        "class_column": claim.class_column,
    }


def claim_from_manifest(entry: Mapping[str, Any]) -> AnonymityClaim:
    """A claim read back from its manifest entry (`claim_manifest`)."""
    return AnonymityClaim(
        table=str(entry["table"]),
        quasi_identifiers=tuple(entry["quasi_identifiers"]),
        k=int(entry["k"]),
        suppressed=entry.get("suppressed"),
        sensitive=entry.get("sensitive"),
        ell=entry.get("ell"),
        t=entry.get("t"),
        attributes=tuple(dict(entry.get("attributes", {})).items()),
        separate=tuple(entry.get("separate", ())),
        class_column=entry.get("class_column"),
    )


def epsilon_manifest(claim: EpsilonClaim) -> dict[str, Any]:
    """An ε claim as plain JSON values, with its statement."""
    return {
        "epsilon": claim.epsilon,
        "vocabulary": claim.vocabulary,
        "covers_vocabulary": claim.covers_vocabulary,
        "source": claim.source,
        "words": claim.words,
        "digest": claim.digest,
        "statement": claim.describe(),
    }


def epsilon_from_manifest(entry: Mapping[str, Any]) -> EpsilonClaim:
    """An ε claim read back from its manifest entry (`epsilon_manifest`)."""
    return EpsilonClaim(
        epsilon=float(entry["epsilon"]),
        vocabulary=str(entry["vocabulary"]),
        covers_vocabulary=bool(entry["covers_vocabulary"]),
        source=str(entry.get("source", "")),
        words=int(entry.get("words", 0)),
        digest=None if entry.get("digest") is None else str(entry["digest"]),
    )


@dataclass(frozen=True)
class ReleaseRecord:
    """What a bundle says about its release (`to_manifest` writes it as ``manifest.json``).

    Values are kept as JSON holds them (lists for tuples, None for a number that is not finite), so that a record
    read back from its manifest equals the record written. ``files`` is empty until the bundle's files are
    written (`with_files`); so are ``csv_escaped``, each CSV file of the bundle with the number of its cells
    (values and column names) that a spreadsheet would run as a formula and that were therefore written with an
    apostrophe in front (`engine.export.safe_csv`), and ``pseudonym_key`` (None: no column is pseudonymized).
    """

    dataset: DatasetIdentity
    method: MethodStep
    seed: int | None
    replicate: int
    replicates: int
    metrics: Mapping[str, Measured]
    measure_settings: Mapping[str, Any]
    columns: Mapping[str, str]
    protected_columns: tuple[str, ...]
    unchanged_protected_columns: tuple[str, ...]
    warnings: tuple[str, ...]
    replay: str
    decision: Decision | None = None
    sweep: SweepSpec | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    csv_escaped: Mapping[str, int] = field(default_factory=dict)
    pseudonym_key: KeyNote | None = None
    libraries: Mapping[str, str | None] = field(default_factory=dict)
    textsdc_version: str = __version__
    engine_code: str = ""
    """A digest of the engine's code that wrote the bundle (`engine.cache.engine_digest`): a replay by other code
    may give other bytes, and `verify` says so."""
    guard: GuardRecord | None = None
    claims: tuple[AnonymityClaim, ...] = ()
    """What the release claims of its public tables (k, ℓ, t), which `textsdc verify` checks on them."""
    detection: tuple[DetectionShare, ...] = ()
    """The residual detection risk: what share of what the method must find its detector finds on gold."""
    annotated: tuple[AnnotatedDetection, ...] = ()
    """The detectors' recall and precision on the steward's annotated records (counts only), which a replay takes
    as recorded (`engine.annotation.residual.with_annotations`)."""
    corrections: tuple[KeptCorrections, ...] = ()
    """The steward's kept corrections the detectors ran with (digest and counts, never a string): a replay runs
    with them only where they are kept (`engine.protect.corrections`)."""
    retrained_tagger: RetrainedTagger | None = None
    """The tagger retrained on the steward's annotations that a kanon release ran with (the annotated records'
    count and the model's digest, never the model): a replay runs only where it is kept
    (`engine.protect.kanon.retrained`)."""
    background: BackgroundNote | None = None
    """The background corpus the steward declared for the attacks (None: none)."""
    epsilon: EpsilonClaim | None = None
    """What a differentially private release claims of ε and its vocabulary (None: the method claims no ε)."""
    ledger: LedgerNote | None = None
    """The release beside the earlier releases of the same records, as the release ledger counts them (None: the
    release was not checked against a ledger)."""

    @property
    def worst_attack(self) -> WorstAttack | None:
        """The worst applicable attack among the measures (`engine.measures.attacks.worst_attack`)."""
        return worst_attack(self.metrics)

    def __post_init__(self) -> None:
        for name in ("measure_settings", "libraries", "columns", "files", "csv_escaped"):
            object.__setattr__(self, name, jsonable(getattr(self, name)))
        object.__setattr__(self, "method", replace(self.method, params=jsonable(self.method.params)))
        object.__setattr__(self, "dataset", replace(self.dataset, schema=jsonable(self.dataset.schema)))
        finite = {
            str(k): Measured(jsonable(m.value), jsonable(m.lo), jsonable(m.hi), m.kind, jsonable(m.chance))
            for k, m in self.metrics.items()
        }
        object.__setattr__(self, "metrics", finite)

    @property
    def replay_spec(self) -> ReplaySpec:
        """The replay command read back (`ReplaySpec.parse`); DataError when it is not one textsdc writes."""
        return ReplaySpec.parse(self.replay)

    def with_files(self, files: Mapping[str, str], pseudonym_key: KeyNote | None = None) -> ReleaseRecord:
        """The record with the bundle's files and their SHA-256 checksums, and the note of the key of its
        pseudonyms (None: no column is pseudonymized)."""
        return replace(self, files=dict(sorted(files.items())), pseudonym_key=pseudonym_key)

    def with_csv_escaped(self, escaped: Mapping[str, int]) -> ReleaseRecord:
        """The record with the number of cells escaped for spreadsheets in each of the bundle's CSV files."""
        return replace(self, csv_escaped=dict(sorted(escaped.items())))

    def with_ledger(self, note: LedgerNote) -> ReleaseRecord:
        """The record with the ledger's note, the findings exported over among its warnings."""
        return replace(self, ledger=note, warnings=(*self.warnings, *note.warnings()))

    def to_manifest(self) -> dict[str, Any]:
        """The manifest: the record as plain JSON values, with ``manifest_version``."""
        d, m = self.dataset, self.method
        return {
            "manifest_version": MANIFEST_VERSION,
            "textsdc_version": self.textsdc_version,
            "engine_code": self.engine_code,
            "libraries": dict(self.libraries),
            "dataset": {
                "name": d.name,
                "source": d.source,
                "fingerprint": d.fingerprint,
                "n_records": d.n_records,
                "n_external": d.n_external,
            },
            "schema": dict(d.schema),
            "method": {"name": m.name, "title": m.title, "params": dict(m.params)}
            | ({"steps": [dict(s) for s in m.steps]} if m.steps else {}),
            "knob": {"name": m.knob_name, "symbol": m.knob_symbol, "value": m.knob},
            "seed": self.seed,
            "replicate": self.replicate,
            "replicates": self.replicates,
            "metrics": {
                k: {"value": v.value, "lo": v.lo, "hi": v.hi, "kind": v.kind}
                | ({} if v.chance is None else {"chance": v.chance})
                for k, v in self.metrics.items()
            },
            "measure_settings": dict(self.measure_settings),
            "decision": None if self.decision is None else self.decision.to_dict(),
            "columns": dict(self.columns),
            "protected_columns": list(self.protected_columns),
            "unchanged_protected_columns": list(self.unchanged_protected_columns),
            "warnings": list(self.warnings),
            "sweep": None
            if self.sweep is None
            else {"grid": list(self.sweep.grid), "replicates": self.sweep.replicates, "seed": self.sweep.seed},
            "replay": self.replay,
            "files": dict(self.files),
            "guard": None
            if self.guard is None
            else {"replaced": dict(self.guard.replaced), "off": list(self.guard.off)},
            "csv_escaped": dict(self.csv_escaped),
            "pseudonym_key": None
            if self.pseudonym_key is None
            else {"check": self.pseudonym_key.check, "files": list(self.pseudonym_key.files)},
            "claims": [claim_manifest(c) for c in self.claims],
            "detection": [detection_manifest(d) for d in self.detection],
            "annotated_detection": [a.to_dict() for a in self.annotated],
            "corrections": [c.to_dict() for c in self.corrections],
            "retrained_tagger": None if self.retrained_tagger is None else self.retrained_tagger.to_dict(),
            "worst_attack": None if self.worst_attack is None else jsonable(self.worst_attack.to_dict()),
            "background": None
            if self.background is None
            else {
                "file": self.background.file,
                "sha256": self.background.sha256,
                "rows": self.background.rows,
                **({"swap_target": self.background.swap_target} if self.background.swap_target else {}),
            },
            "epsilon_claim": None if self.epsilon is None else epsilon_manifest(self.epsilon),
            "ledger": None if self.ledger is None else self.ledger.to_dict(),
        }

    def manifest_text(self) -> str:
        """``manifest.json``'s text: sorted keys, indented, UTF-8 as written (the same record, the same bytes)."""
        return json.dumps(self.to_manifest(), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any], source: str = "the manifest") -> ReleaseRecord:
        """The record a manifest holds; DataError naming what is missing or of a newer layout."""
        version = manifest.get("manifest_version", 0)
        if not isinstance(version, int) or version > MANIFEST_VERSION:
            raise DataError(
                f"{source} has layout version {version!r}; this textsdc reads up to {MANIFEST_VERSION}: "
                "read it with the textsdc that wrote it, or a newer one"
            )
        try:
            d, m, k = manifest["dataset"], manifest["method"], manifest["knob"]
            sweep, key = manifest.get("sweep"), manifest.get("pseudonym_key")
            return cls(
                dataset=DatasetIdentity(
                    d["name"],
                    d.get("source"),
                    d["fingerprint"],
                    d["n_records"],
                    d.get("n_external", 0),
                    manifest.get("schema", {}),
                ),
                method=MethodStep(
                    m["name"],
                    m.get("title"),
                    m.get("params", {}),
                    k.get("name"),
                    k.get("symbol"),
                    k["value"],
                    tuple(m.get("steps", ())),
                ),
                seed=manifest.get("seed"),
                replicate=manifest.get("replicate", 0),
                replicates=manifest.get("replicates", 1),
                metrics={
                    mid: Measured(v.get("value"), v.get("lo"), v.get("hi"), v.get("kind", ""), v.get("chance"))
                    for mid, v in manifest.get("metrics", {}).items()
                },
                measure_settings=manifest.get("measure_settings", {}),
                columns=manifest.get("columns", {}),
                protected_columns=tuple(manifest.get("protected_columns", ())),
                unchanged_protected_columns=tuple(manifest.get("unchanged_protected_columns", ())),
                warnings=tuple(manifest.get("warnings", ())),
                replay=str(manifest.get("replay") or ""),
                decision=None if not manifest.get("decision") else Decision.from_dict(manifest["decision"], source),
                sweep=None if not sweep else SweepSpec(tuple(sweep["grid"]), sweep["replicates"], sweep["seed"]),
                files=manifest["files"],
                csv_escaped=manifest.get("csv_escaped", {}),
                pseudonym_key=None if not key else KeyNote(str(key["check"]), tuple(key["files"])),
                libraries=manifest.get("libraries", {}),
                textsdc_version=str(manifest.get("textsdc_version", "")),
                engine_code=str(manifest.get("engine_code", "")),
                guard=None
                if not manifest.get("guard")
                else GuardRecord(dict(manifest["guard"]["replaced"]), tuple(manifest["guard"].get("off", ()))),
                claims=tuple(claim_from_manifest(c) for c in manifest.get("claims", ())),
                detection=tuple(detection_from_manifest(d) for d in manifest.get("detection", ())),
                annotated=tuple(AnnotatedDetection.from_dict(a) for a in manifest.get("annotated_detection", ())),
                corrections=tuple(KeptCorrections.from_dict(c) for c in manifest.get("corrections", ())),
                retrained_tagger=None
                if not manifest.get("retrained_tagger")
                else RetrainedTagger.from_dict(manifest["retrained_tagger"]),
                background=None
                if not manifest.get("background")
                else BackgroundNote(
                    str(manifest["background"]["file"]),
                    str(manifest["background"]["sha256"]),
                    int(manifest["background"]["rows"]),
                    manifest["background"].get("swap_target"),
                ),
                epsilon=None if not manifest.get("epsilon_claim") else epsilon_from_manifest(manifest["epsilon_claim"]),
                ledger=None if not manifest.get("ledger") else LedgerNote.from_dict(manifest["ledger"]),
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise DataError(f"{source} is not a textsdc manifest: {exc!r} is missing or of the wrong kind") from None


def read_record(folder: str | Path) -> ReleaseRecord:
    """The record of the bundle in ``folder``; DataError when it holds no readable manifest."""
    path = Path(folder) / MANIFEST_JSON
    if not path.is_file():
        raise DataError(f"{folder} holds no {MANIFEST_JSON}: give the folder `textsdc release` wrote")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not a readable manifest ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise DataError(f"{path} lists no files with their checksums")
    return ReleaseRecord.from_manifest(manifest, str(path))
