"""The ε-differentially private Multinomial–Dirichlet text synthesizer (Ororbia, Linder & Snoke, Section 2.2)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import Schema
from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.text_synthesis.multinomial_dirichlet import (
    PAPER_EPSILONS,
    _unobserved_terms,
    dirichlet_prior,
    polya_urn,
    urn_from_draws,
)
from engine.text.tokens import tokenize
from engine.text.vocabulary import public_vocabulary


def two_authors(n: int = 40) -> Dataset:
    """Author a writes only 'red' and 'blue' (3:1); author b only 'cat', 'dog' and 'fish' (2:1:1)."""
    texts = ["red red red blue"] * n + ["cat cat dog fish"] * n
    frame = pd.DataFrame({"text": texts, "user": ["a"] * n + ["b"] * n})
    return Dataset("two", frame, Schema(text="text", author="user"), None, source="tests")


def word_shares(texts: list[str]) -> Counter:
    words = Counter(w for t in texts for w in t.split())
    total = sum(words.values())
    return Counter({w: c / total for w, c in words.items()})


def test_the_prior_follows_the_papers_bound_with_epsilon_split_over_the_users():
    # k = 4 users, ε = 2: ε_j = 0.5; α^j = n_j / (e^0.5 − 1) = n_j / 0.6487...
    alpha = dirichlet_prior(np.array([1, 2, 10, 0]), 2.0, 4)
    assert alpha == pytest.approx(np.array([1, 2, 10, 0]) / (math.exp(0.5) - 1))
    assert alpha[0] == pytest.approx(1.5415, abs=1e-4)
    # Halving ε per user (twice the users) raises every prior: more privacy.
    assert (dirichlet_prior(np.array([3]), 2.0, 8) > dirichlet_prior(np.array([3]), 2.0, 4)).all()
    # A budget too large for exp: no prior at all.
    assert dirichlet_prior(np.array([5]), 1e6, 1).tolist() == [0.0]


def test_unobserved_terms_are_the_ranks_among_the_terms_not_seen():
    one = np.array([0, 3])
    assert _unobserved_terms(np.arange(5), np.zeros(5, int), np.array([1, 2, 5]), one).tolist() == [0, 3, 4, 6, 7]
    # Three users laid end to end (the second observed nothing): each rank counts past its own user's terms.
    observed, bounds = np.array([1, 2, 5, 0, 1, 2, 3]), np.array([0, 3, 3, 7])
    rank, group = np.array([0, 2, 0, 4, 0, 1, 3]), np.array([0, 0, 1, 1, 2, 2, 2])
    assert _unobserved_terms(rank, group, observed, bounds).tolist() == [0, 4, 0, 4, 4, 5, 7]


def urn_by_loop(fresh: np.ndarray, u: np.ndarray, mass: float) -> list[int]:
    """The urn draw by draw, as the paper's sampler reads: copy draw ⌊u·(mass + t)⌋ when that is below t."""
    out: list[int] = []
    for t in range(len(fresh)):
        out.append(out[int(u[t] * (mass + t))] if t and u[t] * (mass + t) < t else int(fresh[t]))
    return out


def test_the_urns_outcomes_equal_the_draw_by_draw_loop():
    rng = np.random.default_rng(3)
    sizes, masses = [1, 40, 0, 300, 7], [0.5, 2.0, 1.0, 0.0, 1e6]
    fresh = [rng.integers(0, 50, n) for n in sizes]
    u = [rng.random(n) for n in sizes]
    position = np.concatenate([np.arange(n) for n in sizes])
    mass = np.repeat(masses, sizes)
    got = urn_from_draws(np.concatenate(fresh), np.concatenate(u), mass, position).tolist()
    assert got == [v for f, w, m in zip(fresh, u, masses) for v in urn_by_loop(f, w, m)]
    # With no prior mass every draw after the first copies it; with a huge one almost none copies.
    assert len(set(got[41:341])) == 1 and got[341:] == fresh[4].tolist()


def test_the_polya_urn_matches_the_dirichlet_multinomial():
    rng = np.random.default_rng(1)
    # Two draws over N terms with symmetric α: P(the same term twice) = (α + 1) / (Nα + 1), in every urn.
    n_terms, alpha, trials = 10, 0.5, 40_000
    ranks = polya_urn(np.full(trials, 2), np.full(trials, n_terms), np.full(trials, alpha), rng).reshape(trials, 2)
    same = np.mean(ranks[:, 0] == ranks[:, 1])
    assert same == pytest.approx((alpha + 1) / (n_terms * alpha + 1), abs=0.01)
    assert ranks.min() == 0 and ranks.max() == n_terms - 1
    assert polya_urn(np.array([0]), np.array([5]), np.array([1.0]), rng).size == 0


