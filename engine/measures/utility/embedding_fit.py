"""The swap's utility DU as a measure (Greve & Sablica, Eq. 2.19) of each release; the formula lives with the
method (`engine.protect.swap.embedding_fit`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.swapped import fitted_swap, swap_detail
from engine.protect.swap.embedding_fit import swap_utility


class SwapUtility(Measure):
    """DU (Eq. 2.19) of a release of the named-entity swap: the rewritten chunks embedded again and scored by
    the mixture fitted to the pre-swap chunks."""

    id = "swap_du"
    kind = "utility"
    better = "higher"
    label = "Swap utility (DU)"
    meaning = (
        "How well the released chunks still fit the clusters of similar chunks they came from: the ratio of their "
        "log-likelihood under the mixture fitted before the swap to the pre-swap one. 1 at r = 0; lower when "
        "swapped chunks read less like their cluster."
    )
    source = "Greve & Sablica (2025), Eqs. 2.17–2.19"
    applies_to = "text"
    methods = ("swap",)

    def prepare(self, context: PrepareContext) -> None:
        fitted = fitted_swap(context)
        self._fitted = fitted
        p = fitted.prepared
        sizes = np.bincount(p.clusters, minlength=p.mixture.locations.shape[0])
        self.note = (
            f"{p.embeddings.shape[1]}-dimensional chunk embeddings, {int((sizes > 0).sum())} clusters of "
            f"{sizes.min()}–{sizes.max()} chunks."
        )

    def compute(self, view: ReleaseView) -> MetricResult:
        detail = swap_detail(view)
        p = self._fitted.prepared
        after = p.embeddings.copy()
        if detail is not None and detail.moved:
            moved = sorted(detail.moved)
            after[moved] = p.embed([detail.moved[k] for k in moved])
        fit = swap_utility(p.mixture, p.embeddings, after)
        rows = pd.DataFrame(
            [
                {
                    "log_likelihood": fit.log_likelihood,
                    "change": fit.change,
                    "moved_chunks": len(detail.moved) if detail else 0,
                }
            ]
        )
        return MetricResult(self.id, fit.value, rows)
