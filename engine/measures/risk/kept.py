"""How many synthesized values equal the confidential ones (Schneider, Hu, Mankad & Bale 2023, Table 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import field_levels
from engine.protect.field_synthesis.sequential import FieldDraws


class ConfidentialValueRate(Measure):
    """Share of synthesized categorical values equal to the confidential ones; per record and field the values
    and, when the synthesizer reports it, the probability it gave the confidential value (Table 6)."""

    id = "confidential_value_rate"
    kind = "risk"
    better = "lower"
    label = "Confidential values kept"
    meaning = (
        "Share of synthesized field values that equal the confidential value (over records and synthesized "
        "fields). 1 = nothing changed; the share that random sampling from the field's distribution would "
        "keep is the sum of its squared level shares."
    )
    source = "Schneider, Hu, Mankad & Bale (2023), Table 6"
    applies_to = "categorical"
    intruder_use = "the same for every preset: it counts what the release keeps, whoever looks at it."

    def prepare(self, context: PrepareContext) -> None:
        self.fields = list(context.categorical)
        self.names = [lv.name for lv in field_levels(context)]
        self.confidential = context.dataset.frame

    def compute(self, view: ReleaseView) -> MetricResult:
        draws = view.detail(FieldDraws)
        detail = None if draws is None else draws.table
        if detail is not None:  # numeric fields synthesized beside categorical ones have their own measures
            detail = detail[detail["field"].isin(self.fields)].reset_index(drop=True)
        if detail is None or detail.empty:
            data = view.data
            detail = pd.concat(
                [
                    pd.DataFrame(
                        {
                            "record": np.arange(len(data)),
                            "field": name,
                            "original": self.confidential[name].astype(str).to_numpy(),
                            "synthetic": data[name].astype(str).to_numpy(),
                        }
                    )
                    for name in self.names
                ],
                ignore_index=True,
            )
        same = (detail["original"].astype(str) == detail["synthetic"].astype(str)).to_numpy()
        return MetricResult(self.id, float(same.mean()), detail=detail)
