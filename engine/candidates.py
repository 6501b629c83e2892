"""Candidates a steward keeps aside: one release named by everything that makes it again (method, its
parameters, knob value, seed, replicates, replicate, measure settings), measured, and diffed against another.

The CLI's `pin`, `session` and `diff` commands and the dashboard's pins all go through these functions, so a
candidate measured in one is measured the same in the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from engine import MAX_SEED
from engine.cache import fit_cached
from engine.data.dataset import Dataset
from engine.errors import ConfigError, DataError
from engine.export.registry import release_warnings
from engine.export.safe_csv import safe_csv
from engine.measures.base import MetricResult
from engine.measures.evaluate import check_options
from engine.measures.settings import MeasureSettings
from engine.progress import Progress, no_progress
from engine.protect import METHODS, get_protector, is_method, method_class
from engine.protect.base import Fitted, Protector, Release
from engine.protect.params import coerce_all
from engine.results import SweepResult
from engine.sweep import MAX_REPLICATES, make_release, metrics_with_intervals, run_sweep

MAX_NAME = 60


@dataclass(frozen=True)
class Candidate:
    """A release kept aside under ``name``: what makes it again. ``params`` are the method's parameters that
    differ from their defaults, ``options`` the measure settings (`MeasureSettings.values`, None = default)."""

    name: str
    method: str
    knob: float
    seed: int = 0
    replicates: int = 1
    replicate: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:

        name = self.name.strip()
        if not name or len(name) > MAX_NAME:
            raise ConfigError(f"a candidate's name must be 1 to {MAX_NAME} characters, got {self.name!r}")
        object.__setattr__(self, "name", name)
        method_class(self.method)  # ConfigError naming the methods for one that is not
        if not 0 <= self.replicate < max(self.replicates, 1):
            raise ConfigError(f"replicate {self.replicate} is not one of 0 to {self.replicates - 1}")

    def protector(self) -> Protector:

        return get_protector(self.method, **dict(self.params))

    def measure_options(self) -> MeasureSettings:
        """The measure settings; the vendor keywords left out of the topic model are the method's own."""
        return MeasureSettings.from_values(self.options, tuple(self.params.get("vendor_keywords", ())))

    def settings_text(self) -> str:
        """The method's parameters as a person reads them ("fields: overall; vendor keywords: acme"), "" for
        none."""

        def value(v: Any) -> str:
            return ", ".join(map(str, v)) if isinstance(v, list | tuple) else str(v)

        return "; ".join(f"{k.replace('_', ' ')}: {value(v)}" for k, v in sorted(self.params.items()))

    def describe(self) -> str:
        """The candidate in a line: method, knob, seed and replicates."""

        cls = method_class(self.method)
        changed = self.settings_text()
        return (
            f"{cls.title}{f' ({changed})' if changed else ''} at {cls.knob.symbol} = {cls.knob.format(self.knob)}, "
            f"seed {self.seed}, M = {self.replicates}"
        )

    def same_release(self, other: Candidate) -> bool:
        """Whether ``other`` makes the same release measured the same way (names aside)."""
        return self.to_dict() | {"name": ""} == other.to_dict() | {"name": ""}

    def same_setup(self, other: Candidate) -> bool:
        """Whether ``other`` differs from this candidate at most in its name and knob value (one page's slider
        walks between such candidates)."""
        return self.to_dict() | {"name": "", "knob": 0.0} == other.to_dict() | {"name": "", "knob": 0.0}

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "knob": float(self.knob),
            "seed": int(self.seed),
            "replicates": int(self.replicates),
            "replicate": int(self.replicate),
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(self.params.items())},
            "options": {k: v for k, v in sorted(self.options.items()) if v is not None},
        }

    @classmethod
    def from_dict(cls, d: Any, where: str = "candidate") -> Candidate:
        """The candidate `to_dict` wrote; a DataError names the field that is missing or not what it must be
        (``pins[0].candidate.knob must be a number, got 'abc'``) and what is accepted."""
        obj = JsonObject(d, where)
        method = obj.text("method")
        if not is_method(method):
            raise DataError(
                f"{where}.method {method!r} is not a method; the methods: {', '.join(METHODS)}, or plans of them "
                "joined by '+'"
            )
        params = dict(obj.mapping("params"))
        options = dict(obj.mapping("options"))
        try:
            coerce_all(method_class(method).parameters, params, method)
        except ConfigError as e:
            raise DataError(f"{where}.params: {e}") from None
        try:
            MeasureSettings(options)
        except ConfigError as e:
            raise DataError(f"{where}.options: {e}") from None
        try:
            return cls(
                name=obj.text("name"),
                method=method,
                knob=obj.number("knob"),
                seed=obj.whole("seed", 0, 0, MAX_SEED),
                replicates=obj.whole("replicates", 1, 1, MAX_REPLICATES),
                replicate=obj.whole("replicate", 0, 0, MAX_REPLICATES - 1),
                params=params,
                options=options,
            )
        except ConfigError as e:
            raise DataError(f"{where}: {e}") from None


