"""Session state and cached engine calls shared by the dashboard pages.

The pages stay thin: they draw widgets and figures; everything that calls the engine lives here.

Caching follows the engine's split of `fit` from `release`. Fitted protectors and Evaluators are process-wide
resources (``st.cache_resource``) keyed by the dataset's fingerprint and the method; sweeps are keyed by
(fingerprint, method, grid, replicates, seed); releases by (fingerprint, method, knob, seed, replicates). Each
cache entry is a slot with a lock that the first caller fills, so a progress bar can be drawn while it fills
(Streamlit replays elements drawn inside a cached function, which a progress bar must not be) and two sessions
asking for the same fit wait for one computation instead of doing two.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from engine.cache import fit_cached
from engine.data.dataset import Dataset
from engine.data.load import DEMOS_DIR, DemoInfo, infer_schema, is_demo, list_demos, load_dataset, read_table
from engine.errors import ConfigError, TextsdcError
from engine.measures.evaluate import Evaluator, MeasureOptions
from engine.export.bundle import ExportResult, export_release
from engine.frontier import Choice, frontier, select_by_risk_threshold, select_by_tradeoff
from engine.measures.base import METRICS, MetricResult, metric_info
from engine.paths import cache_dir
from engine.protect import METHODS, get_protector
from engine.protect.base import Fitted, Knob, Progress, Protector, Release, no_progress
from engine.results import SweepResult
from engine.data.schema import ExternalSpec, FieldSpec, Schema
from engine.sweep import make_release, metrics_with_intervals, run_sweep

T = TypeVar("T")

DEFAULT_SOURCE = "airline-tweets"
DEFAULT_METHOD = "redact"
DEFAULT_RISK = "attack_identification_rate"
DEFAULT_UTILITY = "unigram_cosine"
DROP = "drop"
"""The role in the Data page's field table that leaves a column out of the dataset."""

# Session-state keys that are not widgets.
DATASET = "dataset"
ORIGIN = "dataset_origin"
STARTUP_ERROR = "startup_error"
STARTUP_DONE = "startup_done"
CHOICE = "choice"
EXPORTED = "exported"

# Widget keys shared between pages and tests.
METHOD_KEY = "protect_method"
RISK_KEY = "protect_risk"
UTILITY_KEY = "protect_utility"
REPLICATES_KEY = "protect_replicates"
SEED_KEY = "protect_seed"


def knob_key(method: str) -> str:
    """The session-state key of the knob slider of ``method``."""
    return f"knob::{method}"


# ---------------------------------------------------------------------------------------------------------------
# Errors


def guarded(fn: Callable[[], T], prefix: str = "") -> T | None:
    """``fn()``; a `TextsdcError` is shown in place with st.error and gives None (the session lives on)."""
    try:
        return fn()
    except TextsdcError as exc:
        st.error(f"{prefix}{exc}")
        return None


# ---------------------------------------------------------------------------------------------------------------
# Process-wide caches


class _Slot:
    """One cache entry: filled once under its lock by the first caller."""

    EMPTY = object()

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: Any = _Slot.EMPTY

    def get(self, compute: Callable[[], T]) -> T:
        with self.lock:
            if self.value is _Slot.EMPTY:
                self.value = compute()
            return self.value

    @property
    def filled(self) -> bool:
        return self.value is not _Slot.EMPTY


@st.cache_resource(show_spinner=False, max_entries=8)
def _demo_slot(name: str) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, max_entries=8)
def _fit_slot(fingerprint: str, method: str, params: str) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, max_entries=8)
def _evaluator_slot(fingerprint: str, fields: tuple[str, ...], options: str) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, max_entries=32)
def _sweep_slot(fingerprint: str, method: str, params: str, replicates: int, seed: int, options: str) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, max_entries=64)
def _release_slot(fingerprint: str, method: str, params: str, value: float, seed: int, replicates: int) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, max_entries=16)
def _replicates_slot(fingerprint: str, method: str, params: str, value: float, seed: int, replicates: int,
                     k: int) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, max_entries=16)
def _samples_slot(fingerprint: str, method: str, params: str, seed: int, replicates: int) -> _Slot:
    return _Slot()


@st.cache_resource(show_spinner=False, ttl=600)
def demo_infos() -> list[DemoInfo]:
    """The demo datasets with titles, descriptions, licences and record counts."""
    return list_demos()


