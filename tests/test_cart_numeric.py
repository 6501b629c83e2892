"""CART for count and continuous fields (synthpop's way, Guo & Hu's comparator): anova pruning, leaf draws,
the limits of α, predictors, the sequential scheme with numeric fields, determinism, and errors."""

import numpy as np
import pandas as pd
import pytest
from scipy import sparse

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError, DataError
from engine.protect import get_protector
from engine.protect.field_synthesis.cart import ClassificationTree, PrunableTree, RegressionTree, weakest_link_alphas
from engine.protect.field_synthesis.sequential import (
    FieldDraws,
    FieldLevels,
    design,
    draw_categorical,
    predictor_matrix,
)
from engine.sweep import make_release


def shops(n=400, seed=0) -> Dataset:
    rng = np.random.default_rng(seed)
    kind = rng.choice(["big", "small"], n)
    visits = rng.poisson(np.where(kind == "big", 40, 5))
    spend = np.round(np.where(kind == "big", 200.0, 20.0) * np.exp(rng.normal(0, 0.2, n)), 2)
    frame = pd.DataFrame(
        {"text": ["a shop"] * n, "kind": kind, "visits": visits, "spend": spend, "mood": rng.choice(["ok", "meh"], n)}
    )
    schema = Schema(
        text="text",
        fields=(
            FieldSpec("kind", "categorical", "key"),
            FieldSpec("visits", "count", "sensitive"),
            FieldSpec("spend", "continuous", "sensitive"),
            FieldSpec("mood", "categorical", "other"),
        ),
    )
    return Dataset("shops", frame, schema)


@pytest.fixture(scope="module")
def shops_fit():
    d = shops()
    return d, get_protector("cart").fit(d)


def marginal(lv: FieldLevels) -> np.ndarray:
    return np.bincount(lv.codes, minlength=lv.n_levels) / len(lv.codes)


# --- anova pruning ------------------------------------------------------------------------------------------


def test_anova_pruning_by_hand():
    # A root with two leaves: root SS 10, leaves 2 and 3 → g = (10 − 5) / (2 − 1) = 5, relative to the root 0.5.
    left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    collapse = weakest_link_alphas(left, right, risk=np.array([10.0, 2.0, 3.0]))
    assert collapse[0] == pytest.approx(0.5) and np.isneginf(collapse[1:]).all()
    with pytest.raises(ValueError, match="needs the class counts or the risk"):
        weakest_link_alphas(left, right)


def test_a_grown_regression_tree_is_pruned_on_its_sums_of_squares():
    """x = 0, 1, 2, 3 with values 0, 0, 10, 12. Root SS = 123; the best split x < 1.5 leaves {0, 0} (SS 0, pure,
    not split) and {10, 12} (SS 2), which splits into two pure leaves. Relative to the root: the {10, 12} node
    collapses at α = 2/123; then the root's two-leaf subtree has risk 2/123, so the root collapses at
    (1 − 2/123) / 1 = 121/123."""
    X = sparse.csr_matrix(np.arange(4.0)[:, None])
    lv = FieldLevels.numeric_of("y", pd.Series([0, 0, 10, 12]))
    tree = PrunableTree.grow(X, lv.codes, lv.n_levels, min_split=2, min_leaf=1, values=lv.values)
    assert isinstance(tree, RegressionTree)
    t = tree.tree.tree_
    assert t.node_count == 5 and tree.risk[0] == pytest.approx(123.0)
    upper = int(np.flatnonzero((t.children_left >= 0) & (np.arange(5) > 0))[0])
    assert tree.size[upper] == 2 and tree.risk[upper] == pytest.approx(2.0)
    assert tree.collapse[upper] == pytest.approx(2 / 123) and tree.collapse[0] == pytest.approx(121 / 123)
    assert [tree.n_splits(a) for a in (0.01, 0.5, 0.99)] == [2, 1, 0]
    rng = np.random.default_rng(0)
    # Between the two: {0, 0} always gives 0; the others draw 10 or 12, each with probability ½.
    drawn, p = tree.draw(X, 0.5, lv.codes, rng)
    assert p.tolist() == [1.0, 1.0, 0.5, 0.5] and lv.values[drawn[:2]].tolist() == [0.0, 0.0]
    assert set(lv.values[drawn[2:]]) <= {10.0, 12.0}
    # Pruned to the root: the marginal, p_original = the share of the record's own value.
    _, p = tree.draw(X, 121 / 123, lv.codes, rng)
    assert p.tolist() == [0.5, 0.5, 0.25, 0.25]


