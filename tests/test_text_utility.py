"""The paper's remaining utility measures of text releases (Ororbia, Linder & Snoke, Section 4):
`sentiment_cosine` (cross-fitted SVM where the data has sentiment labels, VADER otherwise) and
`classifier_f1_ratio` (train on the release, test on held-out confidential texts)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError
from engine.measures.base import NotApplicable
from engine.measures.evaluate import Evaluator
from engine.measures.settings import MeasureSettings
from engine.measures.utility.classifier import classifier_target
from engine.measures.utility.sentiment import _vader, class_shares, lexicon_classes

GOOD = ["love", "great", "wonderful", "thanks", "awesome", "happy"]
BAD = ["awful", "terrible", "hate", "worst", "angry", "delayed"]
PLACES = {"north": ["snow", "ice", "cold"], "south": ["sun", "beach", "heat"]}
METRICS = ["sentiment_cosine", "classifier_f1_ratio"]


def reviews(n: int = 240, seed: int = 0, tag_share: float = 0.3) -> Dataset:
    """Texts whose sentiment label follows their words and whose region follows other words; a third carry
    #gate."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        mood = "positive" if rng.random() < 0.5 else "negative"
        region = "north" if rng.random() < 0.5 else "south"
        words = list(rng.choice(GOOD if mood == "positive" else BAD, 3)) + list(rng.choice(PLACES[region], 2))
        words += list(rng.choice(["the", "a", "flight", "today"], 2))
        if rng.random() < tag_share:
            words.append("#gate" if region == "north" else "")
        rows.append(
            {"who": f"user{i % 30}", "text": " ".join(rng.permutation(words)), "sentiment": mood, "region": region}
        )
    schema = Schema(
        text="text",
        author="who",
        fields=(FieldSpec("region", "categorical", "key"), FieldSpec("sentiment", "categorical", "sensitive")),
    )
    return Dataset("reviews", pd.DataFrame(rows), schema)


def measure(dataset: Dataset, texts: list[str], **options) -> dict:
    ev = Evaluator(dataset, METRICS, options=MeasureSettings(**options))
    frame = dataset.frame.copy()
    frame["text"] = texts
    return {**{k: v.value for k, v in ev.evaluate(frame).items()}, "notes": ev.notes, "skipped": ev.skipped}


def test_class_shares_and_cosine_on_a_hand_computed_case():
    shares, names = class_shares(np.array([0, 2, 1, 1]), pd.Series(["a", "a", "b", "b"]), 3)
    assert names == ["a", "b"]
    np.testing.assert_allclose(shares, [[0.5, 0, 0.5], [0, 1, 0]])


def test_the_lexicon_reads_sentiment():
    np.testing.assert_array_equal(
        lexicon_classes(["I love it, wonderful!", "awful, I hate this", "the gate"]), [2, 0, 1]
    )


IDIOMS = [
    "I am not happy with this",
    "never so good, never this bad",
    "without doubt the best; it is without any doubt great",
    "it was kind of great and sort of awful",
    "at least it works. Very least helpful. The least bad",
    "this is the shit and the bomb, a real badass",
    "yeah right, that will cut the mustard and hand to mouth",
    "no good. no problem. not bad at all. No, nor great",
    "GREAT flight but the crew was NOT friendly",
    "good",
    "not good",
    "happy never",
]


