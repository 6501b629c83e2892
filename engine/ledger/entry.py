"""One release as the ledger keeps it: which records it covers (a count and a digest, never a record), what each
step did (method, knob, ε where the method spends it, the treatment of each column), what the checks found, the
steward's override and the figures the manifest recorded.

A release of several steps (a plan: redaction, then a field synthesis) is a list of `Step`; the release's
columns are the treatment after the last step that touched them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from engine.errors import DataError
from engine.ledger.treatments import Treatment, protection_rank, treatments
from engine.protect.claims import EpsilonClaim
from engine.record.manifest import LedgerNote, MethodStep, jsonable


def records_digest(frame: pd.DataFrame) -> str:
    """SHA-256 over the sorted row hashes of ``frame`` (values and column names, not their order nor the index):
    the same records give the same digest whatever their order and the column roles. One digest, never the rows'
    own hashes, so the ledger cannot tell which records two releases share beyond "all of them"."""
    rows = pd.util.hash_pandas_object(frame.reset_index(drop=True), index=False).to_numpy()
    h = hashlib.sha256("\x1f".join(map(str, frame.columns)).encode())
    h.update(pd.Series(rows).sort_values().to_numpy().tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Step:
    """One step of a release: the method, its parameters, its knob (name, value and which direction protects
    more), ε where the method spends it, and the treatment of every column the step released."""

    method: str
    params: Mapping[str, Any]
    knob_name: str | None
    knob: float
    more_privacy: str
    epsilon: float | None
    columns: Mapping[str, Treatment]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "params": jsonable(self.params),
            "knob_name": self.knob_name,
            "knob": self.knob,
            "more_privacy": self.more_privacy,
            "epsilon": self.epsilon,
            "columns": dict(self.columns),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Step:
        columns = {str(c): t for c, t in dict(d["columns"]).items()}
        for t in columns.values():
            protection_rank(t)
        return cls(
            method=str(d["method"]),
            params=dict(d.get("params", {})),
            knob_name=d.get("knob_name"),
            knob=float(d["knob"]),
            more_privacy=str(d.get("more_privacy", "higher")),
            epsilon=None if d.get("epsilon") is None else float(d["epsilon"]),
            columns=columns,  # type: ignore[arg-type]
        )


def make_step(
    method: MethodStep,
    columns: Mapping[str, str],
    epsilon: EpsilonClaim | None,
    more_privacy: str,
    text_column: str | None = None,
    unchanged: Collection[str] = (),
) -> Step:
    """The step of a release made by ``method`` whose columns the record describes as ``columns``
    (`ReleaseRecord.columns`; ``text_column`` the data's text column), with its ε claim and the direction of its
    knob that protects more. A protected column the release left unchanged in every record (``unchanged``:
    `ReleaseRecord.unchanged_protected_columns`, e.g. redaction at level 0 with the guard off) is in clear."""
    treated = treatments(columns, method.name, text_column)
    return Step(
        method=method.name,
        params=dict(method.params),
        knob_name=method.knob_name,
        knob=float(method.knob),
        more_privacy=more_privacy,
        epsilon=None if epsilon is None else float(epsilon.epsilon),
        columns={c: "in clear" if c in unchanged else t for c, t in treated.items()},
    )


@dataclass(frozen=True)
class Averaging:
    """Of one synthesized field released ``releases`` times from the same records (this release included): the
    distance of one release from the confidential values (the mean over the releases) and the distance of their
    average (`engine.ledger.averaging`). Distances only, never a value."""

    column: str
    kind: str
    releases: int
    single: float
    average: float


@dataclass(frozen=True)
class Entry:
    """One export in the ledger. ``time_utc``, ``bundle``, ``location`` and ``manifest_sha256`` are filled when
        the bundle is written; ``note`` holds the figures its manifest recorded; ``repeat_of`` the number of the entry
        whose release this one makes again byte for byte (same records, steps, seed and replicate). ``text`` names
    the text column."""

    fingerprint: str
    dataset: str
    text: str
    records: int
    records_digest: str
    steps: tuple[Step, ...]
    seed: int | None
    replicate: int
    replicates: int
    averaging: tuple[Averaging, ...] = ()
    findings: tuple[str, ...] = ()
    override: str | None = None
    note: LedgerNote | None = None
    repeat_of: int | None = None
    number: int = 0
    time_utc: str = ""
    bundle: str = ""
    location: str = ""
    manifest_sha256: str = ""
    previous: str = field(default="", repr=False)
    """SHA-256 of the entry before it as stored (empty for the first): an edited or removed entry breaks the
    chain, which reading the ledger reports."""

    @property
    def columns(self) -> dict[str, Treatment]:
        """Every column the release carries with its treatment after the last step that released it."""
        out: dict[str, Treatment] = {}
        for step in self.steps:
            out.update(step.columns)
        return out

    @property
    def epsilon(self) -> float | None:
        """The ε the release spends over its steps (sequential composition within it); None: it spends none."""
        spent = [s.epsilon for s in self.steps if s.epsilon is not None]
        return sum(spent) if spent else None

    def same_release(self, other: Entry) -> bool:
        """Whether ``other`` makes the same data as this entry: the same records, steps, seed and replicate."""
        return (
            self.records_digest == other.records_digest
            and [s.to_dict() for s in self.steps] == [s.to_dict() for s in other.steps]
            and (self.seed, self.replicate, self.replicates) == (other.seed, other.replicate, other.replicates)
        )

    def written(self, number: int, time_utc: str, bundle: str, location: str, manifest_sha256: str) -> Entry:
        """The entry of a bundle now written."""
        return replace(
            self, number=number, time_utc=time_utc, bundle=bundle, location=location, manifest_sha256=manifest_sha256
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "time_utc": self.time_utc,
            "fingerprint": self.fingerprint,
            "dataset": self.dataset,
            "text": self.text,
            "records": {"count": self.records, "digest": self.records_digest},
            "steps": [s.to_dict() for s in self.steps],
            "seed": self.seed,
            "replicate": self.replicate,
            "replicates": self.replicates,
            "averaging": [
                {"column": a.column, "kind": a.kind, "releases": a.releases, "single": a.single, "average": a.average}
                for a in self.averaging
            ],
            "findings": list(self.findings),
            "override": self.override,
            "note": None if self.note is None else self.note.to_dict(),
            "repeat_of": self.repeat_of,
            "bundle": self.bundle,
            "location": self.location,
            "manifest_sha256": self.manifest_sha256,
            "previous": self.previous,
        }

    def canonical(self) -> str:
        """The entry as the ledger stores it (sorted keys), which the next entry's ``previous`` hashes."""
        return json.dumps(jsonable(self.to_dict()), sort_keys=True, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "the ledger") -> Entry:
        """An entry read back; DataError naming what is missing or of the wrong kind."""
        try:
            return cls(
                fingerprint=str(d["fingerprint"]),
                dataset=str(d["dataset"]),
                text=str(d["text"]),
                records=int(d["records"]["count"]),
                records_digest=str(d["records"]["digest"]),
                steps=tuple(Step.from_dict(s) for s in d["steps"]),
                seed=None if d.get("seed") is None else int(d["seed"]),
                replicate=int(d.get("replicate", 0)),
                replicates=int(d.get("replicates", 1)),
                averaging=tuple(
                    Averaging(
                        str(a["column"]), str(a["kind"]), int(a["releases"]), float(a["single"]), float(a["average"])
                    )
                    for a in d.get("averaging", ())
                ),
                findings=tuple(str(f) for f in d.get("findings", ())),
                override=None if d.get("override") is None else str(d["override"]),
                note=None if d.get("note") is None else LedgerNote.from_dict(d["note"]),
                repeat_of=None if d.get("repeat_of") is None else int(d["repeat_of"]),
                number=int(d["number"]),
                time_utc=str(d.get("time_utc", "")),
                bundle=str(d.get("bundle", "")),
                location=str(d.get("location", "")),
                manifest_sha256=str(d.get("manifest_sha256", "")),
                previous=str(d.get("previous", "")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DataError(
                f"{where} holds an entry that is not a ledger entry: {exc!r} is missing or of the wrong kind"
            ) from None