def _params(protector: Protector) -> str:
    return json.dumps(protector.params(), sort_keys=True, default=str)


def progress_reporter(placeholder: Any) -> Progress:
    """A progress callback drawing an st.progress bar into ``placeholder`` (only once something is reported)."""
    state: dict[str, Any] = {"bar": None, "last": 0.0}

    def update(done: int, total: int, what: str = "") -> None:
        now = time.monotonic()
        if state["bar"] is not None and done < total and now - state["last"] < 0.2:
            return  # every update is a message to the browser; a few per second is plenty
        state["last"] = now
        fraction = 0.0 if total <= 0 else min(max(done / total, 0.0), 1.0)
        label = (what[:1].upper() + what[1:]) if what else "Working"
        text = f"{label}: {done:,} of {total:,}" if total > 1 else f"{label}…"
        if state["bar"] is None:
            state["bar"] = placeholder.progress(fraction, text=text)
        else:
            state["bar"].progress(fraction, text=text)

    return update


# ---------------------------------------------------------------------------------------------------------------
# Loading data


@dataclass(frozen=True)
class Origin:
    """Where the dataset in use came from, as needed to write the CLI command that replays an export."""

    kind: Literal["demo", "file", "upload"]
    data: str
    encoding: str | None = None
    custom_schema: bool = False


def load_demo(name: str) -> Dataset:
    """A demo dataset with its own schema, loaded once per process."""
    return _demo_slot(name).get(lambda: load_dataset(name))


def load_source(source: str) -> tuple[Dataset, Origin]:
    """The dataset named on the command line: a demo name or a file path."""
    if is_demo(source):
        return load_demo(source), Origin("demo", source)
    return load_dataset(source), Origin("file", str(source))


def init_session(default_source: str) -> None:
    """On the first run of a session, load the default dataset; a failure is kept to show on the Data page."""
    ss = st.session_state
    if ss.get(STARTUP_DONE):
        return
    ss[STARTUP_DONE] = True
    try:
        ss[DATASET], ss[ORIGIN] = load_source(default_source)
    except TextsdcError as exc:
        ss[STARTUP_ERROR] = f"Could not open '{default_source}': {exc}"


def page_dataset() -> Dataset | None:
    """The dataset in use, or None after pointing the steward to the Data page (the start of every page that
    needs one)."""
    dataset = current_dataset()
    if dataset is None:
        st.info("No dataset is loaded yet.")
        st.page_link("views/data.py", label="Choose a dataset on the Data page", icon=":material/table:")
    return dataset


def current_dataset() -> Dataset | None:
    return st.session_state.get(DATASET)


def current_origin() -> Origin | None:
    return st.session_state.get(ORIGIN)


def use_dataset(dataset: Dataset, origin: Origin) -> None:
    """Make ``dataset`` the one in use. A choice made on another dataset stays but no longer applies."""
    st.session_state[DATASET] = dataset
    st.session_state[ORIGIN] = origin
    st.session_state.pop(STARTUP_ERROR, None)


def demo_table(name: str) -> pd.DataFrame:
    """Every column of a demo's data file, as read (for the role mapping)."""
    return _demo_table(name)


@st.cache_data(show_spinner=False, max_entries=8)
def _demo_table(name: str) -> pd.DataFrame:
    return read_table(DEMOS_DIR / name / "data.csv")


def demo_schema(name: str) -> Schema:
    return Schema.from_toml(DEMOS_DIR / name / "schema.toml")


def _safe_name(filename: str) -> str:
    """The uploaded file's base name (the browser may send a path); its extension selects the reader."""
    name = Path(filename.replace("\\", "/")).name.strip() or "upload.csv"
    return name


def _write_uploads(folder: Path, files: list[tuple[str, bytes]]) -> list[Path]:
    paths = []
    for filename, data in files:
        path = folder / _safe_name(filename)
        path.write_bytes(data)
        paths.append(path)
    return paths


def _upload_folder() -> tempfile.TemporaryDirectory:
    """A private temporary folder inside the textsdc cache; uploads never go elsewhere and are deleted after."""
    base = cache_dir() / "uploads"
    base.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(dir=base)


def upload_table(filename: str, data: bytes, encoding: str | None) -> pd.DataFrame:
    """Every column of an uploaded file, as read (for the role mapping); DataError if it cannot be read."""
    key = (hashlib.sha256(data).hexdigest(), _safe_name(filename), encoding or "")
    return _upload_table(key, filename, data, encoding)


