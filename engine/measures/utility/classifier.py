"""Downstream-classifier utility (Ororbia, Linder & Snoke, Section 4, the fourth utility measure): does a
classifier trained on the release predict as well on confidential texts as one trained on the confidential
texts themselves?

The target is a categorical field or the use of a hashtag (the paper's #bluehand; `MeasureSettings.
classifier_target`, by default the first sensitive categorical field, else the first categorical field, else
the hashtag the most authors use). The release's labels are its own values of the field, so the measure applies
to every method: one that changes the text teaches from other words, one that synthesizes the field from
other labels (extending the paper's measure from text to the whole release). The records
are split once, stratified by the target, into three quarters for training and a quarter held out; beyond
`MAX_TRAIN` training records a seeded sample of that many trains (a simplification for large data: the
baseline and every release train on the same records). A linear
SVM on a bag of words (which word unigrams and bigrams occur) is trained on the training records' texts — the
confidential ones for the baseline, the released ones for a release, each with its own labels (a hashtag's
use is read off the text it is trained on, so a release that drops the hashtag teaches nothing, as the
paper's redaction scores 0) — and predicts the held-out records' confidential texts. A hashtag is removed from
every text before the words are counted. The measure is F1 of the release's classifier over F1 of the
confidential one: macro-averaged F1 over the field's values, or F1 of "uses the hashtag" (the paper's
measure). Training texts of a single label, or without one word, predict their most common label everywhere.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.base import Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.measures.shared import ngram_space, original_ngrams, original_texts, released_ngrams, released_texts
from engine.protect.params import Param
from engine.text.ngrams import widened
from engine.text.tokens import tokenize

if TYPE_CHECKING:
    from engine.measures.settings import MeasureSettings

HELD_OUT = 0.25
SVM_C = 0.1
"""The SVM's regularization constant (the paper gives none). With far more word and bigram features than texts,
liblinear's default C = 1 needs up to ten times the iterations on a release that hides the target's words
(2 s a release on the airline tweets) and predicts no better: on those tweets F1 0.996 / 0.345 (confidential /
redacted) at C = 0.1 against 0.997 / 0.333 at C = 1."""
DUAL_ITERATIONS = 50
"""Passes of liblinear's dual solver before the SVM is fitted by its primal one instead (`_svm`)."""
DUAL_TOL = 0.1
PRIMAL_TOL = 0.01
"""Stopping tolerances: liblinear's own defaults for its dual (largest violation of the optimality conditions
≤ 0.1) and primal (gradient norm ≤ 0.01 of the starting one) L2-loss SVM solvers, where scikit-learn sets 10⁻⁴
for both. On 10,000 texts of the 50,000-document corpus (`benchmarks/bench_scale.py`) the dual then converges
in 24–27 passes (0.2 s) where at 10⁻⁴ it did not in 50 and the primal took 2–2.7 s more; the held-out macro F1
of the fits agreed to 0.0002 (0.5565 and 0.4249 against 0.5566 and 0.4247, true and half-resampled labels)."""
MIN_HASHTAG_RECORDS = 10
MAX_TRAIN = 10_000
"""Training records at most (drawn with the seed beyond this many, the same for the baseline and every
release; the note says so): an SVM is trained per release, and on 37,500 records that made a 50,000-document
sweep of 240 releases take most of its time (`benchmarks/bench_scale.py`)."""


def hashtags(text: str) -> set[str]:
    return {t for t in tokenize(text) if t.startswith("#") and len(t) > 1}


