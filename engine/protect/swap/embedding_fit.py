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
