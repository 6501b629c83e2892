"""The Bayesian count and amount synthesizer (Guo & Hu): samplers, diagnostics, the λ limit, errors."""

import numpy as np
import pandas as pd
import pytest
from joblib import Parallel, delayed
from scipy import special, stats

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError, DataError
from engine.protect import get_protector
from engine.protect.bayes_counts.count_bayes import PosteriorDraw, sample_posteriors
from engine.protect.bayes_counts.mcmc import diagnostics, effective_sample_size, split_rhat
from engine.protect.bayes_counts.models import (
    draw_truncated_poisson,
    log_truncation,
    sample_log_linear,
    sample_zero_inflated_poisson,
)
from engine.sweep import make_release

# ---------------------------------------------------------------------------------------------------------------
# Diagnostics


def test_split_rhat_is_one_for_agreeing_chains_and_large_for_disagreeing_ones():
    rng = np.random.default_rng(0)
    same = rng.normal(size=(4, 1000))
    assert split_rhat(same) == pytest.approx(1.0, abs=0.01)
    apart = same + np.array([0.0, 0.0, 3.0, 3.0])[:, None]
    assert split_rhat(apart) > 1.5
    drifting = same + np.linspace(0, 5, 1000)[None, :]  # each chain drifts: the split halves disagree
    assert split_rhat(drifting) > 1.2


def test_effective_sample_size_of_independent_and_autocorrelated_draws():
    rng = np.random.default_rng(1)
    iid = rng.normal(size=(2, 2000))
    assert effective_sample_size(iid) == pytest.approx(4000, rel=0.15)
    # AR(1) with ρ = 0.9: ESS ≈ N (1 − ρ) / (1 + ρ) = 4000 / 19 ≈ 210.
    x = np.zeros((2, 2000))
    e = rng.normal(size=(2, 2000))
    for t in range(1, 2000):
        x[:, t] = 0.9 * x[:, t - 1] + e[:, t]
    assert effective_sample_size(x) == pytest.approx(4000 / 19, rel=0.35)
    d = diagnostics({"a": iid, "b": x})
    assert list(d["parameter"]) == ["a", "b"] and not d["poor"].any()


# ---------------------------------------------------------------------------------------------------------------
# The truncated Poisson


@pytest.mark.parametrize("mu", [3.0, 120.0, 360.0, 500.0])
def test_log_truncation_matches_scipy_where_scipy_is_finite(mu):
    assert log_truncation(np.array([mu]), 0, 365)[0] == pytest.approx(stats.poisson.logcdf(365, mu), abs=1e-9)
    expected = np.log(stats.poisson.cdf(365, mu) - stats.poisson.cdf(4, mu))
    assert log_truncation(np.array([mu]), 5, 365)[0] == pytest.approx(expected, abs=1e-9)


def test_log_truncation_stays_finite_far_beyond_the_bounds():
    far = log_truncation(np.array([3000.0, 1e5]), 0, 365)
    assert np.isfinite(far).all()
    # log P(Y ≤ 365) ≈ log P(Y = 365) + log(1 / (1 − 365/μ)) far above the bound.
    mu = 1e5
    approx = 365 * np.log(mu) - mu - special.gammaln(366) - np.log1p(-365 / mu)
    assert far[1] == pytest.approx(approx, rel=1e-6)
    assert np.isfinite(log_truncation(np.array([1e-30]), 5, 365)).all()


@pytest.mark.parametrize("mu", [40.0, 360.0, 3000.0])
def test_truncated_poisson_draws_follow_the_truncated_distribution(mu):
    rng = np.random.default_rng(2)
    y = draw_truncated_poisson(np.full(200_000, mu), 0, 365, rng)
    assert y.min() >= 0 and y.max() <= 365
    support = np.arange(0, 366)
    pmf = np.exp(stats.poisson.logpmf(support, mu) - log_truncation(np.array([mu]), 0, 365)[0])
    observed = np.bincount(y, minlength=366) / len(y)
    assert np.abs(observed - pmf).sum() < 0.02  # total variation distance


# ---------------------------------------------------------------------------------------------------------------
# The samplers recover known parameters


