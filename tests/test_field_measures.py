"""Measures of synthesized fields on hand-computed examples: text features, identification probability (Eqs.
7–9), pMSE, cell differences, combining rules, topic measures and the λ* rule."""

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from engine.errors import ConfigError
from engine.frontier import select_by_pmse_ratio
from engine.measures.risk import identification
from engine.measures.risk.identification import IdentificationRisk, abs_sum_table, standardized_l1_distances
from engine.measures.utility.cells import cell_differences
from engine.measures.utility.combining import combine_partial_synthesis
from engine.measures.utility.pmse import FieldCells, PropensityDesign, propensity_score
from engine.measures.utility.topics import TopicModel, content_correlation, prevalence, prevalence_ratio
from engine.text.features import (
    count_syllables,
    normalize_for_synthesis,
    style_block,
    style_feature_names,
    style_vector,
    stylometric_features,
    synthesis_counts,
)

# --- text features ------------------------------------------------------------------------------------------


def test_normalization_for_synthesis_follows_section_5_1():
    words = normalize_for_synthesis("Don't FLY @United 2x!! #fail", frozenset({"united"}))
    assert words == ["dont", "fly", "x", "fail"]
    counts = synthesis_counts(["Great rates, great service", "Virgin America was late"], ["Virgin America"])
    assert "virgin" not in counts.vocabulary and "america" not in counts.vocabulary
    assert counts.matrix[0, list(counts.vocabulary).index("great")] == 2


def test_yules_k_flesch_kincaid_and_syllables_on_hand_computed_examples():
    features = style_feature_names()
    # a×3, b×1, c×1: N = 5, Σ i²Vᵢ = 1·2 + 9·1 = 11, K = 10⁴·(11 − 5)/25 = 2400.
    assert style_vector("a b A c a")[features.index("yules_k")] == pytest.approx(2400.0)
    assert style_vector("one")[features.index("yules_k")] == 0.0
    # Six one-syllable words in two sentences: 0.39·3 + 11.8·1 − 15.59.
    grade = features.index("flesch_kincaid_grade")
    assert style_vector("The cat sat. The dog ran.")[grade] == pytest.approx(0.39 * 3 + 11.8 - 15.59)
    assert style_vector("!!! 42")[grade] == 0.0  # no word
    assert [count_syllables(w) for w in ("table", "make", "insurance", "a")] == [2, 1, 3, 1]