def test_classification_trees_keep_their_counts():
    X = sparse.csr_matrix(np.arange(40.0)[:, None])
    tree = PrunableTree.grow(X, (np.arange(40) >= 20).astype(int), 2)
    assert isinstance(tree, ClassificationTree) and tree.counts.shape == (tree.tree.tree_.node_count, 2)


# --- draws ------------------------------------------------------------------------------------------------


def test_member_draws_equal_the_inverse_cdf_over_the_leaf_distribution(shops_fit):
    """The regression tree draws a member of the leaf without a records × values matrix; with the same generator
    it returns what the inverse CDF of the leaf's value distribution returns."""
    _, fitted = shops_fit
    for j, alpha in ((0, 1e-8), (1, 1e-8), (1, 1e-3), (0, 1.0)):
        tree, lv = fitted.trees[j], fitted.fields[j]
        previous = [(fitted.fields[0].codes, fitted.fields[0])] if j else []
        X = design(fitted.text.matrix, previous, fitted.predictors)
        P = tree.leaf_probabilities(X, alpha)
        drawn, p = tree.draw(X, alpha, lv.codes, np.random.default_rng(5))
        assert np.array_equal(drawn, draw_categorical(P, np.random.default_rng(5)))
        assert np.allclose(p, P[np.arange(len(p)), lv.codes])


def test_values_come_from_the_leaf_and_keep_the_dtype():
    d = shops()
    d.frame["visits"] = d.frame["visits"].astype(np.int32)
    fitted = get_protector("cart").fit(d)
    r = make_release(fitted, 1e-4, seed=0)
    for f in ("visits", "spend"):
        assert r.data[f].dtype == d.frame[f].dtype
        assert set(r.data[f]) <= set(d.frame[f])
    # The tree splits on the shop kind, so big shops keep big values.
    big = d.frame["kind"] == "big"
    assert r.data.loc[big, "spend"].min() > d.frame.loc[~big, "spend"].max() * 0.9
    detail = r.detail(FieldDraws).table
    assert list(detail.columns) == ["record", "field", "original", "synthetic", "p_original"]
    assert set(detail["field"]) == {"visits", "spend"} and detail["p_original"].between(0, 1).all()
    spend = detail[detail["field"] == "spend"]
    assert spend["original"].tolist() == d.frame["spend"].tolist()
    assert spend["synthetic"].tolist() == r.data["spend"].tolist()


# --- the limits of α ----------------------------------------------------------------------------------------


def test_pruned_to_the_root_every_record_draws_from_the_marginal(shops_fit):
    d, fitted = shops_fit
    tree, lv = fitted.trees[0], fitted.fields[0]
    X = design(fitted.text.matrix, [], fitted.predictors)
    root = float(tree.collapse[0])
    assert tree.n_splits(root) == 0 and tree.n_splits(np.nextafter(root, 0)) > 0 and tree.n_splits(1e-8) > 0
    assert np.allclose(tree.leaf_probabilities(X, root), marginal(lv)[None, :])
    _, p = tree.draw(X, root, lv.codes, np.random.default_rng(0))
    assert np.allclose(p, marginal(lv)[lv.codes])
    _, below = tree.draw(X, np.nextafter(root, 0), lv.codes, np.random.default_rng(0))
    assert not np.allclose(below, marginal(lv)[lv.codes])
    # Pooled over many draws, every record's values follow the field's distribution, whatever its kind.
    pooled = np.concatenate([tree.draw(X, root, lv.codes, np.random.default_rng(s))[0] for s in range(50)])
    assert (
        np.abs(np.cumsum(np.bincount(pooled, minlength=lv.n_levels) / len(pooled)) - np.cumsum(marginal(lv))).max()
        < 0.02
    )