def test_at_a_huge_epsilon_with_the_data_vocabulary_each_author_keeps_their_word_distribution():
    fitted = get_protector("md", vocabulary="data").fit(two_authors())
    by_author: dict[str, list[str]] = {"a": [], "b": []}
    for seed in range(30):
        release = fitted.release(10_000, np.random.default_rng(seed))
        for text, user in zip(release.data["text"], release.data["user"]):
            by_author[user].append(text)
    shares_a, shares_b = word_shares(by_author["a"]), word_shares(by_author["b"])
    assert set(shares_a) == {"red", "blue"} and set(shares_b) == {"cat", "dog", "fish"}
    assert shares_a["red"] == pytest.approx(0.75, abs=0.03)
    assert shares_b["cat"] == pytest.approx(0.5, abs=0.03) and shares_b["fish"] == pytest.approx(0.25, abs=0.03)
    # Every tweet keeps its length.
    assert all(len(t.split()) == 4 for t in by_author["a"] + by_author["b"])


def test_at_a_tiny_epsilon_every_author_writes_from_the_flat_prior():
    fitted = get_protector("md", vocabulary="data").fit(two_authors())
    release = fitted.release(0.1, np.random.default_rng(0))
    shares = word_shares(release.data["text"].tolist())
    # Five terms in the vocabulary: nearly 1/5 each, whoever wrote them.
    assert set(shares) == {"red", "blue", "cat", "dog", "fish"}
    assert all(v == pytest.approx(0.2, abs=0.05) for v in shares.values())
    a_words = {w for t, u in zip(release.data["text"], release.data["user"]) if u == "a" for w in t.split()}
    assert {"cat", "dog", "fish"} & a_words  # author a now "writes" b's words too


def test_at_a_moderate_epsilon_the_unobserved_terms_get_their_posterior_share():
    # ε = 2·ln 3 over k = 2 users: α = 40 / (e^{ln 3} − 1) = 20 per term. Author a observed red 120 and blue 40,
    # so E[π̃(cat, dog, fish)] = 3·20 / (5·20 + 160) = 3/13, spread evenly over the three.
    fitted = get_protector("md", vocabulary="data").fit(two_authors())
    words: list[str] = []
    for seed in range(60):
        release = fitted.release(2 * math.log(3), np.random.default_rng(seed))
        words += [w for t, u in zip(release.data["text"], release.data["user"]) if u == "a" for w in t.split()]
    shares = word_shares(words)
    assert shares["cat"] + shares["dog"] + shares["fish"] == pytest.approx(3 / 13, abs=0.015)
    assert all(shares[w] == pytest.approx(1 / 13, abs=0.012) for w in ("cat", "dog", "fish"))
    assert shares["red"] == pytest.approx(140 / 260, abs=0.02)


def test_the_public_vocabulary_is_fixed_and_leaves_out_words_it_does_not_have():
    vocabulary = public_vocabulary()
    assert len(vocabulary) > 40_000 and list(vocabulary) == sorted(vocabulary)
    assert {"the", "flight", "late"} <= set(vocabulary) and "@united" not in vocabulary
    texts = ["@united the flight was late #fail zzqxw"] * 5
    frame = pd.DataFrame({"text": texts, "user": list("abcde")})
    dataset = Dataset("pub", frame, Schema(text="text", author="user"), None, source="tests")
    release = get_protector("md").fit(dataset).release(10_000, np.random.default_rng(0))
    words = {w for t in release.data["text"] for w in t.split()}
    assert words <= set(vocabulary)
    assert all(len(t.split()) == len(tokenize(texts[0])) for t in release.data["text"])
    assert "fixed before the data was seen" in release.fact("Privacy guarantee")


def test_the_guarantee_says_what_epsilon_covers_for_each_vocabulary():
    fitted = get_protector("md", vocabulary="data").fit(two_authors())
    text = fitted.release(100, np.random.default_rng(0)).fact("Privacy guarantee")
    assert "ε = 100 split over 2 authors (ε per author 50)" in text
    assert "which ε does not cover" in text


def test_same_seed_same_release_and_only_the_text_changes():
    dataset = two_authors(5)
    fitted = get_protector("md", vocabulary="data").fit(dataset)
    one = fitted.release(500, np.random.default_rng(7))
    two = fitted.release(500, np.random.default_rng(7))
    other = fitted.release(500, np.random.default_rng(8))
    pd.testing.assert_frame_equal(one.data, two.data)
    assert not one.data["text"].equals(other.data["text"])
    pd.testing.assert_series_equal(one.data["user"], dataset.frame["user"])
    assert one.protected_columns == ("text",) and one.changes is None


def test_the_knob_is_the_papers_epsilon_grid_and_out_of_range_is_refused():
    protector = get_protector("md")
    assert protector.knob.grid == tuple(float(e) for e in PAPER_EPSILONS) and len(PAPER_EPSILONS) == 21
    assert protector.knob.more_privacy == "lower"
    with pytest.raises(ConfigError, match="out of range; accepted: 0.1 to 10000"):
        protector.knob.validate(0.01)
    with pytest.raises(ConfigError, match="vocabulary"):
        get_protector("md", vocabulary="mine")


def test_without_an_author_every_record_is_its_own_user():
    frame = pd.DataFrame({"text": ["one two", "three four five", "six"]})
    dataset = Dataset("solo", frame, Schema(text="text"), None, source="tests")
    fitted = get_protector("md", vocabulary="data").fit(dataset)
    assert len(fitted.users) == 3
    release = fitted.release(1000, np.random.default_rng(0))
    assert [len(t.split()) for t in release.data["text"]] == [2, 3, 1]