def classifier_target(
    dataset: Dataset,
    texts: list[str],
    spec: str | None,
    authors: list[str] | None = None,
    withheld: tuple[str, ...] = (),
) -> str:
    """The target: ``spec`` checked (a categorical field, or ``#tag``), else the first categorical field with
    two values or more, sensitive fields first (what an analyst studies, and what field methods synthesize by
    default, so one target serves text and field methods alike), else the hashtag used by the most authors (in
    at least 10 records, not in all, and by two authors or more: a hashtag only one author uses is a task of
    telling that author apart); NotApplicable when there is none. ``authors`` (None: every record its own
    author) says who wrote each text. A field the releases leave out of the bundle (``withheld``, the swap's
    protected field) is no target: no one who receives a release has its labels to train on, and predicting it
    from the text is the attack the method defends against."""
    categorical = [f.name for f in dataset.schema.fields if f.kind == "categorical"]
    if spec is not None:
        if spec.startswith("#") and len(spec) > 1:
            return spec.lower()
        if spec not in categorical:
            raise ConfigError(
                f"classifier target '{spec}' is neither a categorical field nor a #hashtag; categorical fields: "
                f"{', '.join(categorical) or 'none'}"
            )
        if spec in withheld:
            raise NotApplicable(
                f"the target {spec} is withheld from the release (the method protects it), so no one who receives "
                "it can train on it; choose another target (classifier_target)"
            )
        return spec
    sensitive = [f.name for f in dataset.schema.fields if f.kind == "categorical" and f.role == "sensitive"]
    for name in [n for n in dict.fromkeys([*sensitive, *categorical]) if n not in withheld]:
        if dataset.frame[name].nunique(dropna=True) >= 2:
            return name
    who = authors if authors is not None else [str(i) for i in range(len(texts))]
    records: Counter[str] = Counter()
    users: dict[str, set[str]] = {}
    for text, author in zip(texts, who):
        for tag in hashtags(text):
            records[tag] += 1
            users.setdefault(tag, set()).add(author)
    candidates = [t for t, n in records.items() if MIN_HASHTAG_RECORDS <= n < len(texts) and len(users[t]) >= 2]
    if candidates:
        return max(candidates, key=lambda t: (len(users[t]), records[t], t))
    hidden = [n for n in categorical if n in withheld]
    raise NotApplicable(
        "needs a target to predict: a categorical field, or a hashtag used in at least "
        f"{MIN_HASHTAG_RECORDS} texts by two authors or more (set it with classifier_target)"
        + (f"; {', '.join(hidden)} is withheld from the release, which protects it" if hidden else "")
    )


def _without(tag: str, texts: list[str]) -> list[str]:
    pattern = re.compile(re.escape(tag) + r"(?![\w'’])", re.IGNORECASE)
    return [pattern.sub(" ", t) for t in texts]


def _predict(train_x: sparse.csr_matrix, test_x: sparse.csr_matrix, train_labels: np.ndarray) -> np.ndarray:
    """The SVM trained on binary word features ``train_x`` predicting the rows of ``test_x``; training texts of a
    single label, or without a word, teach only their most common label, predicted everywhere."""
    if len(set(train_labels.tolist())) < 2 or train_x.shape[1] == 0:
        common = Counter(train_labels.tolist()).most_common(1)
        return np.full(test_x.shape[0], common[0][0] if common else 0)
    return _svm(train_x, train_labels).predict(test_x)


def _svm(x: sparse.csr_matrix, labels: np.ndarray) -> LinearSVC:
    """The linear SVM fitted by whichever of liblinear's solvers converges first (at `DUAL_TOL` / `PRIMAL_TOL`):
    with more features than texts its dual (coordinate descent) when it converges within `DUAL_ITERATIONS`
    passes, else its primal (Newton), which needs some 20 iterations where the dual can need hundreds of
    passes (releases whose words hide the target). Fewer features than texts: the primal, as liblinear's own
    "auto" choice. Deterministic for given data (liblinear's dual visits the texts in an order drawn with a
    fixed seed, not from NumPy's global random state)."""
    with warnings.catch_warnings():  # a release of random words may not separate; the fit is still a model
        warnings.simplefilter("ignore", ConvergenceWarning)
        if x.shape[0] < x.shape[1]:
            dual = LinearSVC(C=SVM_C, dual=True, tol=DUAL_TOL, max_iter=DUAL_ITERATIONS, random_state=0)
            dual.fit(x, labels)
            if int(np.max(dual.n_iter_)) < DUAL_ITERATIONS:
                return dual
        return LinearSVC(C=SVM_C, dual=False, tol=PRIMAL_TOL, max_iter=5000, random_state=0).fit(x, labels)