@st.cache_data(show_spinner=False, max_entries=4)
def _upload_table(key: tuple[str, str, str], filename: str, _data: bytes, encoding: str | None) -> pd.DataFrame:
    with _upload_folder() as tmp:
        (path,) = _write_uploads(Path(tmp), [(filename, _data)])
        return read_table(path, encoding=encoding or None)


def load_upload(
    filename: str,
    data: bytes,
    schema: Schema,
    encoding: str | None,
    external: tuple[str, bytes] | None = None,
) -> Dataset:
    """Validate an uploaded file (and optional external file) against ``schema``; DataError / ConfigError if not.

    The files are written to a private temporary folder in the cache, loaded, and deleted.
    """
    with _upload_folder() as tmp:
        folder = Path(tmp)
        files = [(filename, data)] + ([external] if external else [])
        paths = _write_uploads(folder, files)
        if external and paths[0].name == paths[1].name:
            raise ConfigError("the external file has the same name as the data file; rename one of them")
        if external:
            schema = replace(schema, external=ExternalSpec(file=paths[1].name))
        dataset = load_dataset(paths[0], schema, encoding=encoding or None, name=paths[0].stem)
    return replace(dataset, source=f"upload:{paths[0].name}")


def load_demo_with_schema(name: str, schema: Schema) -> Dataset:
    """A demo under a schema chosen on the Data page (the demo's own one is cached)."""
    if schema == demo_schema(name):
        return load_demo(name)
    return load_dataset(name, schema)


def default_schema_for(table: pd.DataFrame, demo: str | None) -> Schema:
    """The role mapping to start from: the demo's schema, or one inferred from the columns."""
    return demo_schema(demo) if demo else infer_schema(table)


def field_table(table: pd.DataFrame, schema: Schema, exclude: set[str]) -> pd.DataFrame:
    """One row per column that is not the text, author or document column: its kind and role (or drop)."""
    inferred = {f.name: f.kind for f in _inferred_fields(table)}
    rows = []
    for col in map(str, table.columns):
        if col in exclude:
            continue
        spec = next((f for f in schema.fields if f.name == col), None)
        if spec is not None:
            rows.append({"column": col, "kind": spec.kind, "role": spec.role})
        else:
            rows.append({"column": col, "kind": inferred.get(col, "categorical"), "role": DROP})
    return pd.DataFrame(rows, columns=["column", "kind", "role"])


def _inferred_fields(table: pd.DataFrame) -> tuple[FieldSpec, ...]:
    try:
        return infer_schema(table).fields
    except TextsdcError:
        return ()


def build_schema(
    text: str,
    author: str | None,
    document: str | None,
    fields: pd.DataFrame,
    external: ExternalSpec | None,
) -> Schema:
    """The Schema of the Data page's mapping; rows with role "drop" are left out. ConfigError if inconsistent."""
    specs = [
        FieldSpec(str(r["column"]), str(r["kind"]), str(r["role"]))
        for r in fields.to_dict(orient="records")
        if str(r.get("role")) != DROP and str(r["column"]) not in (text, author, document)
    ]
    if author is not None and author == text:
        raise ConfigError(f"column '{text}' cannot be both the text and the author column")
    if document is not None and document in (text, author):
        raise ConfigError(f"column '{document}' cannot be the document column and another role column")
    return Schema(text=text, author=author, document=document, fields=tuple(specs), external=external)


def dataset_counts(dataset: Dataset) -> dict[str, int | None]:
    """Records, authors (None without an author column) and the intruder's external records."""
    return {
        "records": dataset.n_records,
        "authors": None if dataset.authors is None else int(dataset.authors.nunique()),
        "external": 0 if dataset.external is None else len(dataset.external),
    }


# ---------------------------------------------------------------------------------------------------------------
# Fitting, measuring, releasing


def method_names(changes: str = "text", kinds: tuple[str, ...] = ()) -> list[str]:
    """Registered methods that change the text (``"text"``) or synthesize fields (``"fields"``), and of those
    the ones that synthesize fields of one of ``kinds`` (categorical, count, continuous)."""
    return [m for m, cls in METHODS.items()
            if cls.changes == changes and (not kinds or set(kinds) & set(cls.field_kinds))]


