"""The GLM (λ) and CART (α) synthesizers: limits of the knob, the sequential scheme, determinism, rpart pruning."""

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError, DataError
from engine.protect import get_protector
from engine.protect.field_synthesis.cart import CART_KNOB, weakest_link_alphas
from engine.protect.field_synthesis.sequential import FieldDraws, draw_categorical
from engine.sweep import make_release

WORDS = {"red": ["apple", "cherry", "brick"], "green": ["grass", "lime", "leaf"], "blue": ["sky", "sea", "ink"]}


def colour_dataset(n=240, seed=0) -> Dataset:
    """Texts that name things of the record's colour; the size field depends on the colour."""
    rng = np.random.default_rng(seed)
    colours = rng.choice(list(WORDS), n, p=[0.5, 0.3, 0.2])
    rows = []
    for i, c in enumerate(colours):
        words = list(rng.choice(WORDS[c], 3)) + list(rng.choice(["the", "a", "nice", "old", "my"], 3))
        size = "big" if (c == "red") ^ (rng.random() < 0.1) else "small"
        rows.append(
            {
                "text": " ".join(words),
                "user": f"u{i % 60}",
                "colour": c,
                "size": size,
                "shop": ["north", "south"][i % 2],
            }
        )
    schema = Schema(
        text="text",
        author="user",
        fields=(
            FieldSpec("colour", "categorical", "sensitive"),
            FieldSpec("size", "categorical", "sensitive"),
            FieldSpec("shop", "categorical", "key"),
        ),
    )
    return Dataset("colours", pd.DataFrame(rows), schema)


@pytest.fixture(scope="module")
def colours():
    return colour_dataset()


@pytest.fixture(scope="module")
def glm_fit(colours):
    return get_protector("glm", n_lambda=30).fit(colours)


def shares(values: pd.Series, levels) -> np.ndarray:
    return values.value_counts(normalize=True).reindex(levels, fill_value=0).to_numpy()


def test_glm_at_lambda_max_samples_every_record_from_the_marginal(colours, glm_fit):
    """Privacy by design: at λ ≥ λmax every coefficient is zero and each record's predictive distribution is
    the field's marginal, whatever its text."""
    top = glm_fit.knob.high
    first = glm_fit.fields[0]
    from engine.protect.field_synthesis.sequential import design

    P = glm_fit.field_probabilities(0, design(glm_fit.text.matrix, []), top, 0)
    marginal = np.bincount(first.codes, minlength=first.n_levels) / len(first.codes)
    assert np.allclose(P, marginal[None, :], atol=1e-9)
    # And the draws follow it: pooled over 60 releases, the shares match the marginal.
    draws = pd.concat([make_release(glm_fit, top, seed=s).data["colour"] for s in range(60)])
    assert np.allclose(shares(draws, first.levels), marginal, atol=0.02)
    for _lv, path in zip(glm_fit.fields, glm_fit.paths[0]):
        assert path.coefficients(top)[0].nnz == 0


