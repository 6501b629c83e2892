"""A stratified random sample of a dataset's records to annotate (issue 51).

Strata: the quartile of the text's length (in characters, by rank, so that ties split evenly) crossed with the
levels of one categorical field when the schema has one of at most `MAX_LEVELS` levels (the first such). Within
each stratum the records are put in a seeded random order; the sample of size n takes records stratum by stratum,
each next record from the stratum furthest below its proportional share of the records taken so far (ties to the
stratum first in a seeded order of strata). So every sample is within one record of proportional allocation in
each stratum, and a larger sample of the same seed holds the smaller one: a steward who asks for 50 more keeps
the records annotated already.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError

SAMPLE_STEP = 50
"""The default sample size, and the step a steward grows it by."""
MAX_LEVELS = 12
"""Most levels of a categorical field that stratifies the sample (more would leave strata of one record)."""
LENGTH_BINS = 4


def stratifying_field(dataset: Dataset) -> str | None:
    """The categorical field that stratifies the sample, besides the text length: the schema's first with two to
    `MAX_LEVELS` levels; None when there is none."""
    for spec in dataset.schema.fields:
        if spec.kind == "categorical" and spec.name in dataset.frame.columns:
            levels = dataset.frame[spec.name].astype(str).nunique()
            if 2 <= levels <= MAX_LEVELS:
                return spec.name
    return None


def strata(dataset: Dataset) -> np.ndarray:
    """Each record's stratum, an integer: its text-length quartile, times the level of `stratifying_field`."""
    n = dataset.n_records
    lengths = dataset.texts.fillna("").astype(str).str.len().to_numpy()
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort((np.arange(n), lengths))] = np.arange(n)
    quartile = rank * LENGTH_BINS // max(n, 1)
    name = stratifying_field(dataset)
    if name is None:
        return quartile
    codes = pd.factorize(dataset.frame[name].astype(str), sort=True)[0]
    return codes.astype(np.int64) * LENGTH_BINS + quartile


def draw_sample(dataset: Dataset, size: int = SAMPLE_STEP, seed: int = 0) -> list[int]:
    """``size`` records (all when fewer) drawn at random within the strata (module docstring), in the order
    drawn; the same for the same data, size and seed, and a prefix of any larger sample with that seed."""
    if size < 1:
        raise ConfigError(f"a sample of {size} records is not accepted; accepted: 1 or more")
    rng = np.random.default_rng(seed)
    labels = strata(dataset)
    kinds = np.unique(labels)
    order = rng.permutation(len(kinds))  # the tie-break between strata
    members = [rng.permutation(np.flatnonzero(labels == kinds[i])) for i in order]
    share = np.array([len(m) for m in members], dtype=float) / max(dataset.n_records, 1)
    taken = np.zeros(len(members), dtype=np.int64)
    out: list[int] = []
    for k in range(1, min(size, dataset.n_records) + 1):
        deficit = np.where(taken < [len(m) for m in members], share * k - taken, -np.inf)
        h = int(np.argmax(deficit))
        out.append(int(members[h][taken[h]]))
        taken[h] += 1
    return out