def protector(method: str, params: dict | None = None) -> Protector:
    """The method with the steward's parameters (fields to synthesize, vendor keywords, ...)."""
    return get_protector(method, **(params or {}))


def _options_key(options: MeasureOptions | None) -> str:
    return repr(options or MeasureOptions())


def get_fitted(dataset: Dataset, method: str, progress: Progress = no_progress, params: dict | None = None) -> Fitted:
    """The fitted protector (memory, then the engine's disk cache, then a fit)."""
    p = protector(method, params)
    slot = _fit_slot(dataset.fingerprint, method, _params(p))
    return slot.get(lambda: fit_cached(p, dataset, progress))


def get_evaluator(dataset: Dataset, progress: Progress = no_progress, fields: tuple[str, ...] = (),
                  options: MeasureOptions | None = None) -> Evaluator:
    """The Evaluator of a dataset for a method that changes the text (no ``fields``) or synthesizes ``fields``,
    with every metric that applies (the intruder's classifiers, distances and topics prepared once)."""
    slot = _evaluator_slot(dataset.fingerprint, tuple(fields), _options_key(options))
    return slot.get(lambda: Evaluator(dataset, None, progress, fields=list(fields), options=options))


def effective_replicates(method: str, replicates: int) -> int:
    """A deterministic method gives the same release every time, so it is measured once per knob value."""
    return 1 if METHODS[method].deterministic else int(replicates)


def _sweep_slot_for(dataset: Dataset, method: str, replicates: int, seed: int, params: dict | None,
                    options: MeasureOptions | None) -> tuple[_Slot, Protector, int]:
    p = protector(method, params)
    reps = effective_replicates(method, replicates)
    return _sweep_slot(dataset.fingerprint, method, _params(p), reps, int(seed), _options_key(options)), p, reps


def sweep_ready(dataset: Dataset, method: str, replicates: int, seed: int, params: dict | None = None,
                options: MeasureOptions | None = None) -> bool:
    return _sweep_slot_for(dataset, method, replicates, seed, params, options)[0].filled


def get_sweep(dataset: Dataset, method: str, replicates: int, seed: int, progress: Progress = no_progress,
              params: dict | None = None, options: MeasureOptions | None = None) -> SweepResult:
    """The sweep over the fitted knob's grid; computed once per (dataset, method and parameters, replicates,
    seed, measure options)."""
    slot, p, reps = _sweep_slot_for(dataset, method, replicates, seed, params, options)

    def compute() -> SweepResult:
        fitted = get_fitted(dataset, method, progress, params)
        evaluator = get_evaluator(dataset, progress, tuple(fitted.synthesized_fields), options)
        return run_sweep(dataset, p, None, reps, int(seed), progress=progress, fitted=fitted, evaluator=evaluator)

    return slot.get(compute)


Settings = tuple[str, dict, MeasureOptions, int, int]  # method, its parameters, measure options, replicates, seed


def page_sweep(releases: str, settings_of: Callable[[Dataset], Settings | None]
               ) -> tuple[Dataset, Settings, SweepResult] | None:
    """The start of a page that sweeps a method's knob: the dataset (or a pointer to the Data page), a caption
    naming it and saying what the page ``releases``, the page's own settings, and the sweep with a progress bar.
    None when any of them is missing (the page has then said why)."""
    dataset = page_dataset()
    if dataset is None:
        return None
    st.caption(f"Dataset: {md_escape(dataset.name)} · {dataset.n_records:,} records · {releases}")
    settings = settings_of(dataset)
    if settings is None:
        return None
    method, params, options, replicates, seed = settings
    sweep = sweep_with_progress(dataset, method, replicates, seed, params, options)
    return None if sweep is None else (dataset, settings, sweep)


def sweep_with_progress(dataset: Dataset, method: str, replicates: int, seed: int, params: dict | None = None,
                        options: MeasureOptions | None = None) -> SweepResult | None:
    """`get_sweep` with a progress bar while it fills; an error is shown in place and gives None."""
    area = st.empty()
    sweep = guarded(lambda: get_sweep(dataset, method, replicates, seed, progress_reporter(area), params, options))
    area.empty()
    return sweep


