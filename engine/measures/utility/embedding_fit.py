"""How far the swapped chunks moved from their cluster in the embedding space: the swap utility DU
(Greve & Sablica, Eqs. 2.17–2.19).

With l the cluster of each chunk under the fitted mixture (`engine.protect.swap.mixtures`, maximum
responsibility on the pre-swap embeddings) and f the fitted component densities,

    log f(x | l, φ̂) = Σ_i log f(x_i | φ̂_{l_i}),
    log f(x̃ | l, φ̂) − log f(x | l, φ̂) = Σ_{swapped i} log f(x̃_i | φ̂_{l_i}) − log f(x_i | φ̂_{l_i})   (Eq. 2.17)
    DU = log f(x̃ | l, φ̂) / log f(x | l, φ̂)                                                            (Eq. 2.19)

DU is 1 when nothing was swapped and falls as swapped chunks read less like their cluster. As the paper
assumes (Section 2.4), DU is held to [0, 1]: a release whose swapped chunks fit their clusters better on net (a
positive Eq. 2.17) gets DU = 1. The ratio needs a positive pre-swap log-likelihood — clusters more concentrated
than the uniform distribution, which the densities of Eqs. 2.1–2.2 (relative to the uniform distribution)
give; otherwise DU is undefined and an error says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.swapped import fitted_swap, swap_detail

if TYPE_CHECKING:
    from engine.protect.swap.mixtures import SphericalMixture


@dataclass(frozen=True)
class EmbeddingFit:
    """DU and its parts: the pre-swap conditional log-likelihood and the change of Eq. 2.17."""

    value: float
    log_likelihood: float
    change: float


def cluster_log_likelihoods(mixture: SphericalMixture, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """log f(x_i | φ̂_{l_i}) for each row."""
    return mixture.log_component_densities(x)[np.arange(len(x)), np.asarray(labels)]


def swap_utility(mixture: SphericalMixture, before: np.ndarray, after: np.ndarray) -> EmbeddingFit:
    """DU (Eq. 2.19) of a release whose chunks' embeddings went from ``before`` to ``after`` (same rows; a chunk
    that was not swapped has the same embedding in both)."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if before.shape != after.shape:
        raise ValueError(f"pre- and post-swap embeddings differ in shape: {before.shape} and {after.shape}")
    labels = mixture.predict(before)
    pre = cluster_log_likelihoods(mixture, before, labels)
    total = float(pre.sum())
    if not total > 0:
        raise ValueError(
            f"the pre-swap embeddings' log-likelihood given their clusters is {total:.4g}, not positive: DU "
            "(Eq. 2.19) is a ratio of log-likelihoods and needs clusters more concentrated than uniform; "
            "fit more clusters or embed the chunks with a model that separates them"
        )
    moved = np.flatnonzero(np.any(before != after, axis=1))
    change = float((cluster_log_likelihoods(mixture, after[moved], labels[moved]) - pre[moved]).sum())
    return EmbeddingFit(float(min(max((total + change) / total, 0.0), 1.0)), total, change)


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
