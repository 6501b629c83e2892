"""The whole-release intruder: hand-computed values, the limits (no information = a blind guess), reuse of the
unchanged texts' distances, the presets, and the same intruder for text and field methods."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError
from engine.measures.evaluate import Evaluator
from engine.measures.intruders import INTRUDERS, intruder
from engine.measures.risk.identification import standardized_l1_distances
from engine.measures.risk.release_intruder import METRIC_ID, ReleaseIntruder
from engine.measures.settings import MeasureSettings
from engine.protect.base import Release
from engine.text.features import stylometric_features
from tests.conftest import make_tiny_dataset


def _fields_only(values: list[float], kinds: list[str]) -> Dataset:
    frame = pd.DataFrame({"text": [f"text {i}" for i in range(len(values))], "city": kinds, "price": values})
    schema = Schema(
        text="text", fields=(FieldSpec("city", "categorical", "key"), FieldSpec("price", "continuous", "sensitive"))
    )
    return Dataset("hand", frame, schema, None, source="tests")


def _measure(dataset: Dataset, release: pd.DataFrame, preset: str) -> pd.DataFrame:
    ev = Evaluator(dataset, [METRIC_ID], options=MeasureSettings(intruder=preset))
    assert METRIC_ID in ev.available, ev.skipped
    return ev.evaluate(release)[METRIC_ID]


def test_hand_computed_first_stage_with_a_tolerance():
    # Records: (a, 100), (a, 105), (a, 130), (b, 100). The intruder knows every field, numbers to ±10%.
    d = _fields_only([100, 105, 130, 100], ["a", "a", "a", "b"])
    result = _measure(d, d.frame, "rough_fields")
    detail = result.detail.set_index("record")
    # Record 0 (a, 100): kept {0, 1} (105 is within 10 of 100) → 1/2. Record 1 (a, 105): {0, 1} → 1/2.
    # Record 2 (a, 130): {2} → 1. Record 3 (b, 100): {3} → 1.
    assert detail["probability"].tolist() == pytest.approx([0.5, 0.5, 1.0, 1.0])
    assert detail["first_stage_matches"].tolist() == [2, 2, 1, 1]
    assert result.value == pytest.approx(0.75)
    # A release that moves record 2's price by 20% loses it: the intruder keeps no record → 0 on it.
    moved = d.frame.assign(price=[100, 105, 156, 100])
    assert _measure(d, moved, "rough_fields").detail.set_index("record").loc[2, "probability"] == 0.0


def test_exact_preset_matches_only_equal_numbers():
    d = _fields_only([100, 105, 130, 100], ["a", "a", "a", "b"])
    # posts_and_keys on data without authors: no texts, the key field (city) only, exactly.
    result = _measure(d, d.frame, "posts_and_keys")
    assert result.detail.set_index("record")["probability"].tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0])
    assert "links on field values alone" in Evaluator(d, [METRIC_ID]).notes[METRIC_ID]


def test_a_field_the_release_withholds_cannot_be_linked_on():
    """The swap leaves the field it protects out of the bundle: an intruder who knows only that field then has
    nothing to link with on the release (a blind guess, 1/n), while the data as it is stays the baseline."""
    d = _fields_only([100, 105, 130, 100], ["a", "a", "a", "b"])
    ev = Evaluator(d, [METRIC_ID], options=MeasureSettings(intruder="posts_and_keys"))  # knows city only
    shown = Release(data=d.frame, method="test", knob=0.0, protected_columns=("text",))
    withheld = dataclasses.replace(shown, withheld=("city",))
    assert ev.evaluate(shown)[METRIC_ID].value == pytest.approx((1 / 3 * 3 + 1) / 4)
    assert ev.evaluate(withheld)[METRIC_ID].detail["probability"].tolist() == pytest.approx([0.25] * 4)
    both = Evaluator(d, [METRIC_ID], options=MeasureSettings(intruder="rough_fields"))  # and price within 10%
    assert both.evaluate(withheld)[METRIC_ID].detail["probability"].tolist() == pytest.approx([1 / 3, 1 / 3, 1, 1 / 3])


def test_an_intruder_with_nothing_to_link_with_is_not_applicable():
    d = _fields_only([1, 2], ["a", "b"])
    ev = Evaluator(d, [METRIC_ID], options=MeasureSettings(intruder="posts"))
    assert METRIC_ID not in ev.available
    assert "nothing to link with" in ev.skipped[METRIC_ID]


def test_unknown_preset_names_the_presets():
    with pytest.raises(ConfigError, match="posts_and_keys"):
        intruder("telepath")
    with pytest.raises(ConfigError, match="intruder"):
        MeasureSettings(intruder="telepath")


def test_texts_carry_identity_and_shuffling_everything_gives_a_blind_guess():
    d = make_tiny_dataset()
    conf = _measure(d, d.frame, "posts").value
    rng = np.random.default_rng(0)
    blind = []
    for _ in range(20):
        shuffled = d.frame.assign(text=rng.permutation(d.frame["text"].to_numpy()))
        blind.append(_measure(d, shuffled, "posts").value)
    assert conf > np.mean(blind)
    assert np.mean(blind) == pytest.approx(1 / len(d.frame), rel=0.6)


def test_knowing_fields_never_hurts_the_intruder_on_the_unprotected_data():
    d = make_tiny_dataset()
    assert _measure(d, d.frame, "posts_and_rough_fields").value >= _measure(d, d.frame, "posts").value - 1e-12


def test_changed_texts_are_measured_again_and_unchanged_ones_reused():
    d = make_tiny_dataset()
    side, _ = ReleaseIntruder.prepare(d, INTRUDERS["posts"])
    texts = d.texts.astype(str).to_numpy(dtype=object).copy()
    texts[[0, 3]] = ["completely different words here", "[PERSON] wrote this"]
    fast = side.replaced_similarity(texts).whole()
    vocabulary = [*d.texts.astype(str), *d.external["text"].astype(str)]
    full = standardized_l1_distances(
        stylometric_features(list(texts), vocabulary), stylometric_features(list(d.external["text"]), vocabulary)
    )
    np.testing.assert_allclose(fast, 1.0 / np.maximum(full, 1e-12), rtol=1e-10)
    # A second release sharing one changed text and changing another: the shared one is looked up, the new
    # one measured, and the result is the same as measuring all of them afresh.
    assert set(side.seen) == {texts[0], texts[3]}
    again = d.texts.astype(str).to_numpy(dtype=object).copy()
    again[[3, 5]] = ["[PERSON] wrote this", "yet another text"]
    reused = side.replaced_similarity(again).whole()
    fresh, _ = ReleaseIntruder.prepare(d, INTRUDERS["posts"])
    np.testing.assert_array_equal(reused, fresh.replaced_similarity(again).whole())
    assert len(side.seen) == 3
    # Two records given one new text (a redaction alike): measured once, the same as afresh.
    twice = d.texts.astype(str).to_numpy(dtype=object).copy()
    twice[[1, 2]] = "[PERSON] and [PERSON] again"
    np.testing.assert_array_equal(
        side.replaced_similarity(twice).whole(),
        ReleaseIntruder.prepare(d, INTRUDERS["posts"])[0].replaced_similarity(twice).whole(),
    )


def test_per_author_mass_is_at_least_the_record_probability():
    d = make_tiny_dataset()
    detail = _measure(d, d.frame, "posts_and_keys").detail
    assert (detail["author_probability"] >= detail["probability"] - 1e-12).all()
    assert (detail["author_probability"] <= 1 + 1e-12).all()


def test_text_and_field_methods_are_measured_by_the_same_intruder():
    d = make_tiny_dataset()
    text_measures = Evaluator(d)
    field_measures = Evaluator(d, fields=["mood"])
    assert METRIC_ID in text_measures.available and METRIC_ID in field_measures.available


def test_deterministic_under_the_seed():
    d = _fields_only(list(range(3000)), ["a"] * 3000)
    one = _measure(d, d.frame, "rough_fields").detail
    two = _measure(d, d.frame, "rough_fields").detail
    pd.testing.assert_frame_equal(one, two)
    assert len(one) == 2000


@pytest.mark.parametrize("trial", range(6))
def test_the_first_stage_keeps_exactly_the_records_that_agree(trial):
    """Every (target, released record) pair checked one by one, against the searched sparse first stage: a
    category equal, each number `close` by its rule or missing on both sides (amounts of 0 and missing values
    included, every closeness rule)."""
    from engine.measures.risk.matching import close

    rng = np.random.default_rng(trial)
    n = 300
    count = rng.integers(0, 30, n).astype(float)
    price = np.round(rng.lognormal(3, 1, n), 1)
    count[rng.random(n) < 0.1] = np.nan
    price[rng.random(n) < 0.1] = np.nan
    price[rng.random(n) < 0.05] = 0.0
    records = np.sort(rng.choice(n, 120, replace=False))
    rules = [("absolute", 5.0), ("log", 0.05), ("relative", 0.1)]
    closeness = {"count": rules[trial % 3], "price": rules[(trial + 1) % 3]}
    categorical = {"city": rng.choice(["x", "y", "z"], n).astype(object)[records]} if trial % 2 == 0 else {}
    side = ReleaseIntruder(
        pd.DataFrame(), records, categorical, {"count": count[records], "price": price[records]}, closeness,
        np.arange(n),
    )  # fmt: skip
    released = pd.DataFrame(
        {
            "city": rng.choice(["x", "y", "z"], n),
            "count": np.where(rng.random(n) < 0.5, count, count + rng.integers(-6, 7, n)),
            "price": price * np.where(rng.random(n) < 0.5, 1.0, rng.uniform(0.8, 1.2, n)),
        }
    )
    expected = np.ones((len(records), n), dtype=bool)
    for t in range(len(records)):
        for j in range(n):
            if categorical and released["city"][j] != categorical["city"][t]:
                expected[t, j] = False
            for f in ("count", "price"):
                k, r = side.numeric[f][t], released[f][j]
                if not (close(*closeness[f], np.array([k]), np.array([r]))[0] or (np.isnan(k) and np.isnan(r))):
                    expected[t, j] = False
    found = side.first_stage(released)
    assert found is not None
    np.testing.assert_array_equal(found.toarray(), expected)
    assert 0 < expected.sum() < expected.size


def test_the_style_distances_of_the_confidential_texts_are_computed_once_per_evaluator(monkeypatch):
    """Schneider et al.'s identification and the whole-release intruder hold the same texts here: the distances
    of Eq. 8 between them and the confidential texts are computed once, and both measures are what they were
    computed apart."""
    from engine.measures.risk import identification

    calls = []
    compute = identification.style_similarity
    monkeypatch.setattr(identification, "style_similarity", lambda *a, **k: calls.append(1) or compute(*a, **k))
    d = make_tiny_dataset()
    evaluator = Evaluator(d, fields=["mood"])
    assert {METRIC_ID, identification.METRIC_ID} <= set(evaluator.available)
    assert len(calls) == 1
    side, _ = ReleaseIntruder.prepare(d, INTRUDERS[MeasureSettings()["intruder"]])
    assert side.similarity is not None
    measure = next(m for m in evaluator._measures if m.id == METRIC_ID)
    np.testing.assert_array_equal(measure.intruder.similarity, side.similarity)


def test_replaced_columns_read_as_the_matrix_written_out(monkeypatch):
    """The similarity of a release is the confidential one with its changed texts' columns replaced, kept apart:
    its row sums, its product with a sparse first stage (a block of columns at a time) and its cells are the
    written-out matrix's."""
    from scipy import sparse

    from engine.measures.risk import release_intruder

    monkeypatch.setattr(release_intruder, "PRODUCT_BLOCK", 3)
    rng = np.random.default_rng(5)
    base = rng.random((4, 11))
    columns = np.array([1, 6, 7])
    replaced = release_intruder.ReplacedColumns(base, columns, rng.random((4, 3)))
    whole = replaced.whole()
    assert np.array_equal(whole[:, columns], replaced.values) and np.array_equal(
        np.delete(whole, columns, 1), np.delete(base, columns, 1)
    )
    np.testing.assert_allclose(replaced.row_sums(), whole.sum(axis=1), rtol=1e-12)
    match = sparse.random(5, 11, density=0.4, format="csr", random_state=1).astype(bool)
    np.testing.assert_allclose(replaced.times_transposed(match), match.astype(float) @ whole.T, rtol=1e-12)
    rows, cols = rng.integers(0, 4, 30), rng.integers(0, 11, 30)
    assert np.array_equal(replaced.at(rows, cols), whole[rows, cols])
    unchanged = release_intruder.ReplacedColumns(base, columns[:0], base[:, :0])
    assert np.array_equal(unchanged.at(rows, cols), base[rows, cols]) and np.array_equal(unchanged.whole(), base)


def test_style_features_counted_in_chunks_are_the_ones_counted_at_once(monkeypatch) -> None:
    import numpy as np

    from engine.text import features

    texts = [f"Hello @user{i}, it's {i % 7} o'clock! Really?" * (1 + i % 3) for i in range(50)]
    vocabulary = features.style_words(texts[:30])
    whole = features.stylometric_features(texts, vocabulary)
    monkeypatch.setattr(features, "FEATURE_CHUNK", 7)
    chunked = features.stylometric_features(texts, vocabulary)
    assert np.array_equal(whole.style, chunked.style)
    assert (whole.words != chunked.words).nnz == 0 and whole.words.shape == chunked.words.shape