def get_release(dataset: Dataset, method: str, value: float, seed: int, replicates: int,
                params: dict | None = None) -> Release:
    """Replicate 0 of the release at knob ``value`` (the one the sweep's per-record detail describes)."""
    p = protector(method, params)
    fitted = get_fitted(dataset, method, params=params)
    value = fitted.snap(value)
    slot = _release_slot(dataset.fingerprint, method, _params(p), float(value), int(seed), int(replicates))
    return slot.get(lambda: make_release(fitted, value, int(seed), int(replicates)))


def get_replicate_releases(dataset: Dataset, method: str, value: float, seed: int, replicates: int,
                           params: dict | None = None, k: int = 3) -> list[Release]:
    """The first ``k`` of the M synthetic datasets at knob ``value`` (to overlay several, as Guo & Hu do)."""
    p = protector(method, params)
    fitted = get_fitted(dataset, method, params=params)
    value = fitted.snap(value)
    k = max(1, min(int(k), int(replicates)))
    slot = _replicates_slot(dataset.fingerprint, method, _params(p), float(value), int(seed), int(replicates), k)
    return slot.get(lambda: [make_release(fitted, value, int(seed), int(replicates), r) for r in range(k)])


def _protected_columns(dataset: Dataset, release: Release) -> list[str]:
    return [c for c in release.protected_columns if c in dataset.frame.columns] or [dataset.schema.text]


def _joined(frame: pd.DataFrame, cols: list[str]) -> pd.Series:
    """The values of ``cols`` per record as one string (to compare versions of a record)."""
    if len(cols) == 1:
        return frame[cols[0]].astype(str).reset_index(drop=True)
    return frame[cols].astype(str).agg("\x1f".join, axis=1).reset_index(drop=True)


def sample_records(dataset: Dataset, method: str, seed: int, replicates: int, n: int = 10) -> list[int]:
    """Records to show as samples: changed ones whose protected version differs at the most knob values.

    The same records at every knob value, so moving the slider shows them change.
    """
    p = get_protector(method)

    def compute() -> list[int]:
        grid = get_fitted(dataset, method).knob.default_grid()
        releases = [get_release(dataset, method, v, seed, replicates) for v in grid]
        cols = _protected_columns(dataset, releases[0])
        original = _joined(dataset.frame, cols)
        table = pd.concat([_joined(r.data, cols) for r in releases], axis=1, ignore_index=True)
        changed = table.ne(original, axis=0).any(axis=1).to_numpy()
        versions = pd.concat([original, table], axis=1, ignore_index=True).nunique(axis=1).to_numpy()
        ranked = pd.DataFrame({"versions": versions, "record": np.arange(len(table))})[changed]
        ranked = ranked.sort_values(["versions", "record"], ascending=[False, True], kind="stable")
        return [int(r) for r in ranked["record"].head(n)]

    slot = _samples_slot(dataset.fingerprint, method, _params(p), int(seed), int(replicates))
    return slot.get(compute)


def changed_records(dataset: Dataset, release: Release, records: list[int]) -> list[int]:
    """Which of ``records`` the release changed in any protected column."""
    cols = _protected_columns(dataset, release)
    out = []
    for r in records:
        a = dataset.frame.iloc[r][cols].astype(str).tolist()
        b = release.data.iloc[r][cols].astype(str).tolist()
        if a != b:
            out.append(r)
    return out


def nearest_grid_value(grid: list[float], value: float) -> float:
    """The grid value closest to ``value`` (the sweep measured the grid only)."""
    arr = np.asarray(grid, dtype=float)
    return float(arr[int(np.argmin(np.abs(arr - float(value))))])


def metrics_at(sweep: SweepResult, value: float) -> dict[str, MetricResult]:
    """Mean, interval and baseline of every metric at the grid value nearest ``value``."""
    return metrics_with_intervals(sweep, nearest_grid_value(sweep.grid, value))


def metric_ids(sweep: SweepResult, kind: str) -> list[str]:
    return [m for m in sweep.metric_ids if metric_info(m).kind == kind]


