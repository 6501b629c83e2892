"""Identification by writing style: the per-target linear-SVM attack of Ororbia, Linder & Snoke, Section 3.

The intruder holds other texts by the people she targets (the dataset's external records). For each target q
she trains a linear SVM with an L2 penalty separating q's external texts from everyone else's. She then scores
every released author j by the share of j's released records classified as q (Eq. 4) and guesses the author
with the highest share. Risk is the share of targets guessed correctly.

Choices the paper leaves open, made here and stated: features are word unigrams and bigrams of the intruder's
own texts, TF-IDF weighted with sub-linear term frequency (the vocabulary is the intruder's, so it does not
depend on the release); each SVM uses balanced class weights because a target has few texts against many;
when several authors share the top score the guess is a uniform draw among them, and we count its expected
value (1/number tied if the target is among them) rather than drawing, which keeps the measure deterministic;
when no released record at all is classified as the target, the intruder has no evidence and makes no guess.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from engine.errors import DataError
from engine.intervals import wilson
from engine.measures.base import Attack, Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import ngram_space, preset_of, released_ngrams, require_intruder_texts
from engine.progress import Progress, no_progress
from engine.text.ngrams import ORDERS, projection, tfidf_of
from engine.text.tokens import tokenize

METRIC_ID = "attack_identification_rate"
RECORD_BLOCK = 8_192  # released records whose classifiers' decisions are taken at a time
TARGET_BLOCK = 32  # targets whose shares and guesses are worked out at a time


@dataclass
class StyleAttack:
    """The intruder's trained classifiers: one weight vector per target author."""

    vectorizer: TfidfVectorizer
    targets: list[str]
    weights: sparse.csr_matrix  # targets × features
    intercepts: np.ndarray

    @classmethod
    def train(
        cls,
        external_texts: list[str],
        external_authors: list[str],
        released_authors: list[str],
        *,
        C: float = 1.0,
        progress: Progress = no_progress,
    ) -> StyleAttack:
        """Train one L2 linear SVM per target: targets are external authors who also appear in the release."""
        ext_authors = np.asarray(external_authors, dtype=object)
        present = set(released_authors)
        targets = sorted({a for a in ext_authors if a in present})
        if not targets:
            raise DataError("none of the intruder's external authors appears in the release; the attack needs overlap")
        if len(set(ext_authors)) < 2:
            raise DataError("the intruder's external records come from a single author; the attack needs at least two")
        vec = TfidfVectorizer(
            tokenizer=tokenize, lowercase=False, token_pattern=None, ngram_range=(1, 2), sublinear_tf=True
        )
        X = vec.fit_transform(external_texts)
        W = np.zeros((len(targets), X.shape[1]))
        b = np.zeros(len(targets))
        for i, q in enumerate(targets):
            if i % 25 == 0:
                progress(i, len(targets), "training the intruder's classifiers")
            y = (ext_authors == q).astype(int)
            svm = LinearSVC(
                C=C, penalty="l2", loss="squared_hinge", class_weight="balanced", dual="auto", max_iter=5000
            )
            svm.fit(X, y)
            W[i] = svm.coef_[0]
            b[i] = svm.intercept_[0]
        progress(len(targets), len(targets), "training the intruder's classifiers")
        return cls(vec, targets, sparse.csr_matrix(W), b)

    def scores(self, texts: list[str], authors: list[str]) -> tuple[list[str], np.ndarray]:
        """Eq. 4 for every (target, released author): share of the author's records classified as the target."""
        return self.scores_of(self.vectorizer.transform(texts), authors)

    def scores_of(self, features: sparse.csr_matrix, authors: list[str]) -> tuple[list[str], np.ndarray]:
        """`scores` of records given by their features in the intruder's vocabulary. The classifiers' decisions are
        taken `RECORD_BLOCK` records at a time and the shares `TARGET_BLOCK` targets at a time, never a records ×
        targets table of numbers: of 200,000 posts and 300 targets, the decision values, their sparse product and
        the decisions as numbers were 1.2 GB beside the rest."""
        features = sparse.csr_matrix(features)
        positive = np.empty((features.shape[0], len(self.targets)), dtype=bool)  # records × targets
        for start in range(0, features.shape[0], RECORD_BLOCK):
            rows = slice(start, start + RECORD_BLOCK)
            positive[rows] = (features[rows] @ self.weights.T).toarray() + self.intercepts > 0
        codes, candidates = pd.factorize(pd.Series(authors, dtype=object), sort=True)
        member = sparse.csr_matrix(
            (np.ones(len(codes)), (codes, np.arange(len(codes)))), shape=(len(candidates), len(codes))
        )
        counts = np.asarray(member.sum(axis=1)).ravel()
        share = np.empty((len(candidates), len(self.targets)))  # candidates × targets
        for start in range(0, len(self.targets), TARGET_BLOCK):
            columns = slice(start, start + TARGET_BLOCK)
            share[:, columns] = member @ positive[:, columns].astype(float)
        share /= counts[:, None]
        return list(candidates), share.T  # targets × candidates

    def evaluate(self, texts: list[str], authors: list[str], max_tied: int = 10) -> MetricResult:
        """The attack identification rate of one release, with per-target detail for the bars."""
        return self.evaluate_of(self.vectorizer.transform(texts), authors, max_tied)

    def evaluate_of(self, features: sparse.csr_matrix, authors: list[str], max_tied: int = 10) -> MetricResult:
        """`evaluate` of records given by their features in the intruder's vocabulary.

        The detail keeps, per target, the released authors with a positive score, the true author, and the
        top-scoring guesses when at most ``max_tied`` tie; ``n_candidates``, ``n_tied`` (0 = no guess) and
        ``credit`` give the rest (authors left out all have score 0).
        """
        candidates, share = self.scores_of(features, authors)  # targets × candidates
        cand = np.asarray(candidates, dtype=object)
        targets = np.asarray(self.targets, dtype=object)
        place = {c: k for k, c in enumerate(candidates)}
        true_column = np.array([place.get(t, -1) for t in self.targets], dtype=np.int64)  # -1: not released
        best = share.max(axis=1, keepdims=True)
        n_tied = np.zeros(len(targets), dtype=np.int64)
        credit = np.zeros(len(targets))
        found: list[tuple[np.ndarray, ...]] = []
        for start in range(0, len(targets), TARGET_BLOCK):  # a block of targets at a time: no targets × candidates
            block = slice(start, start + TARGET_BLOCK)  # table beside the shares but the block's
            s, b = share[block], best[block]
            top = (np.abs(s - b) <= 1e-12) & (b > 0)
            is_true = np.zeros(s.shape, dtype=bool)
            has = np.flatnonzero(true_column[block] >= 0)
            is_true[has, true_column[block][has]] = True
            n_tied[block] = top.sum(axis=1)
            credit[block] = (top & is_true).any(axis=1) / np.maximum(n_tied[block], 1)
            rows, cols = np.nonzero((s > 0) | is_true | (top & (n_tied[block] <= max_tied)[:, None]))
            found.append((rows + start, cols, s[rows, cols], is_true[rows, cols], top[rows, cols]))
        rows, cols, score, true, guess = (np.concatenate(parts) for parts in zip(*found, strict=True))
        detail = pd.DataFrame(
            {
                "target": targets[rows],
                "candidate": cand[cols],
                "score": score,
                "is_true": true,
                "is_guess": guess,
                "n_candidates": len(cand),
                "n_tied": n_tied[rows],
                "credit": credit[rows],
            }
        )
        lo, hi = wilson(float(credit.sum()), len(credit))
        chance = 1.0 / len(cand) if len(cand) else None
        return MetricResult(METRIC_ID, float(np.mean(credit)), detail=detail, lo=lo, hi=hi, chance=chance)