def _text_features(train: list[str], test: list[str]) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """Binary unigram and bigram features of texts, the vocabulary the training texts'."""
    vectorizer = CountVectorizer(
        tokenizer=tokenize, lowercase=False, token_pattern=None, ngram_range=(1, 2), binary=True
    )
    try:
        return vectorizer.fit_transform(train), vectorizer.transform(test)
    except ValueError:  # not one word in the training texts
        return sparse.csr_matrix((len(train), 0)), sparse.csr_matrix((len(test), 0))


def _f1(predicted: np.ndarray, test_labels: np.ndarray, hashtag: bool) -> float:
    if hashtag:
        return float(f1_score(test_labels, predicted, pos_label=1, zero_division=0.0))
    return float(f1_score(test_labels, predicted, labels=np.unique(test_labels), average="macro", zero_division=0.0))


def _word_features(unigrams: sparse.csr_matrix, bigrams: sparse.csr_matrix) -> sparse.csr_matrix:
    """Which unigrams and bigrams occur in each text (0/1), unigram columns first."""
    out = sparse.hstack([unigrams, bigrams], format="csr")
    out.data[:] = 1.0
    return out


def _count_features(
    train: list[sparse.csr_matrix], test: list[sparse.csr_matrix]
) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """`_predict`'s features from the unigram and bigram counts of one `NgramSpace` (the training texts may have
    more columns: n-grams new in a release): the n-grams the training texts use, as a vectorizer fitted on them
    would have."""
    train_x = _word_features(*train)
    test_x = _word_features(*(widened(t, r.shape[1]) for t, r in zip(test, train)))
    used = np.unique(train_x.indices)
    return train_x[:, used], test_x[:, used]


CLASSIFIER_TARGET = Param(
    "classifier_target",
    str,
    None,
    "every method: what the downstream classifier predicts, a categorical field or a #hashtag's use "
    "(default: the first sensitive categorical field, else the first categorical one; without one, the "
    "hashtag the most authors use)",
    label="Classifier target (field or #hashtag)",
)


