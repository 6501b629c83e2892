"""Semantic chunks of a document and their embeddings on the unit sphere (Greve & Sablica, Sections 2.2 and 3.1).

A document is cut into sentences (spaCy's rule-based sentencizer: no model, offsets kept), each sentence is
embedded, and a breakpoint is put between two consecutive sentences where the cosine distance of their
embeddings exceeds the ``percentile``-th percentile of the document's consecutive distances (the paper's
breakpoint chunker, 75th percentile by default). The chunks are the runs of sentences between breakpoints, as
character ranges of the document, so a chunk's text and its entities' offsets stay those of the document.

`TfidfSvdEmbedder` is the embedding the project can install and run offline anywhere (TF-IDF of words and word
pairs, truncated SVD, rows scaled to unit length); the paper allows any embedding model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from engine.progress import Progress, no_progress

if TYPE_CHECKING:
    from spacy.language import Language

Embed = Callable[[Sequence[str]], np.ndarray]
"""Texts → one unit-length row per text."""

DEFAULT_PERCENTILE = 75.0


@lru_cache(maxsize=1)
def _sentencizer() -> Language:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10**8  # rule-based: no model memory grows with the text
    return nlp


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as (start, end) character offsets, surrounding white space left out."""
    out = []
    for sent in _sentencizer()(text).sents:
        start, end = sent.start_char, sent.end_char
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append((start, end))
    return out


def breakpoints(embeddings: np.ndarray, percentile: float = DEFAULT_PERCENTILE) -> np.ndarray:
    """Where to cut between consecutive sentences (m − 1 booleans for m unit-length rows): where the cosine
    distance 1 − x_t·x_{t+1} is above the ``percentile``-th percentile of the document's consecutive distances."""
    if not 0.0 <= percentile <= 100.0:
        raise ValueError(f"the breakpoint percentile must lie in [0, 100], got {percentile}")
    x = np.asarray(embeddings, dtype=float)
    if len(x) < 2:
        return np.zeros(0, dtype=bool)
    distance = 1.0 - np.einsum("ij,ij->i", x[:-1], x[1:])
    return distance > np.percentile(distance, percentile)


def chunk_spans(
    spans: Sequence[tuple[int, int]], embeddings: np.ndarray, percentile: float = DEFAULT_PERCENTILE
) -> list[tuple[int, int]]:
    """The chunks of one document: runs of its sentences ``spans`` between `breakpoints`, as (start, end) from
    the first sentence's start to the last one's end."""
    if len(spans) == 0:
        return []
    cut = breakpoints(embeddings, percentile)
    starts = [0, *(np.flatnonzero(cut) + 1).tolist()]
    ends = [*(np.flatnonzero(cut) + 1).tolist(), len(spans)]
    return [(spans[a][0], spans[b - 1][1]) for a, b in zip(starts, ends)]


def to_sphere(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; a zero row (a text without a known term) becomes a fixed unit vector."""
    x = np.asarray(x, dtype=float)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    if x.shape[1]:
        out[norms[:, 0] == 0, 0] = 1.0
    return out


@dataclass
class TfidfSvdEmbedder:
    """TF-IDF of words and word pairs (sublinear term frequencies), truncated to ``dims`` dimensions by SVD, rows
    on the unit sphere. `fit` learns the vocabulary and the projection from a corpus; calling the embedder
    embeds texts with them."""

    dims: int = 100
    seed: int = 0
    min_df: int = 2
    _vectorizer: object = field(default=None, repr=False)
    _svd: object = field(default=None, repr=False)

    def fit(self, texts: Sequence[str]) -> TfidfSvdEmbedder:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=min(self.min_df, len(texts)), sublinear_tf=True)
        matrix = vectorizer.fit_transform(list(texts))
        dims = max(1, min(self.dims, matrix.shape[1] - 1, len(texts) - 1))
        self._vectorizer = vectorizer
        self._svd = TruncatedSVD(dims, random_state=self.seed).fit(matrix)
        return self

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if self._vectorizer is None:
            raise ValueError("fit the embedder on a corpus before embedding texts")
        return to_sphere(self._svd.transform(self._vectorizer.transform(list(texts))))  # type: ignore[attr-defined]


def chunk_documents(
    texts: Sequence[str], embed: Embed, percentile: float = DEFAULT_PERCENTILE, progress: Progress = no_progress
) -> list[list[tuple[int, int]]]:
    """Every document's chunks (`chunk_spans`), its sentences embedded by ``embed``."""
    out = []
    for done, text in enumerate(texts):
        progress(done, len(texts), f"cutting {len(texts):,} documents into chunks")
        spans = sentence_spans(text)
        vectors = embed([text[a:b] for a, b in spans]) if spans else np.zeros((0, 1))
        out.append(chunk_spans(spans, vectors, percentile))
    return out
