"""The swap's disclosure risk DR as a measure (Greve & Sablica, Eq. 2.16) of each release; the formulas, the
Ewens–Pitman fit of population uniques, live with the method (`engine.protect.swap.disclosure`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.swapped import fitted_swap, swapped_flags
from engine.protect.swap.disclosure import population_text, swap_disclosure_risk
from engine.protect.swap.pipeline import risk_cells


class SwapDisclosureRisk(Measure):
    """DR (Eq. 2.16) of a release of the named-entity swap, on the table z_J of its swapped categories."""

    id = "swap_dr"
    kind = "risk"
    better = "lower"
    label = "Swap disclosure risk (DR)"
    meaning = (
        "The share of the disclosure risk of the pre-swap text that is left: 1 minus the share of the chunks "
        "unique in the swapped entity categories that were swapped, weighted by the estimated share of them "
        "unique in the population too. 1 at r = 0."
    )
    source = "Greve & Sablica (2025), Eqs. 2.10–2.16 (Ewens–Pitman fit, after Hoshino 2001)"
    applies_to = "text"
    intruder_use = (
        "the same for every preset: it measures how unique the released entity combinations are in the "
        "population, whoever looks for them."
    )
    methods = ("swap",)

    def prepare(self, context: PrepareContext) -> None:
        fitted = fitted_swap(context)
        self._fitted = fitted
        self._cells = risk_cells(fitted.prepared)
        self._population = fitted.population
        before = swap_disclosure_risk(self._cells, np.zeros(len(self._cells), dtype=bool), self._population)
        fit = before.fit
        self.note = (
            f"Table of {len(self._cells):,} chunks, {before.sample_uniques:,} unique in it"
            + (f"; θ = {fit.theta:.3g}, α = {fit.alpha:.3f}" if fit is not None else "")
            + f"; p̂ = {before.unique_share:.3f}, the estimated share of the unique chunks that are unique in a "
            f"population of N = {population_text(self._population)} chunks (Eq. 2.15)."
        )

    def compute(self, view: ReleaseView) -> MetricResult:
        risk = swap_disclosure_risk(self._cells, swapped_flags(self._fitted, view), self._population)
        fit = risk.fit
        detail = pd.DataFrame(
            [
                {
                    "chunks": len(self._cells),
                    "cells": None if fit is None else fit.k,
                    "sample_uniques": risk.sample_uniques,
                    "swapped_uniques": risk.swapped_uniques,
                    "unswapped_uniques": risk.sample_uniques - risk.swapped_uniques,
                    "theta": None if fit is None else fit.theta,
                    "alpha": None if fit is None else fit.alpha,
                    "unique_share": risk.unique_share,
                    "swapped_chunks": int(swapped_flags(self._fitted, view).sum()),
                }
            ]
        )
        return MetricResult(self.id, float(risk.value), detail)
