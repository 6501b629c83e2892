"""Preparations several families of measures share: the synthesized categorical fields coded by level, the
original and released texts and authors, their word n-gram counts, and the intruder's external texts."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from engine.data.dataset import Dataset
from engine.measures.base import NotApplicable, PrepareContext, ReleaseView
from engine.measures.intruders import INTRUDER, Intruder, intruder
from engine.protect.field_synthesis.sequential import FieldLevels
from engine.text.ngrams import NgramSpace


def field_levels(context: PrepareContext) -> list[FieldLevels]:
    """The synthesized categorical fields coded 0..K−1 on the confidential data (level 0 the most frequent)."""
    return context.shared(
        "field_levels", lambda: [FieldLevels.of(f, context.dataset.frame[f]) for f in context.categorical]
    )


def synthetic_codes(view: ReleaseView, levels: list[FieldLevels]) -> list[np.ndarray]:
    """The released values of the synthesized categorical fields in the codes of ``levels``."""
    return view.memo("synthetic_codes", lambda: [lv.encode(view.data[lv.name]) for lv in levels])


def original_texts(context: PrepareContext) -> list[str]:
    return context.shared("original_texts", lambda: context.dataset.texts.astype(str).tolist())


def released_texts(view: ReleaseView) -> list[str]:
    return view.memo("released_texts", lambda: view.data[view.dataset.schema.text].astype(str).tolist())


def ngram_space(context: PrepareContext) -> NgramSpace:
    """The word n-grams of the confidential texts and of the intruder's external texts (when there are any)."""

    def build() -> NgramSpace:
        external = context.dataset.external
        text = context.dataset.schema.text
        known = [] if external is None or text not in external else external[text].astype(str).tolist()
        return NgramSpace(original_texts(context), known)

    return context.shared("ngram_space", build)


def original_ngrams(context: PrepareContext, n: int) -> sparse.csr_matrix:
    """Confidential texts × n-grams of order ``n`` (ids of `ngram_space`): counts."""
    return context.shared(("original_ngrams", n), lambda: ngram_space(context).counts(original_texts(context), n))


def released_ngrams(view: ReleaseView, space: NgramSpace, n: int) -> sparse.csr_matrix:
    """Released texts × n-grams of order ``n`` in ``space`` (the one `ngram_space` gave): counts, made once
    for all the measures of the release."""
    return view.memo(("released_ngrams", n), lambda: space.counts(released_texts(view), n))


def released_authors(view: ReleaseView) -> pd.Series | None:
    """Who wrote each released record (None without an author column)."""
    author = view.dataset.schema.author
    return view.memo(
        "released_authors", lambda: None if author is None else view.data[author].astype(str).reset_index(drop=True)
    )


def preset_of(context: PrepareContext, needs_texts: bool = False) -> Intruder:
    """The attacker preset the measures of ``context`` assume; `NotApplicable` when ``needs_texts`` and she
    holds no text (the attacks that weigh writing are not made by an intruder who has none)."""
    preset = intruder(context.settings[INTRUDER.name])
    if needs_texts and not preset.texts:
        raise NotApplicable(f"the intruder chosen ('{preset.label}') holds no texts by the people she targets")
    return preset


def require_intruder_texts(dataset: Dataset) -> tuple[pd.DataFrame, str]:
    """The intruder's external records and the author column, or `NotApplicable` saying what is missing."""
    author = dataset.schema.author
    if author is None:
        raise NotApplicable("needs an author column (who wrote each record)")
    if dataset.external is None or len(dataset.external) == 0:
        raise NotApplicable("needs the intruder's external texts (a second file, or a hold-out rule in the schema)")
    return dataset.external, author