def test_a_release_at_alpha_above_the_roots_complexity_samples_the_marginal():
    """A predictor unrelated to the count: its one split removes little of the sum of squares, so the largest
    α of the knob prunes it and every record's value is drawn from the whole confidential distribution."""
    d = shops()
    fitted = get_protector("cart", fields=["visits"], predictors=["mood"]).fit(d)
    tree, lv = fitted.trees[0], fitted.fields[0]
    assert tree.n_splits(1e-8) > 0 and tree.collapse[0] < fitted.knob.high
    detail = make_release(fitted, fitted.knob.high, seed=2).detail(FieldDraws).table
    assert np.allclose(detail["p_original"], marginal(lv)[lv.codes])
    pooled = pd.concat([make_release(fitted, fitted.knob.high, seed=s).data["visits"] for s in range(30)])
    for stat in ("mean", "median"):
        assert getattr(pooled, stat)() == pytest.approx(getattr(d.frame["visits"], stat)(), rel=0.05)
    # Still the confidential values, but no longer each record's own: small shops get big counts too.
    assert (pooled.to_numpy().reshape(30, -1)[:, (d.frame["kind"] == "small").to_numpy()] > 25).mean() > 0.2


def test_an_identifying_predictor_and_unpruned_pure_leaves_reproduce_the_data():
    d = shops(120)
    d.frame["id"] = np.arange(len(d.frame))
    # Values 10 apart: every split removes enough of the root's sum of squares to survive α = 1e−8 (nearly
    # equal values would be pruned together, as rpart's cp does).
    d.frame["spend"] = np.random.default_rng(0).permutation(len(d.frame)) * 10.0 + 5.0
    schema = Schema(text="text", fields=(*d.schema.fields, FieldSpec("id", "count", "key")))
    d = Dataset("shops", d.frame, schema)
    fitted = get_protector("cart", fields=["spend"], predictors=["id"], min_split=2, min_leaf=1).fit(d)
    r = make_release(fitted, 1e-8, seed=3)
    assert (r.data["spend"] == d.frame["spend"]).all()
    assert (r.detail(FieldDraws).table["p_original"] == 1.0).all()


# --- predictors and the sequential scheme --------------------------------------------------------------------


def test_defaults_synthesize_the_sensitive_numeric_fields_with_the_key_fields_as_predictors():
    d = shops()
    p = get_protector("cart")
    assert p.check(d) == ["visits", "spend"]
    assert [f.name for f in p.predictor_fields(d, ["visits", "spend"])] == ["kind"]
    assert get_protector("cart", fields=["mood"]).predictor_fields(d, ["mood"]) == []
    assert p.params()["predictors"] is None
    assert get_protector("cart", predictors=["mood"]).params()["predictors"] == ("mood",)
    # With a sensitive categorical field, that one is synthesized by default, from the text alone.
    schema = Schema(
        text="text",
        fields=tuple(FieldSpec(f.name, f.kind, "sensitive" if f.name == "mood" else f.role) for f in d.schema.fields),
    )
    cat = Dataset("shops", d.frame, schema)
    assert p.check(cat) == ["mood"] and p.predictor_fields(cat, ["mood"]) == []
    assert get_protector("cart").fit(cat).predictors.shape == (400, 0)


def test_predictors_enter_as_indicators_or_values():
    d = shops(6)
    M = predictor_matrix(d.frame, [d.schema.field("kind"), d.schema.field("visits")]).toarray()
    lv = FieldLevels.of("kind", d.frame["kind"])
    assert M.shape == (6, 2)
    assert M[:, 0].tolist() == (lv.codes == 1).astype(float).tolist()
    assert M[:, 1].tolist() == d.frame["visits"].astype(float).tolist()


def test_a_numeric_field_enters_later_designs_as_its_value():
    lv = FieldLevels.numeric_of("visits", pd.Series([3, 1, 3, 7]))
    assert lv.levels == (1, 3, 7) and lv.codes.tolist() == [1, 0, 1, 2]
    X = design(np.zeros((4, 0)) + 0, [(np.array([2, 2, 0, 1]), lv)])
    assert X.toarray().ravel().tolist() == [7.0, 7.0, 1.0, 3.0]