_MISSING: Any = object()


@dataclass(frozen=True)
class JsonObject:
    """A JSON object read field by field (a session file's pin, its candidate): a value that is missing or not of
    its type is a DataError naming the field where it is (``where``.field) and what it must be."""

    value: Any
    where: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, Mapping):
            raise DataError(f"{self.where or 'it'} must be an object ({{...}}), got {_shown(self.value)}")

    def _at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _get(self, key: str, default: Any) -> Any:
        if key in self.value:
            return self.value[key]
        if default is _MISSING:
            raise DataError(f"{self.where or 'it'} has no {key!r}")
        return default

    def text(self, key: str, default: Any = _MISSING) -> Any:
        """A string (or ``default``, which may be None, when the field is absent or null)."""
        value = self._get(key, default)
        if value is None and default is not _MISSING:
            return default
        if not isinstance(value, str):
            raise DataError(f"{self._at(key)} must be text, got {_shown(value)}")
        return value

    def number(self, key: str, default: Any = _MISSING) -> float:
        """A finite number."""
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value):
            raise DataError(f"{self._at(key)} must be a finite number, got {_shown(value)}")
        return float(value)

    def whole(self, key: str, default: int, low: int, high: int) -> int:
        """A whole number from ``low`` to ``high``."""
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise DataError(f"{self._at(key)} must be a whole number from {low:,} to {high:,}, got {_shown(value)}")
        return value

    def mapping(self, key: str) -> Mapping[str, Any]:
        """An object (empty when absent)."""
        return JsonObject(self._get(key, {}), self._at(key)).value

    def items(self, key: str) -> list[Any]:
        """A list (empty when absent)."""
        value = self._get(key, [])
        if not isinstance(value, list):
            raise DataError(f"{self._at(key)} must be a list ([...]), got {_shown(value)}")
        return value


def _finite(value: float) -> bool:
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:  # an integer beyond any float
        return False


def _shown(value: Any) -> str:
    """A value as a message quotes it: its JSON type, and its text cut short."""
    kind = {str: "text", bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "an object"}
    try:
        text = repr(value) if not isinstance(value, (list, dict)) else ""
    except ValueError:  # a whole number of more digits than Python writes out
        text = "of thousands of digits"
    text = text if len(text) <= 40 else text[:37] + "..."
    return "null" if value is None else f"{kind.get(type(value), type(value).__name__)} {text}".strip()


def metrics_table(metrics: Mapping[str, MetricResult]) -> dict[str, dict[str, float | None]]:
    """Measures as plain numbers (value, lo, hi and, for an attack, chance; None for not a number), as a session
    file keeps them."""

    def plain(v: float | None) -> float | None:
        return None if v is None or not np.isfinite(v) else float(v)

    return {
        mid: {"value": plain(m.value), "lo": plain(m.lo), "hi": plain(m.hi)}
        | ({} if m.chance is None else {"chance": plain(m.chance)})
        for mid, m in sorted(metrics.items())
    }


@dataclass
class MeasuredCandidate:
    """A candidate with its fitted method, its measures (with intervals and the unprotected baselines) and the
    warnings a reviewer must read."""

    candidate: Candidate
    fitted: Fitted
    metrics: dict[str, MetricResult]
    skipped: dict[str, str]
    warnings: list[str]
    point: SweepResult  # the measurement at the candidate's knob value


