"""PKB and spherical Cauchy densities, samplers and EM mixtures (Greve & Sablica, Eqs. 2.1–2.3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from engine.protect.swap.mixtures import (
    SphericalMixture,
    fit_mixture,
    log_density,
    project_weights,
    sample,
)

KINDS = ("pkb", "cauchy")
MU3 = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])  # generic, not a pole of the grid


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _sphere_rule(n_theta: int = 400, n_phi: int = 800) -> tuple[np.ndarray, np.ndarray]:
    """Product rule on S²: Gauss–Legendre in cos θ, uniform in φ; weights sum to 1 (uniform probability)."""
    z, wz = np.polynomial.legendre.leggauss(n_theta)
    phi = 2 * np.pi * (np.arange(n_phi) + 0.5) / n_phi
    s = np.sqrt(1 - z**2)
    pts = np.stack([np.outer(s, np.cos(phi)), np.outer(s, np.sin(phi)), np.outer(z, np.ones(n_phi))], axis=-1)
    w = np.outer(wz / 2, np.full(n_phi, 1 / n_phi))
    return pts.reshape(-1, 3), w.ravel()


RULE = _sphere_rule()


def _uniform(n: int, d: int, seed: int) -> np.ndarray:
    return _unit(np.random.default_rng(seed).standard_normal((n, d)))


def _t_cdf(kind: str, rho: float, d: int):
    """CDF of t = x'μ: the density times the uniform t-marginal ∝ (1 − t²)^((d−3)/2), integrated on a fine grid."""
    t = np.unique(np.concatenate([np.linspace(-1, 1, 200_001), 1 - np.geomspace(1e-9, 2, 20_001)]))
    x = np.zeros((t.size, d))
    x[:, 0], x[:, 1] = t, np.sqrt(np.clip(1 - t * t, 0, None))
    dens = np.exp(log_density(x, np.eye(d)[0], rho, kind)) * np.clip(1 - t * t, 0, None) ** ((d - 3) / 2)
    cdf = integrate.cumulative_trapezoid(dens, t, initial=0.0)
    return lambda v: np.interp(v, t, cdf / cdf[-1])


# ------------------------------------------------------------------------------------------------ densities


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7, 0.9])
def test_density_integrates_to_one_on_s2(kind: str, rho: float) -> None:
    pts, w = RULE
    integral = float(w @ np.exp(log_density(pts, MU3, rho, kind)))
    assert abs(integral - 1) < (1e-10 if rho <= 0.3 else 1e-6), integral


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7])
def test_density_averages_to_one_over_uniform_points_in_d5(kind: str, rho: float) -> None:
    n = 400_000
    x = _uniform(n, 5, seed=11)
    f = np.exp(log_density(x, _unit(np.arange(1.0, 6.0)), rho, kind))
    se = f.std() / np.sqrt(n)  # Monte Carlo standard error of the mean
    assert abs(f.mean() - 1) <= 5 * se + 1e-12, (f.mean(), se)


def test_pkb_and_cauchy_coincide_on_the_circle_and_rho_zero_is_uniform() -> None:
    x = _uniform(50, 2, seed=1)
    mu = _unit(np.array([1.0, 2.0]))
    np.testing.assert_allclose(log_density(x, mu, 0.6, "pkb"), log_density(x, mu, 0.6, "cauchy"), rtol=1e-12)
    np.testing.assert_array_equal(log_density(_uniform(20, 7, 2), np.eye(7)[0], 0.0, "pkb"), 0.0)


def test_log_density_is_stable_at_the_mode_for_rho_near_one() -> None:
    d, rho = 300, 1 - 1e-8
    mu = np.eye(d)[0]
    val = log_density(mu[None, :], mu, rho, "cauchy")[0]
    expected = (d - 1) * np.log((1 + rho) / (1 - rho))
    assert np.isfinite(val) and abs(val - expected) < 1e-6 * expected


