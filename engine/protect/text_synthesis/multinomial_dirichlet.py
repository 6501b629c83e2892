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

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release
from engine.protect.params import Param
from engine.text.tokens import tokenize
from engine.text.vocabulary import PUBLIC_VOCABULARY_SOURCE, data_vocabulary, public_vocabulary

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


def _unobserved_terms(rank: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """The vocabulary indices of the ``rank``-th terms (from 0) not in ``observed`` (sorted, unique)."""
    shift = observed - np.arange(len(observed))
    return rank + np.searchsorted(shift, rank, side="right")


def polya_urn(m: int, n_terms: int, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """``m`` draws from a symmetric Dirichlet(α, …, α) over ``n_terms`` terms with the probabilities integrated
    out (the Pólya urn): draw t is a copy of an earlier draw with probability t / (n_terms·α + t), else a term
    chosen uniformly. Returns term ranks in [0, n_terms)."""
    out = np.empty(m, dtype=np.int64)
    if m == 0:
        return out
    fresh = rng.integers(0, n_terms, size=m)
    u = rng.random(m)
    mass = n_terms * alpha
    for t in range(m):
        if t and u[t] * (mass + t) < t:
            out[t] = out[int(u[t] * (mass + t))]  # u·(mass + t) < t: uniform over the t earlier draws
        else:
            out[t] = fresh[t]
    return out


@dataclass
class UserCounts:
    """One user's sufficient statistics: records, observed term indices (sorted) and their counts."""

    records: np.ndarray
    terms: np.ndarray
    counts: np.ndarray


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
                "released word counts (as the paper states it); the tweets' lengths are released as they are"
            )
        return (
            f"{share}; vocabulary: the data's own {len(self.vocabulary):,} words, so the release also discloses "
            "which words occur in the data, which ε does not cover; the tweets' lengths are released as they are"
        )

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        epsilon = self.knob.validate(value)
        p = len(self.vocabulary)
        alphas = dirichlet_prior(np.array([len(u.records) for u in self.users]), epsilon, len(self.users))
        words = np.asarray(self.vocabulary, dtype=object)
        texts = [""] * len(self.frame)
        for user, alpha in zip(self.users, alphas):
            lengths = self.lengths[user.records]
            total = int(lengths.sum())
            if total == 0:
                continue
            unobserved = p - len(user.terms)
            weights = rng.gamma(alpha + user.counts) if len(user.terms) else np.empty(0)
            rest = rng.gamma(unobserved * alpha) if unobserved > 0 and alpha > 0 else 0.0
            probs = np.append(weights, rest)
            if probs.sum() <= 0:  # every Gamma draw underflowed: all terms equally likely
                probs = np.append(np.ones(len(weights)), float(unobserved))
            cell = rng.choice(len(probs), size=total, p=probs / probs.sum())
            draws = np.empty(total, dtype=np.int64)
            seen = cell < len(user.terms)
            draws[seen] = user.terms[cell[seen]]
            n_new = int((~seen).sum())
            if n_new:
                draws[~seen] = _unobserved_terms(polya_urn(n_new, unobserved, alpha, rng), user.terms)
            for record, chunk in zip(user.records, np.split(words[draws], np.cumsum(lengths)[:-1])):
                texts[record] = " ".join(chunk)
        data = self.frame.copy()
        data[self.text_column] = texts
        return Release(
            data=data,
            method=self.method,
            knob=float(epsilon),
            protected_columns=(self.text_column,),
            info={"privacy_guarantee": self.guarantee(epsilon)},
        )


class MultinomialDirichletSynthesizer(Protector):
    """Replace every tweet by words drawn from an ε-differentially private posterior of its author's words."""

    name = "md"
    title = "Multinomial–Dirichlet text synthesis (ε-DP)"
    description = (
        "Replaces every text by words drawn from a differentially private model of its author's vocabulary "
        "(Ororbia, Linder & Snoke). Lower ε = more private: at small ε the words are drawn from a nearly flat "
        "distribution; at large ε from the author's own word frequencies. Word order is not kept."
    )
    knob = EPSILON_KNOB

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
