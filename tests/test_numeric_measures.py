"""Guo & Hu's measures of synthesized counts and amounts: hand-computed examples, brute force, and the demo."""

import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.data.load import load_dataset
from engine.data.schema import FieldSpec
from engine.measures.base import METRICS, metric_info
from engine.measures.risk.matching import (
    attribute_risk,
    attribute_risks,
    candidate_pairs,
    close,
    identification_risk,
    intruder_uncertainty,
    match_counts,
    noisy_counts,
)
from engine.measures.utility.combining import combine_table
from engine.measures.utility.distribution import _logistic_fit, cluster_uc, ecdf_measures, main_effects, propensity_up
from engine.measures.utility.inference import (
    QUANTILES,
    ci_overlap,
    inferential_estimates,
    interval_overlap,
    regression_estimates,
)

KEYS = ["neighbourhood_group", "room_type", "number_of_reviews"]
MATCH = {"count_fields": ["availability_365"], "continuous_fields": ["price"]}


@pytest.fixture(scope="module")
def airbnb() -> pd.DataFrame:
    return load_dataset("nyc-airbnb").frame


# ---------------------------------------------------------------------------------------------------------------
# Attribute risk (Section 4.1)


def four_records() -> pd.DataFrame:
    return pd.DataFrame({"room": ["a", "a", "a", "b"], "days": [10, 12, 100, 10], "price": [100.0, 104.0, 100.0, 50.0]})


def test_attribute_risk_by_hand():
    conf = four_records()
    rel = conf.assign(days=[11, 30, 98, 10], price=[103.0, 100.0, 120.0, 60.0])
    r = attribute_risk(conf, rel, ["room"], ["days"], ["price"], 5, 0.05)
    # Record 0 (a, 10, 100): of the released a-records (11, 103) is close, (30, 100) is 20 days off, (98, 120)
    # 88 days off → 1/3. Record 1 (a, 12, 104): (11, 103) close (1 day, 1%) → 1/3. Record 2 (a, 100, 100):
    # (98, 120) is 20% off → 0. Record 3 (b, 10, 50): its only b-record (10, 60) is 20% off → 0.
    assert r.id == "attribute_risk_r5_p5"
    assert r.detail["p"].tolist() == pytest.approx([1 / 3, 1 / 3, 0, 0])
    assert r.detail["matches"].tolist() == [3, 3, 3, 1]
    assert r.value == pytest.approx(2 / 3)
    wide = attribute_risks(conf, rel, ["room"], ["days"], ["price"])
    assert list(wide) == [
        "attribute_risk_r5_p5",
        "attribute_risk_r5_p10",
        "attribute_risk_r10_p5",
        "attribute_risk_r10_p10",
    ]
    # ±10 days, ±10%: record 2 still misses (20%); record 0 and 1 gain nothing.
    assert wide["attribute_risk_r10_p10"].value == pytest.approx(2 / 3)
    # ±25 days, ±25%: records 0 and 1 now also reach (30, 100) → 2/3 each; record 2 reaches (98, 120) → 1/3;
    # record 3 reaches (10, 60) → 1.
    loose = attribute_risk(conf, rel, ["room"], ["days"], ["price"], 25, 0.25)
    assert loose.detail["p"].tolist() == pytest.approx([2 / 3, 2 / 3, 1 / 3, 1])
    # On the confidential data itself: records 0 and 1 are close to each other (2 days, 4%), each to itself.
    base = attribute_risk(conf, conf, ["room"], ["days"], ["price"], 5, 0.05)
    assert base.detail["p"].tolist() == pytest.approx([2 / 3, 2 / 3, 1 / 3, 1])


def test_attribute_risk_with_no_same_key_record_is_zero():
    conf = four_records()
    rel = conf.assign(room=["a", "a", "a", "a"])  # nobody is "b" any more
    r = attribute_risk(conf, rel, ["room"], ["days"], ["price"], 5, 0.05)
    assert r.detail["matches"].iloc[3] == 0 and r.detail["p"].iloc[3] == 0