def test_the_lexicon_model_scores_as_the_vader_package_does():
    """The analyzer whose checks read a window around each sentiment word scores every text as the package's
    own does: idioms and negations near the start, the middle and the end, and a long text (where the
    package's checks took time growing with the square of its length)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    stock = SentimentIntensityAnalyzer()
    long_text = " ".join(IDIOMS * 40)
    texts = [*IDIOMS, " ".join(IDIOMS), long_text, "", "!!!", ":) :("]
    for text in texts:
        assert _vader().polarity_scores(text) == stock.polarity_scores(text), text


def test_unchanged_release_scores_one_and_says_how():
    data = reviews()
    out = measure(data, data.frame["text"].tolist())
    assert out["sentiment_cosine"] == pytest.approx(1.0)
    assert out["classifier_f1_ratio"] == pytest.approx(1.0)
    assert "linear SVM trained on the field sentiment, cross-fitted over 5 folds" in out["notes"]["sentiment_cosine"]
    assert "Predicts the field sentiment" in out["notes"]["classifier_f1_ratio"]  # the sensitive field first


def test_releases_that_lose_the_signal_score_lower():
    data = reviews()
    rng = np.random.default_rng(1)
    shuffled = rng.permutation(data.frame["text"].tolist()).tolist()  # texts moved to other authors and labels
    neutral = ["the flight today"] * len(data.frame)
    out_shuffled, out_neutral = measure(data, shuffled), measure(data, neutral)
    assert out_shuffled["classifier_f1_ratio"] < 0.75
    assert out_neutral["classifier_f1_ratio"] < 0.75
    assert out_neutral["sentiment_cosine"] < out_shuffled["sentiment_cosine"] < 1.0


def test_without_labels_the_lexicon_is_used():
    data = reviews()
    unlabelled = dataclasses.replace(data, schema=dataclasses.replace(data.schema, fields=(data.schema.fields[0],)))
    out = measure(unlabelled, ["awful hate"] * len(data.frame))
    assert "VADER" in out["notes"]["sentiment_cosine"]
    assert out["sentiment_cosine"] < 0.9


def test_a_hashtag_target_redacted_from_the_release_scores_zero():
    data = reviews(tag_share=0.6)
    kept = measure(data, data.frame["text"].tolist(), classifier_target="#gate")
    assert kept["classifier_f1_ratio"] == pytest.approx(1.0)
    assert "use of #gate" in kept["notes"]["classifier_f1_ratio"]
    redacted = measure(data, data.frame["text"].str.replace("#gate", "[HASHTAG]").tolist(), classifier_target="#gate")
    assert redacted["classifier_f1_ratio"] == 0.0


def test_bad_settings_name_what_is_accepted():
    data = reviews()
    with pytest.raises(ConfigError, match="sentiment field 'feeling' is not a categorical field.*region, sentiment"):
        Evaluator(data, METRICS, options=MeasureSettings(sentiment_field="feeling"))
    with pytest.raises(ConfigError, match="neither a categorical field nor a #hashtag.*region, sentiment"):
        Evaluator(data, METRICS, options=MeasureSettings(classifier_target="airline"))


def test_no_target_is_listed_as_not_measured():
    data = reviews(tag_share=0.0)
    bare = dataclasses.replace(data, schema=dataclasses.replace(data.schema, fields=()))
    ev = Evaluator(bare, METRICS)
    assert "needs a target to predict" in ev.skipped["classifier_f1_ratio"]
    assert "sentiment_cosine" in ev.available


def test_the_default_hashtag_is_the_one_the_most_authors_use():
    """A hashtag one author uses (a bot's signature) would make the task "tell that author apart"."""
    texts = ["news #solo"] * 30 + ["hello #shared"] * 12 + ["plain words"] * 20
    authors = ["bot"] * 30 + ["ann", "bob", "cy"] * 4 + ["dee"] * 20
    bare = Dataset("tags", pd.DataFrame({"text": texts, "who": authors}), Schema(text="text", author="who"))
    assert classifier_target(bare, texts, None, authors) == "#shared"
    assert classifier_target(bare, texts, "#Solo", authors) == "#solo"


def test_a_field_the_releases_withhold_is_no_target():
    """The swap withholds the field it protects (which company a chunk came from): predicting it from the text
    is the attack, not a use of the release, and no one who receives the release has its labels."""
    texts = ["quarterly revenue up"] * 12 + ["guidance for the year"] * 12
    frame = pd.DataFrame({"text": texts, "ticker": ["AAA", "BBB"] * 12, "sector": ["Energy"] * 12 + ["Tech"] * 12})
    schema = Schema(
        text="text",
        fields=(FieldSpec("ticker", "categorical", "sensitive"), FieldSpec("sector", "categorical", "other")),
    )
    data = Dataset("calls", frame, schema)
    assert classifier_target(data, texts, None) == "ticker"
    assert classifier_target(data, texts, None, withheld=("ticker",)) == "sector"
    with pytest.raises(NotApplicable, match="ticker is withheld from the release"):
        classifier_target(data, texts, "ticker", withheld=("ticker",))
    only = Dataset("calls", frame[["text", "ticker"]], dataclasses.replace(schema, fields=schema.fields[:1]))
    with pytest.raises(NotApplicable, match="; ticker is withheld from the release, which protects it"):
        classifier_target(only, texts, None, withheld=("ticker",))


def test_a_release_that_leaves_the_training_records_as_they_are_scores_one_without_training(monkeypatch):
    from engine.measures.utility import classifier

    data = reviews()
    ev = Evaluator(data, ["classifier_f1_ratio"])
    monkeypatch.setattr(classifier, "_predict", lambda *a: pytest.fail("trained again"))
    assert ev.evaluate(data.frame)["classifier_f1_ratio"].value == 1.0


def test_a_release_that_changes_only_the_field_trains_on_the_confidential_texts_features(monkeypatch):
    """Texts as they are, labels synthesized (a field method): the features are the confidential texts' (not
    counted again), and the ratio is what counting the release's texts afresh gives."""
    from engine.measures.utility import classifier

    data = reviews()
    frame = data.frame.copy()
    frame["sentiment"] = np.random.default_rng(1).permutation(frame["sentiment"].to_numpy())
    ev = Evaluator(data, ["classifier_f1_ratio"])
    expected = ev.evaluate(frame)["classifier_f1_ratio"].value
    assert expected < 0.9  # shuffled labels teach less
    counted = []
    original = classifier._count_features
    monkeypatch.setattr(classifier, "_count_features", lambda *a: counted.append(1) or original(*a))
    fresh = Evaluator(data, ["classifier_f1_ratio"])
    assert len(counted) == 1  # the confidential texts', once
    assert fresh.evaluate(frame)["classifier_f1_ratio"].value == expected
    assert len(counted) == 1
    # The same ratio as features counted from the release's texts.
    measure_ = next(m for m in fresh._measures if m.id == "classifier_f1_ratio")
    monkeypatch.setattr(measure_, "train_texts", measure_.train_texts.copy())
    measure_.train_texts[0] = "not the text"  # the release's texts now differ: counted afresh
    assert fresh.evaluate(frame)["classifier_f1_ratio"].value == expected
    assert len(counted) == 2


def test_the_folds_trained_in_worker_processes_are_the_folds_trained_here(monkeypatch):
    """The sentiment classifier's five folds give the same classes whether trained in two worker processes (as
    from `PARALLEL_MIN_TEXTS` texts) or in this one: each SVM is seeded, none reads a process's random state."""
    from engine.measures.utility import sentiment
    from tests.conftest import make_tiny_dataset

    d = make_tiny_dataset()
    texts = d.texts.astype(str).tolist()
    here = sentiment.CrossFitted(texts, d.frame["mood"], 0)
    monkeypatch.setattr(sentiment, "PARALLEL_MIN_TEXTS", 1)
    state = np.random.get_state()
    np.random.seed(12345)  # a process's random state that an unseeded SVM would read
    try:
        workers = sentiment.CrossFitted(texts, d.frame["mood"], 0)
    finally:
        np.random.set_state(state)
    np.testing.assert_array_equal(workers.classes(texts), here.classes(texts))
    for a, b in zip(workers.models, here.models, strict=True):
        np.testing.assert_array_equal(a[-1].coef_, b[-1].coef_)


def test_folds_trained_in_workers_are_collected_after_the_other_measures_are_prepared(monkeypatch):
    """From `PARALLEL_MIN_TEXTS` texts the folds train in worker processes, begun from a thread of their own,
    while the other measures are prepared in the caller's; the measures are those of folds trained in order,
    and a label the folds cannot use still leaves the measure out with its reason."""
    import threading

    from engine.measures.utility import sentiment

    data = reviews()
    frame = data.frame.copy()
    frame["text"] = [t.replace("hate", "love") for t in frame["text"]]
    in_order = Evaluator(data).evaluate(frame)
    trained_in: list[str] = []
    cross_fitted = sentiment.CrossFitted.__init__

    def spy(self, *a, **k):
        trained_in.append(threading.current_thread().name)
        cross_fitted(self, *a, **k)

    monkeypatch.setattr(sentiment.CrossFitted, "__init__", spy)
    monkeypatch.setattr(sentiment, "PARALLEL_MIN_TEXTS", 10)
    beside = Evaluator(data)
    assert trained_in == ["textsdc-beside"] and all("_folds" not in vars(m) for m in beside._measures)
    assert {k: v.value for k, v in beside.evaluate(frame).items()} == {k: v.value for k, v in in_order.items()}
    assert pickle.loads(pickle.dumps(beside)).available == beside.available  # nothing running is kept
    once = data.frame.copy()
    once.loc[0, "sentiment"] = "neutral"  # a label of one record: two folds of each are needed
    skipped = Evaluator(dataclasses.replace(data, frame=once), METRICS)
    assert "sentiment_cosine" not in skipped.available
    assert "occurs once" in skipped.skipped["sentiment_cosine"]


def test_a_large_training_split_is_sampled_with_the_seed_and_the_note_says_so(monkeypatch):
    from engine.measures.utility import classifier

    d = reviews(n=240)
    monkeypatch.setattr(classifier, "MAX_TRAIN", 100)
    texts = d.texts.astype(str).tolist()
    first = measure(d, texts)
    assert first["classifier_f1_ratio"] == pytest.approx(1.0)  # the unchanged data: its own baseline
    assert "trained on 100 records (drawn at random of 180)" in first["notes"]["classifier_f1_ratio"]
    swapped = [t.replace("love", "hate").replace("great", "awful") for t in texts]
    changed = measure(d, swapped)["classifier_f1_ratio"]
    assert changed == measure(d, swapped)["classifier_f1_ratio"] and changed < 1.0  # seeded, and it measures
    ev = Evaluator(d, ["classifier_f1_ratio"])
    assert len(next(m for m in ev._measures if m.id == "classifier_f1_ratio").train) == 100


def test_the_sentiment_classes_from_shared_counts_are_the_pipelines_classes():
    """`CrossFitted.classes_of_counts` weighs a release's n-gram counts as each fold's vectorizer would have:
    the same classes as the fold's pipeline on the texts, words new to the data and placeholders included."""
    from engine.measures.utility.sentiment import CrossFitted
    from engine.text.ngrams import NgramSpace, projection

    data = reviews(400)
    texts = data.frame["text"].tolist()
    model = CrossFitted(texts, data.frame["sentiment"], seed=0)
    space = NgramSpace(texts)
    onto = [projection(m[0], space) for m in model.models]
    rng = np.random.default_rng(2)
    released = [
        " ".join(w if rng.random() < 0.7 else rng.choice(["[PERSON]", "zebra", "love", "hate"]) for w in t.split())
        for t in texts
    ]
    expected = []
    for batch in (texts, released):
        counts = {n: space.counts(batch, n) for n in (1, 2)}
        expected.append(model.classes(batch))
        np.testing.assert_array_equal(model.classes_of_counts(counts, onto), expected[-1])
    # Without the vectorizers' vocabularies (what a sweep holds and ships), the same classes from counts.
    before = len(pickle.dumps(model))
    vocabularies = sum(len(pickle.dumps(m[0].vocabulary_)) for m in model.models)
    model.forget_vocabularies()
    assert len(pickle.dumps(model)) < before - 0.9 * vocabularies
    for batch, classes in zip((texts, released), expected):
        counts = {n: space.counts(batch, n) for n in (1, 2)}
        np.testing.assert_array_equal(model.classes_of_counts(counts, onto), classes)
    with pytest.raises(RuntimeError, match="vocabularies were forgotten"):
        model.classes(texts)


def test_the_svm_at_liblinears_tolerances_predicts_as_the_tightly_converged_one():
    from sklearn.svm import LinearSVC

    from engine.measures.utility.classifier import SVM_C, _svm, _text_features

    rng = np.random.default_rng(2)
    vocabulary = [f"w{i}" for i in range(3000)]
    topics = {label: rng.choice(vocabulary, 40, replace=False) for label in range(3)}
    labels = rng.integers(0, 3, 900)
    texts = [
        " ".join([*rng.choice(topics[y], 2), *rng.choice(vocabulary, 8)]) for y in labels
    ]  # two topical words in ten: more features than texts, as in the measure
    noisy = np.where(rng.random(900) < 0.3, rng.integers(0, 3, 900), labels)  # labels a synthesizer redrew
    train_x, test_x = _text_features(texts[:600], texts[600:])
    for y in (labels[:600], noisy[:600]):
        tight = LinearSVC(C=SVM_C, dual=False, tol=1e-8, max_iter=10_000).fit(train_x, y).predict(test_x)
        assert np.mean(_svm(train_x, y).predict(test_x) == tight) > 0.98


def test_a_target_whose_every_value_is_one_records_is_skipped_before_training(monkeypatch):
    """Earnings calls with the company as the target: no held-out call's company is among the training calls',
    so F1 = 0 is certain; the measure says so without training a classifier of one class per call."""
    from engine.measures.utility import classifier

    texts = [f"Call {k}: revenue grew and margins held in the quarter, said the chief executive." for k in range(40)]
    frame = pd.DataFrame({"text": texts, "company": [f"C{k:02d}" for k in range(40)]})
    data = Dataset("calls", frame, Schema(text="text", fields=(FieldSpec("company", "categorical", "sensitive"),)))
    monkeypatch.setattr(classifier, "_predict", lambda *a: pytest.fail("a classifier was trained"))
    ev = Evaluator(data, ["classifier_f1_ratio"])
    assert (
        "no held-out record's company occurs in the training records (40 values over 40 records)"
        in ev.skipped["classifier_f1_ratio"]
    )
