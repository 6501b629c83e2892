"""ε-differentially private Multinomial–Dirichlet synthesis of each author's words (Ororbia, Linder & Snoke,
Section 2.2), with the privacy budget ε as the knob.

For each user j (j = 1 … k) with term-frequency vector X^j over a vocabulary of p terms and n_j tweets:

  (a) α^j = n_j / (exp(ε_j) − 1) for every term, the smallest prior the paper's bound α^j ≥ n_j / (exp(ε_j) − 1)
      allows (the most utility at that ε), with ε split evenly over the users, ε_j = ε / k, so that by
      composition the release spends ε in all (the paper's closing paragraph of Section 2.2);
  (b) π̃ ~ Dirichlet(α^j + X^j);
  (c) each of the user's tweets is replaced by words drawn independently from π̃, as many as the original
      tweet has (the paper draws X̃^j ~ Mult(n_j, π̃); drawing per tweet keeps tweets as records, as the issue
      asks, and the words of a user's tweets together are a multinomial draw from π̃).

What ε covers. The guarantee is for the released counts given the vocabulary, with the mechanism's n_j as the
paper sets it (the user's number of tweets), and only if the vocabulary is not taken from the confidential
data: with ``vocabulary = "public"`` it is a word list a dependency ships (`engine.text.vocabulary`), and
words outside it are left out of X^j; with ``vocabulary = "data"`` it is the data's own words, which the
release then discloses beyond ε (a rare word or handle that appears at all). The tweets' lengths are
released as they are. Without an author column every record is its own user. We state the guarantee as
the paper does; this module does not prove it.

`fit` counts (the only pass over the text); `release(ε)` is one posterior draw. The Dirichlet draw is exact
but never builds a vector of p probabilities per user: the user's observed terms S get Gamma(α + X_v)
weights, the p − |S| unobserved terms one Gamma((p − |S|)·α) weight together (the aggregation property), and
words that fall among the unobserved terms are spread over them by the Pólya urn, which is their exact
distribution once π̃ is integrated out over those terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release, Statement
from engine.protect.claims import EpsilonClaim
from engine.protect.params import Param
from engine.text.tokens import tokenize
from engine.text.vocabulary import PUBLIC_VOCABULARY_SOURCE, data_vocabulary, public_vocabulary, vocabulary_digest

PAPER_EPSILONS = (0.1, 0.5, 1, 2, 5, 10, 20, 30, 40, 50, 100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000, 10000)
"""The 21 values of ε in Ororbia, Linder & Snoke's Table 1."""

EPSILON_KNOB = Knob(
    name="epsilon",
    symbol="ε",
    label="Privacy budget",
    low=0.1,
    high=10_000.0,
    default=1000.0,
    scale="log",
    more_privacy="lower",
    grid=tuple(float(e) for e in PAPER_EPSILONS),
    refine=6,
    help=(
        "The differential-privacy budget of the whole release, split evenly over the authors. Lower = more "
        "private: at small ε every author's words are drawn from nearly the same flat distribution."
    ),
)


def dirichlet_prior(n_tweets: np.ndarray, epsilon: float, n_users: int) -> np.ndarray:
    """α^j = n_j / (exp(ε_j) − 1) with ε_j = ε / k (Ororbia, Linder & Snoke, Section 2.2, step (a)): per user,
    the prior count of every term. 0 where exp(ε_j) overflows (no prior: the user's own counts)."""
    eps_j = float(epsilon) / int(n_users)
    denominator = math.expm1(eps_j) if eps_j < 700 else math.inf  # exp overflows a float past ~709
    return np.asarray(n_tweets, dtype=float) / denominator


