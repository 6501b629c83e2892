"""CART for count and continuous fields (synthpop's way, Guo & Hu's comparator): anova pruning, leaf draws,
predictors, the sequential scheme with numeric fields, and errors."""

import numpy as np
import pandas as pd
import pytest

from engine.dataset import Dataset
from engine.errors import ConfigError, DataError
from engine.protect import get_protector
from engine.protect.cart import weakest_link_alphas
from engine.protect.synthesis import FieldLevels, design
from engine.schema import FieldSpec, Schema
from engine.sweep import make_release


def shops(n=400, seed=0) -> Dataset:
    rng = np.random.default_rng(seed)
    kind = rng.choice(["big", "small"], n)
    visits = rng.poisson(np.where(kind == "big", 40, 5))
    spend = np.round(np.where(kind == "big", 200.0, 20.0) * np.exp(rng.normal(0, 0.2, n)), 2)
    frame = pd.DataFrame({"text": ["a shop"] * n, "kind": kind, "visits": visits, "spend": spend,
                          "mood": rng.choice(["ok", "meh"], n)})
    schema = Schema(text="text", fields=(FieldSpec("kind", "categorical", "key"), FieldSpec("visits", "count", "sensitive"),
                                         FieldSpec("spend", "continuous", "sensitive"),
                                         FieldSpec("mood", "categorical", "other")))
    return Dataset("shops", frame, schema)


def test_anova_pruning_by_hand():
    # A root with two leaves: root SS 10, leaves 2 and 3 → g = (10 − 5) / (2 − 1) = 5, relative to the root 0.5.
    left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    collapse = weakest_link_alphas(left, right, np.ones((3, 1)), risk=np.array([10.0, 2.0, 3.0]))
    assert collapse[0] == pytest.approx(0.5) and np.isneginf(collapse[1:]).all()


def test_defaults_synthesize_the_sensitive_numeric_fields_with_the_key_fields_as_predictors():
    d = shops()
    p = get_protector("cart")
    assert p.check(d) == ["visits", "spend"]
    assert [f.name for f in p.predictor_fields(d, ["visits", "spend"])] == ["kind"]
    assert get_protector("cart", fields=["mood"]).predictor_fields(d, ["mood"]) == []


def test_values_come_from_the_leaf_and_keep_the_dtype():
    d = shops()
    fitted = get_protector("cart").fit(d)
    r = make_release(fitted, 1e-4, seed=0)
    for f in ("visits", "spend"):
        assert r.data[f].dtype == d.frame[f].dtype
        assert set(r.data[f]) <= set(d.frame[f])
    # The tree splits on the shop kind, so big shops keep big values.
    big = d.frame["kind"] == "big"
    assert r.data.loc[big, "spend"].min() > d.frame.loc[~big, "spend"].max() * 0.9
    detail = r.info["field_detail"]
    assert set(detail["field"]) == {"visits", "spend"} and detail["p_original"].between(0, 1).all()


def test_pruned_to_the_root_every_record_draws_from_the_marginal():
    d = shops()
    fitted = get_protector("cart").fit(d)
    tree, lv = fitted.trees[0], fitted.fields[0]
    X = design(fitted.text.matrix, [], fitted.predictors)
    P = tree.leaf_probabilities(X, 1.0)  # α = 1 is above any split's complexity
    marginal = np.bincount(lv.codes, minlength=lv.n_levels) / len(lv.codes)
    assert np.allclose(P, marginal[None, :])
    assert tree.n_splits(1.0) == 0 and tree.n_splits(1e-8) > 0


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


def test_a_numeric_field_enters_later_designs_as_its_value():
    lv = FieldLevels.numeric_of("visits", pd.Series([3, 1, 3, 7]))
    assert lv.levels == (1, 3, 7) and lv.codes.tolist() == [1, 0, 1, 2]
    X = design(np.zeros((4, 0)) + 0, [(np.array([2, 2, 0, 1]), lv)])
    assert X.toarray().ravel().tolist() == [7.0, 7.0, 1.0, 3.0]


def test_sequential_numeric_synthesis_uses_the_synthetic_earlier_field():
    d = shops()
    fitted = get_protector("cart", fields=["visits", "spend"], predictors=[]).fit(d)
    # Without the shop kind, spend is predicted from visits: a release where every synthetic visit is small
    # must give small spending, whatever the confidential visits were.
    tree = fitted.trees[1]
    small = np.full(len(d.frame), fitted.fields[0].codes.min())
    X = design(fitted.text.matrix, [(small, fitted.fields[0])], fitted.predictors)
    P = tree.leaf_probabilities(X, 1e-6)
    expected = P @ fitted.fields[1].values
    assert expected.max() < 60


def test_same_seed_same_release():
    d = shops()
    fitted = get_protector("cart").fit(d)
    pd.testing.assert_frame_equal(make_release(fitted, 1e-3, seed=4).data, make_release(fitted, 1e-3, seed=4).data)


def test_errors_name_the_field():
    d = shops()
    with pytest.raises(ConfigError, match="field 'visits' is a count field; this synthesizer draws categorical"):
        get_protector("glm", fields=["visits"]).check(d)
    with pytest.raises(ConfigError, match="'visits' is synthesized, so it cannot also be a predictor"):
        get_protector("cart", fields=["visits"], predictors=["visits"]).check(d)
    with pytest.raises(ConfigError, match="no structured field named 'nope'"):
        get_protector("cart", fields=["visits"], predictors=["nope"]).check(d)
    bad = shops()
    bad.frame.loc[2, "spend"] = np.nan
    with pytest.raises(DataError, match="field 'spend' has 1 missing value"):
        get_protector("cart", fields=["spend"]).check(bad)
    text = shops()
    text.frame["visits"] = text.frame["visits"].astype(str) + " visits"
    with pytest.raises(DataError, match="field 'visits' is declared count but holds text"):
        get_protector("cart", fields=["visits"]).check(text)
