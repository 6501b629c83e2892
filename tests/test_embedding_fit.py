"""The swap utility DU (Greve & Sablica, Eqs. 2.17–2.19): 1 without a swap, lower the further swapped chunks move
from their cluster, the change summed over the swapped chunks only, by hand on a fitted mixture."""

from __future__ import annotations

import numpy as np
import pytest

from engine.protect.swap.embedding_fit import cluster_log_likelihoods, swap_utility
from engine.protect.swap.mixtures import fit_mixture, sample


def clustered(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.eye(8)[:3]
    return np.vstack([sample(150, c, 0.8, "pkb", rng) for c in centres])


def test_no_swap_is_full_utility_and_moving_chunks_away_lowers_it():
    x = clustered()
    mixture = fit_mixture(x, 3, kind="pkb", rng=np.random.default_rng(1))
    assert swap_utility(mixture, x, x).value == 1.0
    rng = np.random.default_rng(2)
    values = []
    for moved in (10, 40, 120):
        after = x.copy()
        rows = rng.choice(len(x), moved, replace=False)
        after[rows] = x[rng.choice(len(x), moved)]  # another chunk's embedding, often of another cluster
        values.append(swap_utility(mixture, x, after).value)
    assert 1.0 > values[0] > values[1] > values[2] >= 0.0


def test_the_change_is_summed_over_the_swapped_chunks_by_hand():
    x = clustered(3)
    mixture = fit_mixture(x, 3, kind="cauchy", rng=np.random.default_rng(0))
    after = x.copy()
    after[[0, 200]] = x[[200, 0]]  # two chunks of different clusters trade places
    labels = mixture.predict(x)
    pre = cluster_log_likelihoods(mixture, x, labels)
    by_hand = cluster_log_likelihoods(mixture, after[[0, 200]], labels[[0, 200]]).sum() - pre[[0, 200]].sum()
    fit = swap_utility(mixture, x, after)
    assert fit.change == pytest.approx(by_hand) and fit.change < 0
    assert fit.value == pytest.approx((pre.sum() + by_hand) / pre.sum())


def test_undefined_without_concentrated_clusters_and_on_mismatched_shapes():
    rng = np.random.default_rng(0)
    uniform = rng.standard_normal((200, 5))
    uniform /= np.linalg.norm(uniform, axis=1, keepdims=True)
    mixture = fit_mixture(uniform, 1, kind="pkb", rng=rng)
    mixture.concentrations[:] = 0.0  # the uniform distribution: log f = 0 everywhere
    with pytest.raises(ValueError, match="not positive"):
        swap_utility(mixture, uniform, uniform)
    with pytest.raises(ValueError, match="differ in shape"):
        swap_utility(mixture, uniform, uniform[:10])