def reference_style_vector(text: str) -> list[float]:
    """Section 5.1's non-vocabulary features of one text, counted one by one (what `style_block` vectorizes)."""
    from collections import Counter

    from engine.text.features import FUNCTION_WORDS, MAX_WORD_LENGTH, PUNCTUATION_MARKS

    words = re.findall(r"[A-Za-z]+", text)
    lower = Counter(w.lower() for w in words)
    out = [text.count(p) for p in PUNCTUATION_MARKS]
    out += [lower[w] for w in FUNCTION_WORDS]
    out += [text.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"]
    out += [text.count(d) for d in "0123456789"]
    out += [len(text.split()), sum(1 for w in words if not w.isupper() and not w.islower())]
    lengths = Counter(len(w) for w in words)
    out += [lengths[i] for i in range(1, MAX_WORD_LENGTH + 1)]
    n = len(words)
    out.append(0.0 if n < 2 else 1e4 * (sum(c * c for c in lower.values()) - n) / (n * n))
    sentences = max(len([s for s in re.split(r"[.!?]+", text) if s.strip()]), 1)
    syllables = sum(count_syllables(w) for w in words)
    out.append(0.0 if n == 0 else 0.39 * n / sentences + 11.8 * syllables / n - 15.59)
    return out


def test_style_block_counts_every_text_as_the_features_are_defined():
    texts = [
        "Hi!! I paid $40 (twice) for McDonalds",
        "",
        "   ",
        "The cat sat. The dog ran... Did it?",
        "İstanbul KELVIN \u212a ünïcode straße — she's #1 @ 9:30; ok, (yes) & 100% sure",
        "lone \ud800 surrogate",
        "a " * 40 + "Supercalifragilisticexpialidociousnessabc word",
        "THE the The tHe",
    ]
    block = style_block(texts)
    assert block.shape == (len(texts), len(style_feature_names()))
    assert np.array_equal(block, np.array([reference_style_vector(t) for t in texts]))
    # One text at a time gives the same rows as all at once.
    assert np.array_equal(np.vstack([style_vector(t) for t in texts]), block)
    assert style_block([]).shape == (0, len(style_feature_names()))


def test_style_vector_counts_the_paper_s_features():
    v = dict(zip(style_feature_names(), style_vector("Hi!! I paid $40 (twice) for McDonalds")))
    assert v["punct:!"] == 2 and v["punct:$"] == 1 and v["punct:("] == 1 and v["punct:)"] == 1
    assert v["digit:4"] == 1 and v["digit:0"] == 1
    assert v["words"] == 7 and v["mixed_case_words"] == 2  # "Hi", "McDonalds"
    assert v["function:i"] == 1 and v["function:for"] == 1
    assert v["word_length:9"] == 1 and v["letter:d"] == 3
    assert (
        len(style_feature_names())
        == 13 + len([n for n in style_feature_names() if n.startswith("function:")]) + 26 + 10 + 2 + 30 + 2
    )


# --- identification probability -----------------------------------------------------------------------------


def dense_distances(released, intruder):
    """Eq. 8 the slow way: whole vectors, each standardized by its own mean and standard deviation."""

    def std(f):
        full = np.hstack([f.words.toarray(), f.style])
        sd = full.std(axis=1, keepdims=True)
        return (full - full.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0)  # a constant vector: 0s

    a, b = std(released), std(intruder)
    return np.abs(b[:, None, :] - a[None, :, :]).sum(axis=2)


TEXTS = [
    "I love the rates here!",
    "Terrible claims service, never again.",
    "Rates are fine; service slow.",
    "LOVE this company :)",
]


def test_standardized_l1_distance_matches_the_dense_formula():
    external = ["i love rates", "claims were terrible"]
    vocab = TEXTS + external
    r, z = stylometric_features(TEXTS, vocab), stylometric_features(external, vocab)
    assert np.allclose(standardized_l1_distances(r, z), dense_distances(r, z))


def test_abs_sum_table_sums_absolute_differences_per_group():
    # group 0 holds 1 and 4, group 1 holds 2, group 2 nothing; points 3, 0, 4
    table = abs_sum_table(np.array([0, 1, 0]), np.array([1.0, 2.0, 4.0]), 3, np.array([3.0, 0.0, 4.0]))
    assert np.allclose(table, [[2 + 1, 1 + 4, 3 + 0], [1, 2, 2], [0, 0, 0]])
    rng = np.random.default_rng(0)
    groups, values, at = rng.integers(0, 7, 200), rng.normal(size=200), rng.normal(size=40)
    brute = np.array([[np.abs(values[groups == g] - p).sum() for p in at] for g in range(7)])
    assert np.allclose(abs_sum_table(groups, values, 7, at), brute)


@pytest.mark.parametrize("cells, triples", [(4_000_000, 4_000_000), (5, 3)])
def test_standardized_l1_distance_splits_dense_and_sparse_features_without_changing_them(monkeypatch, cells, triples):
    """Letters go to the dense path, digits and most function words to the sparse one; small limits cut the
    intruder's texts into blocks of one or two: the distances are the dense formula's either way."""
    monkeypatch.setattr(identification, "_CELLS", cells)
    monkeypatch.setattr(identification, "_TRIPLES", triples)
    texts = [*TEXTS, "Call 555 0100 about it", "", "the the the and of"]
    external = ["i love rates", "claims were terrible", "Rates 2024: fine.", "of the and"]
    r, z = stylometric_features(texts, texts + external), stylometric_features(external, texts + external)
    split = identification.dense_style(r.style, z.style)
    assert split.any() and not split.all()
    assert np.allclose(standardized_l1_distances(r, z), dense_distances(r, z))
    no_words = stylometric_features(texts, []), stylometric_features(external, [])
    assert no_words[0].words.shape[1] == 0
    assert np.allclose(standardized_l1_distances(*no_words), dense_distances(*no_words))


def test_identification_probability_is_eq_9_on_the_records_that_match():
    frame = pd.DataFrame({"text": TEXTS, "user": ["a", "b", "c", "d"], "state": ["NM", "NM", "GA", "NM"]})
    risk = IdentificationRisk.prepare(frame["text"], frame["user"], ["I love the low rates"], ["a"], frame, ["state"])
    vocab = TEXTS + ["I love the low rates"]
    d = dense_distances(stylometric_features(TEXTS, vocab), stylometric_features(["I love the low rates"], vocab))[0]
    s = 1 / d
    # Confidential: the intruder knows a's state (NM) and keeps records 0, 1 and 3 (Eq. 7), then Eq. 9.
    result = risk.evaluate(frame)
    assert result.value == pytest.approx(s[0] / (s[0] + s[1] + s[3]))
    assert result.detail["first_stage_matches"].iloc[0] == 3
    # A release that moves record 1 to GA leaves fewer look-alikes: the risk rises.
    moved = frame.assign(state=["NM", "GA", "GA", "NM"])
    assert risk.evaluate(moved).value == pytest.approx(s[0] / (s[0] + s[3]))
    # A release that moves the target's own record out of NM protects it completely.
    assert risk.evaluate(frame.assign(state=["GA", "NM", "GA", "NM"])).value == 0.0


# --- pMSE ---------------------------------------------------------------------------------------------------


def test_pmse_is_zero_when_nothing_changes_and_the_null_ratio_is_about_one():
    rng = np.random.default_rng(0)
    n = 1500
    Z = rng.standard_normal((n, 4))
    conf = rng.integers(0, 3, n)
    same = propensity_score(Z, [conf], [conf.copy()], [3])
    assert same.pmse == pytest.approx(0.0, abs=1e-12) and same.ratio == pytest.approx(0.0, abs=1e-9)
    # Synthetic values drawn from the same distribution, independently of the text: the ratio is 1 on average.
    ratios = [propensity_score(Z, [conf], [np.random.default_rng(s).integers(0, 3, n)], [3]).ratio for s in range(40)]
    assert 0.85 < np.mean(ratios) < 1.15
    k = 1 + 4 + 2 + 2 * 4
    assert same.n_parameters == k
    # Synthetic values that ignore a strong relation to the text are easy to tell apart: ratio far above 1.
    tied = (Z[:, 0] > 0).astype(int) + (Z[:, 1] > 0).astype(int)
    shuffled = np.random.default_rng(1).permutation(tied)
    assert propensity_score(Z, [tied], [shuffled], [3]).ratio > 5


def test_the_propensity_design_by_cell_gives_the_dense_designs_sums():
    rng = np.random.default_rng(4)
    n, levels = 400, [3, 4, 2]
    Z = rng.standard_normal((n, 5))
    codes = [rng.integers(0, k, n) for k in levels]
    cells = FieldCells.of(codes, levels, n)
    design = PropensityDesign(Z[cells.order], cells)
    X = design.dense()
    # The dense design holds every column of the model: 1, Z, the indicators (2 + 3 + 1), indicators × Z and
    # the products of indicators of two fields (2·3 + 2·1 + 3·1).
    assert X.shape == (n, design.n_parameters) == (n, 1 + 5 + 6 + 6 * 5 + 11)
    indicators = np.hstack([(c[cells.order, None] == np.arange(1, k)).astype(float) for c, k in zip(codes, levels)])
    assert {tuple(col) for col in indicators.T} <= {tuple(col) for col in X.T}
    theta, r, s = rng.standard_normal(X.shape[1]), rng.standard_normal(n), rng.random(n)
    assert np.allclose(design.eta(theta), X @ theta)
    assert np.allclose(design.gradient(r), X.T @ r)
    assert np.allclose(design.hessian(s), (X * s[:, None]).T @ X)


def test_the_pmse_equals_an_unpenalized_logistic_regression_on_the_stacked_records():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(5)
    n, levels = 600, [3, 4]
    Z = rng.standard_normal((n, 3))
    conf = [rng.integers(0, k, n) for k in levels]
    syn = [np.where(rng.random(n) < 0.6, c, rng.integers(0, k, n)) for c, k in zip(conf, levels)]
    result = propensity_score(Z, conf, syn, levels)
    # The oracle: all 2n rows, labelled 0 (confidential) and 1 (synthetic), the dense design, no penalty.
    stacked = [np.concatenate([c, s]) for c, s in zip(conf, syn)]
    cells = FieldCells.of(stacked, levels, 2 * n)
    X = PropensityDesign(np.vstack([Z, Z])[cells.order], cells).dense()
    y = np.repeat([0, 1], n)[cells.order]
    model = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    p = model.predict_proba(X)[:, 1]
    assert result.pmse == pytest.approx(np.mean((p - 0.5) ** 2), rel=1e-5)
    assert result.n_parameters == np.linalg.matrix_rank(X)


# --- cell differences, combining rules ----------------------------------------------------------------------


def test_cell_differences_on_a_hand_computed_table():
    conf = pd.DataFrame({"f": ["a", "a", "b"], "g": ["x", "y", "y"]})
    syn = pd.DataFrame({"f": ["a", "b", "b"], "g": ["x", "y", "y"]})
    out = cell_differences(conf, syn, ["f"], ["f", "g"])
    # One-way: a (1 − 2)/2 = −0.5, b (2 − 1)/1 = 1 → 1.5.
    assert out["cell_difference_1way"].value == pytest.approx(1.5)
    # Two-way f × g: (a,x) 0, (a,y) (0 − 1)/1, (b,y) (2 − 1)/1 → 2.
    assert out["cell_difference_2way"].value == pytest.approx(2.0)


def test_combining_rules_for_partially_synthetic_data():
    c = combine_partial_synthesis(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, 0.5]))
    # q̄ = 2, b = 1, ū = .5, T = ū + b/M = .8333, ν = (M − 1)(1 + ū/(b/M))² = 2·2.5² = 12.5.
    assert c.estimate == 2.0 and c.variance == pytest.approx(0.5 + 1 / 3) and c.df == pytest.approx(12.5)
    half = stats.t.ppf(0.975, 12.5) * np.sqrt(0.5 + 1 / 3)
    assert (c.lo, c.hi) == pytest.approx((2 - half, 2 + half))
    one = combine_partial_synthesis(np.array([2.0]), np.array([0.25]))
    assert (one.lo, one.hi) == pytest.approx((2 - 1.959964 * 0.5, 2 + 1.959964 * 0.5), rel=1e-5)


