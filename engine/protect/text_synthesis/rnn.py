"""Neural synthesis of each author's texts (Ororbia, Linder & Snoke, Section 2.3), with the sampling
temperature τ as the knob.

`fit` trains the user-conditioned recurrent generator of `engine.protect.text_synthesis.recurrent` (Eqs. 1–3)
on the texts, with the author as the user (without an author column every record is its own user); a release
replaces every text by one the generator writes for the record's author, sampling each symbol from the
softmax of the output divided by τ.

The knob is a stated departure: the paper compares architectures and has no knob. Temperature is what moves
the generator between copying an author (τ → 0 repeats the author's most likely text) and writing like
nobody in particular (τ → ∞ draws every symbol uniformly); higher τ = more private. The default, 1.5, flattens
the network's own distribution (τ = 1) because on authors with many texts that distribution writes almost as
identifiably as they do (README: 0.86 of 50 authors identified at τ = 1, 0.59 at 1.5). A release at any τ makes
no formal privacy guarantee: the generator was trained on the confidential texts and can reproduce phrases
of them, which the verbatim-copies check and the attack measure show.

Symbols are words (the tokenizer's lower-case words, handles and hashtags; the paper's choice) or characters.
Words seen fewer than ``min_count`` times become one rare-word symbol that is trained on but never
generated — a departure from the paper, which keeps every word: it halves the output layer on tweets (training
time scales with it) and a word used once is the likeliest to identify its author.

The output layer is by default factorised through classes of symbols (``softmax="classes"``, see
`engine.protect.text_synthesis.recurrent`), a second stated departure: a distribution over the same words,
factorised so that each step scores a few hundred classes and words instead of every word. On the airline demo
training takes ~28 s instead of ~180 s to the same loss per word (4.28 after 20 epochs, full: 4.27) and a
release ~0.4 s instead of ~5 s; it keeps less of which airline each author writes to (README, Table 1).
``softmax="full"`` is Eq. 2 as the paper writes it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pandas as pd

from engine import MAX_SEED
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release, Statement
from engine.protect.params import Param
from engine.protect.text_synthesis.recurrent import END, RESERVED, RecurrentWeights, sample, train
from engine.text.tokens import tokenize

TEMPERATURE_KNOB = Knob(
    name="temperature",
    symbol="τ",
    label="Sampling temperature",
    low=0.1,
    high=5.0,
    default=1.5,
    scale="log",
    more_privacy="higher",
    grid=(0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0),
    help=(
        "How freely the generator writes. Higher = more private: at high τ every author's texts become random "
        "words; at low τ the generator repeats what it learned each author is most likely to write."
    ),
)

RARE = "<rare>"


@dataclass
class FittedRecurrent(Fitted):
    frame: pd.DataFrame
    text_column: str
    symbols: tuple[str, ...]  # symbol id − RESERVED → word or character
    symbol_kind: str
    weights: RecurrentWeights
    record_users: np.ndarray
    max_length: int
    losses: list[float]
    rare: bool
    method: str = "rnn"
    knob: Knob = TEMPERATURE_KNOB

    def training_summary(self) -> str:
        """How the generator was trained, in the steward's words."""
        unit = "word" if self.symbol_kind == "words" else "character"
        return (
            f"{len(self.losses)} epochs over {len(self.frame):,} texts, {len(self.symbols):,} {unit} symbols; "
            f"loss per {unit} {self.losses[0]:.2f} after the first epoch, {self.losses[-1]:.2f} after the last"
        )

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        tau = self.knob.validate(value)
        banned = [RESERVED] if self.rare else []  # the rare-word symbol is never written
        drawn = sample(self.weights, self.record_users, tau, self.max_length, rng, banned=banned)
        table = np.asarray(self.symbols, dtype=object)
        joiner = " " if self.symbol_kind == "words" else ""
        texts = [joiner.join(table[s - RESERVED]) for s in drawn]
        data = self.frame.copy()
        data[self.text_column] = texts
        return Release(
            data=data,
            method=self.method,
            knob=float(tau),
            protected_columns=(self.text_column,),
            details=(
                Statement("Generator training", self.training_summary()),
                Statement("Privacy guarantee", "none formal: the generator was trained on the confidential texts"),
            ),
        )


