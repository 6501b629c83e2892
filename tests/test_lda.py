"""The topic model's batch variational EM (`engine.text.lda`) against scikit-learn's, which it vectorizes."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.decomposition import LatentDirichletAllocation

from engine.text.lda import LDA


def corpus(seed: int = 0, n: int = 300, words: int = 60) -> sparse.csr_matrix:
    """Documents drawn from three topics of distinct word ranges, a few documents empty."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        row = np.zeros(words)
        if i % 50 != 7:
            topic = rng.integers(3)
            ids = rng.integers(topic * 20, topic * 20 + 20, size=rng.integers(3, 15))
            np.add.at(row, ids, 1)
            row[rng.integers(words)] += 1  # a word of any topic
        rows.append(row)
    return sparse.csr_matrix(np.array(rows))


@pytest.mark.parametrize("seed", [0, 3])
def test_the_fit_is_scikit_learns_batch_fit_to_rounding(seed):
    X = corpus(seed)
    ours = LDA.fit(X, 3, 10, seed)
    theirs = LatentDirichletAllocation(n_components=3, learning_method="batch", max_iter=10, random_state=seed)
    shares = theirs.fit_transform(X)
    np.testing.assert_allclose(ours.topics, theirs.components_, rtol=1e-4)
    np.testing.assert_allclose(ours.doc_topics, shares, atol=1e-4)
    np.testing.assert_allclose(ours.doc_topics.sum(axis=1), 1.0)


def test_the_topics_are_found_deterministically_and_each_pass_is_reported():
    X = corpus()
    heard = []
    first = LDA.fit(X, 3, 10, 5, progress=lambda done, total, what: heard.append((done, total, what)))
    assert heard == [(i, 10, "fitting the topic model") for i in range(1, 11)]
    again = LDA.fit(X, 3, 10, 5)
    assert np.array_equal(first.topics, again.topics) and np.array_equal(first.doc_topics, again.doc_topics)
    # Each of the three planted word ranges is one topic's most probable words.
    tops = {int(np.argmax(t)) // 20 for t in first.topics}
    assert tops == {0, 1, 2}
    # An empty document keeps the prior's even shares.
    np.testing.assert_allclose(first.doc_topics[7], 1 / 3)
