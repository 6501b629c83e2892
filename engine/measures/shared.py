"""Preparations several families of measures share: the synthesized categorical fields coded by level, the
original and released texts and authors, and the intruder's external texts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.measures.base import NotApplicable, PrepareContext, ReleaseView
from engine.protect.field_synthesis.sequential import FieldLevels


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


def released_authors(view: ReleaseView) -> pd.Series | None:
    """Who wrote each released record (None without an author column)."""
    author = view.dataset.schema.author
    return view.memo(
        "released_authors", lambda: None if author is None else view.data[author].astype(str).reset_index(drop=True)
    )


def require_intruder_texts(dataset: Dataset) -> tuple[pd.DataFrame, str]:
    """The intruder's external records and the author column, or `NotApplicable` saying what is missing."""
    author = dataset.schema.author
    if author is None:
        raise NotApplicable("needs an author column (who wrote each record)")
    if dataset.external is None or len(dataset.external) == 0:
        raise NotApplicable("needs the intruder's external texts (a second file, or a hold-out rule in the schema)")
    return dataset.external, author