def test_sequential_numeric_synthesis_uses_the_synthetic_earlier_field():
    d = shops()
    fitted = get_protector("cart", fields=["visits", "spend"], predictors=[]).fit(d)
    visits, spend = fitted.fields
    tree = fitted.trees[1]
    # Without the shop kind, spend is predicted from visits: where every synthetic visit is small, spending
    # is small, whatever the confidential visits were.
    small = np.full(len(d.frame), visits.codes.min())
    P = tree.leaf_probabilities(design(fitted.text.matrix, [(small, visits)], fitted.predictors), 1e-6)
    assert (P @ spend.values).max() < 60
    # In a release, spend's leaf is found from the synthetic visits drawn first, not the confidential ones.
    alpha = 1e-4
    r = make_release(fitted, alpha, seed=3)
    syn = np.searchsorted(visits.values, r.data["visits"].to_numpy())
    p_spend = r.detail(FieldDraws).table.query("field == 'spend'")["p_original"].to_numpy()
    rows = np.arange(len(p_spend))
    with_synthetic = tree.leaf_probabilities(design(fitted.text.matrix, [(syn, visits)], fitted.predictors), alpha)
    with_confidential = tree.leaf_probabilities(
        design(fitted.text.matrix, [(visits.codes, visits)], fitted.predictors), alpha
    )
    assert np.allclose(p_spend, with_synthetic[rows, spend.codes])
    assert not np.allclose(p_spend, with_confidential[rows, spend.codes])


def test_complexity_counts_splits_for_every_field(shops_fit):
    _, fitted = shops_fit
    c = fitted.complexity()
    assert set(c["field"]) == {"visits", "spend"} and set(c["what"]) == {"splits"}
    for f, g in c.groupby("field"):
        sizes = g.sort_values("knob")["size"].to_numpy()
        assert np.all(np.diff(sizes) <= 0) and sizes[0] > 0, f


def test_same_seed_same_release(shops_fit):
    _, fitted = shops_fit
    a = make_release(fitted, 1e-3, seed=4, replicates=2, replicate=1)
    b = make_release(fitted, 1e-3, seed=4, replicates=2, replicate=1)
    c = make_release(fitted, 1e-3, seed=4, replicates=2, replicate=0)
    pd.testing.assert_frame_equal(a.data, b.data)
    pd.testing.assert_frame_equal(a.detail(FieldDraws).table, b.detail(FieldDraws).table)
    assert not a.data["spend"].equals(c.data["spend"])


# --- errors ---------------------------------------------------------------------------------------------------


def test_errors_name_the_field():
    d = shops()
    with pytest.raises(
        ConfigError,
        match="field 'visits' is a count field; these synthesizers draw categorical "
        r"fields only \(categorical fields: kind, mood\)",
    ):
        get_protector("glm", fields=["visits"]).check(d)
    with pytest.raises(ConfigError, match="no sensitive categorical field to synthesize"):
        get_protector("glm").check(d)
    with pytest.raises(ConfigError, match="'visits' is synthesized, so it cannot also be a predictor"):
        get_protector("cart", fields=["visits"], predictors=["visits"]).check(d)
    with pytest.raises(ConfigError, match="no structured field named 'nope'"):
        get_protector("cart", fields=["visits"], predictors=["nope"]).check(d)
    none_sensitive = Dataset(
        "s", d.frame, Schema(text="text", fields=tuple(FieldSpec(f.name, f.kind, "other") for f in d.schema.fields))
    )
    with pytest.raises(ConfigError, match="no sensitive categorical/count/continuous field to synthesize"):
        get_protector("cart").check(none_sensitive)


@pytest.mark.parametrize(
    "column, change, params, message",
    [
        (
            "spend",
            lambda c: c.where(c.index != 2),
            {"fields": ["spend"]},
            "field 'spend' has 1 missing value\\(s\\) in 400 rows",
        ),
        (
            "visits",
            lambda c: c.astype(str) + " visits",
            {"fields": ["visits"]},
            "field 'visits' is declared count but holds text",
        ),
        ("visits", lambda c: c * 0 + 3, {"fields": ["visits"]}, "field 'visits' takes a single value \\(3\\)"),
        (
            "visits",
            lambda c: c.where(c.index > 4),
            {"fields": ["spend"], "predictors": ["visits"]},
            "predictor field 'visits' has 5 missing value",
        ),
        (
            "visits",
            lambda c: c.astype(str),
            {"fields": ["spend"], "predictors": ["visits"]},
            "predictor field 'visits' is declared count but holds text",
        ),
    ],
)
def test_bad_numeric_columns_are_data_errors(column, change, params, message):
    d = shops()
    d.frame[column] = change(d.frame[column])
    with pytest.raises(DataError, match=message):
        get_protector("cart", **params).check(d)
    with pytest.raises(DataError, match=message):
        get_protector("cart", **params).fit(d)
