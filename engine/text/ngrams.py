"""Word unigram and bigram counts in one id space, so that the text measures of a release count its n-grams
once between them rather than each through its own vectorizer.

The space gives fixed ids to the n-grams of the texts it was built from (the confidential texts and the
intruder's external ones); a release's n-grams seen nowhere there get ids after those, for that release only.
Words are `engine.text.tokens.tokenize`'s; a bigram is two adjacent words of one text.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
from scipy import sparse

from engine.text.tokens import tokenize

ORDERS = (1, 2)


def _grams(tokens: list[str], n: int) -> Iterable[Hashable]:
    return tokens if n == 1 else zip(tokens, tokens[1:])


class NgramSpace:
    """Ids of the unigrams (a word) and bigrams (a pair of words) of ``corpora``, in order of first use."""

    def __init__(self, *corpora: Sequence[str]) -> None:
        self.ids: dict[int, dict[Hashable, int]] = {n: {} for n in ORDERS}
        for texts in corpora:
            for text in texts:
                tokens = tokenize(text)
                for n in ORDERS:
                    ids = self.ids[n]
                    for gram in _grams(tokens, n):
                        ids.setdefault(gram, len(ids))

    def width(self, n: int) -> int:
        """How many n-grams of order ``n`` have a fixed id."""
        return len(self.ids[n])

    def id_of(self, term: str) -> tuple[int, int] | None:
        """(order, id) of an n-gram written as words joined by one space (a vectorizer's feature name)."""
        words = term.split(" ")
        key: Hashable = words[0] if len(words) == 1 else tuple(words)
        found = self.ids.get(len(words), {}).get(key)
        return None if found is None else (len(words), found)

    def counts(self, texts: Sequence[str], n: int) -> sparse.csr_matrix:
        """Texts × n-gram ids: how often each n-gram occurs in each text. N-grams without a fixed id take the
        columns after `width`, in order of first use here."""
        known = self.ids[n]
        extra: dict[Hashable, int] = {}
        base = len(known)
        indices: list[int] = []
        indptr = [0]
        for text in texts:
            for gram in _grams(tokenize(text), n):
                found = known.get(gram)
                indices.append(found if found is not None else extra.setdefault(gram, base + len(extra)))
            indptr.append(len(indices))
        out = sparse.csr_matrix(
            (np.ones(len(indices)), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(texts), base + len(extra)),
        )
        out.sum_duplicates()
        return out


def widened(matrix: sparse.csr_matrix, width: int) -> sparse.csr_matrix:
    """``matrix`` with empty columns added on the right up to ``width`` (counts of a space's fixed ids beside
    those of a release that has more)."""
    if matrix.shape[1] == width:
        return matrix
    return sparse.csr_matrix((matrix.data, matrix.indices, matrix.indptr), shape=(matrix.shape[0], width))
