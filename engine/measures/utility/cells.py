"""Relative differences of one- and two-way tables of categorical fields, confidential vs synthetic.

Schneider, Hu, Mankad & Bale (2023), Section 4.1.1 and Table 2, after Drechsler & Hu (2021): for every cell
of a frequency table, (synthetic count − confidential count) / confidential count; the measure is the sum of
the absolute values over the cells (0 = the tables agree exactly). One-way tables are those of the synthesized
fields; two-way tables cross every pair of categorical fields of which at least one is synthesized. Cells
empty in the confidential data have no relative difference and are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView


def _table(frame: pd.DataFrame, cols: Sequence[str]) -> pd.Series:
    return frame.groupby(list(cols), sort=True, observed=True).size()


def relative_differences(confidential: pd.DataFrame, synthetic: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """One row per cell of the table over ``cols`` that is non-empty in the confidential data."""
    conf = _table(confidential.astype(str), cols)
    syn = _table(synthetic.astype(str), cols).reindex(conf.index, fill_value=0)
    rel = (syn - conf) / conf
    cells = [" × ".join(map(str, k if isinstance(k, tuple) else (k,))) for k in conf.index]
    return pd.DataFrame(
        {
            "table": " × ".join(cols),
            "cell": cells,
            "confidential": conf.to_numpy(),
            "synthetic": syn.to_numpy(),
            "relative_difference": rel.to_numpy(),
        }
    )


def two_way_tables(synthesized: Sequence[str], categorical: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs of categorical fields crossed in the two-way tables: those with at least one synthesized."""
    return [
        p
        for p in combinations(list(dict.fromkeys([*synthesized, *categorical])), 2)
        if p[0] in synthesized or p[1] in synthesized
    ]


def cell_differences(
    confidential: pd.DataFrame, synthetic: pd.DataFrame, synthesized: Sequence[str], categorical: Sequence[str]
) -> dict[str, MetricResult]:
    """``cell_difference_1way`` and ``cell_difference_2way`` with per-cell detail."""
    one = [relative_differences(confidential, synthetic, [f]) for f in synthesized]
    pairs = two_way_tables(synthesized, categorical)
    two = [relative_differences(confidential, synthetic, list(p)) for p in pairs]
    out = {}
    for mid, parts in (("cell_difference_1way", one), ("cell_difference_2way", two)):
        if not parts:
            continue
        detail = pd.concat(parts, ignore_index=True)
        out[mid] = MetricResult(mid, float(np.abs(detail["relative_difference"]).sum()), detail=detail)
    return out


class _CellDifference(Measure):
    """One result of `cell_differences`, which computes both for a release at once."""

    kind = "utility"
    better = "lower"
    source = "Schneider, Hu, Mankad & Bale (2023), Section 4.1.1, Table 2 (after Drechsler & Hu 2021)"
    applies_to = "categorical"
    high = float("inf")

    def prepare(self, context: PrepareContext) -> None:
        self.confidential = context.dataset.frame
        self.synthesized = list(context.categorical)
        self.categorical = [f.name for f in context.dataset.schema.fields if f.kind == "categorical"]

    def compute(self, view: ReleaseView) -> MetricResult:
        return view.memo(
            "cell_differences",
            lambda: cell_differences(self.confidential, view.data, self.synthesized, self.categorical),
        )[self.id]


class CellDifference1way(_CellDifference):
    """Summed relative cell differences of each synthesized field (Schneider et al. 2023, Table 2)."""

    id = "cell_difference_1way"
    label = "One-way cell differences"
    meaning = (
        "Sum over the levels of each synthesized field of |synthetic count − confidential count| / "
        "confidential count (Schneider et al. 2023, Table 2). 0 = the field's distribution kept exactly."
    )


class CellDifference2way(_CellDifference):
    """Summed relative cell differences of the two-way tables (Schneider et al. 2023, Table 2)."""

    id = "cell_difference_2way"
    label = "Two-way cell differences"
    meaning = (
        "Sum over the cells of every two-way table that involves a synthesized field of |synthetic count − "
        "confidential count| / confidential count (Schneider et al. 2023, Table 2); it grows with the number of "
        "cells, so compare it along the knob, not between datasets. 0 = every cross-tabulation kept exactly."
    )

    def prepare(self, context: PrepareContext) -> None:
        super().prepare(context)
        if not two_way_tables(self.synthesized, self.categorical):
            raise NotApplicable("needs a second categorical field to cross the synthesized field with")
