"""Word unigram and bigram counts in one id space, so that the text measures of a release count its n-grams
once between them rather than each through its own vectorizer.

The space gives fixed ids to the n-grams of the texts it was built from (the confidential texts and the
intruder's external ones); a release's n-grams seen nowhere there get ids after those, for that release only.
Words are `engine.text.tokens.tokenize`'s; a bigram is two adjacent words of one text, kept as one integer
made of its words' ids (smaller and quicker to look up than a pair of strings).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from engine.text.tokens import tokenize

ORDERS = (1, 2)
PAIR_BASE = 1 << 32
"""A bigram's key: id of its first word × PAIR_BASE + id of its second."""


class NgramSpace:
    """Ids of the unigrams (a word) and bigrams (two adjacent words) of ``corpora``, in order of first use."""

    def __init__(self, *corpora: Sequence[str]) -> None:
        self.words: dict[str, int] = {}
        self.pairs: dict[int, int] = {}
        for texts in corpora:
            for text in texts:
                ids = [self.words.setdefault(t, len(self.words)) for t in tokenize(text)]
                for a, b in zip(ids, ids[1:]):
                    self.pairs.setdefault(a * PAIR_BASE + b, len(self.pairs))

    def width(self, n: int) -> int:
        """How many n-grams of order ``n`` have a fixed id."""
        return len(self.words) if n == 1 else len(self.pairs)

    def id_of(self, term: str) -> tuple[int, int] | None:
        """(order, id) of an n-gram written as words joined by one space (a vectorizer's feature name)."""
        ids = [self.words.get(w) for w in term.split(" ")]
        if None in ids or len(ids) > 2:
            return None
        if len(ids) == 1:
            return 1, ids[0]  # type: ignore[return-value]
        found = self.pairs.get(ids[0] * PAIR_BASE + ids[1])  # type: ignore[operator]
        return None if found is None else (2, found)

    @functools.cached_property
    def _pair_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The bigram keys with a fixed id, sorted, and their ids (looked up many at once)."""
        keys = np.fromiter(self.pairs.keys(), dtype=np.int64, count=len(self.pairs))
        ids = np.fromiter(self.pairs.values(), dtype=np.int64, count=len(self.pairs))
        order = np.argsort(keys)
        return keys[order], ids[order]

    def counts(self, texts: Sequence[str], n: int) -> sparse.csr_matrix:
        """Texts × n-gram ids: how often each n-gram occurs in each text. N-grams without a fixed id take the
        columns after `width`, in order of first use here."""
        words = self.words
        new_words: dict[str, int] = {}
        tokens = [tokenize(text) for text in texts]
        lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
        ids = np.array(
            [
                w if (w := words.get(t)) is not None else new_words.setdefault(t, len(words) + len(new_words))
                for text_tokens in tokens
                for t in text_tokens
            ],
            dtype=np.int64,
        )
        if n == 1:
            indices, per_text, extra = ids, lengths, len(new_words)
        else:
            # Adjacent words of one text: every position but a text's last.
            last = np.cumsum(lengths)[lengths > 0] - 1
            inside = np.ones(max(len(ids) - 1, 0), dtype=bool)
            inside[last[last < len(inside)]] = False
            keys = (ids[:-1] * PAIR_BASE + ids[1:])[inside] if len(ids) > 1 else ids[:0]
            per_text = np.maximum(lengths - 1, 0)
            table, table_ids = self._pair_table
            indices = np.full(len(keys), -1, dtype=np.int64)
            found = np.zeros(len(keys), dtype=bool)
            if len(table):
                at = np.minimum(np.searchsorted(table, keys), len(table) - 1)
                found = table[at] == keys
                indices[found] = table_ids[at[found]]
            # Bigrams without a fixed id: numbered after `width`, in order of first use.
            unseen, first, which = np.unique(keys[~found], return_index=True, return_inverse=True)
            rank = np.empty(len(unseen), dtype=np.int64)
            rank[np.argsort(first)] = np.arange(len(unseen))
            indices[~found] = self.width(2) + rank[which.ravel()]
            extra = len(unseen)
        indptr = np.concatenate([[0], np.cumsum(per_text)]).astype(np.int64)
        out = sparse.csr_matrix(
            (np.ones(len(indices)), np.asarray(indices, dtype=np.int64), indptr),
            shape=(len(texts), self.width(n) + extra),
        )
        out.sum_duplicates()
        return out


def widened(matrix: sparse.csr_matrix, width: int) -> sparse.csr_matrix:
    """``matrix`` with empty columns added on the right up to ``width`` (counts of a space's fixed ids beside
    those of a release that has more)."""
    if matrix.shape[1] == width:
        return matrix
    return sparse.csr_matrix((matrix.data, matrix.indices, matrix.indptr), shape=(matrix.shape[0], width))


Projection = dict[int, tuple[np.ndarray, np.ndarray]]
"""For each n-gram order, the ids in a space of a fitted vectorizer's features and their columns."""


def projection(vectorizer: Any, space: NgramSpace) -> Projection:
    """Where each feature of a fitted word unigram/bigram ``vectorizer`` (tokens of `tokenize`) sits in
    ``space``; a feature without an id there is left out (no text of the space holds it)."""
    found: dict[int, tuple[list[int], list[int]]] = {n: ([], []) for n in ORDERS}
    for term, column in vectorizer.vocabulary_.items():
        at = space.id_of(str(term))
        if at is not None:
            found[at[0]][0].append(at[1])
            found[at[0]][1].append(column)
    return {n: (np.asarray(ids, dtype=np.int64), np.asarray(cols, dtype=np.int64)) for n, (ids, cols) in found.items()}


@dataclass(frozen=True)
class TfidfWeights:
    """What `tfidf_of` reads of a fitted ``TfidfVectorizer``: its number of features, their idf weights, its norm
    and sublinear scaling; not its vocabulary, a dict of every n-gram it was fitted on, which `projection` has
    already placed."""

    width: int
    idf: np.ndarray
    norm: str | None
    sublinear_tf: bool


def tfidf_weights(vectorizer: Any) -> TfidfWeights:
    """The `TfidfWeights` of a fitted ``TfidfVectorizer``."""
    return TfidfWeights(len(vectorizer.vocabulary_), vectorizer.idf_, vectorizer.norm, bool(vectorizer.sublinear_tf))


def tfidf_of(
    vectorizer: Any | TfidfWeights, counts: dict[int, sparse.csr_matrix], onto: Projection
) -> sparse.csr_matrix:
    """What a fitted ``TfidfVectorizer``'s ``transform`` gives for texts given by their n-gram counts in a space
    (``onto`` from `projection`), without tokenizing them again; the vectorizer or its `TfidfWeights`."""
    from sklearn.feature_extraction.text import TfidfTransformer

    weights = vectorizer if isinstance(vectorizer, TfidfWeights) else tfidf_weights(vectorizer)
    width = weights.width
    total = sparse.csr_matrix((next(iter(counts.values())).shape[0], width))
    for n, matrix in counts.items():
        ids, cols = onto[n]
        total = total + matrix @ sparse.csr_matrix((np.ones(len(ids)), (ids, cols)), shape=(matrix.shape[1], width))
    tfidf = TfidfTransformer(norm=weights.norm, sublinear_tf=weights.sublinear_tf)
    tfidf.idf_ = weights.idf
    return tfidf.transform(total)