def default_targets(detail: pd.DataFrame, n: int = 4) -> list[str]:
    """Up to ``n`` attack targets to draw first: about half identified, the rest missed.

    Identified targets with the most credit come first; missed ones where the intruder guessed someone else
    (a tall wrong bar) before those with no evidence at all.
    """
    if detail is None or detail.empty:
        return []
    per = detail.groupby("target", sort=True).agg(credit=("credit", "max"), top=("score", "max"))
    per = per.reset_index()
    hit = per[per["credit"] > 0].sort_values(["credit", "top", "target"], ascending=[False, False, True])
    miss = per[per["credit"] <= 0].sort_values(["top", "target"], ascending=[False, True])
    hits, misses = list(hit["target"]), list(miss["target"])
    chosen = hits[: n // 2] + misses[: n - min(len(hits), n // 2)]
    chosen += [t for t in hits if t not in chosen][: n - len(chosen)]
    return [str(t) for t in chosen[:n]]


def risk_utility_choice(sweep: SweepResult, risk: str, utility: str, rule: str, value: float) -> Choice:
    """The knob the steward's rule picks: a risk ceiling (Eq. 2.6) or a trade-off slope (Eq. 2.8)."""
    table = frontier(sweep.summary, risk, utility)
    if rule == "threshold":
        return select_by_risk_threshold(table, value)
    return select_by_tradeoff(table, value)


# ---------------------------------------------------------------------------------------------------------------
# The chosen release, handed from Protect to Export


@dataclass(frozen=True)
class Chosen:
    """What the Protect page shows and the Export page writes."""

    fingerprint: str
    dataset: str
    method: str
    knob: float
    seed: int
    replicates: int
    risk: str | None
    utility: str | None
    sweep: SweepResult
    params: dict = field(default_factory=dict)
    options: MeasureOptions | None = None


def set_choice(chosen: Chosen) -> None:
    st.session_state[CHOICE] = chosen


def get_choice(dataset: Dataset | None) -> Chosen | None:
    """The choice made on the Protect page, if it was made on ``dataset``."""
    c = st.session_state.get(CHOICE)
    if c is None or dataset is None or c.fingerprint != dataset.fingerprint:
        return None
    return c


# ---------------------------------------------------------------------------------------------------------------
# Export


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
    """The `textsdc release ...` command that writes the same release (the CLI's own formatting)."""
    from engine.cli import replay_command as cli_replay

    data = origin.data if origin is not None else dataset.name
    if origin is not None and origin.kind == "upload":
        data = Path(origin.data).name
    args = argparse.Namespace(
        data=data,
        schema=schema_file_name(dataset, origin),
        encoding=origin.encoding if origin is not None and origin.encoding not in (None, "", "utf-8") else None,
        method=chosen.method,
        replicates=chosen.replicates,
        replicate=0,
        seed=chosen.seed,
        out=out_dir,
        **replay_options(chosen),
    )
    command = cli_replay(args, chosen.knob)
    return command + (" --with-frontier" if with_frontier else "")


def replay_options(chosen: Chosen) -> dict[str, Any]:
    """The method parameters and measure options of a choice as the CLI's option values."""
    params, o = chosen.params, chosen.options or MeasureOptions()
    joined = (lambda v: ",".join(v) if v else None)
    return {
        "fields": joined(params.get("fields")), "vendor_keywords": joined(params.get("vendor_keywords")),
        "posterior": params.get("posterior"), "posterior_draws": params.get("posterior_draws"),
        "count_field": params.get("count_field"), "continuous_field": params.get("continuous_field"),
        "predictors": joined(params.get("predictors")), "lower": params.get("lower"), "upper": params.get("upper"),
        "chains": params.get("chains"), "draws": params.get("draws"), "rate_error": params.get("rate_error"),
        "projections": o.projections, "topics": o.topics, "level": o.prevalence_level, "clusters": o.clusters,
        "uncertainty_field": o.uncertainty_field,
    }


def export_chosen(
    dataset: Dataset,
    origin: Origin | None,
    chosen: Chosen,
    out_dir: str,
    with_frontier: bool,
    progress: Progress = no_progress,
) -> ExportResult:
    """Write the chosen release with its manifest and report (ConfigError / DataError as the engine raises)."""
    if not out_dir.strip():
        raise ConfigError("give an output folder for the export")
    p = protector(chosen.method, chosen.params)
    fitted = get_fitted(dataset, chosen.method, progress, chosen.params)
    value = fitted.snap(chosen.knob)
    sweep = chosen.sweep
    if any(np.isclose(value, g, rtol=1e-9, atol=0) for g in sweep.grid):
        metrics = metrics_with_intervals(sweep, nearest_grid_value(sweep.grid, value))
    else:  # a value between grid points: measure it exactly, as the CLI does
        evaluator = get_evaluator(dataset, progress, tuple(fitted.synthesized_fields), chosen.options)
        point = run_sweep(dataset, p, [value], chosen.replicates, chosen.seed, progress=progress, fitted=fitted,
                          evaluator=evaluator)
        metrics = metrics_with_intervals(point, value)
    release = get_release(dataset, chosen.method, value, chosen.seed, chosen.replicates, chosen.params)
    return export_release(
        Path(out_dir).expanduser(),
        dataset=dataset,
        release=release,
        metrics=metrics,
        method_params=p.params(),
        replicates=chosen.replicates,
        sweep=sweep if with_frontier else None,
        risk_metric=chosen.risk,
        utility_metric=chosen.utility,
        replay_command=replay_command(dataset, origin, chosen, out_dir, with_frontier),
        knob=fitted.knob,
        method_title=p.title,
        point=sweep,
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


def knob_text(knob: Knob, value: float) -> str:
    return f"{knob.symbol} = {knob.format(value)}"


def metric_label(metric_id: str) -> str:
    return metric_info(metric_id).label if metric_id.removesuffix("_confidential") in METRICS else metric_id


_MD_SPECIAL = set("\\`*_[]#|$<>~")


def md_escape(text: object) -> str:
    """``text`` with Markdown's special characters escaped (data-derived names go into Markdown as text)."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


SAMPLE_CSS = """<style>
.textsdc-sample{display:grid;grid-template-columns:1fr 1fr;gap:.6rem;margin:.2rem 0 .9rem 0}
.textsdc-sample .textsdc-head{grid-column:1/3;font-size:.85rem;color:#666;margin-bottom:-.3rem}
.textsdc-sample .textsdc-original,.textsdc-sample .textsdc-protected{border:1px solid #ddd;border-radius:.4rem;
padding:.45rem .6rem;white-space:pre-wrap;word-wrap:break-word;font-size:.95rem}
.textsdc-sample mark.orig{background:#ffd6d6;padding:0 .1rem}
.textsdc-sample mark.repl{background:#d6f5d6;padding:0 .1rem}
.textsdc-fields{grid-column:1/3;font-size:.85rem;color:#444}
</style>"""


def _html_block(fragment: str) -> str:
    """An HTML fragment made safe to pass through st.markdown as one raw block.

    A blank line would end the HTML block and hand the rest to Markdown, and ``$`` would start LaTeX.
    """
    return fragment.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>").replace("$", "&#36;")


def _release_changes(release: Release, record: int, column: str) -> pd.DataFrame:
    changes = release.changes
    if changes is None or changes.empty:
        return pd.DataFrame(columns=["record", "column", "start", "end", "original", "replacement", "label"])
    return changes[(changes["record"] == record) & (changes["column"].astype(str) == str(column))]


def sample_html(dataset: Dataset, release: Release, record: int) -> str:
    """One sample record, original and protected side by side with the changed spans marked (escaped HTML)."""
    import html as _html
    import re

    from engine.figures.text import highlight_changes

    text_col = dataset.schema.text
    original = str(dataset.frame[text_col].iloc[record])
    protected = str(release.data[text_col].iloc[record])
    try:
        orig_html, prot_html = highlight_changes(original, _release_changes(release, record, text_col))
        if _html.unescape(re.sub(r"<[^>]+>", "", prot_html)) != protected:
            raise ValueError("the recorded changes do not rebuild the released text")
    except (ValueError, KeyError):
        # Spans that do not describe the release exactly: show the two texts without marks.
        orig_html, prot_html = _html.escape(original), _html.escape(protected)
    fields = []
    for col in release.protected_columns:
        if col == text_col or col not in dataset.frame.columns or col not in release.data.columns:
            continue
        a, b = dataset.frame[col].iloc[record], release.data[col].iloc[record]
        if str(a) != str(b):
            fields.append(f"{_html.escape(str(col))}: {_html.escape(str(a))} → {_html.escape(str(b))}")
    fields_html = f'<div class="textsdc-fields">{"; ".join(fields)}</div>' if fields else ""
    return _html_block(
        f'<div class="textsdc-sample" data-record="{record}">'
        f'<div class="textsdc-head">Row {record + 1}: original (left) and protected (right)</div>'
        f'<div class="textsdc-original">{orig_html}</div>'
        f'<div class="textsdc-protected">{prot_html}</div>{fields_html}</div>'
    )