def test_closeness_formulas_as_written():
    assert close("absolute", 5, np.array([10.0, 10]), np.array([15.0, 15.5])).tolist() == [True, False]
    assert close("relative", 0.05, np.array([100.0, 100]), np.array([105.0, 105.5])).tolist() == [True, False]
    # log: |log y_j − log 100| ≤ 0.05 · log 100 = 0.230 → y_j within [79.4, 125.9].
    assert close("log", 0.05, np.full(3, 100.0), np.array([79.0, 125.0, 126.0])).tolist() == [False, True, False]
    # A target of 0 has no logarithm and divides by zero: only an identical value counts.
    assert close("log", 0.05, np.zeros(2), np.array([0.0, 1.0])).tolist() == [True, False]
    assert close("relative", 0.05, np.zeros(2), np.array([0.0, 1.0])).tolist() == [True, False]
    assert not close("absolute", 5, np.array([np.nan]), np.array([np.nan]))[0]


# ---------------------------------------------------------------------------------------------------------------
# Identification risk (Section 4.2)


def test_identification_risk_by_hand():
    conf = four_records()
    # Released: record 0 keeps its values, record 1 moves onto record 0's values, records 2 and 3 move far.
    rel = conf.assign(days=[10, 10, 300, 200], price=[100.0, 100.0, 100.0, 50.0])
    r = identification_risk(conf, rel, ["room"], ["days"], ["price"])
    # Record 0 matches released 0 and 1 (c = 2, itself among them) → 1/2. Record 1 (12, 104) matches released 0
    # and 1 at (10, 100): |log 100 − log 104| = 0.039 ≤ 0.05 · log 104 = 0.232 → c = 2 → 1/2.
    # Records 2 and 3: no match.
    assert r["emr"].value == pytest.approx(1.0)
    assert r["emr"].detail["matches"].tolist() == [2, 2, 0, 0]
    assert r["tmr"].value == 0 and r["unique_matches"].value == 0
    assert r["fmr"].value == 0  # no unique match: FMR defined as 0
    # Record 1 moves away: records 0 and 1 both match only released 0 → record 0 a true unique match, record 1
    # a false one; records 2 and 3 true unique matches.
    rel2 = conf.assign(days=[10, 50, 100, 10], price=[100.0, 104.0, 100.0, 50.0])
    r2 = identification_risk(conf, rel2, ["room"], ["days"], ["price"])
    assert r2["emr"].detail["true_match"].tolist() == [True, False, True, True]
    assert r2["unique_matches"].value == 4
    assert r2["tmr"].value == pytest.approx(3 / 4) and r2["fmr"].value == pytest.approx(1 / 4)
    assert r2["emr"].value == pytest.approx(3.0)


def test_identification_uses_the_intruders_known_keys():
    conf = four_records()
    known = conf[["room"]].assign(room=["b", "a", "a", "a"])  # the intruder has record 0's and 3's rooms wrong
    r = identification_risk(conf, conf, ["room"], ["days"], ["price"], known=known)
    # Record 0 is looked for among the b-records: (10, 50) is 2× the price → no match. Record 3 (10, 50) among
    # the a-records: none at price 50 → no match. Records 1 and 2 are found as before (1 with record 0 too).
    assert r["emr"].detail["matches"].tolist() == [0, 2, 1, 0]
    assert r["emr"].value == pytest.approx(1 / 2 + 1)