# --- topics ------------------------------------------------------------------------------------------------


def topic_texts(n=200, seed=0):
    rng = np.random.default_rng(seed)
    a = ["claim", "accident", "doctor", "driver", "repair", "damage"]
    b = ["rates", "discount", "cheap", "price", "savings", "easy"]
    rating = rng.choice(["low", "high"], n)
    texts = [" ".join(rng.choice(a if r == "low" else b, 6)) + " " + " ".join(rng.choice(a + b, 2)) for r in rating]
    return texts, pd.DataFrame({"rating": rating})


def test_topic_measures_are_perfect_when_the_fields_are_kept():
    texts, frame = topic_texts()
    model = TopicModel.fit(texts, n_topics=2, seed=0)
    levels = {"rating": ("high", "low")}
    conf = prevalence(model, frame, ["rating"], levels)
    assert prevalence_ratio(conf, conf, "rating", "low").value == pytest.approx(1.0)
    codes = (frame["rating"] == "low").to_numpy().astype(int)
    same = content_correlation(model, [("rating", ("high", "low"), codes, codes)])
    assert same.value == pytest.approx(1.0)
    # Shuffling the ratings breaks the relation: the prevalence coefficient shrinks towards 0.
    shuffled = frame.assign(rating=np.random.default_rng(1).permutation(frame["rating"].to_numpy()))
    ratio = prevalence_ratio(conf, prevalence(model, shuffled, ["rating"], levels), "rating", "low").value
    assert abs(ratio) < 0.3
    # The "low" topic is the one the low ratings talk about.
    low_topic = int(conf.loc[conf["estimate"].idxmax(), "topic"])
    assert set(model.top_words(3)[low_topic - 1]) <= {"claim", "accident", "doctor", "driver", "repair", "damage"}


