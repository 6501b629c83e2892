"""Semantic chunks (Greve & Sablica, Section 3.1): breakpoints fall where consecutive sentences are furthest
apart, chunks tile the document's sentences with their offsets, a topic shift is found, embeddings lie on the
unit sphere."""

from __future__ import annotations

import numpy as np
import pytest

from engine.protect.swap.chunking import (
    TfidfSvdEmbedder,
    breakpoints,
    chunk_documents,
    chunk_spans,
    sentence_spans,
    to_sphere,
)

FLIGHTS = [
    "The airline added three routes to Denver this quarter.",
    "Its fleet of regional jets flew more routes than last year.",
    "Jet fuel for the fleet cost the airline less on these routes.",
    "Passengers filled the regional jets on the new routes.",
]
CHIPS = [
    "Our semiconductor wafers shipped from the new foundry.",
    "The foundry produced wafers at a lower cost per chip.",
    "Demand for every chip and wafer in data centres grew.",
    "The chip foundry will double its wafer output next year.",
]


def test_sentences_keep_their_offsets():
    text = "  First sentence here.  Second one?\nThird!  "
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["First sentence here.", "Second one?", "Third!"]


def test_breakpoints_fall_at_the_largest_distances():
    angles = np.array([0.0, 0.05, 0.1, 1.2, 1.25, 1.3, 2.6, 2.62])  # jumps after the 3rd and the 6th
    x = np.column_stack([np.cos(angles), np.sin(angles)])
    assert breakpoints(x, 75).tolist() == [False, False, True, False, False, True, False]
    assert not breakpoints(x, 100).any()
    assert breakpoints(x, 0).sum() == 6  # every distance but the smallest
    spans = [(10 * i, 10 * i + 8) for i in range(8)]
    assert chunk_spans(spans, x, 75) == [(0, 28), (30, 58), (60, 78)]
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        breakpoints(x, 120)


def test_a_topic_shift_is_a_breakpoint_and_chunks_tile_the_document():
    text = " ".join(FLIGHTS + CHIPS)
    embed = TfidfSvdEmbedder(dims=2, min_df=1).fit(FLIGHTS + CHIPS)  # two topics: two dimensions
    [chunks] = chunk_documents([text], embed, percentile=90)
    assert chunks[0][0] == 0 and chunks[-1][1] == len(text)
    assert any(text[a:b].endswith(FLIGHTS[-1]) for a, b in chunks)  # the cut between the topics
    pieces = [text[a:b] for a, b in chunks]
    assert " ".join(pieces) == text  # nothing lost between chunks but the space that joined the sentences


def test_embeddings_lie_on_the_unit_sphere():
    embed = TfidfSvdEmbedder(dims=3, min_df=1).fit(FLIGHTS + CHIPS)
    x = embed(FLIGHTS + CHIPS + ["zzz qqq"])  # the last shares no term with the corpus
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0)
    assert to_sphere(np.zeros((1, 3))).tolist() == [[1.0, 0.0, 0.0]]
    with pytest.raises(ValueError, match="fit the embedder"):
        TfidfSvdEmbedder()(["text"])