def brute_force(
    conf: pd.DataFrame,
    rel: pd.DataFrame,
    keys,
    counts,
    amounts,
    r_count,
    r_amount,
    log,
    known: pd.DataFrame | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The n × n match matrix by direct comparison, formulas written out independently; and same-key matrix."""
    known = conf if known is None else known
    same = np.ones((len(conf), len(rel)), dtype=bool)
    for k in keys:
        same &= known[k].to_numpy()[:, None] == rel[k].to_numpy()[None, :]
    m = same.copy()
    for f in counts:
        m &= np.abs(rel[f].to_numpy(float)[None, :] - conf[f].to_numpy(float)[:, None]) <= r_count
    for f in amounts:
        yi, yj = conf[f].to_numpy(float)[:, None], rel[f].to_numpy(float)[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            if log:
                ok = np.abs(np.log(yj) - np.log(yi)) <= r_amount * np.abs(np.log(yi))
            else:
                ok = np.abs(yj - yi) / yi <= r_amount
        m &= np.where(yi > 0, ok & (yj > 0), yj == yi)  # our rule where the formula is undefined
    return m, same


def random_listings(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "room": rng.choice(["a", "b"], n),
            "reviews": rng.integers(0, 4, n),
            "days": rng.integers(0, 30, n),
            "stays": rng.integers(0, 10, n),
            "price": rng.integers(0, 60, n).astype(float),
        }
    )  # prices of 0 included on purpose


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matching_agrees_with_brute_force(seed):
    n = 80
    conf = random_listings(n, seed)
    rel = conf.copy() if seed == 0 else random_listings(n, seed + 10)
    if seed == 3:  # partly the same records, so true matches occur beside false ones
        rel.iloc[::2] = conf.iloc[::2].to_numpy()
    keys, counts = ["room", "reviews"], ["days", "stays"]
    m, same = brute_force(conf, rel, keys, counts, ["price"], 5, 0.1, log=False)
    p = np.where(same.sum(1) > 0, m.sum(1) / np.maximum(same.sum(1), 1), 0)
    ar = attribute_risk(conf, rel, keys, counts, ["price"], 5, 0.1)
    assert ar.detail["p"].to_numpy() == pytest.approx(p) and ar.value == pytest.approx(p.sum())
    m, _ = brute_force(conf, rel, keys, counts, ["price"], 5, 0.05, log=True)
    c, true = m.sum(1), np.diag(m)
    r = identification_risk(conf, rel, keys, counts, ["price"])
    assert r["emr"].detail["matches"].tolist() == c.tolist()
    assert r["emr"].detail["true_match"].tolist() == true.tolist()
    assert r["emr"].value == pytest.approx(np.sum(np.where(c > 0, true / np.maximum(c, 1), 0)))
    u = np.sum(c == 1)
    assert r["unique_matches"].value == u
    assert r["tmr"].value == pytest.approx(np.sum((c == 1) & true) / n)
    assert r["fmr"].value == pytest.approx(np.sum((c == 1) & ~true) / u if u else 0.0)


def test_chunked_matching_and_noisy_keys_agree_with_brute_force():
    conf, rel = random_listings(120, 5), random_listings(90, 6)  # a release of another length
    known = conf[["room", "reviews"]].assign(
        reviews=noisy_counts(conf["reviews"].to_numpy(), 0.3, np.random.default_rng(0).standard_normal(120))
    )
    m, _ = brute_force(conf, rel, ["room", "reviews"], ["days"], ["price"], 5, 0.05, log=True, known=known)
    conditions = [("days", "absolute", 5.0), ("price", "log", 0.05)]
    for budget in (1, 7, 1 << 20):  # one target at a time, small chunks, everything at once
        hits, itself, _ = match_counts(conf, rel, ["room", "reviews"], conditions, known, budget=budget)
        assert hits.tolist() == m.sum(1).tolist()
        assert itself.tolist() == [bool(m[i, i]) if i < 90 else False for i in range(120)]


def test_candidate_pairs_respect_groups_and_windows():
    i, j = candidate_pairs(
        np.array([0, 1]),
        np.array([1.0, 0.0]),
        np.array([2.0, 10.0]),
        np.array([0, 0, 1, 1, 0]),
        np.array([1.0, 3.0, 5.0, 11.0, 2.0]),
    )
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 0), (0, 4), (1, 2)]


def test_on_the_confidential_data_fmr_is_zero_and_tmr_the_unique_share(airbnb):
    # With zero radii a unique match is a record whose key values, count and amount no other record shares.
    exact = identification_risk(airbnb, airbnb, KEYS, **MATCH, count_rule=("absolute", 0), amount_rule=("log", 0))
    combos = airbnb.groupby([*KEYS, "availability_365", "price"])["price"].transform("size")
    assert exact["tmr"].value == pytest.approx(float((combos == 1).mean()))
    assert exact["fmr"].value == 0
    assert exact["emr"].value == pytest.approx(float((1 / combos).sum()))
    # With the paper's radii every unique match is still the record itself.
    r = identification_risk(airbnb, airbnb, KEYS, **MATCH)
    assert r["fmr"].value == 0
    assert r["tmr"].value == pytest.approx(r["unique_matches"].value / len(airbnb))
    assert r["emr"].value > r["unique_matches"].value
    assert r["tmr"].value < exact["tmr"].value


def test_matching_is_fast_on_the_demo_and_scales(airbnb):
    start = time.perf_counter()
    identification_risk(airbnb, airbnb, KEYS, **MATCH)
    attribute_risk(airbnb, airbnb, KEYS, ["availability_365"], ["price"], 10, 0.10)
    assert time.perf_counter() - start < 2.0  # typically ~0.05 s; generous for a shared machine
    big = pd.concat([airbnb] * 5, ignore_index=True)  # 50,000 listings, heavy ties: no n × n matrix allowed
    r = identification_risk(big, big, KEYS, **MATCH)
    assert r["unique_matches"].value == 0 and r["fmr"].value == 0  # every record has four exact copies
    # Each copy finds five times the matches, itself among them: the five together count what one did alone.
    assert r["emr"].value == pytest.approx(identification_risk(airbnb, airbnb, KEYS, **MATCH)["emr"].value)


# ---------------------------------------------------------------------------------------------------------------
# Intruder uncertainty (Section 4.3, Eq. 11)


def test_noisy_counts_follow_eq_11_as_written():
    noise = np.array([1.0, -1.0, 2.0])
    x = np.array([0.0, 10.0, 2.0])
    out = noisy_counts(x, 0.1, noise)
    # The sd on the log scale is S·x: 10 reviews at S = 0.1 → sd 1 → exp(log 10 − 1) = 3.68 → 4; 0 stays 0.
    assert out.tolist() == [0.0, 4.0, np.round(np.exp(np.log(2) + 0.4))]
    assert noisy_counts(x, 0.0, noise).tolist() == x.tolist()


def test_risk_falls_with_the_intruders_uncertainty(airbnb):
    curve = intruder_uncertainty(airbnb, airbnb, KEYS, "number_of_reviews", seed=0, **MATCH)
    assert curve.columns.tolist() == ["S", "emr", "tmr", "fmr", "unique_matches"]
    assert list(curve["S"]) == pytest.approx(np.round(np.arange(0, 0.151, 0.01), 2))
    assert curve["emr"].is_monotonic_decreasing and curve["tmr"].is_monotonic_decreasing
    assert curve["fmr"].iloc[0] == 0 and curve["fmr"].iloc[-1] > 0.3
    assert stats.spearmanr(curve["S"], curve["fmr"])[0] > 0.9
    plain = identification_risk(airbnb, airbnb, KEYS, **MATCH)
    assert curve["emr"].iloc[0] == pytest.approx(plain["emr"].value)  # S = 0: the intruder of Section 4.2
    again = intruder_uncertainty(airbnb, airbnb, KEYS, "number_of_reviews", seed=0, **MATCH)
    pd.testing.assert_frame_equal(curve, again)
    other = intruder_uncertainty(airbnb, airbnb, KEYS, "number_of_reviews", levels=[0.05], seed=1, **MATCH)
    assert other["emr"].iloc[0] != curve.set_index("S").loc[0.05, "emr"]


# ---------------------------------------------------------------------------------------------------------------
# Global utility (Section 3.1)


def test_main_effects_share_columns_with_the_reference():
    ref = pd.DataFrame({"c": ["x", "x", "y", "z"], "n": [1.0, 2.0, 3.0, 4.0], "k": [7, 7, 7, 7]})
    other = pd.DataFrame({"c": ["z", "q"], "n": [2.5, 9.0], "k": [1, 2]})
    fields = [FieldSpec("c", "categorical"), FieldSpec("n", "continuous"), FieldSpec("k", "count")]
    X = main_effects(other, fields, ref)
    assert X.shape == (2, 4)
    assert X[:, :2].tolist() == [[0.0, 1.0], [0.0, 0.0]]  # levels y, z (x, most frequent, is the reference)
    assert X[:, 2] == pytest.approx([0.0, 6.5 / np.std([1.0, 2, 3, 4])])
    assert X[:, 3].tolist() == [0.0, 0.0]  # the reference's sd is 0


def test_propensity_up_is_zero_for_identical_data_and_a_quarter_when_separable():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    assert propensity_up(X, X).value == pytest.approx(0.0, abs=1e-12)
    assert propensity_up(X, X + np.array([50.0, 0, 0])).value == pytest.approx(0.25, abs=1e-4)
    shifted = propensity_up(X, X + 0.3).value
    assert 0.001 < shifted < 0.25
    # Unequal halves: c = 1/3; perfectly told apart gives c(1 − c) = 2/9.
    assert propensity_up(X, X[:250] + 50.0).value == pytest.approx(2 / 9, abs=1e-4)


def test_propensity_fit_is_the_unpenalized_maximum_likelihood():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 2))
    y = (rng.random(400) < 1 / (1 + np.exp(-(0.3 + X @ [1.0, -0.5])))).astype(float)
    p, ok = _logistic_fit(X, y, ridge=0.0)
    A = np.column_stack([np.ones(400), X])
    assert ok and np.abs(A.T @ (y - p)).max() < 1e-6  # the score equations hold
    _, ok = _logistic_fit(np.r_[X[:, 0] - 10, X[:, 0] + 10][:, None], np.r_[np.zeros(400), np.ones(400)], 0.0)
    assert not ok  # separation detected, so `propensity_up` falls back to the tiny ridge


def test_cluster_uc_by_construction():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    same = cluster_uc(X, X, groups=5)
    assert same.value == pytest.approx(0.0)
    assert same.detail.columns.tolist() == ["cluster", "size", "synthetic_share"]
    apart = cluster_uc(X, X + 100.0, groups=2)
    # Two clusters, each entirely one half: (1/2)·Σ (n_j/N)(share − ½)² = (1/2)·(½·¼ + ½·¼) = 1/8.
    assert apart.value == pytest.approx(1 / 8)
    assert apart.detail["size"].sum() == 600
    big = cluster_uc(
        rng.normal(size=(5000, 2)), rng.normal(size=(5000, 2)), max_records=1000, rng=np.random.default_rng(0)
    )
    assert big.detail["size"].sum() == 1000
    assert big.detail.eval("size * synthetic_share").sum() == pytest.approx(500)
    uneven = cluster_uc(
        rng.normal(size=(3000, 2)), rng.normal(size=(1000, 2)), max_records=800, rng=np.random.default_rng(0)
    )
    assert uneven.detail.eval("size * synthetic_share").sum() == pytest.approx(200)  # c = 1/4 kept
    a = cluster_uc(X, X + 0.5, max_records=200, rng=np.random.default_rng(7))
    b = cluster_uc(X, X + 0.5, max_records=200, rng=np.random.default_rng(7))
    assert a.value == b.value


def test_ecdf_by_hand():
    conf, syn = pd.DataFrame({"x": [1, 2, 3, 4], "y": 0}), pd.DataFrame({"x": [1, 1, 3, 5], "y": 0})
    out = ecdf_measures(conf, syn, ["x", "y"])
    # At the merged points 1,2,3,4,1,1,3,5: F_c = .25,.5,.75,1,.25,.25,.75,1 and F_s = .5,.5,.75,.75,.5,.5,.75,1.
    d = np.array([-0.25, 0, 0, 0.25, -0.25, -0.25, 0, 0])
    assert out["ecdf_max"].value == pytest.approx(0.25)
    assert out["ecdf_avg"].value == pytest.approx(np.mean(d**2))
    detail = out["ecdf_max"].detail.set_index("field")
    assert detail.loc["y", "ecdf_max"] == 0 and detail.loc["x", "ecdf_avg"] == pytest.approx(np.mean(d**2))


# ---------------------------------------------------------------------------------------------------------------
# Interval overlap (Section 3.2, Eq. 10)


def test_interval_overlap_eq_10():
    assert interval_overlap(0, 1, 0, 1) == pytest.approx(1.0)
    # [0, 2] and [1, 3]: intersection 1 → 1/4 + 1/4.
    assert interval_overlap(0, 2, 1, 3) == pytest.approx(0.5)
    # [0, 4] and [1, 2]: intersection 1 → 1/8 + 1/2.
    assert interval_overlap(0, 4, 1, 2) == pytest.approx(0.625)
    # Disjoint: [0, 1] and [2, 3] → (−1)/2 + (−1)/2 = −1; further apart, more negative.
    assert interval_overlap(0, 1, 2, 3) == pytest.approx(-1.0)
    assert interval_overlap(0, 1, 5, 6) == pytest.approx(-4.0)
    # Zero-width intervals (no bootstrap variation): identical points 1; a point inside ½; outside 0 + the other.
    assert interval_overlap(0, 0, 0, 0) == pytest.approx(1.0)
    assert interval_overlap(1, 1, 0, 2) == pytest.approx(0.5)
    assert interval_overlap(0, 0, 1, 2) == pytest.approx(0.0 + (-1) / 2)
    assert interval_overlap([0, 0], [1, 2], [0, 1], [1, 3]).tolist() == pytest.approx([1.0, 0.25 + 0.25])


TARGETS = [FieldSpec("availability_365", "count", "sensitive"), FieldSpec("price", "continuous", "sensitive")]
PREDICTORS = [
    FieldSpec("neighbourhood_group", "categorical", "key"),
    FieldSpec("room_type", "categorical", "key"),
    FieldSpec("number_of_reviews", "count", "key"),
]


def test_estimates_and_overlap_on_identical_and_shifted_data(airbnb):
    conf = inferential_estimates(airbnb, TARGETS, PREDICTORS, "price", np.random.default_rng(0))
    assert conf.columns.tolist() == ["quantity", "kind", "field", "term", "estimate", "variance"]
    assert {"mean", "quantile", "coefficient"} == set(conf["kind"])
    q = conf.set_index("quantity")
    assert q.loc["mean of availability_365", "estimate"] == pytest.approx(airbnb["availability_365"].mean())
    assert q.loc["mean of availability_365", "variance"] == pytest.approx(
        airbnb["availability_365"].var() / len(airbnb)
    )
    assert q.loc["90% quantile of price", "estimate"] == pytest.approx(airbnb["price"].quantile(0.9))
    assert "log(price) ~ room_type=Private room" in q.index and "log(price) ~ availability_365" in q.index
    assert not q.index.str.contains("intercept").any()
    same = ci_overlap(conf, conf)
    assert same.value == pytest.approx(1.0)
    assert same.detail.columns.tolist() == [
        "quantity",
        "kind",
        "field",
        "term",
        "estimate",
        "variance",
        "lo",
        "hi",
        "confidential_estimate",
        "confidential_lo",
        "confidential_hi",
        "overlap",
    ]
    moved = airbnb.assign(availability_365=airbnb["availability_365"] + 40)
    shifted = ci_overlap(conf, inferential_estimates(moved, TARGETS, PREDICTORS, "price", np.random.default_rng(0)))
    per = shifted.detail.set_index("quantity")["overlap"]
    assert per["mean of availability_365"] < 0 and per["mean of price"] == pytest.approx(1.0)


def test_overlap_detail_combines_over_replicates(airbnb):
    conf = inferential_estimates(airbnb, TARGETS, PREDICTORS, "price", np.random.default_rng(0), bootstrap=20)
    details = []
    for m in range(3):
        rng = np.random.default_rng(m)
        rel = airbnb.assign(price=airbnb["price"] * np.exp(rng.normal(0, 0.05, len(airbnb))))
        est = inferential_estimates(rel, TARGETS, PREDICTORS, "price", rng, bootstrap=20)
        details.append(ci_overlap(conf, est).detail)
    combined = combine_table(pd.concat(details, ignore_index=True), ["quantity"])
    assert len(combined) == len(conf) and (combined["replicates"] == 3).all()
    assert (combined["lo"] <= combined["estimate"]).all() and (combined["estimate"] <= combined["hi"]).all()


def test_bootstrap_variance_is_the_resampled_quantiles_variance():
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"x": rng.poisson(5, 300).astype(float), "y": rng.gamma(2, 10, 300)})
    targets = [FieldSpec("x", "count"), FieldSpec("y", "continuous")]
    est = inferential_estimates(frame, targets, [], None, np.random.default_rng(9), bootstrap=50).set_index("quantity")
    idx = np.random.default_rng(9).integers(0, 300, size=(50, 300))  # the same resamples, one at a time
    for name in ("x", "y"):
        for q in QUANTILES:
            boot = [np.quantile(frame[name].to_numpy()[row], q) for row in idx]
            assert est.loc[f"{round(100 * q)}% quantile of {name}", "variance"] == pytest.approx(np.var(boot, ddof=1))
    assert (est["kind"] != "coefficient").all()  # no response, no regression
    again = inferential_estimates(frame, targets, [], None, np.random.default_rng(9), bootstrap=50)
    pd.testing.assert_frame_equal(est.reset_index(), again)


def test_regression_matches_numpy_least_squares():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"g": rng.choice(["u", "v", "v"], 200), "x": rng.normal(size=200)})
    frame["y"] = np.exp(1 + 0.5 * frame["x"] + 0.3 * (frame["g"] == "u") + rng.normal(0, 0.1, 200))
    est = regression_estimates(frame, "y", [FieldSpec("g", "categorical"), FieldSpec("x", "continuous")])
    X = np.column_stack([np.ones(200), (frame["g"] == "u"), frame["x"]])
    y = np.log(frame["y"].to_numpy())
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    sigma2 = np.sum((y - X @ beta) ** 2) / (200 - 3)
    assert est["estimate"].tolist() == pytest.approx(beta[1:].tolist())
    assert est["variance"].tolist() == pytest.approx(np.diag(sigma2 * np.linalg.inv(X.T @ X))[1:].tolist())
    assert est["quantity"].tolist() == ["log(y) ~ g=u", "log(y) ~ x"]
    # The reference data fix the baseline level, so a release where "u" became the most common names the same terms.
    flipped = frame.assign(g=np.where(frame["g"] == "u", "v", "u"))
    terms = regression_estimates(flipped, "y", [FieldSpec("g", "categorical")], reference=frame)["term"]
    assert terms.tolist() == ["g=u"]
    # A response with a value ≤ 0 is not logged, and says so.
    zero = frame.assign(y=frame["y"] - frame["y"].min())
    assert regression_estimates(zero, "y", [FieldSpec("x", "continuous")])["quantity"].tolist() == ["y ~ x"]


# ---------------------------------------------------------------------------------------------------------------
# Registry


def test_every_numeric_measure_is_registered():
    ids = [
        "propensity_up",
        "cluster_uc",
        "ecdf_max",
        "ecdf_avg",
        "ci_overlap",
        "emr",
        "tmr",
        "fmr",
        "unique_matches",
        *attribute_risks(four_records(), four_records(), ["room"], ["days"], ["price"]),
    ]
    for i in ids:
        assert i in METRICS and METRICS[i].meaning
    assert METRICS["fmr"].kind == "risk" and METRICS["fmr"].better == "higher"
    assert all(
        METRICS[i].better == "lower" and METRICS[i].high == float("inf")
        for i in ("emr", "unique_matches", "attribute_risk_r5_p5")
    )
    assert (METRICS["ci_overlap"].low, METRICS["ci_overlap"].high) == (float("-inf"), 1.0)
    assert METRICS["propensity_up"].high == 0.25
    assert metric_info("emr_confidential").kind == "risk"