def simulated_counts(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n)])
    alpha, beta, tau = np.array([5.0, 0.6, -0.5]), np.array([-0.6, 0.9, 0.0]), 2.0
    u = X @ alpha + rng.normal(0, 1 / np.sqrt(tau), n)  # many rates near and above the bound 365
    structural = rng.random(n) < special.expit(X @ beta)
    y = np.where(structural, 0, draw_truncated_poisson(np.exp(u), 0, 365, rng))
    return X, y, alpha, beta, tau


def test_zero_inflated_truncated_poisson_sampler_recovers_the_parameters():
    X, y, alpha, beta, tau = simulated_counts()
    assert (y > 330).mean() > 0.05  # the truncation matters in this test
    ch = sample_zero_inflated_poisson(X, y, 0, 365, 1.0, 2, 200, 300, np.random.default_rng(0))
    a, b, t = ch.values["alpha"].reshape(-1, 3), ch.values["beta"].reshape(-1, 3), ch.values["tau"].ravel()
    for est, true in ((a, alpha), (b, beta)):
        assert np.all(np.abs(est.mean(axis=0) - true) < 4 * est.std(axis=0) + 0.02)
    assert abs(t.mean() - tau) < 4 * t.std() + 0.05
    d = diagnostics(
        {"alpha0": ch.values["alpha"][:, :, 0], "beta0": ch.values["beta"][:, :, 0], "tau": ch.values["tau"]}
    )
    assert d["rhat"].max() < 1.1


def test_log_linear_sampler_recovers_coefficients_and_sigma():
    rng = np.random.default_rng(3)
    n = 2000
    W = np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n)])
    gamma, sigma = np.array([4.0, 0.3, -0.8]), 0.5
    log_y = W @ gamma + rng.normal(0, sigma, n)
    ch = sample_log_linear(W, log_y, 1.0, 2, 100, 400, np.random.default_rng(0))
    g = ch.values["gamma"].reshape(-1, 3)
    assert np.all(np.abs(g.mean(axis=0) - gamma) < 4 * g.std(axis=0))
    assert ch.values["sigma"].mean() == pytest.approx(sigma, abs=0.03)


# ---------------------------------------------------------------------------------------------------------------
# The synthesizer on a listing-like dataset


def listings(n=1500, seed=0) -> Dataset:
    """Listings whose availability and price depend strongly on the room type and the borough."""
    rng = np.random.default_rng(seed)
    room = rng.choice(["home", "room"], n, p=[0.6, 0.4])
    borough = rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])
    reviews = rng.poisson(np.where(room == "home", 20, 5))
    rate = np.exp(np.where(room == "home", 5.0, 3.0) + 0.3 * (borough == "north") + rng.normal(0, 0.5, n))
    days = np.where(
        rng.random(n) < np.where(borough == "south", 0.6, 0.2), 0, draw_truncated_poisson(rate, 0, 365, rng)
    )
    price = np.round(np.exp(np.where(room == "home", 5.2, 4.2) + 0.001 * days + rng.normal(0, 0.4, n)))
    frame = pd.DataFrame(
        {
            "title": [f"listing {i}" for i in range(n)],
            "room": room,
            "borough": borough,
            "reviews": reviews,
            "days": days,
            "price": price.astype(int),
        }
    )
    schema = Schema(
        text="title",
        fields=(
            FieldSpec("room", "categorical", "key"),
            FieldSpec("borough", "categorical", "key"),
            FieldSpec("reviews", "count", "key"),
            FieldSpec("days", "count", "sensitive"),
            FieldSpec("price", "continuous", "sensitive"),
        ),
    )
    return Dataset("listings", frame, schema)


@pytest.fixture(scope="module")
def listing_fit():
    d = listings()
    return d, get_protector("count-bayes", lambdas=[1.0, 1e8], warmup=150, draws=250, upper=365).fit(d)


def test_defaults_follow_the_schema(listing_fit):
    d, fitted = listing_fit
    assert fitted.synthesized_fields == ["days", "price"]
    assert [c.field for c in fitted.count_columns] == ["room", "borough", "borough", "reviews"]
    assert fitted.continuous_columns[-1].field == "days"  # price is modelled on the count (Eq. 7)
    assert fitted.path_grid() == [1e8, 1.0] and fitted.knob.default == 1.0


