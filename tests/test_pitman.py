"""The Ewens–Pitman estimate of population uniques and the swap risk DR (Greve & Sablica, Eqs. 2.10–2.16): the
large-N form (Eq. 2.14) against the exact one (Eq. 2.11), the Ewens case by hand, the maximum-likelihood fit
against a brute-force search of Eq. 2.10 written out as products and against simulated partitions, and DR on a
hand-built table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.protect.swap.disclosure import (
    expected_population_uniques,
    expected_population_uniques_exact,
    fit_pitman,
    frequencies_of_frequencies,
    population_text,
    swap_disclosure_risk,
    unique_share,
)


@pytest.mark.parametrize("theta, alpha", [(2.0, 0.3), (10.0, 0.6), (0.5, 0.1), (50.0, 0.0)])
def test_the_large_population_form_approaches_the_exact_expectation(theta, alpha):
    errors = [
        abs(expected_population_uniques(theta, alpha, n) / expected_population_uniques_exact(theta, alpha, n) - 1)
        for n in (1e3, 1e4, 1e5)
    ]
    assert errors[0] > errors[1] > errors[2] or errors[0] < 1e-9  # shrinks as N grows (like 1/N)
    assert errors[2] < 1e-3


def test_the_exact_expectation_of_the_ewens_partition_by_hand():
    """At α = 0, (θ)^{N−1↑} / (θ + 1)^{N−1↑} telescopes to θ / (θ + N − 1)."""
    for theta, n in [(1.0, 10), (3.5, 250), (40.0, 1000)]:
        assert expected_population_uniques_exact(theta, 0.0, n) == pytest.approx(n * theta / (theta + n - 1))


def _log_likelihood_by_products(theta: float, alpha: float, sizes: list[int]) -> float:
    """log of θ^{k↑α} / θ^{n↑} · Π_cells (1 − α)^{size−1↑} (Eq. 2.10 without the factors free of θ and α)."""
    k, n = len(sizes), sum(sizes)
    out = sum(math.log(theta + i * alpha) for i in range(k)) - sum(math.log(theta + i) for i in range(n))
    return out + sum(math.log(1 - alpha + i) for size in sizes for i in range(size - 1))


def test_the_fit_is_the_maximum_of_equation_2_10():
    sizes = [1, 1, 1, 1, 1, 1, 2, 2, 3, 5, 9]
    cells = [c for c, size in enumerate(sizes) for _ in range(size)]
    fit = fit_pitman(frequencies_of_frequencies(cells))
    assert (fit.n, fit.k, fit.s1) == (27, 11, 6)
    best = _log_likelihood_by_products(fit.theta, fit.alpha, sizes)
    grid = [
        _log_likelihood_by_products(t, a, sizes)
        for a in np.linspace(0.0, 0.95, 96)
        for t in np.exp(np.linspace(np.log(max(1e-3, 1e-3 - a)), np.log(200), 200))
        if t > -a
    ]
    assert best >= max(grid) - 1e-9
    assert fit.log_likelihood == pytest.approx(best)  # the same terms: the factor θ of i = 0 cancels in both


@pytest.mark.parametrize("theta, alpha", [(0.7, 0.05), (3.0, 0.4), (40.0, 0.8)])
def test_the_gradient_and_hessian_are_those_of_the_log_likelihood(theta, alpha):
    from engine.protect.swap.disclosure import _sums

    s = frequencies_of_frequencies([c for c, size in enumerate([1, 1, 1, 2, 2, 4, 7, 1, 3]) for _ in range(size)])
    _, grad, hess = _sums(theta, alpha, s)
    h = 1e-5

    def g(t: float, a: float) -> np.ndarray:
        return _sums(t, a, s)[1]

    numeric_grad = [
        (_sums(theta + h, alpha, s)[0] - _sums(theta - h, alpha, s)[0]) / (2 * h),
        (_sums(theta, alpha + h, s)[0] - _sums(theta, alpha - h, s)[0]) / (2 * h),
    ]
    numeric_hess = np.column_stack(
        [(g(theta + h, alpha) - g(theta - h, alpha)) / (2 * h), (g(theta, alpha + h) - g(theta, alpha - h)) / (2 * h)]
    )
    np.testing.assert_allclose(grad, numeric_grad, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hess, numeric_hess, rtol=1e-5, atol=1e-7)


def _pitman_partition(n: int, theta: float, alpha: float, rng: np.random.Generator) -> list[int]:
    """Cell sizes of a Pitman–Yor (Chinese restaurant) partition of n records: record i + 1 opens a new cell
    with probability (θ + kα) / (θ + i), else joins cell j with probability (n_j − α) / (θ + i) — drawn as a
    uniformly chosen earlier record's cell, kept with probability (n_j − α) / n_j."""
    owner = np.empty(n, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if i == 0 or rng.random() < (theta + k * alpha) / (theta + i):
            owner[i], sizes[k] = k, 1
            k += 1
            continue
        while True:
            j = owner[rng.integers(i)]
            if rng.random() < (sizes[j] - alpha) / sizes[j]:
                break
        owner[i] = j
        sizes[j] += 1
    return owner.tolist()


@pytest.mark.parametrize("theta, alpha", [(5.0, 0.5), (30.0, 0.2), (10.0, 0.0)])
def test_the_fit_recovers_simulated_partitions(theta, alpha):
    """One partition holds a few hundred cells, so (θ, α) vary from draw to draw (α from 0.13 to 0.24 over seven
    draws of 20,000 records at θ = 30, α = 0.2; at α = 0 the estimate often sits on the edge): the median over
    six draws is checked."""
    fits = [
        fit_pitman(frequencies_of_frequencies(_pitman_partition(10_000, theta, alpha, np.random.default_rng(seed))))
        for seed in range(6)
    ]
    assert all(0.0 <= f.alpha < 1.0 and f.theta > -f.alpha for f in fits)
    assert np.median([f.alpha for f in fits]) == pytest.approx(alpha, abs=0.04)
    assert np.median([f.theta for f in fits]) == pytest.approx(theta, rel=0.3)


def test_swap_risk_on_a_hand_built_table():
    """Eight chunks in five cells: A A B C D E E E — three sample uniques (B, C, D)."""
    cells = list("AABCDEEE")
    fit = fit_pitman(frequencies_of_frequencies(cells))
    p = unique_share(fit, 1e6)
    assert 0.0 < p <= 1.0
    none = swap_disclosure_risk(cells, [False] * 8, 1e6)
    assert none.value == 1.0 and none.sample_uniques == 3 and none.swapped_uniques == 0
    # Swapping a unique (B) and a chunk of a cell of three (E): only the unique counts.
    one = swap_disclosure_risk(cells, [False, False, True, False, False, True, False, False], 1e6)
    assert one.swapped_uniques == 1 and one.value == pytest.approx(1 - p / 3)
    every = swap_disclosure_risk(cells, [c in "BCD" for c in cells], 1e6)
    assert every.value == pytest.approx(1 - p)
    # p̂ by hand from the fit: Γ(θ + 1) / Γ(θ + α) N^α / s₁ · n / N
    by_hand = math.exp(math.lgamma(fit.theta + 1) - math.lgamma(fit.theta + fit.alpha)) * 1e6**fit.alpha / 3 * 8 / 1e6
    assert p == pytest.approx(min(by_hand, 1.0))


def test_swap_risk_falls_as_more_uniques_are_swapped_and_edge_cases():
    rng = np.random.default_rng(0)
    cells = _pitman_partition(2_000, 20.0, 0.4, rng)
    risks = [swap_disclosure_risk(cells, rng.random(2_000) < r, 1e7).value for r in (0.0, 0.2, 0.5, 0.9)]
    assert risks[0] == 1.0 and risks[0] > risks[1] > risks[2] > risks[3] >= 0.0
    assert swap_disclosure_risk(list("AABB"), [True] * 4, 1e6).value == 1.0  # no sample uniques
    assert swap_disclosure_risk(["A"], [True], 1e6).value == 0.0  # one record, swapped
    every_alone = fit_pitman(frequencies_of_frequencies(list("ABCDE")))
    assert math.isinf(every_alone.theta) and unique_share(every_alone, 1e6) == 1.0
    with pytest.raises(ValueError, match="population size N"):
        unique_share(fit_pitman(frequencies_of_frequencies(list("AABCD"))), 3)
    with pytest.raises(ValueError, match="swap flags"):
        swap_disclosure_risk(list("AB"), [True], 1e6)
    with pytest.raises(ValueError, match="at least 2 records"):
        fit_pitman(frequencies_of_frequencies(list("AAAA")))


def test_the_population_size_reads_as_a_power_of_ten_or_in_full():
    assert [population_text(n) for n in (1e20, 1e6, 12_345.0, 2.5e7)] == ["10²⁰", "10⁶", "12,345", "25,000,000"]