class ClassifierF1Ratio(Measure):
    """F1 of a classifier trained on the release over F1 of one trained on the confidential texts, both
    predicting held-out confidential texts (Ororbia, Linder & Snoke, Section 4)."""

    id = "classifier_f1_ratio"
    kind = "utility"
    better = "higher"
    label = "Classifier F1 ratio"
    meaning = (
        "A classifier trained on the release (its texts and its values of the field) predicts a field (or a "
        "hashtag's use) for held-out confidential texts; its F1 divided by the F1 of the same classifier "
        "trained on the confidential data. 1 = the release teaches the task as well as the original; 0 = it "
        "teaches nothing. The same task for every method, text or fields, that releases the target; a method that "
        "withholds it is measured on another target (the note names it), and a comparison of methods keeps it off "
        "their common frontier."
    )
    source = "Ororbia, Linder & Snoke, Section 4; applied to every method by training on the released labels too"
    applies_to = "release"
    high = float("inf")
    reads_withheld = True  # a withheld field is no target
    settings = (CLASSIFIER_TARGET,)

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        if settings[CLASSIFIER_TARGET.name] is not None:
            classifier_target(dataset, [], settings[CLASSIFIER_TARGET.name])

    def prepare(self, context: PrepareContext) -> None:
        dataset = context.dataset
        texts = original_texts(context)
        author = dataset.schema.author
        authors = None if author is None else dataset.frame[author].astype(str).tolist()
        self.target = classifier_target(
            dataset, texts, context.settings[CLASSIFIER_TARGET.name], authors, context.withheld
        )
        self.hashtag = self.target.startswith("#")
        if self.hashtag:
            labels = np.array([int(self.target in hashtags(t)) for t in texts])
        else:
            known = dataset.frame[self.target].notna().to_numpy()
            labels = np.full(len(texts), -1)
            labels[known], self.levels = pd.factorize(dataset.frame[self.target][known].astype(str), sort=True)
        rows = np.flatnonzero(labels >= 0)
        counts = np.bincount(labels[rows])
        if (counts > 0).sum() < 2:
            raise NotApplicable(f"the target {self.target} takes a single value")
        classes = int((counts > 0).sum())
        held_out = int(np.ceil(HELD_OUT * len(rows)))
        feasible = counts[counts > 0].min() >= 2 and min(held_out, len(rows) - held_out) >= classes
        stratify = labels[rows] if feasible else None  # too few records to stratify: a plain random split
        self.train, self.test = train_test_split(
            rows, test_size=HELD_OUT, random_state=context.settings.seed, stratify=stratify
        )
        split = len(self.train)
        if split > MAX_TRAIN:
            rng = np.random.default_rng(context.settings.seed)
            self.train = np.sort(rng.choice(self.train, MAX_TRAIN, replace=False))
        if not np.isin(labels[self.test], labels[self.train]).any():  # F1 = 0 is certain: nothing is trained
            raise NotApplicable(
                f"no held-out record's {self.target} occurs in the training records ({classes:,} values over "
                f"{len(rows):,} records): a classifier cannot predict any of them, so F1 would be 0"
            )
        if self.hashtag:  # the tag comes out of every text before its words are counted
            array = np.asarray(self._clean(texts), dtype=object)
            self.test_texts = array[self.test].tolist()
            self.features = _text_features(array[self.train].tolist(), self.test_texts)
        else:  # the texts as they are: their word counts are shared with other measures (`original_ngrams`)
            self.space = ngram_space(context)
            original = [original_ngrams(context, 1), original_ngrams(context, 2)]
            self.test_counts = [m[self.test] for m in original]
            self.features = _count_features([m[self.train] for m in original], self.test_counts)
        predicted = _predict(*self.features, labels[self.train])
        self.test_labels = labels[self.test]
        self.train_labels = labels[self.train]
        self.train_texts = np.asarray(texts, dtype=object)[self.train]
        self.baseline = _f1(predicted, self.test_labels, self.hashtag)
        if self.baseline == 0:
            raise NotApplicable(
                f"a classifier trained on the confidential texts does not predict {self.target} at all (F1 = 0)"
            )
        what = f"the use of {self.target}" if self.hashtag else f"the field {self.target} (macro F1)"
        drawn = f" (drawn at random of {split:,})" if split > len(self.train) else ""
        self.task = f"predicting {what.removesuffix(' (macro F1)')}"
        self.note = (
            f"Predicts {what}; trained on {len(self.train):,} records{drawn}, tested on {len(self.test):,} "
            f"held-out confidential records; F1 trained on the confidential texts {self.baseline:.3f}."
        )

    def _clean(self, texts: list[str]) -> list[str]:
        return _without(self.target, texts) if self.hashtag else texts

    def _release_labels(self, view: ReleaseView, texts: list[str]) -> np.ndarray:
        if self.hashtag:
            return np.array([int(self.target in hashtags(texts[i])) for i in self.train])
        return self.levels.get_indexer(view.data[self.target].astype(str).to_numpy()[self.train])

    def compute(self, view: ReleaseView) -> MetricResult:
        texts = released_texts(view)
        labels = self._release_labels(view, texts)
        same_texts = all(a == b for a, b in zip(np.asarray(texts, dtype=object)[self.train], self.train_texts))
        if same_texts and np.array_equal(labels, self.train_labels):
            return MetricResult(self.id, 1.0)  # the confidential training records: the baseline's own classifier
        if same_texts:  # only the labels changed (a field synthesized): the confidential texts' features
            features = self.features
        elif self.hashtag:
            features = _text_features(self._clean([texts[i] for i in self.train]), self.test_texts)
        else:
            released = [released_ngrams(view, self.space, n)[self.train] for n in (1, 2)]
            features = _count_features(released, self.test_counts)
        predicted = _predict(*features, labels)
        return MetricResult(self.id, _f1(predicted, self.test_labels, self.hashtag) / self.baseline)
