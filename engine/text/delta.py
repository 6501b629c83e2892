"""Burrows' Delta (Burrows 2002, "'Delta': a measure of stylistic difference and a guide to likely authorship",
Literary and Linguistic Computing 17(3)): which of several candidate authors a text is closest to in style.

Burrows takes the most frequent words of a corpus of candidate authors, the relative frequency of each word in
each candidate's texts (pooled) and in the text in question, turns every frequency into a z-score by the mean
and standard deviation of that word's frequency over the candidates, and measures each candidate's Delta as
the mean absolute difference of the z-scores; the least Delta names the likely author.

What is counted here, exactly (`StyleCounts`):

- words are the lower-cased runs of letters a–z, with an inner apostrophe kept ("don't");
- (a) the `N_FUNCTION_WORDS` function words (`engine.text.features.FUNCTION_WORDS`, words chosen by habit
  rather than topic) most frequent in the candidates' texts, each per word of the text — Burrows' most
  frequent words restricted to function words, so that the attack reads style, not the topics the texts share;
- (b) the 13 punctuation marks of `engine.text.features.PUNCTUATION_MARKS`, each per word;
- (c) the share of words of 1, 2, …, 11 and of 12 or more letters.

Burrows' Delta is defined on word frequencies alone; (b) and (c) are added here (stated as such), each a
feature z-scored and averaged like a word. The mean and standard deviation of a feature are taken over the
candidates' pooled profiles (the sample standard deviation); a feature that does not vary among them is left
out. A text with no word has every frequency 0.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.text.features import FUNCTION_WORDS, PUNCTUATION_MARKS

N_FUNCTION_WORDS = 150
"""How many of the candidates' most frequent function words the Delta reads (Burrows 2002 used 150 most
frequent words in his main experiments)."""
LONGEST = 12
"""Word lengths counted one by one up to this many letters; longer words count with it."""

_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)*")
_FUNCTION = frozenset(FUNCTION_WORDS)


def words_of(text: str) -> list[str]:
    """The words of ``text`` as the Delta counts them: lower-cased runs of letters, inner apostrophes kept."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class StyleCounts:
    """Counts of the Delta's features in each of several texts (rows): ``counts`` (texts × features, in the order
    of ``names``) and the number of words of each text (``words``)."""

    names: tuple[str, ...]
    counts: np.ndarray
    words: np.ndarray

    @classmethod
    def of(cls, texts: Sequence[str], vocabulary: Sequence[str]) -> StyleCounts:
        """The counts of the function words of ``vocabulary``, the punctuation marks and the word lengths."""
        names = (
            *(f"word:{w}" for w in vocabulary),
            *(f"mark:{p}" for p in PUNCTUATION_MARKS),
            *(f"length:{n}" for n in range(1, LONGEST)),
            f"length:{LONGEST}+",
        )
        column = {w: i for i, w in enumerate(vocabulary)}
        marks = len(vocabulary)
        lengths = marks + len(PUNCTUATION_MARKS)
        counts = np.zeros((len(texts), len(names)))
        words = np.zeros(len(texts))
        for row, text in enumerate(texts):
            tokens = words_of(text)
            words[row] = len(tokens)
            for w in tokens:
                if w in column:
                    counts[row, column[w]] += 1
                counts[row, lengths + min(len(w.replace("'", "").replace("’", "")), LONGEST) - 1] += 1
            for j, mark in enumerate(PUNCTUATION_MARKS):
                counts[row, marks + j] = text.count(mark)
        return cls(names, counts, words)

    def pooled(self, groups: np.ndarray, n_groups: int) -> StyleCounts:
        """The counts of each group's texts added up (``groups``: the group of each row, 0 … n_groups − 1)."""
        counts = np.zeros((n_groups, self.counts.shape[1]))
        np.add.at(counts, groups, self.counts)
        words = np.bincount(groups, weights=self.words, minlength=n_groups).astype(float)
        return StyleCounts(self.names, counts, words)

    @property
    def frequencies(self) -> np.ndarray:
        """Each count per word of its text (0 for a text without words)."""
        return self.counts / np.maximum(self.words, 1.0)[:, None]


def function_vocabulary(texts: Sequence[str], n: int = N_FUNCTION_WORDS) -> tuple[str, ...]:
    """The ``n`` function words most frequent in ``texts`` (ties in alphabetical order), those that occur."""
    counts = Counter(w for t in texts for w in words_of(t) if w in _FUNCTION)
    return tuple(sorted(counts, key=lambda w: (-counts[w], w))[:n])


@dataclass
class DeltaProfiles:
    """The candidates' style profiles: each label's pooled frequencies as z-scores by the candidates' mean and
    standard deviation of each feature, the features that vary among them."""

    vocabulary: tuple[str, ...]
    labels: np.ndarray
    keep: np.ndarray  # the features that vary among the candidates
    mean: np.ndarray
    std: np.ndarray
    z: np.ndarray  # labels × kept features

    @classmethod
    def train(cls, texts: Sequence[str], labels: np.ndarray) -> DeltaProfiles:
        """Profiles of the labels of ``texts`` (a text labelled "" is left out); ValueError with fewer than two
        labels or no feature that varies among them."""
        keep_rows = labels != ""
        texts = [t for t, k in zip(texts, keep_rows, strict=True) if k]
        labels = labels[keep_rows]
        classes, groups = np.unique(labels, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("Burrows' Delta needs texts of at least two authors")
        vocabulary = function_vocabulary(texts)
        profiles = StyleCounts.of(texts, vocabulary).pooled(groups, len(classes)).frequencies
        mean, std = profiles.mean(axis=0), profiles.std(axis=0, ddof=1)
        keep = std > 0
        if not keep.any():
            raise ValueError("no feature of Burrows' Delta varies among the authors' texts")
        z = (profiles[:, keep] - mean[keep]) / std[keep]
        return cls(vocabulary, classes, keep, mean[keep], std[keep], z)

    def counts(self, texts: Sequence[str]) -> StyleCounts:
        """The feature counts of ``texts`` (to pool before `delta`, or to read one by one)."""
        return StyleCounts.of(texts, self.vocabulary)

    def delta(self, counts: StyleCounts) -> np.ndarray:
        """Burrows' Delta of each row of ``counts`` to each label: the mean absolute difference of z-scores
        (rows × labels)."""
        z = (counts.frequencies[:, self.keep] - self.mean) / self.std
        out = np.empty((len(z), len(self.labels)))
        for j, profile in enumerate(self.z):  # one label at a time: texts × features, never texts × labels × features
            out[:, j] = np.abs(z - profile).mean(axis=1)
        return out

    def scores(self, texts: list[str]) -> np.ndarray:
        """Minus the Delta of each text to each label: the largest score names the closest author."""
        return -self.delta(self.counts(texts))

    @property
    def chance(self) -> float:
        return 1.0 / len(self.labels)