def measure_candidate(
    dataset: Dataset, candidate: Candidate, progress: Progress = no_progress, use_cache: bool = True
) -> MeasuredCandidate:
    """Fit (from the cache when it can), measure the candidate's knob value over its replicates, and list its
    warnings: the numbers `textsdc release` of the same candidate writes into the manifest. The knob is
    snapped to the value the fit makes (a λ of the path), which the returned candidate carries."""

    protector = candidate.protector()
    options = candidate.measure_options()
    protector.knob.validate(candidate.knob)  # the method's general range, before the costly fit
    check_options(dataset, protector.check(dataset), options)
    fitted = fit_cached(protector, dataset, progress, use_cache=use_cache)
    value = fitted.snap(candidate.knob)
    candidate = replace(candidate, knob=float(value))
    point = run_sweep(
        dataset,
        protector,
        grid=[value],
        replicates=candidate.replicates,
        seed=candidate.seed,
        progress=progress,
        fitted=fitted,
        options=options,
    )
    metrics = metrics_with_intervals(point, point.grid[0])
    release = release_of(fitted, candidate)
    warnings = release_warnings(dataset, release, metrics)
    return MeasuredCandidate(candidate, fitted, metrics, dict(point.skipped), warnings, point)


def release_of(fitted: Fitted, candidate: Candidate) -> Release:
    """The candidate's release (its replicate), made again from the fitted method."""

    replicates = 1 if method_class(candidate.method).deterministic else candidate.replicates
    replicate = min(candidate.replicate, replicates - 1)
    return make_release(fitted, fitted.snap(candidate.knob), candidate.seed, replicates, replicate)


@dataclass(frozen=True)
class ReleaseDiff:
    """What differs between two releases of the same data: ``counts`` per column (records differing, of how
    many), ``records`` the differing cells (record, column, the two released values), at most ``limit``. Records
    are numbered from 1, as the samples and the Data page number rows for the steward."""

    a: str
    b: str
    counts: pd.DataFrame
    records: pd.DataFrame
    differing_records: int
    n_records: int

    def csv(self) -> bytes:
        """The differing cells as a CSV file safe to open in a spreadsheet (`engine.export.safe_csv`: a released
        text that begins like a formula is written with an apostrophe in front): what `textsdc pins diff --out`
        writes and the Compare page offers."""
        return safe_csv(self.records).content


def diff_releases(
    a: Release, b: Release, text_column: str, names: tuple[str, str] = ("a", "b"), limit: int = 200
) -> ReleaseDiff:
    """Which records and columns differ between the released data of ``a`` and ``b`` (laid out like one
    dataset whose text is ``text_column``). Only released values are compared and shown; the confidential data
    is not read."""
    if len(a.data) != len(b.data):
        raise ConfigError(
            f"the two releases have {len(a.data):,} and {len(b.data):,} records: only releases of the same data "
            "can be diffed"
        )
    columns = [c for c in a.data.columns if c in b.data.columns and c not in (*a.withheld, *b.withheld)]
    rows, cells = [], []
    differs_any = np.zeros(len(a.data), dtype=bool)
    for column in columns:
        x = a.data[column].reset_index(drop=True).astype(object)
        y = b.data[column].reset_index(drop=True).astype(object)
        differs = ~((x == y) | (x.isna() & y.isna())).to_numpy()
        differs_any |= differs
        kind = "text" if column == text_column else "field"
        rows.append({"column": column, "kind": kind, "records differing": int(differs.sum())})
        for i in np.flatnonzero(differs)[:limit]:
            cells.append({"record": int(i) + 1, "column": column, names[0]: x.iloc[i], names[1]: y.iloc[i]})
    counts = pd.DataFrame(rows, columns=["column", "kind", "records differing"])
    records = pd.DataFrame(cells, columns=["record", "column", *names]).sort_values(["record", "column"])
    return ReleaseDiff(
        names[0],
        names[1],
        counts,
        records.head(limit).reset_index(drop=True),
        int(differs_any.sum()),
        len(a.data),
    )
