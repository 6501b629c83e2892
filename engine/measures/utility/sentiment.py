"""Per-author sentiment similarity between the original and the release (Ororbia, Linder & Snoke, Section 4,
the third utility measure).

A sentiment classifier assigns each text an affect; each author's affect is the share of their texts in each
class; the measure is the average over authors of the cosine similarity between the author's shares in the
original and in the release. (The paper's classifier is binary, and "a vector of average user affects" per
author is then the shares of negative and positive; with more classes the vector has one share per class.)
Without an author column each record is its own author, and the measure is the share of records whose class
the release keeps.

The classifier, stated in the result so the report can say which was used:
- where the data has sentiment labels (a categorical field, the setting ``sentiment_field``, by default one
  whose name contains "sentiment"), a linear SVM on TF-IDF word unigrams and bigrams, cross-fitted over five
  folds: each record's original text and its released text are scored by the model trained on the other four
  folds, so no text is scored by a model that saw it (the paper trains on IMDB reviews instead, which it names
  as the likely reason its sentiment measure hardly moves);
- otherwise VADER (Hutto & Gilbert 2014, the `vaderSentiment` package's lexicon, made for social-media text):
  compound score ≥ 0.05 positive, ≤ −0.05 negative, else neutral (VADER's documented thresholds).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.svm import LinearSVC

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.base import Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.measures.shared import ngram_space, original_texts, released_ngrams, released_texts
from engine.measures.utility.ngram import author_matrix, row_cosines
from engine.progress import Progress, no_progress
from engine.protect.params import Param
from engine.text.kept import KeptByText, text_key
from engine.text.ngrams import ORDERS, Projection, projection, tfidf_of, tfidf_weights
from engine.text.tokens import tokenize
from engine.workers import Report, beside, map_reporting

if TYPE_CHECKING:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    from engine.measures.settings import MeasureSettings

FOLDS = 5
LEXICON = "VADER lexicon (vaderSentiment)"


def sentiment_field(dataset: Dataset, name: str | None) -> str | None:
    """The categorical field of sentiment labels: ``name`` (checked), or the first categorical field whose name
    contains "sentiment", or None (no labels: the lexicon model)."""
    categorical = [f.name for f in dataset.schema.fields if f.kind == "categorical"]
    if name is not None:
        if name not in categorical:
            raise ConfigError(
                f"sentiment field '{name}' is not a categorical field of the data; categorical fields: "
                f"{', '.join(categorical) or 'none'}"
            )
        return name
    return next((f for f in categorical if "sentiment" in f.lower()), None)


REACH = 3
"""Words VADER's negation and idiom checks look at on either side of a sentiment word (i − 3 … i + 2)."""


@lru_cache(maxsize=1)
def _vader() -> SentimentIntensityAnalyzer:
    """VADER's analyzer, with its negation and idiom checks given the few words around the sentiment word they
    read instead of the whole text. The package's checks lower-case every word of the text at every sentiment
    word, so a text's time grew with its length squared (a 56,000-character call took 1.0 s, 16,000 characters
    0.07 s); they read only words i − 3 … i + 2 and the text's length beyond i + 2, which the window keeps, so
    every score is the package's own (`tests/test_text_utility.py` compares them)."""
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    class WindowedAnalyzer(SentimentIntensityAnalyzer):
        @staticmethod
        def _negation_check(valence, words_and_emoticons, start_i, i):  # type: ignore[no-untyped-def]
            low = max(0, i - REACH)
            window = words_and_emoticons[low : i + REACH]
            return SentimentIntensityAnalyzer._negation_check(valence, window, start_i, i - low)

        @staticmethod
        def _special_idioms_check(valence, words_and_emoticons, i):  # type: ignore[no-untyped-def]
            low = max(0, i - REACH)
            window = words_and_emoticons[low : i + REACH]
            return SentimentIntensityAnalyzer._special_idioms_check(valence, window, i - low)

    return WindowedAnalyzer()


KEPT_SCORES = 50_000
_scores: KeptByText[float] = KeptByText(KEPT_SCORES)


def _compound(text: str) -> float:
    """VADER's compound score of ``text``, kept (by a digest of the text, not the text) for the `KEPT_SCORES`
    latest new texts: the releases of a sweep share most of their texts (those a method left as they were, or
    changed alike at several knob values), and a long one takes VADER a while."""
    key = text_key(text)
    score = _scores.get(key)
    if score is None:
        score = float(_vader().polarity_scores(text)["compound"])
        _scores.put(key, score)  # the oldest go first (dashboard sessions may score at once)
    return score