class RecurrentSynthesizer(Protector):
    """Replace every text by one a user-conditioned recurrent network writes for the same author."""

    protects_by = "synthesized"
    fits_in_threads = True  # JAX trains in its own threads (about 1.6 of 2 cores): the measures are made beside it
    name = "rnn"
    title = "Neural text synthesis (recurrent generator)"
    description = (
        "Trains a recurrent network that writes text in the style of each author (Ororbia, Linder & Snoke) "
        "and replaces every text by one it writes for the same author. Higher τ = more private: the network "
        "writes more freely and less like any one author. Training takes from half a minute to several "
        "minutes, with the size of the data, and is cached."
    )
    knob = TEMPERATURE_KNOB

    symbols: str
    softmax: str
    activation: str
    optimizer: str
    hidden: int
    epochs: int
    learning_rate: float | None
    window: int
    batch: int
    min_count: int
    training_seed: int
    parameters = (
        Param("symbols", str, "words", "what the network writes one at a time", choices=("words", "characters")),
        Param(
            "softmax",
            str,
            "classes",
            "output layer: one softmax over every symbol (full, the paper's Eq. 2) or over classes of symbols, "
            "then the symbols of the class (classes: training ~7× faster on 4,000 words, same loss)",
            choices=("classes", "full"),
            expert=True,
        ),
        Param(
            "activation",
            str,
            "softsign",
            "hidden units (softsign gave the paper its best models)",
            choices=("softsign", "sigmoid", "relu"),
        ),
        Param("optimizer", str, "sgd", "stochastic gradient descent or RMSProp", choices=("sgd", "rmsprop")),
        Param("hidden", int, 100, "hidden units (the paper tried 50, 100 and 200)", low=4, high=1000, expert=True),
        Param("epochs", int, 20, "passes over the texts in training", low=1, high=500, expert=True),
        Param(
            "learning_rate",
            float,
            None,
            "step size (default: 0.3 for SGD, 0.001 for RMSProp)",
            low=1e-6,
            high=10.0,
            expert=True,
        ),
        Param("window", int, 10, "steps of truncated back-propagation through time (m)", low=1, high=200, expert=True),
        Param("batch", int, 50, "texts per mini-batch", low=1, high=10_000, expert=True),
        Param(
            "min_count",
            int,
            2,
            "words seen fewer times become one rare-word symbol that is never written (1 keeps every word)",
            low=1,
            high=1000,
            expert=True,
        ),
        Param(
            "training_seed",
            int,
            0,
            "seed of the initial weights and the order of training",
            low=0,
            high=MAX_SEED,
            expert=True,
        ),
    )

    def fit_identity(self, dataset: Any = None) -> dict[str, Any]:
        """The learning rate in effect (its default depends on the optimizer) and the versions that train."""
        out: dict[str, Any] = {"learning_rate_in_effect": self._learning_rate()}
        for package in ("jax", "optax"):
            try:
                out[package] = version(package)
            except PackageNotFoundError:
                out[package] = None
        return out

    def _learning_rate(self) -> float:
        if self.learning_rate is not None:
            return float(self.learning_rate)
        return 0.3 if self.optimizer == "sgd" else 0.001

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedRecurrent:
        schema = dataset.schema
        texts = dataset.texts.astype(str).tolist()
        pieces = [tokenize(t) for t in texts] if self.symbols == "words" else [list(t) for t in texts]
        counts = Counter(s for p in pieces for s in p)
        kept = sorted(s for s, c in counts.items() if c >= self.min_count)
        if not kept:
            raise ConfigError(
                f"no {self.symbols[:-1]} occurs at least min_count = {self.min_count} times in the texts; "
                "lower min_count (1 keeps every one)"
            )
        rare = len(kept) < len(counts)
        table = ([RARE] if rare else []) + kept
        index = {s: i + RESERVED for i, s in enumerate(table)}
        sequences = [np.array([index.get(s, RESERVED) for s in p] + [END], dtype=np.int32) for p in pieces]
        authors = (
            dataset.frame[schema.author].astype(str).to_numpy()
            if schema.author is not None
            else np.arange(len(texts)).astype(str)
        )
        users, names = pd.factorize(pd.Series(authors), sort=True)
        what = f"training the text generator over {self.epochs} epochs"
        progress(0, 1, "loading JAX for the text generator")
        weights, losses = train(
            sequences,
            users,
            n_symbols=len(table) + RESERVED,
            n_users=len(names),
            hidden=self.hidden,
            activation=self.activation,  # type: ignore[arg-type]
            optimizer=self.optimizer,  # type: ignore[arg-type]
            learning_rate=self._learning_rate(),
            epochs=self.epochs,
            window=self.window,
            batch=self.batch,
            seed=self.training_seed,
            softmax=self.softmax,  # type: ignore[arg-type]
            progress=lambda done, total, loss: progress(
                done, total, what if loss is None else f"{what} (loss {loss:.2f})"
            ),
        )
        return FittedRecurrent(
            frame=dataset.frame,
            text_column=schema.text,
            symbols=tuple(table),
            symbol_kind=self.symbols,
            weights=weights,
            record_users=users.astype(np.int64),
            max_length=max([len(s) - 1 for s in sequences] + [1]),
            losses=losses,
            rare=rare,
        )