def test_release_replaces_only_the_synthesized_fields_within_bounds(listing_fit):
    d, fitted = listing_fit
    r = make_release(fitted, 1.0, seed=0, replicates=3, replicate=1)
    assert r.protected_columns == ("days", "price")
    unchanged = ["title", "room", "borough", "reviews"]
    pd.testing.assert_frame_equal(r.data[unchanged], d.frame[unchanged])
    assert r.data["days"].between(0, 365).all() and (r.data["price"] >= 1).all()
    assert r.data["price"].dtype == d.frame["price"].dtype and r.data["days"].dtype == d.frame["days"].dtype
    assert (r.data["days"] != d.frame["days"]).mean() > 0.5


def test_same_seed_same_release_and_each_replicate_its_own_posterior_draw(listing_fit):
    _, fitted = listing_fit
    a = make_release(fitted, 1.0, seed=7, replicates=4, replicate=2)
    b = make_release(fitted, 1.0, seed=7, replicates=4, replicate=2)
    pd.testing.assert_frame_equal(a.data, b.data)
    draws = {
        (lambda d: (d.chain, d.draw))(
            make_release(fitted, 1.0, seed=7, replicates=4, replicate=r).detail(PosteriorDraw)
        )
        for r in range(4)
    }
    assert len(draws) == 4


def _group_means(frame: pd.DataFrame, field: str) -> pd.Series:
    return frame.groupby("room")[field].mean()


def test_paper_priors_keep_the_relations_and_large_lambda_samples_the_fitted_marginal(listing_fit):
    """λ = 1 (the paper's priors) keeps how days and price depend on the room type; at λ = 1e8 every slope is
    0 and every record is drawn from one fitted distribution, whatever its predictors."""
    d, fitted = listing_fit
    conf_days, conf_price = _group_means(d.frame, "days"), _group_means(d.frame, "price")
    pooled = {lam: pd.concat([make_release(fitted, lam, seed=s).data for s in range(8)]) for lam in (1.0, 1e8)}
    near = pooled[1.0]
    assert _group_means(near, "days")["home"] - _group_means(near, "days")["room"] == pytest.approx(
        conf_days["home"] - conf_days["room"], rel=0.25
    )
    assert _group_means(near, "price")["home"] / _group_means(near, "price")["room"] == pytest.approx(
        conf_price["home"] / conf_price["room"], rel=0.25
    )
    coef = fitted.coefficients(1e8)
    slopes = coef[~coef["parameter"].str.contains("intercept|log τ|log σ")]
    assert slopes["mean"].abs().max() < 1e-3
    far = pooled[1e8]
    for field in ("days", "price"):
        means = far.groupby("room")[field].mean()
        assert abs(means["home"] - means["room"]) < 0.1 * far[field].mean()
        zeros = far.groupby("borough")["days"].apply(lambda v: (v == 0).mean())
        assert zeros.max() - zeros.min() < 0.05
    # ... and that one distribution is the fitted marginal: its mean and share of zeros match the data's.
    assert far["days"].mean() == pytest.approx(d.frame["days"].mean(), rel=0.15)
    assert (far["days"] == 0).mean() == pytest.approx((d.frame["days"] == 0).mean(), abs=0.05)
    complexity = fitted.complexity()
    for _, g in complexity.groupby("field"):
        assert g.sort_values("knob")["size"].iloc[-1] < 0.01 * g.sort_values("knob")["size"].iloc[0]


def test_a_lambda_between_grid_points_is_sampled_when_asked_and_reproducibly(listing_fit):
    d, _ = listing_fit
    p = get_protector("count-bayes", lambdas=[1.0], warmup=20, draws=40, upper=365)
    f1, f2 = p.fit(d), p.fit(d)
    r1, r2 = make_release(f1, 50.0, seed=0), make_release(f2, 50.0, seed=0)
    pd.testing.assert_frame_equal(r1.data, r2.data)
    assert 50.0 in f1.path_grid()