def lexicon_classes(texts: list[str]) -> np.ndarray:
    """VADER's class of each text: 0 negative, 1 neutral, 2 positive."""
    compound = np.array([_compound(t) for t in texts])
    return np.where(compound >= 0.05, 2, np.where(compound <= -0.05, 0, 1))


def _classifier() -> Pipeline:
    """TF-IDF of word unigrams and bigrams and a linear SVM."""
    return make_pipeline(
        TfidfVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None, ngram_range=(1, 2), sublinear_tf=True),
        LinearSVC(C=1.0, dual="auto", max_iter=5000, random_state=0),
    )


def _fit_fold(item: tuple[list[str], np.ndarray], report: Report) -> Pipeline:
    """One fold's classifier (in a worker process or this one)."""
    model = _classifier().fit(*item)
    report(1)
    return model


FOLD_PROCESSES = 2
"""Processes the folds' classifiers are trained in from `PARALLEL_MIN_TEXTS` texts (each fold's model is the
same however many); fewer texts train in this process, faster than sending them."""
PARALLEL_MIN_TEXTS = 20_000
"""On the 6,555 airline tweets the five folds took 1.1 s in this process and 2.3 s in two worker processes that
had not trained one before (0.8 s in warm ones); on a dashboard's first view, with the workers' start and the
other measures' work beside them, 3.5 s. At about 20,000 texts the workers' head start is paid back."""


class CrossFitted:
    """Five linear SVMs, each trained on the labelled original texts outside one fold; `classes` scores every
    text with the model of its record's fold."""

    def __init__(self, texts: list[str], labels: pd.Series, seed: int, progress: Progress = no_progress) -> None:
        codes, self.levels = pd.factorize(labels.astype(str), sort=True)
        known = labels.notna().to_numpy()
        if len(self.levels) < 2:
            raise NotApplicable(f"the sentiment labels ({labels.name}) have fewer than two values")
        smallest = int(np.bincount(codes[known]).min())
        folds = min(FOLDS, smallest)
        if folds < 2:
            raise NotApplicable(f"a sentiment label of {labels.name} occurs once; cross-fitting needs two of each")
        self.fold = np.zeros(len(texts), dtype=int)
        split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
        rows = np.flatnonzero(known)
        for k, (_, test) in enumerate(split.split(rows, codes[rows])):
            self.fold[rows[test]] = k
        unlabelled = np.flatnonzero(~known)
        self.fold[unlabelled] = np.arange(len(unlabelled)) % folds
        array = np.asarray(texts, dtype=object)
        train = [known & (self.fold != k) for k in range(folds)]
        self.models = map_reporting(
            _fit_fold,
            [(array[t].tolist(), codes[t]) for t in train],
            1,
            progress,
            "training the sentiment classifier",
            FOLD_PROCESSES if len(texts) >= PARALLEL_MIN_TEXTS else 1,
        )

    def forget_vocabularies(self) -> None:
        """Keep of each fold's model only what `classes_of_counts` reads: its `TfidfWeights` and its SVM. The
        vectorizers' vocabularies, dicts of every unigram and bigram of the folds' training texts, are held and
        shipped to a sweep's workers for nothing (the five folds of the airline tweets pickle to 8.4 MB without
        them, 12.6 MB with); `classes` needs them, so it is no longer available."""
        self.models = [(tfidf_weights(model[0]), model[-1]) for model in self.models]

    def classes(self, texts: list[str]) -> np.ndarray:
        """The class code of each text (aligned with the records), by its record's out-of-fold model."""
        if any(isinstance(model, tuple) for model in self.models):
            raise RuntimeError(
                "the folds' vocabularies were forgotten: score texts by their counts (classes_of_counts)"
            )
        out = np.zeros(len(texts), dtype=int)
        array = np.asarray(texts, dtype=object)
        for k, model in enumerate(self.models):
            rows = np.flatnonzero(self.fold == k)
            if len(rows):
                out[rows] = model.predict(array[rows].tolist())
        return out

    def classes_of_counts(self, counts: dict[int, sparse.csr_matrix], onto: list[Projection]) -> np.ndarray:
        """`classes` from the texts' unigram and bigram counts in a space that holds the folds' training texts
        (``onto``: each fold's vectorizer's `projection` into it), without tokenizing the texts again."""
        out = np.zeros(next(iter(counts.values())).shape[0], dtype=int)
        for k, (model, fold_onto) in enumerate(zip(self.models, onto)):
            rows = np.flatnonzero(self.fold == k)
            if len(rows):
                out[rows] = model[-1].predict(tfidf_of(model[0], {n: c[rows] for n, c in counts.items()}, fold_onto))
        return out


