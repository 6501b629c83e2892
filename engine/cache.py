"""Fits cached on disk, keyed by the dataset's fingerprint and the method's parameters."""

from __future__ import annotations

import hashlib
import json

import joblib

from engine import __version__
from engine.atomic import atomic_path
from engine.data.dataset import Dataset
from engine.paths import cache_dir
from engine.protect.base import Fitted, Progress, Protector, no_progress


def fit_key(protector: Protector, dataset: Dataset) -> str:
    """The identity of a fit: the method, its knob as declared (a fit carries it: a changed range or default
    must not come back from the cache), every declared parameter, what else decides the fit
    (`Protector.fit_identity`), the dataset's fingerprint and textsdc's version."""
    payload = json.dumps(
        {
            "textsdc": __version__,
            "method": protector.name,
            "knob": protector.knob.to_dict(),
            "params": protector.params(),
            "identity": protector.fit_identity(),
            "data": dataset.fingerprint,
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def fit_cached(
    protector: Protector, dataset: Dataset, progress: Progress = no_progress, use_cache: bool = True
) -> Fitted:
    """`protector.fit(dataset)`, loaded from the on-disk cache when the same fit was done before."""
    if not use_cache:
        return protector.fit(dataset, progress)
    folder = cache_dir() / "fits"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{protector.name}-{fit_key(protector, dataset)}.joblib"
    if path.exists():
        try:
            return joblib.load(path)
        except Exception:  # a cache file from another library version: refit and overwrite
            path.unlink(missing_ok=True)
    fitted = protector.fit(dataset, progress)
    try:
        with atomic_path(path) as tmp:
            joblib.dump(fitted, tmp)
    except OSError:
        pass  # a full or read-only cache only costs the next run a refit; the fit itself is good
    return fitted