def _unobserved_terms(rank: np.ndarray, group: np.ndarray, observed: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The vocabulary index of each ``rank``-th term (from 0) not observed by its ``group``: group g observed the
    sorted, unique terms ``observed[bounds[g]:bounds[g + 1]]``. Every group's observed terms minus their
    position are non-decreasing; offsetting group g by g·(1 + largest term) keeps the concatenation sorted, so
    one ``searchsorted`` counts, for every rank at once, the observed terms at or below it in its own group."""
    if len(rank) == 0:
        return rank.astype(np.int64)
    within = np.arange(len(observed)) - np.repeat(bounds[:-1], np.diff(bounds))
    span = int(max(observed.max(initial=0), rank.max(initial=0))) + len(observed) + 2
    owner = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    keys = (observed - within) + owner.astype(np.int64) * span
    below = np.searchsorted(keys, rank + group.astype(np.int64) * span, side="right") - bounds[group]
    return rank + below


def urn_from_draws(fresh: np.ndarray, u: np.ndarray, mass: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The Pólya urn's outcomes from its random inputs, for several urns laid end to end: draw i, the
    ``position[i]``-th of its urn (total prior mass ``mass[i]``), copies that urn's draw number
    ⌊u_i·(mass + t)⌋ when u_i·(mass + t) < t (probability t / (mass + t): uniform over the t earlier draws), else
    is ``fresh[i]``. Whether a draw copies depends only on its own u, so the copies form a forest whose roots
    are fresh draws; pointer doubling finds every draw's root in O(log n) array passes instead of a Python
    loop over the draws."""
    t = position.astype(float)
    scaled = u * (mass + t)
    copies = (position > 0) & (scaled < t)
    source = np.arange(len(fresh))
    source[copies] = (source - position)[copies] + np.minimum(scaled[copies].astype(np.int64), position[copies] - 1)
    while True:
        onward = source[source]
        if np.array_equal(onward, source):
            return fresh[source]
        source = onward


def polya_urn(sizes: np.ndarray, n_terms: np.ndarray, alpha: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``sizes[g]`` draws from a symmetric Dirichlet(α_g, …, α_g) over ``n_terms[g]`` terms for every urn g, with
    the probabilities integrated out (the Pólya urn): draw t is a copy of an earlier draw with probability
    t / (n_terms·α + t), else a term chosen uniformly. Returns each urn's term ranks in [0, n_terms[g]), urn
    after urn."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    urn = np.repeat(np.arange(len(sizes)), sizes)
    position = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    fresh = rng.integers(0, np.asarray(n_terms, dtype=np.int64)[urn])
    u = rng.random(total)
    mass = (np.asarray(n_terms, dtype=float) * np.asarray(alpha, dtype=float))[urn]
    return urn_from_draws(fresh, u, mass, position)


@dataclass
class UserCounts:
    """One user's sufficient statistics: records, observed term indices (sorted) and their counts."""

    records: np.ndarray
    terms: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True)
class _FlatCounts:
    """Every user's counts laid end to end, user after user (in the order of ``users``): their observed terms
    and counts (user g's at ``term_bounds[g]:term_bounds[g + 1]``), their records, and the words each record
    gets (record ``record_order[i]`` gets words ``word_bounds[i]:word_bounds[i + 1]`` of a release)."""

    terms: np.ndarray
    counts: np.ndarray
    term_bounds: np.ndarray
    record_order: np.ndarray
    record_bounds: np.ndarray
    word_bounds: np.ndarray
    totals: np.ndarray

    @classmethod
    def of(cls, users: list[UserCounts], lengths: np.ndarray) -> _FlatCounts:
        def bounds(sizes: list[int]) -> np.ndarray:
            return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])

        order = np.concatenate([u.records for u in users]).astype(np.int64)
        return cls(
            terms=np.concatenate([u.terms for u in users]).astype(np.int64),
            counts=np.concatenate([u.counts for u in users]),
            term_bounds=bounds([len(u.terms) for u in users]),
            record_order=order,
            record_bounds=bounds([len(u.records) for u in users]),
            word_bounds=bounds(lengths[order].tolist()),
            totals=np.array([int(lengths[u.records].sum()) for u in users], dtype=np.int64),
        )


