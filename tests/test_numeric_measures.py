"""Guo & Hu's measures of synthesized counts and amounts on hand-computed examples and against brute force."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.datasets import load_dataset
from engine.risk.matching import (
    attribute_risk,
    attribute_risks,
    candidate_pairs,
    identification_risk,
    intruder_uncertainty,
    noisy_counts,
)
from engine.schema import FieldSpec
from engine.utility.distribution import cluster_uc, ecdf_measures, main_effects, propensity_up
from engine.utility.inference import ci_overlap, inferential_estimates, interval_overlap, regression_estimates

# ---------------------------------------------------------------------------------------------------------------
# Attribute risk


def four_records():
    conf = pd.DataFrame({"room": ["a", "a", "a", "b"], "days": [10, 12, 100, 10], "price": [100.0, 104.0, 100.0, 50.0]})
    return conf


def test_attribute_risk_by_hand():
    conf = four_records()
    rel = conf.assign(days=[11, 30, 98, 10], price=[103.0, 100.0, 120.0, 60.0])
    r = attribute_risk(conf, rel, ["room"], ["days"], ["price"], 5, 0.05)
    # Record 0 (a, 10, 100): released a-records (11,103) yes, (30,100) no: days, (98,120) no → 1/3.
    # Record 1 (a, 12, 104): (11,103) yes; (30,100) no; (98,120) no → 1/3.
    # Record 2 (a, 100, 100): (98,120) price 20% off → 0. Record 3 (b, 10, 50): (10,60) 20% off → 0.
    assert r.id == "attribute_risk_r5_p5"
    assert r.detail["p"].tolist() == pytest.approx([1 / 3, 1 / 3, 0, 0])
    assert r.value == pytest.approx(2 / 3)
    assert r.detail["matches"].tolist() == [3, 3, 3, 1]
    wide = attribute_risks(conf, rel, ["room"], ["days"], ["price"])
    assert list(wide) == ["attribute_risk_r5_p5", "attribute_risk_r5_p10", "attribute_risk_r10_p5", "attribute_risk_r10_p10"]
    # At 10%, record 2 still misses (20%), record 0 gains nothing more; at ±10 days nothing changes here.
    assert wide["attribute_risk_r10_p10"].value == pytest.approx(2 / 3)
    # On the confidential data itself each record at least matches itself.
    assert attribute_risk(conf, conf, ["room"], ["days"], ["price"], 5, 0.05).value == pytest.approx(
        2 / 3 + 2 / 3 + 1 / 3 + 1)


def test_identification_risk_by_hand():
    conf = four_records()
    # Released: record 0 keeps its values, record 1 moves onto record 0's values, record 2 and 3 move far.
    rel = conf.assign(days=[10, 10, 300, 200], price=[100.0, 100.0, 100.0, 50.0])
    r = identification_risk(conf, rel, ["room"], ["days"], ["price"])
    # Record 0 matches released 0 and 1 (c = 2, true) → 1/2. Record 1 (12, 104): released 0 and 1 at (10, 100):
    # |log 100 − log 104| = 0.039 ≤ 0.05·log 104 = 0.232 → c = 2, true → 1/2. Records 2, 3: no match.
    assert r["emr"].value == pytest.approx(1.0)
    assert r["tmr"].value == 0 and r["unique_matches"].value == 0 and r["fmr"].value == 0
    rel2 = conf.assign(days=[10, 50, 100, 10], price=[100.0, 104.0, 100.0, 50.0])
    # Record 1 moved away: record 0 and 1 both now match only released 0 → record 0 unique and true, record 1
    # unique and false; records 2 and 3 unique and true.
    r2 = identification_risk(conf, rel2, ["room"], ["days"], ["price"])
    assert r2["unique_matches"].value == 4
    assert r2["tmr"].value == pytest.approx(3 / 4) and r2["fmr"].value == pytest.approx(1 / 4)
    assert r2["emr"].value == pytest.approx(3.0)


def brute_force(conf, rel, keys, counts, amounts, r_count, r_rel, log):
    n = len(conf)
    out = np.zeros((n, len(rel)), dtype=bool)
    for i in range(n):
        for j in range(len(rel)):
            ok = all(conf[k].iloc[i] == rel[k].iloc[j] for k in keys)
            ok &= all(abs(rel[f].iloc[j] - conf[f].iloc[i]) <= r_count for f in counts)
            for f in amounts:
                yi, yj = conf[f].iloc[i], rel[f].iloc[j]
                ok &= (abs(np.log(yj) - np.log(yi)) <= r_rel * abs(np.log(yi))) if log else (abs(yj - yi) <= r_rel * abs(yi))
            out[i, j] = ok
    return out


def random_listings(n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"room": rng.choice(["a", "b"], n), "reviews": rng.integers(0, 4, n),
                         "days": rng.integers(0, 30, n), "price": rng.integers(20, 60, n).astype(float)})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matching_agrees_with_brute_force(seed):
    conf, rel = random_listings(60, seed), random_listings(60, seed + 10)
    keys = ["room", "reviews"]
    m = brute_force(conf, rel, keys, ["days"], ["price"], 5, 0.1, log=False)
    same = np.array([[all(conf[k].iloc[i] == rel[k].iloc[j] for k in keys) for j in range(60)] for i in range(60)])
    expected = np.where(same.sum(1) > 0, m.sum(1) / np.maximum(same.sum(1), 1), 0).sum()
    assert attribute_risk(conf, rel, keys, ["days"], ["price"], 5, 0.1).value == pytest.approx(expected)
    m = brute_force(conf, rel, keys, ["days"], ["price"], 5, 0.05, log=True)
    c, true = m.sum(1), np.diag(m)
    r = identification_risk(conf, rel, keys, ["days"], ["price"])
    assert r["emr"].value == pytest.approx(np.sum(np.where(c > 0, true / np.maximum(c, 1), 0)))
    assert r["unique_matches"].value == np.sum(c == 1)
    assert r["tmr"].value == pytest.approx(np.sum((c == 1) & true) / 60)


def test_candidate_pairs_respect_groups_and_windows():
    i, j = candidate_pairs(np.array([0, 1]), np.array([1.0, 0.0]), np.array([2.0, 10.0]),
                           np.array([0, 0, 1, 1, 0]), np.array([1.0, 3.0, 5.0, 11.0, 2.0]))
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 0), (0, 4), (1, 2)]


# ---------------------------------------------------------------------------------------------------------------
# Intruder uncertainty (Eq. 11)


def test_noisy_counts_follow_eq_11_as_written():
    noise = np.array([1.0, -1.0, 2.0])
    x = np.array([0.0, 10.0, 2.0])
    out = noisy_counts(x, 0.1, noise)
    # sd on the log scale is S·x: 10 reviews, S = 0.1 → sd 1 → exp(log 10 − 1) = 3.68 → 4; 0 stays 0.
    assert out.tolist() == [0.0, 4.0, np.round(np.exp(np.log(2) + 0.4))]
    assert noisy_counts(x, 0.0, noise).tolist() == x.tolist()


@pytest.fixture(scope="module")
def airbnb():
    return load_dataset("nyc-airbnb").frame


def test_on_the_confidential_data_fmr_is_zero_and_tmr_the_unique_share(airbnb):
    keys = ["neighbourhood_group", "room_type", "number_of_reviews"]
    r = identification_risk(airbnb, airbnb, keys, ["availability_365"], ["price"])
    assert r["fmr"].value == 0
    assert r["tmr"].value == pytest.approx(r["unique_matches"].value / len(airbnb))
    assert r["emr"].value > r["unique_matches"].value


def test_risk_falls_with_the_intruders_uncertainty(airbnb):
    keys = ["neighbourhood_group", "room_type", "number_of_reviews"]
    curve = intruder_uncertainty(airbnb, airbnb, keys, "number_of_reviews", seed=0,
                                 count_fields=["availability_365"], continuous_fields=["price"])
    assert list(curve["S"]) == pytest.approx(np.round(np.arange(0, 0.151, 0.01), 2))
    assert curve["emr"].is_monotonic_decreasing and curve["tmr"].is_monotonic_decreasing
    assert stats.spearmanr(curve["S"], curve["fmr"])[0] > 0.9 and curve["fmr"].iloc[0] == 0
    again = intruder_uncertainty(airbnb, airbnb, keys, "number_of_reviews", seed=0,
                                 count_fields=["availability_365"], continuous_fields=["price"])
    pd.testing.assert_frame_equal(curve, again)


# ---------------------------------------------------------------------------------------------------------------
# Global utility


def test_propensity_up_is_zero_for_identical_data_and_a_quarter_when_separable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    assert propensity_up(X, X).value == pytest.approx(0.0, abs=1e-12)
    far = propensity_up(X, X + np.array([50.0, 0, 0]))
    assert far.value == pytest.approx(0.25, abs=1e-3)
    shifted = propensity_up(X, X + 0.3).value
    assert 0.001 < shifted < 0.25


def test_cluster_uc_by_construction():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    same = cluster_uc(X, X, groups=5)
    assert same.value == pytest.approx(0.0)
    apart = cluster_uc(X, X + 100.0, groups=2)
    # Two clusters, each entirely one half: (1/2)·Σ (n_j/N)(share − ½)² = (1/2)·(½·¼ + ½·¼) = 1/8.
    assert apart.value == pytest.approx(1 / 8)
    assert apart.detail["size"].sum() == 600
    big = cluster_uc(rng.normal(size=(5000, 2)), rng.normal(size=(5000, 2)), max_records=1000,
                     rng=np.random.default_rng(0))
    assert big.detail["size"].sum() == 1000


def test_ecdf_by_hand():
    conf, syn = pd.DataFrame({"x": [1, 2, 3, 4]}), pd.DataFrame({"x": [1, 1, 3, 5]})
    out = ecdf_measures(conf, syn, ["x"])
    # At the merged points 1,2,3,4,1,1,3,5: F_c = .25,.5,.75,1,.25,.25,.75,1 and F_s = .5,.5,.75,.75,.5,.5,.75,1.
    d = np.array([-0.25, 0, 0, 0.25, -0.25, -0.25, 0, 0])
    assert out["ecdf_max"].value == pytest.approx(0.25)
    assert out["ecdf_avg"].value == pytest.approx(np.mean(d ** 2))


def test_main_effects_share_columns_with_the_reference():
    ref = pd.DataFrame({"c": ["x", "x", "y", "z"], "n": [1.0, 2.0, 3.0, 4.0]})
    other = pd.DataFrame({"c": ["z", "q"], "n": [2.5, 9.0]})
    fields = [FieldSpec("c", "categorical"), FieldSpec("n", "continuous")]
    X = main_effects(other, fields, ref)
    assert X.shape == (2, 3)
    assert X[:, :2].tolist() == [[0.0, 1.0], [0.0, 0.0]]  # levels y, z (x is the reference); q is none
    assert X[0, 2] == pytest.approx(0.0)


# ---------------------------------------------------------------------------------------------------------------
# Interval overlap


def test_interval_overlap_eq_10():
    assert interval_overlap(0, 1, 0, 1) == pytest.approx(1.0)
    # [0, 2] and [1, 3]: intersection 1 → 1/4 + 1/4.
    assert interval_overlap(0, 2, 1, 3) == pytest.approx(0.5)
    # Disjoint: [0, 1] and [2, 3] → (−1)/2 + (−1)/2 = −1.
    assert interval_overlap(0, 1, 2, 3) == pytest.approx(-1.0)
    # A zero-width interval inside the other is covered; outside it is not.
    assert interval_overlap(0, 0, 0, 0) == pytest.approx(1.0)
    assert interval_overlap(0, 0, 1, 2) == pytest.approx(0.0 + (-1) / 2)


def test_estimates_and_overlap_on_identical_and_shifted_data(airbnb):
    targets = [FieldSpec("availability_365", "count"), FieldSpec("price", "continuous")]
    preds = [FieldSpec("neighbourhood_group", "categorical"), FieldSpec("room_type", "categorical"),
             FieldSpec("number_of_reviews", "count")]
    conf = inferential_estimates(airbnb, targets, preds, "price", np.random.default_rng(0))
    assert {"mean", "quantile", "coefficient"} == set(conf["kind"])
    mean_days = conf.set_index("quantity").loc["mean of availability_365"]
    assert mean_days["estimate"] == pytest.approx(airbnb["availability_365"].mean())
    assert mean_days["variance"] == pytest.approx(airbnb["availability_365"].var() / len(airbnb))
    same = ci_overlap(conf, conf)
    assert same.value == pytest.approx(1.0)
    moved = airbnb.assign(availability_365=airbnb["availability_365"] + 40)
    shifted = ci_overlap(conf, inferential_estimates(moved, targets, preds, "price", np.random.default_rng(0)))
    per = shifted.detail.set_index("quantity")["overlap"]
    assert per["mean of availability_365"] < 0 and per["mean of price"] == pytest.approx(1.0)


def test_regression_matches_numpy_least_squares():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"g": rng.choice(["u", "v", "v"], 200), "x": rng.normal(size=200)})
    frame["y"] = np.exp(1 + 0.5 * frame["x"] + 0.3 * (frame["g"] == "u") + rng.normal(0, 0.1, 200))
    est = regression_estimates(frame, "y", [FieldSpec("g", "categorical"), FieldSpec("x", "continuous")])
    X = np.column_stack([np.ones(200), (frame["g"] == "u"), frame["x"]])
    beta = np.linalg.lstsq(X, np.log(frame["y"]), rcond=None)[0]
    assert est["estimate"].tolist() == pytest.approx(beta[1:].tolist())
    assert est["quantity"].tolist() == ["log(y) ~ g=u", "log(y) ~ x"]