def test_glm_small_lambda_keeps_more_confidential_values_than_large(colours, glm_fit):
    grid = glm_fit.knob.default_grid()
    kept = []
    for lam in (grid[0], grid[len(grid) // 2], grid[-1]):
        d = make_release(glm_fit, lam, seed=1).detail(FieldDraws).table
        kept.append(d["p_original"].mean())
    assert kept[0] < kept[1] < kept[2]
    assert kept[2] > 0.85  # words name the colour, so a weakly penalized model is nearly certain


def test_complexity_falls_as_lambda_grows(glm_fit):
    c = glm_fit.complexity()
    for field, g in c.groupby("field"):
        sizes = g.sort_values("knob")["size"].to_numpy()
        assert np.all(np.diff(sizes) <= 0), field
        assert sizes[-1] == 0 and sizes[0] > 0


def test_sequential_synthesis_conditions_later_fields_on_synthetic_earlier_ones(colours, glm_fit):
    grid = glm_fit.knob.default_grid()  # from λmax down
    release = make_release(glm_fit, grid[len(grid) // 3], seed=3)
    data = release.data
    assert list(release.protected_columns) == ["colour", "size"]
    # The text and the unselected field are released as they are.
    assert data["text"].equals(colours.frame["text"]) and data["shop"].equals(colours.frame["shop"])
    # The size model is applied to the synthetic colour drawn first, not to the confidential one.
    from engine.protect.field_synthesis.sequential import design

    colour, size = glm_fit.fields
    lam = grid[len(grid) // 3]
    syn_colour = colour.encode(data["colour"])
    changed = syn_colour != colour.codes
    assert changed.sum() >= 10
    detail = release.detail(FieldDraws).table
    p_size = detail[detail["field"] == "size"]["p_original"].to_numpy()
    with_synthetic = glm_fit.paths[0][1].predict_proba(design(glm_fit.text.matrix, [(syn_colour, colour)]), lam)
    with_confidential = glm_fit.paths[0][1].predict_proba(design(glm_fit.text.matrix, [(colour.codes, colour)]), lam)
    rows = np.arange(len(p_size))
    assert np.allclose(p_size, with_synthetic[rows, size.codes])
    assert not np.allclose(p_size[changed], with_confidential[rows, size.codes][changed])


def test_same_seed_same_release_other_seed_other_release(glm_fit):
    lam = glm_fit.knob.default_grid()[4]
    a = make_release(glm_fit, lam, seed=7, replicates=3, replicate=1).data
    b = make_release(glm_fit, lam, seed=7, replicates=3, replicate=1).data
    c = make_release(glm_fit, lam, seed=7, replicates=3, replicate=2).data
    assert a.equals(b)
    assert not a["colour"].equals(c["colour"])


def test_bootstrap_posterior_gives_several_fits_and_uses_one_per_release(colours):
    fit = get_protector("glm", fields=["colour"], n_lambda=10, posterior="bootstrap", posterior_draws=3).fit(colours)
    assert fit.n_draws == 3
    lam = fit.knob.default_grid()[-1]
    draws = {make_release(fit, lam, seed=s).detail(FieldDraws).posterior_draw for s in range(20)}
    assert draws == {0, 1, 2}


def test_lambda_out_of_the_fitted_range_names_the_range(glm_fit):
    with pytest.raises(ConfigError, match="out of range; accepted: "):
        glm_fit.release(glm_fit.knob.low / 10, np.random.default_rng(0))


def test_field_choices_are_checked(colours):
    with pytest.raises(
        ConfigError, match="no structured field named 'nope'; categorical fields are: colour, size, shop"
    ):
        get_protector("glm", fields=["nope"]).fit(colours)
    with pytest.raises(ConfigError, match="listed more than once"):
        get_protector("cart", fields=["size", "size"]).fit(colours)
    frame = colours.frame.assign(size="big")
    with pytest.raises(DataError, match="field 'size' takes a single value"):
        get_protector("glm", fields=["size"]).fit(Dataset("c", frame, colours.schema))
    with pytest.raises(ConfigError, match="posterior 'x' is not one of mode, bootstrap"):
        get_protector("glm", posterior="x")


def test_weakest_link_alphas_on_a_hand_computed_tree():
    """root [60,40] → L [50,10], R [10,30]; L → LL [45,0], LR [5,10]. Risks relative to the root's 40:
    R(L) = .25, R(L's leaves) = .125, so L collapses at α = .125; then the root's subtree risk is .5 with two
    leaves: α = (1 − .5)/1 = .5."""
    left = np.array([1, 3, -1, -1, -1])
    right = np.array([2, 4, -1, -1, -1])
    counts = np.array([[60, 40], [50, 10], [10, 30], [45, 0], [5, 10]], dtype=float)
    alphas = weakest_link_alphas(left, right, counts)
    assert alphas[0] == pytest.approx(0.5)
    assert alphas[1] == pytest.approx(0.125)
    assert np.all(np.isneginf(alphas[2:]))


def test_cart_splits_fall_along_alpha_and_the_largest_alpha_samples_the_root(colours):
    fit = get_protector("cart").fit(colours)
    c = fit.complexity()
    for field, g in c.groupby("field"):
        sizes = g.sort_values("knob")["size"].to_numpy()
        assert np.all(np.diff(sizes) <= 0), field
    tree = fit.trees[0]
    assert tree.n_splits(CART_KNOB.low) > 0
    # Once α passes the root's complexity every split is pruned and each record draws from the root: the
    # field's marginal distribution.
    from engine.protect.field_synthesis.sequential import design

    alpha = float(tree.collapse[0])
    X = design(fit.text.matrix, [])
    lv = fit.fields[0]
    assert tree.n_splits(alpha) == 0 and tree.n_splits(alpha * 0.999) > 0
    P = tree.leaf_probabilities(X, alpha)
    assert np.allclose(P, np.bincount(lv.codes, minlength=lv.n_levels) / len(lv.codes))


def test_draw_categorical_follows_the_probabilities():
    P = np.tile([0.2, 0.5, 0.3], (20000, 1))
    codes = draw_categorical(P, np.random.default_rng(0))
    assert np.allclose(np.bincount(codes, minlength=3) / len(codes), [0.2, 0.5, 0.3], atol=0.01)
