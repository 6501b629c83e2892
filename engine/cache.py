"""Fits and sweeps cached on disk, keyed by the dataset's fingerprint, the method's parameters, (for a sweep)
its replicates, seed and measure settings, and the engine's code (`engine_digest`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from engine import __version__
from engine.data.dataset import Dataset
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Protector
from engine.protect.corrections import GUARD_DETECTOR, KEPT, kept_corrections
from engine.protect.guard import guarded
from engine.protect.params import CORRECTIONS, RUN_PARAMETERS
from engine.store import is_stored, stored

T = TypeVar("T")

ENGINE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=8)
def code_digest(*folders: Path, suffixes: tuple[str, ...] = (".py",)) -> str:
    """A digest of the source files under ``folders`` (their paths and contents)."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.suffix in suffixes:
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def engine_digest() -> str:
    """A digest of the engine's code: what computed a cached fit or sweep. The version number alone would let a
    sweep persisted before a measure or a method changed come back after an upgrade in place, with the old
    numbers under the new code."""
    return code_digest(ENGINE_DIR)


def fit_key(protector: Protector, dataset: Dataset) -> str:
    """The identity of a fit: the method, its knob as declared (a fit carries it: a changed range or default
    must not come back from the cache), every declared parameter, what else decides the fit
    (`Protector.fit_identity`), the dataset's fingerprint, textsdc's version and the engine's code."""
    payload = json.dumps(
        {
            "textsdc": __version__,
            "engine": engine_digest(),
            "method": protector.name,
            "knob": protector.knob.to_dict(),
            "params": fit_params(protector),
            "identity": protector.fit_identity(dataset),
            "data": dataset.fingerprint,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def fit_params(protector: Protector) -> dict[str, Any]:
    """The parameters that decide a fit: all but those every method shares for its releases (`RUN_PARAMETERS`,
    the release guard's), so that switching a type of the guard does not fit again."""
    return {k: v for k, v in protector.params().items() if k not in RUN_PARAMETERS}


def fit_cached(
    protector: Protector, dataset: Dataset, progress: Progress = no_progress, use_cache: bool = True
) -> Fitted:
    """`protector.fit(dataset)`, loaded from the on-disk cache when the same fit was done before, with the
    release guard of ``dataset`` attached (`engine.protect.guard`; not part of the cached fit): every release of
    the product's paths is guarded."""
    if not use_cache:
        return guarded(protector.fit(dataset, progress), protector, dataset)
    name = f"{protector.name}-{fit_key(protector, dataset)}"
    return guarded(stored("fits", name, lambda: protector.fit(dataset, progress)), protector, dataset)


def sweep_name(protector: Protector, dataset: Dataset, settings: Mapping[str, Any]) -> str:
    """The name a sweep of ``protector`` on ``dataset`` with ``settings`` (replicates, seed, measure settings)
    is kept under: the fit's, and the parameters that decide the releases but not the fit."""
    run = {k: v for k, v in protector.params().items() if k in RUN_PARAMETERS}
    if run.get(CORRECTIONS.name) == KEPT:  # the guard's kept lists decide the releases
        kept = kept_corrections(dataset.fingerprint, GUARD_DETECTOR)
        run["guard_corrections"] = kept.digest() if kept is not None else None
    payload = json.dumps({"fit": fit_key(protector, dataset), "run": run, **settings}, sort_keys=True, default=str)
    return f"{protector.name}-{hashlib.sha256(payload.encode()).hexdigest()[:32]}"


def sweep_cached(protector: Protector, dataset: Dataset, settings: Mapping[str, Any], compute: Callable[[], T]) -> T:
    """``compute()`` — a sweep of ``protector`` on ``dataset`` — loaded from the on-disk cache when a sweep with
    the same fit and the same ``settings`` (replicates, seed, measure settings) was computed before, so a restart
    or a second steward on the machine finds it ready."""
    return stored("sweeps", sweep_name(protector, dataset, settings), compute)


def sweep_on_disk(protector: Protector, dataset: Dataset, settings: Mapping[str, Any]) -> bool:
    """Whether `sweep_cached` with these arguments would read the sweep from disk (kept by an earlier run)."""
    return is_stored("sweeps", sweep_name(protector, dataset, settings))


def derived_cached(sweep: str, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()`` — something built from the sweep kept as ``sweep`` (`sweep_name`) and described by ``key``
    (built of strings, numbers and tuples, such as the dashboard's views for the choices on its page) — kept on
    disk beside the sweep."""
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
    return stored("derived", f"{sweep}-{digest}", compute)
