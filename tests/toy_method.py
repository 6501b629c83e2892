"""A toy method written the way a contributor would add one: a module with a Protector, one knob and one
extra parameter, registered in one line (by the tests that use it). It swaps the order of the words of a
share of the records, keeping the first ``keep_first`` words in place."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release
from engine.protect.params import Param

SHUFFLE_KNOB = Knob(
    name="share",
    symbol="s",
    label="Share of records shuffled",
    low=0.0,
    high=1.0,
    default=0.5,
    grid=(0.0, 0.5, 1.0),
    more_privacy="higher",
    help="Share of the records whose words are shuffled.",
)


@dataclass
class FittedShuffle(Fitted):
    frame: pd.DataFrame
    text_column: str
    keep_first: int
    method: str = "toy-shuffle"
    knob: Knob = SHUFFLE_KNOB

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        share = self.knob.validate(value)
        texts = self.frame[self.text_column].astype(str).tolist()
        chosen = rng.random(len(texts)) < share
        out = []
        for text, shuffle in zip(texts, chosen):
            words = text.split()
            head, tail = words[: self.keep_first], words[self.keep_first :]
            if shuffle:
                tail = [tail[i] for i in rng.permutation(len(tail))]
            out.append(" ".join(head + tail))
        data = self.frame.copy()
        data[self.text_column] = out
        return Release(data=data, method=self.method, knob=share, protected_columns=(self.text_column,))


class WordShuffle(Protector):
    """Shuffle the words of a share of the records (a toy: it hides word order, not identities)."""

    name = "toy-shuffle"
    title = "Word shuffle (toy)"
    description = "Shuffles the words of a share of the records."
    knob = SHUFFLE_KNOB
    keep_first: int
    parameters = (Param("keep_first", int, 0, "words at the start of each text left in place", low=0, high=50),)

    def fit(self, dataset, progress: Progress = no_progress) -> FittedShuffle:
        return FittedShuffle(frame=dataset.frame, text_column=dataset.schema.text, keep_first=self.keep_first)
