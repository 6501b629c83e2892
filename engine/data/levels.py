"""The order of a categorical field's levels, the same everywhere: most frequent first, ties by name."""

from __future__ import annotations

import pandas as pd


def levels_by_frequency(values: pd.Series) -> list[str]:
    """The distinct values of ``values`` as text, most frequent first and ties in name order; the first is
    the reference level of a model's dummy coding."""
    counts = values.astype(str).value_counts()
    return sorted(counts.index, key=lambda v: (-counts[v], v))