def test_posteriors_sampled_in_worker_processes_equal_those_sampled_here_and_progress_keeps_moving(listing_fit):
    """The grid's λ values are sampled in two processes when fitting; each λ has its own stream, so the draws
    are the same as one after another in this process, and the progress bar hears from the workers as they go."""
    d, _ = listing_fit
    fitted = get_protector("count-bayes", lambdas=[1.0, 100.0, 1e4], warmup=20, draws=40, upper=365).fit(d)
    reports: list[tuple[int, int, str]] = []
    here = sample_posteriors(fitted, [1.0, 100.0, 1e4], processes=1)
    there = sample_posteriors(fitted, [1.0, 100.0, 1e4], lambda *r: reports.append(r), processes=2)
    for lam in here:
        for model in ("count", "continuous"):
            a, b = getattr(here[lam], model).values, getattr(there[lam], model).values
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(a[key], b[key])
    total = 3 * 2 * 2 * (20 + 40)  # λ values × models × chains × iterations
    assert [r[1] for r in reports] == [total] * len(reports)
    assert reports[-1][0] == total and "in 2 processes" in reports[-1][2]
    assert [r[0] for r in reports] == sorted(r[0] for r in reports)
    # joblib's workers, reused by the sweep that follows a fit, still run its tasks.
    assert Parallel(n_jobs=2)(delayed(abs)(-k) for k in range(3)) == [0, 1, 2]


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"count_field": "price"}, ConfigError, "'price' is not a count field"),
        ({"continuous_field": "days"}, ConfigError, "'days' is not a continuous field"),
        ({"predictors": ["nope"]}, ConfigError, "no structured field named 'nope'"),
        ({"predictors": ["days"]}, ConfigError, "'days' is synthesized"),
        ({"upper": 300}, DataError, "outside its bounds [0, 300]"),
    ],
)
def test_bad_settings_are_named(params, error, message):
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        get_protector("count-bayes", **params).check(listings(200))


def test_bad_data_is_named():
    d = listings(200)
    d.frame.loc[3, "price"] = 0
    with pytest.raises(
        DataError, match="'price' \\(the amount\\) has 1 value.*choose another amount, or synthesize with cart"
    ):
        get_protector("count-bayes").check(d)
    d = listings(200)
    d.frame["days"] = 4
    with pytest.raises(DataError, match="takes a single value"):
        get_protector("count-bayes").check(d)
    with pytest.raises(ConfigError, match="0 ≤ lower < upper"):
        get_protector("count-bayes", lower=5, upper=5)
    none = Dataset(
        "none",
        pd.DataFrame({"t": ["a", "b"], "c": ["x", "y"]}),
        Schema(text="t", fields=(FieldSpec("c", "categorical", "sensitive"),)),
    )
    with pytest.raises(ConfigError, match="no sensitive count or continuous field"):
        get_protector("count-bayes").check(none)


def test_a_bound_taken_from_the_data_that_synthetic_counts_repeat_is_warned_of_by_count_only():
    """Without an upper bound the count's largest confidential value is the bound, and a rate past it puts
    synthetic counts on it: the release warns with how many (never the value); a public bound given is not."""
    d = listings(n=300, seed=1)
    largest = int(d.frame["days"].max())
    fitted = get_protector("count-bayes", lambdas=[1.0], warmup=20, draws=40).fit(d)
    assert fitted.upper == largest and fitted.upper_from_data
    release = make_release(fitted, 1.0, seed=0)
    at = int((release.data["days"] == largest).sum())
    held = int((d.frame["days"] == largest).sum())
    assert at > 0
    assert release.warnings == (
        f"{at:,} synthetic values of days equal its largest confidential value ({held:,} record(s) hold it in the "
        "data), which is the upper bound because none was given: give a public upper bound (upper, e.g. 365 for "
        "days of a year) so that the release does not repeat it",
    )
    public = get_protector("count-bayes", lambdas=[1.0], warmup=20, draws=40, upper=400).fit(d)
    assert not public.upper_from_data and make_release(public, 1.0, seed=0).warnings == ()
