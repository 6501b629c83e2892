"""How close the average of several synthetic releases of the same field comes to the confidential values.

A synthesizer draws each release's values afresh from a model of the confidential data. One release's value of a
record scatters around what the model predicts for it; the mean of many releases scatters less, so a recipient
who averages them comes closer to the confidential values than any one release lets her (the noise averages
out, only the model's error stays). The distance measured here, of one field over the records:

- a numeric field (a count or an amount): the root mean squared difference between the values and the confidential ones, in standard
  deviations of the confidential values (0: the values themselves);
- a categorical field: the share of records whose confidential category a recipient misses by taking the most
  frequent of the releases' values of that record (among tied ones, each as likely: a tie of two, one of them the
  confidential category, is half missed); for one release, the share of records whose value differs.

`averaging` gives, over ``k`` releases, the mean of the single releases' distances and the distance of their
average (for a numeric field their mean value per record; for a categorical one the most frequent category).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from engine.ledger.entry import Averaging

AVERAGING_RATIO = 0.9
"""The ledger flags a field whose average over two or more releases is at most this share of one release's
distance from the confidential values: averaging brings a recipient at least 10% closer (`SyntheticAveraging`)."""


def _numeric_distance(values: np.ndarray, confidential: np.ndarray, scale: float) -> float:
    ok = np.isfinite(values) & np.isfinite(confidential)
    if not ok.any():
        return float("nan")
    return float(np.sqrt(np.mean((values[ok] - confidential[ok]) ** 2)) / scale)


def _categorical_distance(releases: Sequence[pd.Series], confidential: pd.Series) -> float:
    truth = confidential.astype(str).tolist()
    columns = [r.astype(str).tolist() for r in releases]
    missed = 0.0
    for i, value in enumerate(truth):
        counts = Counter(c[i] for c in columns)
        modes = [v for v, n in counts.items() if n == max(counts.values())]
        missed += 1.0 - (1.0 / len(modes) if value in modes else 0.0)
    return missed / len(truth) if truth else float("nan")


def averaging(column: str, kind: str, confidential: pd.Series, releases: Sequence[pd.Series]) -> Averaging:
    """The distances of ``releases`` (each the synthetic values of ``column``, record for record as
    ``confidential``) from the confidential values, one by one and averaged; ``kind`` "numeric" or "categorical".
    ValueError when a release has other records than the confidential column."""
    if not releases:
        raise ValueError("averaging needs at least one release")
    if any(len(r) != len(confidential) for r in releases):
        raise ValueError(f"a release of {column} has other records than the confidential data")
    if kind == "numeric":
        truth = pd.to_numeric(confidential, errors="coerce").to_numpy(dtype=float)
        spread = float(np.nanstd(truth)) if np.isfinite(truth).any() else 0.0
        scale = spread if spread > 0 else 1.0
        drawn = [pd.to_numeric(r, errors="coerce").to_numpy(dtype=float) for r in releases]
        single = float(np.mean([_numeric_distance(d, truth, scale) for d in drawn]))
        with np.errstate(all="ignore"):
            mean = np.nanmean(np.vstack(drawn), axis=0) if len(drawn) > 1 else drawn[0]
        average = _numeric_distance(mean, truth, scale)
    else:
        single = float(np.mean([_categorical_distance([r], confidential) for r in releases]))
        average = _categorical_distance(releases, confidential)
    return Averaging(column, kind, len(releases), single, average)
