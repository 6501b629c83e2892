"""Measures of a k-anonymous release of the quasi-identifiers found in text (the `kanon` method; Abeywardana &
Thayasivam, Section 4.4): the discernibility and loss metrics, and the risk the paper leaves implicit — how many
records are unique on the quasi-identifiers they state, and how small the smallest class is.

On the unprotected data (no release detail) the records' stated values are the table: every record in its own
class of equal values, nothing generalized.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.protect.kanon.lattice import ANY, class_sizes, discernibility
from engine.protect.kanon.method import FittedKanon, KanonDetail

METHOD = "kanon"


class _KanonMeasure(Measure):
    applies_to = "text"
    methods = (METHOD,)

    def prepare(self, context: PrepareContext) -> None:
        fitted: Any = context.fitted
        if fitted is None or getattr(fitted, "method", None) != METHOD:
            raise NotApplicable("measures releases of the k-anonymity method only")
        self._fitted: FittedKanon = fitted
        self._sizes_before = class_sizes(fitted.qi)

    def _detail(self, view: ReleaseView) -> KanonDetail | None:
        return view.detail(KanonDetail)

    def _sizes(self, view: ReleaseView) -> tuple[np.ndarray, np.ndarray]:
        """Per record, its class size in the release and whether it was suppressed."""
        detail = self._detail(view)
        if detail is None:
            return self._sizes_before, np.zeros(len(self._sizes_before), dtype=bool)
        return detail.class_sizes, detail.suppressed


class Discernibility(_KanonMeasure):
    id = "discernibility"
    kind = "utility"
    better = "lower"
    label = "Discernibility"
    meaning = (
        "How coarse the release's groups are: each record counts the size of its group of records with the same "
        "released quasi-identifiers (a suppressed one counts the whole table), summed and divided by n². 1/n "
        "when every record is its own group; 1 when all records are one group or suppressed."
    )
    source = "Bayardo & Agrawal (2005), as used by Abeywardana & Thayasivam (Section 4.4.1)"

    def compute(self, view: ReleaseView) -> MetricResult:
        sizes, suppressed = self._sizes(view)
        n = len(sizes)
        dm = discernibility(sizes, suppressed)
        detail = pd.DataFrame([{"records": n, "dm": dm, "suppressed": int(suppressed.sum())}])
        return MetricResult(self.id, dm / n**2 if n else 0.0, detail)


class LossMetric(_KanonMeasure):
    id = "loss_metric"
    kind = "utility"
    better = "lower"
    label = "Generalization loss"
    meaning = (
        "The mean over the records' quasi-identifier cells of how much of the attribute's range the released value "
        "covers: 0 for a value released as it is, 1 for '*' or a suppressed record."
    )
    source = "Iyengar (2002), as used by Abeywardana & Thayasivam (Section 4.4.2)"

    def compute(self, view: ReleaseView) -> MetricResult:
        detail = self._detail(view)
        if detail is None:
            return MetricResult(self.id, 0.0, pd.DataFrame([{"attribute": "all", "level": 0, "generalized": 0}]))
        rows = []
        for column in detail.original.columns:
            changed = [o != r for o, r in zip(detail.original[column], detail.released[column])]
            rows.append(
                {
                    "attribute": column,
                    "level": detail.levels.get(column),
                    "generalized": int(np.sum(changed)),
                    "to_any": int(sum(r == (ANY,) for r in detail.released[column])),
                }
            )
        counts = pd.DataFrame(rows)
        return MetricResult(self.id, float(detail.loss), counts)


def tagger_note() -> str:
    """How far to trust the extraction: the tagger's F1 per label on the gold set's held-out 30%."""
    from engine.protect.kanon.tagger import held_out_quality

    table = held_out_quality().set_index("label")
    labels = [lab for lab in table.index if lab not in ("NONE", "macro") and table.loc[lab, "support"] > 0]
    per = ", ".join(f"{lab} {table.loc[lab, 'f1']:.2f}" for lab in labels)
    return (
        f"The attributes come from a tagger with a macro F1 of {table.loc['macro', 'f1']:.2f} on held-out posts of "
        f"the gold set (per label: {per}); attributes it misses stay in the text as written."
    )


class QiUniqueShare(_KanonMeasure):
    id = "qi_unique_share"
    kind = "risk"
    better = "lower"
    label = "Unique records"
    meaning = (
        "The share of records whose released quasi-identifiers (age, race, place, gender, language, occupation "
        "found in the text) no other record shares; suppressed records count as not unique."
    )
    source = (
        "Sample uniques of the quasi-identifier table: the risk Abeywardana & Thayasivam leave implicit (Section 3.3)"
    )
    intruder_use = (
        "the same for every preset: k-anonymity assumes an intruder who knows every quasi-identifier a person's "
        "text states (the strongest of the presets on these attributes)."
    )

    def prepare(self, context: PrepareContext) -> None:
        super().prepare(context)
        self.note = tagger_note()

    def compute(self, view: ReleaseView) -> MetricResult:
        sizes, suppressed = self._sizes(view)
        unique = (sizes == 1) & ~suppressed
        before = float(np.mean(self._sizes_before == 1)) if len(sizes) else 0.0
        detail = pd.DataFrame(
            [{"unique_before": before, "unique_after": float(np.mean(unique)) if len(sizes) else 0.0}]
        )
        return MetricResult(self.id, float(np.mean(unique)) if len(sizes) else 0.0, detail)


class SmallestClass(_KanonMeasure):
    id = "smallest_class"
    kind = "risk"
    better = "higher"
    label = "Smallest group"
    meaning = (
        "The size of the smallest group of records sharing their released quasi-identifiers (suppressed records "
        "left out): at least k in a k-anonymous release."
    )
    source = "k-anonymity (Samarati & Sweeney 1998), Abeywardana & Thayasivam (Section 3.3)"
    intruder_use = (
        "the same for every preset: k-anonymity assumes an intruder who knows every quasi-identifier a person's "
        "text states (the strongest of the presets on these attributes)."
    )
    low = 1.0
    high = float("inf")
    integer = True

    def compute(self, view: ReleaseView) -> MetricResult:
        sizes, suppressed = self._sizes(view)
        kept = sizes[~suppressed]
        histogram = pd.Series(kept).value_counts().sort_index()
        detail = pd.DataFrame(
            {
                "class_size": histogram.index.astype(int),
                "records": histogram.to_numpy(),
                "suppressed": int(suppressed.sum()),
            }
        )
        return MetricResult(self.id, float(kept.min()) if len(kept) else float("nan"), detail)