def class_shares(classes: np.ndarray, authors: pd.Series, n_classes: int) -> tuple[np.ndarray, list]:
    """Per author, the share of their texts in each class (authors × classes) and the authors' names."""
    members, names = author_matrix(authors.reset_index(drop=True))
    onehot = np.zeros((len(classes), n_classes))
    onehot[np.arange(len(classes)), classes] = 1.0
    counts = np.asarray(members @ onehot)
    return counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0), names


SENTIMENT_FIELD = Param(
    "sentiment_field",
    str,
    None,
    "text measures: the categorical field of sentiment labels that trains the sentiment classifier "
    "(default: a categorical field whose name contains 'sentiment'; without one, the VADER lexicon)",
    fields=("categorical",),
    label="Sentiment labels",
)


class SentimentCosine(Measure):
    """Average per-author cosine similarity of sentiment-class shares (Ororbia, Linder & Snoke, Section 4)."""

    id = "sentiment_cosine"
    kind = "utility"
    better = "higher"
    label = "Sentiment similarity"
    meaning = (
        "Average over authors of the cosine similarity between the shares of each author's texts that a "
        "sentiment classifier calls negative, neutral or positive, in the original and in the release. "
        "1 = every author's mix of sentiment kept."
    )
    source = "Ororbia, Linder & Snoke, Section 4"
    applies_to = "text"
    settings = (SENTIMENT_FIELD,)

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        sentiment_field(dataset, settings[SENTIMENT_FIELD.name])

    def prepare(self, context: PrepareContext) -> None:
        dataset = context.dataset
        texts = original_texts(context)
        field = sentiment_field(dataset, context.settings[SENTIMENT_FIELD.name])
        author = dataset.schema.author
        self.authors = (
            dataset.frame[author].astype(str) if author is not None else pd.Series(np.arange(len(texts))).astype(str)
        )
        if field is None:
            self.model: CrossFitted | None = None
            self.n_classes = 3
            self.note = f"Classifier: the {LEXICON}, as the data has no sentiment labels."
            original = lexicon_classes(texts)
            self.original, _ = class_shares(original, self.authors, self.n_classes)
        else:
            labels, seed = dataset.frame[field], context.settings.seed
            self.field = field
            if len(texts) >= PARALLEL_MIN_TEXTS:  # trained in worker processes: the other measures meanwhile
                self._folds = beside(lambda progress: CrossFitted(texts, labels, seed, progress), context.progress)
            else:
                model = CrossFitted(texts, labels, seed, context.progress)
                self._folds = lambda: model

    def finish(self, context: PrepareContext) -> None:
        """The folds' classifiers collected, the confidential texts' classes, and the folds placed in the shared
        n-gram space."""
        folds = self.__dict__.pop("_folds", None)
        if folds is None:  # the lexicon, or finished already
            return
        context.progress(0, 1, "training the sentiment classifier")
        self.model = folds()
        self.n_classes = len(self.model.levels)
        self.note = (
            f"Classifier: a linear SVM trained on the field {self.field}, cross-fitted over {len(self.model.models)} "
            "folds (no text scored by a model that saw it)."
        )
        original = self.model.classes(original_texts(context))
        self.space = ngram_space(context)
        self.onto = [projection(model[0], self.space) for model in self.model.models]
        self.model.forget_vocabularies()  # placed in the space: not held, nor shipped, again
        context.progress(1, 1, "training the sentiment classifier")
        self.original, _ = class_shares(original, self.authors, self.n_classes)

    def compute(self, view: ReleaseView) -> MetricResult:
        if self.model is None:
            classes = lexicon_classes(released_texts(view))
        else:
            counts = {n: released_ngrams(view, self.space, n) for n in ORDERS}
            classes = self.model.classes_of_counts(counts, self.onto)
        released, names = class_shares(classes, self.authors, self.n_classes)
        cos = row_cosines(_sparse(self.original), _sparse(released))
        detail = pd.DataFrame({"author": names, "cosine": cos})
        return MetricResult(self.id, float(cos.mean()), detail=detail)


def _sparse(a: np.ndarray) -> sparse.csr_matrix:
    return sparse.csr_matrix(a)