# ------------------------------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_sample_mean_cosine_matches_quadrature_in_d3(kind: str, rho: float) -> None:
    pts, w = RULE
    exact = float(w @ ((pts @ MU3) * np.exp(log_density(pts, MU3, rho, kind))))
    x = sample(200_000, MU3, rho, kind, np.random.default_rng(3))
    assert x.shape == (200_000, 3)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-12)
    t = x @ MU3
    assert abs(t.mean() - exact) < 5 * t.std() / np.sqrt(t.size), (t.mean(), exact)
    # the draws are symmetric about μ: their mean direction is μ
    assert np.arccos(_unit(x.mean(axis=0)) @ MU3) < 0.01


@pytest.mark.parametrize("kind", KINDS)
def test_rho_zero_samples_are_uniform(kind: str) -> None:
    n, d = 200_000, 4
    x = sample(n, np.eye(d)[1], 0.0, kind, np.random.default_rng(4))
    assert np.abs(x.mean(axis=0)).max() < 5 / np.sqrt(d * n)  # each coordinate has variance 1/d
    np.testing.assert_allclose(x.T @ x / n, np.eye(d) / d, atol=0.003)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("d", "rho"), [(10, 0.8), (40, 0.95)])
def test_sampled_cosines_follow_the_density_ks(kind: str, d: int, rho: float) -> None:
    mu = np.eye(d)[0]
    x = sample(4000, mu, rho, kind, np.random.default_rng(5))
    result = stats.kstest(x @ mu, _t_cdf(kind, rho, d))
    assert result.pvalue > 1e-3, result


# ---------------------------------------------------------------------------------------------------- EM fits


def _simulate(kind: str, seed: int, n: int = 3000, d: int = 10) -> tuple[np.ndarray, np.ndarray, list, list]:
    rng = np.random.default_rng(seed)
    mus = _unit(np.eye(d)[:3] + 0.1 * rng.standard_normal((3, d)))
    rhos, weights = [0.6, 0.75, 0.85], [0.5, 0.3, 0.2]
    counts = rng.multinomial(n, weights)
    x = np.vstack([sample(c, mus[j], rhos[j], kind, rng) for j, c in enumerate(counts)])
    return x, mus, rhos, weights


@pytest.mark.parametrize("kind", KINDS)
def test_em_recovers_simulated_parameters(kind: str) -> None:
    x, mus, rhos, weights = _simulate(kind, seed=7)
    fit = fit_mixture(x, 3, kind=kind, starts=3, rng=np.random.default_rng(0))
    order = [int(np.argmax(fit.locations @ m)) for m in mus]
    assert sorted(order) == [0, 1, 2]
    angles = np.arccos(np.clip(np.sum(fit.locations[order] * mus, axis=1), -1, 1))
    assert np.abs(fit.weights[order] - weights).max() < 0.03, fit.weights[order]
    assert angles.max() < 0.05, angles
    assert np.abs(fit.concentrations[order] - rhos).max() < 0.03, fit.concentrations[order]
    assert fit.converged and fit.n_iter == len(fit.history)
    assert fit.log_likelihood == pytest.approx(fit.log_likelihood_of(x), rel=1e-12)
    r = fit.responsibilities(x)
    np.testing.assert_allclose(r.sum(axis=1), 1, atol=1e-12)
    assert np.array_equal(fit.predict(x), np.argmax(r, axis=1))


