import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

from engine.errors import DataError
from engine.measures.evaluate import Evaluator
from engine.measures.risk.attack import StyleAttack
from engine.measures.utility.ngram import ngram_cosine
from engine.protect import get_protector
from engine.text.tokens import tokenize


def hand_attack(weight_on: str | None, intercept: float = -0.5) -> StyleAttack:
    """One target 'A' whose classifier says positive exactly when the text contains ``weight_on``."""
    vec = CountVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None).fit(["alpha beta gamma"])
    w = np.zeros((1, len(vec.vocabulary_)))
    if weight_on:
        w[0, vec.vocabulary_[weight_on]] = 1.0
    return StyleAttack(vec, ["A"], sparse.csr_matrix(w), np.array([intercept]))


def test_eq4_share_of_each_authors_records_classified_as_the_target():
    attack = hand_attack("alpha")
    texts = ["alpha", "beta", "alpha gamma", "gamma", "gamma", "alpha"]
    authors = ["A", "A", "A", "B", "B", "C"]
    candidates, share = attack.scores(texts, authors)
    assert candidates == ["A", "B", "C"]
    np.testing.assert_allclose(share[0], [2 / 3, 0.0, 1.0])
    res = attack.evaluate(texts, authors)
    assert res.value == 0.0  # C has the top share: the guess is wrong
    guess = res.detail[res.detail["is_guess"]]
    assert list(guess["candidate"]) == ["C"]


def test_ties_count_as_a_fair_share():
    attack = hand_attack(None, intercept=0.5)  # every record is classified positive: all three authors tie
    res = attack.evaluate(["alpha", "beta", "gamma"], ["A", "B", "C"])
    assert res.value == pytest.approx(1 / 3)
    assert res.detail["n_tied"].iloc[0] == 3


def test_no_positive_record_means_no_guess():
    attack = hand_attack(None, intercept=-0.5)
    res = attack.evaluate(["alpha", "beta", "gamma"], ["A", "B", "C"])
    assert res.value == 0.0
    assert res.detail["n_tied"].iloc[0] == 0 and not res.detail["is_guess"].any()


def test_hand_computed_cosines():
    original = ["a b", "x y"]
    released = ["a c", "x y"]
    authors = pd.Series(["u1", "u2"])
    uni = ngram_cosine(original, released, authors, 1)
    bi = ngram_cosine(original, released, authors, 2)
    assert uni.value == pytest.approx((0.5 + 1.0) / 2)
    assert bi.value == pytest.approx((0.0 + 1.0) / 2)
    assert list(uni.detail["cosine"]) == pytest.approx([0.5, 1.0])


def test_without_authors_each_record_is_its_own_author():
    res = ngram_cosine(["a b", "c"], ["a b", "d"], None, 1)
    assert res.value == pytest.approx(0.5)


def test_redaction_lowers_risk_and_utility_on_signature_identifiers(tiny_dataset):
    ev = Evaluator(tiny_dataset)
    fitted = get_protector("redact", use_ner=False).fit(tiny_dataset)
    base = ev.evaluate(fitted.release(0, None))
    red = ev.evaluate(fitted.release(1, None))
    assert base["attack_identification_rate"].value == 1.0
    assert red["attack_identification_rate"].value < 0.5
    assert base["unigram_cosine"].value == 1.0 > red["unigram_cosine"].value
    assert base["bigram_cosine"].value == 1.0 > red["bigram_cosine"].value


def test_baseline_carries_the_confidential_suffix(tiny_dataset):
    baseline = Evaluator(tiny_dataset).baseline()
    assert set(baseline) == {
        "attack_identification_rate_confidential",
        "unigram_cosine_confidential",
        "bigram_cosine_confidential",
        "sentiment_cosine_confidential",
        "release_identification_probability_confidential",
    }  # the classifier's target, the tiny data's mood, is drawn at random: not measured


def test_attack_is_skipped_with_a_reason_without_external_texts(tiny_dataset):
    tiny_dataset = dataclasses.replace(tiny_dataset, external=None)
    ev = Evaluator(tiny_dataset)
    assert "attack_identification_rate" not in ev.available
    assert "external texts" in ev.skipped["attack_identification_rate"]


def test_the_attack_in_blocks_of_records_and_targets_gives_what_one_block_gives(monkeypatch):
    from engine.measures.risk import attack as attack_module

    rng = np.random.default_rng(4)
    words = ["alpha", "beta", "gamma", "delta"]
    vec = CountVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None).fit([" ".join(words)])
    targets = [f"T{k}" for k in range(7)]
    attack = StyleAttack(vec, targets, sparse.csr_matrix(rng.normal(size=(7, 4))), rng.normal(size=7) * 0.3)
    texts = [" ".join(rng.choice(words, 3)) for _ in range(40)]
    authors = [targets[k % 9] if k % 9 < 7 else f"other{k % 4}" for k in range(40)]
    whole = attack.evaluate(texts, authors)
    monkeypatch.setattr(attack_module, "RECORD_BLOCK", 3)
    monkeypatch.setattr(attack_module, "TARGET_BLOCK", 2)
    blocks = attack.evaluate(texts, authors)
    assert blocks.value == whole.value and len(whole.detail) > 7
    pd.testing.assert_frame_equal(blocks.detail, whole.detail, check_exact=True)


def test_attack_needs_overlap_between_intruder_and_release():
    with pytest.raises(DataError, match="none of the intruder's external authors"):
        StyleAttack.train(["a", "b"], ["X", "Y"], ["A", "B"])


def test_shared_ngram_counts_are_a_vectorizers_counts_new_words_included():
    from engine.text.ngrams import NgramSpace

    known = ["The cat sat", "the dog's @owner sat #down", ""]
    released = ["the cat the cat", "a [PERSON] sat on the mat", "", "dog's"]
    space = NgramSpace(known)
    assert space.id_of("the cat") == (2, 0) and space.id_of("the mat") is None and space.id_of("sat") == (1, 2)
    for n in (1, 2):
        counts = space.counts(released, n).toarray()
        vec = CountVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None, ngram_range=(n, n))
        expected = vec.fit_transform(released).toarray()
        grams = [" ".join(g) for t in released for g in zip(*(tokenize(t)[k:] for k in range(n)))]
        new = [g for g in dict.fromkeys(grams) if space.id_of(g) is None]  # columns after the fixed ids
        assert counts.shape == (len(released), space.width(n) + len(new))
        for j, term in enumerate(vec.get_feature_names_out()):
            found = space.id_of(term)
            column = found[1] if found is not None else space.width(n) + new.index(term)
            assert counts[:, column].tolist() == expected[:, j].tolist(), term
        assert counts.sum() == expected.sum()


def test_the_attacks_features_from_shared_counts_are_its_vectorizers():
    from engine.text.ngrams import ORDERS, NgramSpace, projection, tfidf_of

    external = ["alpha beta gamma", "beta gamma delta", "gamma alpha"]
    attack = StyleAttack.train(external, ["A", "B", "A"], ["A", "B"])
    released = ["alpha beta", "gamma gamma epsilon", "delta alpha beta gamma", ""]
    space = NgramSpace(["zeta alpha"], external)
    features = tfidf_of(
        attack.vectorizer, {n: space.counts(released, n) for n in ORDERS}, projection(attack.vectorizer, space)
    )
    np.testing.assert_allclose(features.toarray(), attack.vectorizer.transform(released).toarray(), atol=1e-12)