def test_prevalence_ratio_leaves_out_topics_the_level_has_no_relation_to():
    """Hand-made coefficients: topic 2's confidential coefficient is a rounding zero, so its ratio (1e15) is
    not averaged in; with every confidential coefficient zero the ratio is not a number, not ±inf."""

    def table(estimates):
        return pd.DataFrame(
            {
                "field": "rating",
                "level": "low",
                "topic": [1, 2, 3],
                "topic_words": ["a", "b", "c"],
                "estimate": estimates,
                "variance": 0.01,
            }
        )

    conf = table([0.2, 1e-16, -0.1])
    syn = table([0.1, 0.1, -0.05])
    assert prevalence_ratio(conf, syn, "rating", "low").value == pytest.approx((0.5 + 0.5) / 2)
    assert np.isnan(prevalence_ratio(table([0.0, 1e-17, 0.0]), syn, "rating", "low").value)


# --- the λ* rule -----------------------------------------------------------------------------------------------


def test_lambda_star_is_the_knob_with_mean_pmse_ratio_closest_to_one():
    summary = pd.DataFrame(
        {
            "knob": [0.001, 0.01, 0.05, 0.2],
            "metric": "pmse_ratio",
            "kind": "utility",
            "mean": [0.1, 0.8, 1.3, 3.0],
            "lo": np.nan,
            "hi": np.nan,
        }
    )
    choice = select_by_pmse_ratio(summary)
    assert (choice.best, choice.high, choice.low) == (0.01, 0.2, 0.001)
    assert "smaller λ over-fit" in choice.why
    # Every ratio above 1: the smallest knob measured is the closest, and the steward is told it is an edge.
    edge = select_by_pmse_ratio(summary.assign(mean=[1.06, 1.3, 2.0, 3.0]), "α")
    assert edge.best == 0.001 and "the smallest α measured and still under-fits" in edge.why
    assert "a smaller α might come closer" in edge.why  # still falling towards 1 at the edge
    flat = select_by_pmse_ratio(summary.assign(mean=[1.06, 1.062, 1.3, 3.0]), "α")  # flat at the edge: CART's α
    assert "hardly moves there (1.06 next to it), so a smaller α would not help" in flat.why
    low = select_by_pmse_ratio(summary.assign(mean=[0.1, 0.2, 0.5, 0.9]))
    assert low.best == 0.2 and "a larger λ might come closer" in low.why
    with pytest.raises(ConfigError, match="pMSE ratio was not measured"):
        select_by_pmse_ratio(summary.assign(metric="other"))
