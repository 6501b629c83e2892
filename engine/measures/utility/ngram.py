"""Per-author n-gram similarity between the original and the release (Ororbia, Linder & Snoke, Section 4).

For each author, the counts of unigrams (or bigrams, adjacent words within a record) over all their records
in the original and in the release, compared by cosine similarity; the measure is the average over authors.
Without an author column each record is its own author.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import original_texts, released_authors, released_texts
from engine.text.tokens import tokenize


def _author_matrix(authors: pd.Series) -> tuple[sparse.csr_matrix, list]:
    codes, uniques = pd.factorize(authors, sort=True)
    m = sparse.csr_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))), shape=(len(uniques), len(codes)))
    return m, list(uniques)


def row_cosines(a: sparse.csr_matrix, b: sparse.csr_matrix) -> np.ndarray:
    """Cosine similarity of matching rows; two empty rows are identical (1), one empty row shares nothing (0)."""
    dot = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    na = np.sqrt(np.asarray(a.multiply(a).sum(axis=1)).ravel())
    nb = np.sqrt(np.asarray(b.multiply(b).sum(axis=1)).ravel())
    out = np.where((na > 0) & (nb > 0), dot / np.where(na * nb > 0, na * nb, 1.0), 0.0)
    out[(na == 0) & (nb == 0)] = 1.0
    return np.clip(out, 0.0, 1.0)  # counts are non-negative; clipping only removes rounding above 1


def ngram_cosine(original: list[str], released: list[str], authors: pd.Series | None, n: int) -> MetricResult:
    """Average per-author cosine similarity of n-gram counts (n = 1: `unigram_cosine`, n = 2: `bigram_cosine`)."""
    metric = {1: "unigram_cosine", 2: "bigram_cosine"}[n]
    if authors is None:
        authors = pd.Series(np.arange(len(original)))
    vec = CountVectorizer(tokenizer=tokenize, lowercase=False, token_pattern=None, ngram_range=(n, n))
    try:  # one pass over both: the rows of the original, then those of the release
        counts = vec.fit_transform(list(original) + list(released)).tocsr()
    except ValueError:  # no n-gram anywhere (e.g. all one-word texts for bigrams): nothing to compare
        return MetricResult(metric, float("nan"))
    members, names = _author_matrix(pd.Series(authors).reset_index(drop=True))
    cos = row_cosines(members @ counts[: len(original)], members @ counts[len(original) :])
    detail = pd.DataFrame({"author": names, "cosine": cos})
    return MetricResult(metric, float(cos.mean()), detail=detail)


class _NgramCosine(Measure):
    """`ngram_cosine` of order ``n`` between the original and the released texts."""

    n: int
    kind = "utility"
    better = "higher"
    source = "Ororbia, Linder & Snoke, Section 4"
    applies_to = "text"

    def prepare(self, context: PrepareContext) -> None:
        self.original = original_texts(context)

    def compute(self, view: ReleaseView) -> MetricResult:
        return ngram_cosine(self.original, released_texts(view), released_authors(view), self.n)


class UnigramCosine(_NgramCosine):
    """Per-author cosine similarity of word counts (Ororbia, Linder & Snoke, Section 4)."""

    id = "unigram_cosine"
    n = 1
    label = "Word (unigram) similarity"
    meaning = (
        "Average over authors of the cosine similarity between each author's word counts in the original "
        "and in the release. 1 = every author's vocabulary kept exactly."
    )


class BigramCosine(_NgramCosine):
    """Per-author cosine similarity of adjacent-word-pair counts (Ororbia, Linder & Snoke, Section 4)."""

    id = "bigram_cosine"
    n = 2
    label = "Word-pair (bigram) similarity"
    meaning = (
        "Average over authors of the cosine similarity between each author's counts of adjacent word pairs "
        "in the original and in the release. 1 = word order and vocabulary kept exactly."
    )
