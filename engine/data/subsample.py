"""A seeded sample of a large dataset, drawn so that the measures read on it mean what they mean on the whole:
whole authors rather than loose records (a measure that groups records by author sees each sampled author's
records together), and every author the intruder holds texts of among them (the attack keeps its targets)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.data.dataset import Dataset
from engine.errors import ConfigError


def author_sample(dataset: Dataset, records: int, seed: int) -> Dataset:
    """About ``records`` of ``dataset``'s records, in their order, drawn with ``numpy.random.default_rng(seed)``.

    With an author column: the authors of the external file first (all of them, in sorted order, while they fit),
    then the other authors in a random order, each with all their records, as long as the sample stays within
    ``records`` (so it may hold a few fewer). The external file keeps the rows of the sampled authors. Without an
    author column: ``records`` records drawn without replacement. The whole dataset when it has no more than
    ``records``. A stratified sample of this kind over-represents the intruder's targets where they are a small
    share of the authors; the page that shows it says it shows a sample.
    """
    if records < 1:
        raise ConfigError(f"a sample needs at least 1 record, got {records}")
    n = dataset.n_records
    if n <= records:
        return dataset
    rng = np.random.default_rng(seed)
    author = dataset.schema.author
    if author is None:
        rows = np.sort(rng.choice(n, size=records, replace=False))
        return replace(dataset, frame=dataset.frame.iloc[rows].reset_index(drop=True))
    names = dataset.frame[author].astype(str).to_numpy()
    labels, codes = np.unique(names, return_inverse=True)
    sizes = np.bincount(codes, minlength=len(labels))
    external = dataset.external
    held = set() if external is None else set(external[author].astype(str))
    targets = np.flatnonzero(np.isin(labels, sorted(held)))
    others = rng.permutation(np.setdiff1d(np.arange(len(labels)), targets))
    order = np.concatenate([targets, others])
    fits = np.cumsum(sizes[order]) <= records
    chosen = np.zeros(len(labels), dtype=bool)
    chosen[order[fits]] = True
    rows = np.flatnonzero(chosen[codes])
    frame = dataset.frame.iloc[rows].reset_index(drop=True)
    if external is not None:
        kept = external[author].astype(str).isin(set(labels[chosen]))
        external = external[kept].reset_index(drop=True)
    return replace(dataset, frame=frame, external=external)
