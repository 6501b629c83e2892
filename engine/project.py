"""A steward's session saved to a project file: the data it is about, the pinned candidates with the numbers
they were measured at, and the history of candidates looked at. Reopened (from the CLI or the dashboard) it
names the same data and the same pins; measuring them again reproduces the numbers, and `check` says where
it does not.

The file is JSON (``*.textsdc.json``), written atomically, holding no confidential value: the data is named by
its path or demo name and its fingerprint, candidates by their settings, measures by their numbers.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.atomic import atomic_write_text
from engine.candidates import Candidate, JsonObject, MeasuredCandidate, metrics_table
from engine.data.dataset import Dataset
from engine.data.demos import is_demo
from engine.data.load import load_dataset
from engine.data.schema import Schema
from engine.errors import ConfigError, DataError
from engine.measures.base import CONFIDENTIAL_SUFFIX, METRICS, metric_info
from engine.measures.intruders import intruder
from engine.record.replay import ReplaySpec

FORMAT = "textsdc-session"
VERSION = 1
SUFFIX = ".textsdc.json"
MAX_HISTORY = 200


@dataclass
class Pin:
    """A pinned candidate with the numbers it was measured at and its warnings."""

    candidate: Candidate
    metrics: dict[str, dict[str, float | None]]
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, measured: MeasuredCandidate) -> Pin:
        return cls(measured.candidate, metrics_table(measured.metrics), list(measured.warnings))


@dataclass
class Project:
    """One session: ``data`` as the CLI takes it (a demo name or a file path), with its ``schema`` file,
    ``encoding``, ``delimiter`` and ``bad_rows`` when they are not the defaults, the data's ``fingerprint``,
    the pins in the order they were pinned, and the ``history`` of candidates looked at (the latest last, at
    most `MAX_HISTORY`).

    ``schema_toml`` is the schema itself (column names, kinds and roles: no value of the data) when the data
    was not read with a schema the CLI finds on its own — an upload mapped on the Data page, a schema chosen
    there — so the session reopens on the same data with only the data file at hand."""

    data: str
    fingerprint: str
    schema: str | None = None
    encoding: str | None = None
    pins: list[Pin] = field(default_factory=list)
    history: list[Candidate] = field(default_factory=list)
    schema_toml: str | None = None
    delimiter: str | None = None
    bad_rows: str = "error"

    def data_schema(self) -> Schema | str | None:
        """The schema to read the data with: the schema file when it is found, else the one kept inline, else
        None (the CLI's own: a demo's, or the one beside the data file)."""
        if self.schema is not None and Path(self.schema).expanduser().is_file():
            return self.schema
        if self.schema_toml is not None:
            try:
                return Schema.from_dict(tomllib.loads(self.schema_toml), source="the session's schema")
            except tomllib.TOMLDecodeError as e:
                raise DataError(f"the session's schema is not valid TOML: {e}") from None
        return self.schema

    def load_data(self, data: str | Path | None = None) -> Dataset:
        """The session's data (or the file ``data``, e.g. the upload again), checked to be the data the session
        was made on; DataError naming what differs when it is not."""

        dataset = load_dataset(
            data if data is not None else self.data,
            self.data_schema(),
            encoding=self.encoding,
            delimiter=self.delimiter,
            bad_rows=self.bad_rows,
        )
        self.check_dataset(dataset.fingerprint)
        return dataset

    def data_found(self) -> bool:
        """Whether the session's data can be read from here (a demo, or a file that exists)."""

        return is_demo(self.data) or Path(self.data).expanduser().is_file()

    def pin(self, measured: MeasuredCandidate) -> Pin:
        """Pin a measured candidate; a pin of the same name is replaced."""
        return self.add(Pin.of(measured))

    def add(self, new: Pin) -> Pin:
        """Add a pin; one of the same name is replaced."""
        self.pins = [p for p in self.pins if p.candidate.name != new.candidate.name] + [new]
        return new

    def unpin(self, name: str) -> None:
        self.get(name)
        self.pins = [p for p in self.pins if p.candidate.name != name]

    def get(self, name: str) -> Pin:
        """The pin called ``name``; ConfigError names the pins."""
        for p in self.pins:
            if p.candidate.name == name:
                return p
        have = ", ".join(p.candidate.name for p in self.pins) or "none yet"
        raise ConfigError(f"no pinned candidate is called '{name}'; the pins: {have}")

    def look_at(self, candidate: Candidate) -> None:
        """Add ``candidate`` to the history unless it is the latest entry."""
        if self.history and self.history[-1].same_release(candidate):
            return
        self.history = [*self.history, candidate][-MAX_HISTORY:]

    def table(self) -> pd.DataFrame:
        """The pins side by side: one row per pin, its settings, per measure "value [lo, hi]" (registry order),
        and its warnings."""
        taken = {mid for p in self.pins for mid in p.metrics if not mid.endswith(CONFIDENTIAL_SUFFIX)}
        shown = [mid for mid in METRICS if mid in taken]
        rows = []
        for p in self.pins:
            row: dict[str, Any] = {"pin": p.candidate.name, "candidate": p.candidate.describe()}
            row["intruder"] = intruder(p.candidate.options.get("intruder")).label
            for mid in shown:
                m = p.metrics.get(mid)
                row[metric_info(mid).label] = "not measured" if m is None else format_measure(mid, m)
            row["warnings"] = "; ".join(p.warnings) or "none"
            rows.append(row)
        return pd.DataFrame(rows)

    def replay(self, candidate: Candidate, out: str, with_frontier: bool = False) -> ReplaySpec:
        """How `textsdc release` writes ``candidate``'s release into ``out`` (with the frontier swept along the
        knob in its report when ``with_frontier``); `ReplaySpec.command` is the command."""
        return ReplaySpec(
            data=self.data,
            schema=self.schema,
            encoding=self.encoding,
            delimiter=self.delimiter,
            bad_rows=self.bad_rows,
            method=candidate.method,
            params=candidate.params,
            knob=candidate.knob,
            seed=candidate.seed,
            replicates=candidate.replicates,
            replicate=candidate.replicate,
            options=candidate.measure_options(),
            out=out,
            with_frontier=with_frontier,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "data": self.data,
            "schema": self.schema,
            "encoding": self.encoding,
            **({"delimiter": self.delimiter} if self.delimiter else {}),
            **({"bad_rows": self.bad_rows} if self.bad_rows != "error" else {}),
            "fingerprint": self.fingerprint,
            "schema_toml": self.schema_toml,
            "pins": [
                {"candidate": p.candidate.to_dict(), "metrics": p.metrics, "warnings": p.warnings} for p in self.pins
            ],
            "history": [c.to_dict() for c in self.history],
        }

    @classmethod
    def from_dict(cls, d: Any, source: str = "session") -> Project:
        """The session `to_dict` wrote; a DataError names the file and the field that is missing or not what
        it must be (``pins[0].candidate.seed must be a whole number …``)."""
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise DataError(f'{source} is not a textsdc session file (no "format": "{FORMAT}")')
        if d.get("version") != VERSION:
            raise DataError(
                f"{source} is a session file of version {str(d.get('version'))[:20]}; this textsdc reads {VERSION}"
            )
        try:
            obj = JsonObject(d)
            return cls(
                data=obj.text("data"),
                fingerprint=obj.text("fingerprint"),
                schema=obj.text("schema", None),
                encoding=obj.text("encoding", None),
                delimiter=obj.text("delimiter", None),
                bad_rows=obj.text("bad_rows", "error"),
                pins=[_pin(p, f"pins[{k}]") for k, p in enumerate(obj.items("pins"))],
                history=[Candidate.from_dict(c, f"history[{k}]") for k, c in enumerate(obj.items("history"))],
                schema_toml=obj.text("schema_toml", None),
            )
        except DataError as e:
            raise DataError(f"{source} is not a session file textsdc can read: {e}") from None

    def save(self, path: str | Path) -> Path:
        """Write the session to ``path`` (atomically; the ``.textsdc.json`` suffix is added when missing)."""
        target = session_path(path)
        atomic_write_text(target, json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")
        return target

    @classmethod
    def load(cls, path: str | Path) -> Project:
        p = Path(path).expanduser()
        if not p.is_file() and session_path(p).is_file():
            p = session_path(p)
        if not p.is_file():
            raise ConfigError(f"no session file at {p}")
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DataError(f"{p} is not a session file (JSON): {e}") from None
        except (ValueError, RecursionError):  # a number of thousands of digits, arrays nested thousands deep
            raise DataError(
                f"{p} is not a session file: it holds values nested or sized beyond any session's"
            ) from None
        project = cls.from_dict(d, str(p))
        project.data = _beside(project.data, p.parent, demo_ok=True)
        project.schema = None if project.schema is None else _beside(project.schema, p.parent)
        return project

    def check_dataset(self, fingerprint: str) -> None:
        """DataError unless the data now opened is the one the session was made on."""
        if fingerprint != self.fingerprint:
            raise DataError(
                f"the data at {self.data} is not the data this session was made on (fingerprint {fingerprint[:12]} "
                f"now, {self.fingerprint[:12]} when saved): its numbers would not be reproduced"
            )


def _pin(value: Any, where: str) -> Pin:
    """A pin as a session file holds it: its candidate, its measures (numbers or null) and its warnings."""
    obj = JsonObject(value, where)
    metrics: dict[str, dict[str, float | None]] = {}
    for mid, m in obj.mapping("metrics").items():
        numbers = JsonObject(m, f"{where}.metrics.{mid}")
        metrics[mid] = {
            part: None if numbers.value.get(part) is None else numbers.number(part)
            for part in ("value", "lo", "hi", "chance")
            if part != "chance" or part in numbers.value
        }
    warnings = obj.items("warnings")
    if not all(isinstance(w, str) for w in warnings):
        raise DataError(f"{where}.warnings must be a list of text")
    return Pin(Candidate.from_dict(obj.value.get("candidate"), f"{where}.candidate"), metrics, warnings)


def _beside(name: str, folder: Path, demo_ok: bool = False) -> str:
    """``name`` as recorded, or the file of that name beside the session file when the recorded one is not found
    from here (a session moved with its data, or opened from another folder)."""

    if (demo_ok and is_demo(name)) or Path(name).expanduser().exists() or Path(name).is_absolute():
        return name
    near = folder / name
    return str(near) if near.exists() else name


def session_path(path: str | Path) -> Path:
    """``path`` with the session files' suffix (``.textsdc.json``) when it has none."""
    p = Path(path).expanduser()
    return p if p.name.endswith(SUFFIX) else p.with_name(p.name.removesuffix(".json") + SUFFIX)


def format_measure(metric_id: str, m: Mapping[str, float | None]) -> str:
    """A measure as a table cell: the value, and its 95% interval when there is one."""
    info = metric_info(metric_id)
    value = m.get("value")
    if value is None:
        return "—"
    text = info.format(value)
    lo, hi = m.get("lo"), m.get("hi")
    if lo is not None and hi is not None and hi > lo:
        text += f" [{info.format(lo)}, {info.format(hi)}]"
    chance = m.get("chance")
    if chance is not None:
        text += f", chance {info.format(chance)}"
    return text


def differences(
    saved: Mapping[str, Mapping[str, float | None]], now: Mapping[str, Mapping[str, float | None]]
) -> list[str]:
    """One line per measure whose number differs between a pin as saved and as measured again."""
    out = []
    for mid in sorted(set(saved) | set(now)):
        a, b = saved.get(mid), now.get(mid)
        if a is None or b is None:
            out.append(f"{mid}: {'not measured now' if b is None else 'not measured when saved'}")
            continue
        for part in ("value", "lo", "hi", "chance"):
            x, y = a.get(part), b.get(part)
            if (x is None) != (y is None) or (
                x is not None and y is not None and not np.isclose(x, y, rtol=1e-9, atol=1e-12)
            ):
                out.append(f"{mid} {part}: {x} when saved, {y} now")
    return out