class AttackIdentificationRate(Measure):
    """Share of targets the per-target linear-SVM attack identifies (Ororbia et al., Section 3, Eq. 4)."""

    id = METRIC_ID
    kind = "risk"
    better = "lower"
    label = "Attack identification rate"
    meaning = (
        "Share of targeted people whom an intruder, holding other texts they wrote, picks out correctly "
        "among the released authors with a per-person linear SVM (Ororbia et al., Eq. 4). "
        "0 = nobody identified, 1 = everyone identified; ties count as a fair share."
    )
    source = "Ororbia, Linder & Snoke, Section 3, Eq. 4"
    applies_to = "text"
    attack = Attack(
        holds=("other_texts",),
        names="author",
        assumptions=(
            "The intruder holds other texts by the people she targets (the dataset's external records) and trains "
            "one linear SVM per person on them; she names as a target's author the released author most of whose "
            "records her classifier gives to the target. Chance: guessing one of the released authors."
        ),
    )
    intruder_use = (
        "not measured for an intruder who holds no texts; the fields she knows do not enter this paper's attack "
        "(the whole-release measure uses them)."
    )

    def prepare(self, context: PrepareContext) -> None:
        preset_of(context, needs_texts=True)
        ext, self.author = require_intruder_texts(context.dataset)
        text = context.dataset.schema.text
        self.style = StyleAttack.train(
            ext[text].astype(str).tolist(),
            ext[self.author].astype(str).tolist(),
            context.dataset.frame[self.author].astype(str).tolist(),
            progress=context.progress,
        )

        self.space = ngram_space(context)
        self.projection = projection(self.style.vectorizer, self.space)

    def compute(self, view: ReleaseView) -> MetricResult:
        counts = {n: released_ngrams(view, self.space, n) for n in ORDERS}
        features = tfidf_of(self.style.vectorizer, counts, self.projection)
        return self.style.evaluate_of(features, view.data[self.author].astype(str).tolist())