def _clustered(seed: int, n: int = 1500, d: int = 5, clusters: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = _unit(rng.standard_normal((clusters, d)))
    lab = rng.integers(clusters, size=n)
    return _unit(centres[lab] + 0.35 * rng.standard_normal((n, d)))


def _assert_non_decreasing(history: list[float]) -> None:
    h = np.asarray(history)
    assert len(h) > 5
    drops = h[:-1] - h[1:]
    assert np.all(drops <= 1e-9 * np.abs(h[:-1])), drops.max()


@pytest.mark.parametrize("kind", KINDS)
def test_log_likelihood_never_decreases(kind: str) -> None:
    x, *_ = _simulate(kind, seed=8, n=1500)
    _assert_non_decreasing(fit_mixture(x, 3, kind=kind, starts=1, tol=0.0, max_iter=60).history)
    fit = fit_mixture(_clustered(9), 7, kind=kind, starts=1, tol=0.0, max_iter=150)
    _assert_non_decreasing(fit.history)
    assert fit.n_iter == 150 and not fit.converged


@pytest.mark.parametrize("kind", KINDS)
def test_minimum_weight_is_respected_when_k_is_too_large(kind: str) -> None:
    x = _clustered(10, clusters=2)
    fit = fit_mixture(x, 8, kind=kind, starts=2, min_weight=0.05, max_iter=100)
    assert fit.weights.sum() == pytest.approx(1, abs=1e-12)
    assert fit.weights.min() >= 0.05 - 1e-12
    default = fit_mixture(x, 8, kind=kind, starts=1, max_iter=100)
    assert default.weights.min() >= 1 / 80 - 1e-12


def test_project_weights_is_the_constrained_maximiser() -> None:
    np.testing.assert_allclose(project_weights(np.array([100.0, 1.0, 1.0, 0.0]), 0.1), [0.7, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(project_weights(np.array([3.0, 1.0]), 0.0), [0.75, 0.25])
    mass = np.array([50.0, 30.0, 12.0, 5.0, 2.0, 1.0])
    pi = project_weights(mass, 0.06)
    rng = np.random.default_rng(0)
    for _ in range(2000):  # no feasible point does better
        q = rng.dirichlet(np.ones(6)) * (1 - 6 * 0.06) + 0.06
        assert mass @ np.log(q) <= mass @ np.log(pi) + 1e-12


def test_same_seed_gives_identical_fits() -> None:
    x = _clustered(12)
    a = fit_mixture(x, 4, kind="cauchy", starts=2, rng=np.random.default_rng(42))
    b = fit_mixture(x, 4, kind="cauchy", starts=2, rng=np.random.default_rng(42))
    assert isinstance(a, SphericalMixture)
    for name in ("weights", "locations", "concentrations"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.history == b.history and a.log_likelihood == b.log_likelihood
    s1 = sample(100, np.eye(6)[2], 0.7, "pkb", np.random.default_rng(1))
    np.testing.assert_array_equal(s1, sample(100, np.eye(6)[2], 0.7, "pkb", np.random.default_rng(1)))


def test_bad_input_names_the_problem() -> None:
    x = _clustered(13, n=50)
    with pytest.raises(ValueError, match="unit norm"):
        fit_mixture(x * 1.01, 2)
    with pytest.raises(ValueError, match="k must be at least 1"):
        fit_mixture(x, 0)
    with pytest.raises(ValueError, match="exceeds the number of points"):
        fit_mixture(x, 51)
    with pytest.raises(ValueError, match="unknown kind"):
        fit_mixture(x, 2, kind="vmf")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="min_weight"):
        fit_mixture(x, 4, min_weight=0.3)
    with pytest.raises(ValueError, match="rho"):
        log_density(x, x[0], 1.0, "pkb")
    with pytest.raises(ValueError, match="rho"):
        sample(10, x[0], -0.1, "cauchy")
    with pytest.raises(ValueError, match="unknown kind"):
        log_density(x, x[0], 0.5, "gauss")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mu"):
        log_density(x, np.ones(5), 0.5, "pkb")
    with pytest.raises(ValueError, match="2-D"):
        fit_mixture(x[0], 1)


def test_the_fit_reports_every_iteration_of_every_start_and_the_same_fit_with_or_without() -> None:
    x = _clustered(3, n=300)
    heard: list[tuple[int, int, str]] = []
    fit = fit_mixture(
        x, 3, starts=2, max_iter=40, rng=np.random.default_rng(1), progress=lambda d, t, w: heard.append((d, t, w))
    )
    quiet = fit_mixture(x, 3, starts=2, max_iter=40, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(fit.locations, quiet.locations)
    done = [d for d, _, _ in heard]
    assert done == sorted(done) and done[0] == 1 and done[-1] <= 80
    assert {t for _, t, _ in heard} == {80} and any(d > 40 for d in done)  # the second start continues the bar
    assert heard[0][2] == "fitting a mixture of 3 clusters to the chunks"