@dataclass
class FittedMultinomialDirichlet(Fitted):
    frame: pd.DataFrame
    text_column: str
    vocabulary: tuple[str, ...]
    vocabulary_kind: str
    users: list[UserCounts]
    lengths: np.ndarray
    method: str = "md"
    knob: Knob = EPSILON_KNOB

    def guarantee(self, epsilon: float) -> str:
        """What the release's ε covers, in the steward's words."""
        k, eps_j = len(self.users), epsilon / len(self.users)
        share = f"ε = {self.knob.format(epsilon)} split over {k:,} authors (ε per author {eps_j:.3g})"
        if self.vocabulary_kind == "public":
            return (
                f"{share}; vocabulary: {PUBLIC_VOCABULARY_SOURCE}, fixed before the data was seen, so ε covers the "
                "released word counts (as the paper states it); the texts' lengths are released as they are"
            )
        return (
            f"{share}; vocabulary: the data's own {len(self.vocabulary):,} words, so the release also discloses "
            "which words occur in the data, which ε does not cover; the texts' lengths are released as they are"
        )

    @cached_property
    def _flat(self) -> _FlatCounts:
        return _FlatCounts.of(self.users, self.lengths)

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        """One draw of every user's π̃ and of their tweets' words, all users at once (steps (b) and (c))."""
        epsilon = self.knob.validate(value)
        flat, p = self._flat, len(self.vocabulary)
        n_users = len(self.users)
        alphas = dirichlet_prior(np.diff(flat.record_bounds), epsilon, n_users)
        # Step (b): the observed terms' Gamma(α + X_v) weights and one Gamma((p − |S|)·α) weight for the
        # unobserved terms together, as the last cell of each user's segment.
        seen_terms = np.diff(flat.term_bounds)
        unobserved = p - seen_terms
        cell_bounds = flat.term_bounds + np.arange(n_users + 1)
        cell_user = np.repeat(np.arange(n_users), seen_terms + 1)
        is_rest = np.zeros(int(cell_bounds[-1]), dtype=bool)
        is_rest[cell_bounds[1:] - 1] = True
        weights = np.zeros(len(is_rest))
        weights[~is_rest] = rng.gamma(alphas[cell_user[~is_rest]] + flat.counts)
        rest_shape = np.where((unobserved > 0) & (alphas > 0), unobserved * alphas, 0.0)
        weights[is_rest] = rng.gamma(rest_shape)
        sums = np.add.reduceat(weights, cell_bounds[:-1])
        flat_users = sums <= 0  # every Gamma draw underflowed: all terms equally likely
        if flat_users.any():
            fallback = np.where(is_rest, unobserved[cell_user], 1.0)
            weights = np.where(flat_users[cell_user], fallback, weights)
            sums = np.add.reduceat(weights, cell_bounds[:-1])
        # Step (c): every word of a user's tweets from that user's cells, by the inverse of their running sum.
        # A target just under the user's top keeps a cell of weight 0 from being drawn, rounding included.
        running = np.cumsum(weights / np.where(sums > 0, sums, 1.0)[cell_user])
        before = np.concatenate([[0.0], running])[cell_bounds]
        draw_user = np.repeat(np.arange(n_users), flat.totals)
        low, high = before[:-1][draw_user], before[1:][draw_user]
        target = np.minimum(low + rng.random(len(draw_user)) * (high - low), np.nextafter(high, -np.inf))
        cell = np.searchsorted(running, target, side="right")
        new = is_rest[cell]
        draws = np.empty(len(cell), dtype=np.int64)
        draws[~new] = flat.terms[(cell - draw_user)[~new]]
        # Words that fall among a user's unobserved terms: spread over them by the Pólya urn.
        new_user = draw_user[new]
        n_new = np.bincount(new_user, minlength=n_users)
        ranks = polya_urn(n_new, unobserved, alphas, rng)
        draws[new] = _unobserved_terms(ranks, new_user, flat.terms, flat.term_bounds)
        words = np.asarray(self.vocabulary, dtype=object)[draws]
        texts = [""] * len(self.frame)
        for record, chunk in zip(flat.record_order, np.split(words, flat.word_bounds[1:-1])):
            texts[record] = " ".join(chunk)
        data = self.frame.copy()
        data[self.text_column] = texts
        return Release(
            data=data,
            method=self.method,
            knob=float(epsilon),
            protected_columns=(self.text_column,),
            details=(Statement("Privacy guarantee", self.guarantee(epsilon)), self.claim(epsilon)),
        )

    def claim(self, epsilon: float) -> EpsilonClaim:
        """What the release claims of ε and its vocabulary, for `textsdc verify` to check."""
        public = self.vocabulary_kind == "public"
        return EpsilonClaim(
            epsilon=float(epsilon),
            vocabulary=self.vocabulary_kind,
            covers_vocabulary=public,
            source=PUBLIC_VOCABULARY_SOURCE if public else "the data's own words",
            words=len(self.vocabulary),
            digest=self._vocabulary_digest if public else None,
        )

    @cached_property
    def _vocabulary_digest(self) -> str:
        return vocabulary_digest(self.vocabulary)


class MultinomialDirichletSynthesizer(Protector):
    """Replace every tweet by words drawn from an ε-differentially private posterior of its author's words."""

    protects_by = "synthesized"
    name = "md"
    title = "Multinomial–Dirichlet text synthesis (ε-DP)"
    description = (
        "Replaces every text by words drawn from a differentially private model of its author's vocabulary "
        "(Ororbia, Linder & Snoke). Lower ε = more private: at small ε the words are drawn from a nearly flat "
        "distribution; at large ε from the author's own word frequencies. Word order is not kept."
    )
    knob = EPSILON_KNOB
    shown_first = ("attack_identification_rate", "unigram_cosine")  # the paper's risk and utility (Table 1)

    vocabulary: str
    parameters = (
        Param(
            "vocabulary",
            str,
            "public",
            "public: a word list that textsdc's spaCy model ships, fixed before the data is seen, so ε covers "
            "the released counts (words outside it are not synthesized); data: the data's own words (more "
            "utility, but the release discloses which words occur, which ε does not cover)",
            choices=("public", "data"),
        ),
    )

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedMultinomialDirichlet:
        schema = dataset.schema
        tokens = [tokenize(str(t)) for t in dataset.texts.tolist()]
        progress(0, 2, "counting words")
        vocabulary = public_vocabulary() if self.vocabulary == "public" else data_vocabulary(tokens)
        index = {w: i for i, w in enumerate(vocabulary)}
        lengths = np.array([len(t) for t in tokens], dtype=np.int64)
        authors = (
            dataset.frame[schema.author].astype(str).to_numpy()
            if schema.author is not None
            else np.arange(len(tokens)).astype(str)
        )
        users = []
        for _, records in pd.Series(np.arange(len(tokens))).groupby(authors, sort=True):
            ids = np.array([index[t] for r in records for t in tokens[r] if t in index], dtype=np.int64)
            terms, counts = np.unique(ids, return_counts=True)
            users.append(UserCounts(records.to_numpy(), terms, counts.astype(float)))
        progress(2, 2, "counting words")
        return FittedMultinomialDirichlet(
            frame=dataset.frame,
            text_column=schema.text,
            vocabulary=vocabulary,
            vocabulary_kind=self.vocabulary,
            users=users,
            lengths=lengths,
        )
