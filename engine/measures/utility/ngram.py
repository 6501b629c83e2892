"""Per-author n-gram similarity between the original and the release (Ororbia, Linder & Snoke, Section 4).

For each author, the counts of unigrams (or bigrams, adjacent words within a record) over all their records
in the original and in the release, compared by cosine similarity; the measure is the average over authors.
Without an author column each record is its own author.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import ngram_space, original_ngrams, released_authors, released_ngrams
from engine.text.ngrams import NgramSpace, widened


def author_matrix(authors: pd.Series) -> tuple[sparse.csr_matrix, list]:
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


def author_cosine(
    original: sparse.csr_matrix, released: sparse.csr_matrix, authors: pd.Series | None, metric: str
) -> MetricResult:
    """Average per-author cosine similarity of n-gram counts: ``original`` and ``released`` are records ×
    n-gram ids of one `NgramSpace` (the release may have more columns: n-grams new in it)."""
    if original.nnz == 0 and released.nnz == 0:  # no n-gram anywhere (e.g. all one-word texts for bigrams)
        return MetricResult(metric, float("nan"))
    width = max(original.shape[1], released.shape[1])
    if authors is None:
        authors = pd.Series(np.arange(original.shape[0]))
    members, names = author_matrix(pd.Series(authors).reset_index(drop=True))
    cos = row_cosines(members @ widened(original, width), members @ widened(released, width))
    detail = pd.DataFrame({"author": names, "cosine": cos})
    return MetricResult(metric, float(cos.mean()), detail=detail)


METRIC_OF_ORDER = {1: "unigram_cosine", 2: "bigram_cosine"}


def ngram_cosine(original: list[str], released: list[str], authors: pd.Series | None, n: int) -> MetricResult:
    """Average per-author cosine similarity of n-gram counts (n = 1: `unigram_cosine`, n = 2: `bigram_cosine`)."""
    space = NgramSpace(original)
    return author_cosine(space.counts(original, n), space.counts(released, n), authors, METRIC_OF_ORDER[n])


class _NgramCosine(Measure):
    """`ngram_cosine` of order ``n`` between the original and the released texts."""

    n: int
    kind = "utility"
    better = "higher"
    source = "Ororbia, Linder & Snoke, Section 4"
    applies_to = "text"

    def prepare(self, context: PrepareContext) -> None:
        self.space = ngram_space(context)
        self.original = original_ngrams(context, self.n)

    def compute(self, view: ReleaseView) -> MetricResult:
        released = released_ngrams(view, self.space, self.n)
        return author_cosine(self.original, released, released_authors(view), self.id)


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
