"""The released table the three attacks read, the control split, and the settings they share.

**The table.** The release's structured fields (every field of the schema that the release shows: a field the
method withholds from the bundle is left out) and four declared features of the text, so that the text enters
the attacks as a table does:

- ``text_words``: the number of words (a count);
- ``text_url``, ``text_handle``: whether the text holds a URL, an @handle (the tool's format recognizers);
- ``text_number``: whether it holds a digit.

The author, document and direct-identifier columns are not in it (they leave pseudonymized, dropped or as the
steward chose, and the other attacks weigh them). A feature whose name a field already has is left out.

**The control split.** The framework of Giomi et al. (2023) scores each attack on the records the release was
made from and, as control, on records of the same population it was *not* made from. Every method here is fitted
on all the records, so no record is outside the release. The split is therefore made on the release itself: a
seeded half of the records is the control, and the attacks read only the released rows of the other half (the
*attacked* records), so the rows made from the control records are not in what the intruder sees. Two limits
follow, stated wherever the measures are:

- a method that learns from all the records (the synthesizers' models, k-anonymity's classes, the swap's pools)
  carries a little of the control records into the attacked rows too: the control attack then does slightly
  better than on truly unseen records, and the risk is, if anything, understated by that much;
- the attacks read half the release, so the singling-out risk is that of a release of half the records
  (records are easier to single out among fewer).

Halves of equal size (one record is left out when the count is odd) let the control attack be scored without
the framework's correction for control sets of another size.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.base import NotApplicable
from engine.protect.params import Param
from engine.text.recognizers import RECOGNIZERS

MIN_RECORDS = 100
"""Records needed for a control split: half of them, at least 50, are the control."""
_DIGIT = re.compile(r"\d")

TEXT_FEATURES: dict[str, str] = {
    "text_words": "the number of words of the text",
    "text_url": "whether the text holds a URL",
    "text_handle": "whether the text holds an @handle",
    "text_number": "whether the text holds a digit",
}
"""The declared features of the text that enter the released table, in the steward's words."""

N_ATTACKS = Param(
    "n_attacks",
    int,
    500,
    "singling out, linkability and inference (Anonymeter): the attacks of each, and as many by its control "
    "and its random-guess baseline (at most the records of one half of the data)",
    low=20,
    high=20_000,
    label="Attacks per risk (singling out, linkability, inference)",
)


def text_features(texts: Sequence[str]) -> dict[str, np.ndarray]:
    """The declared features of ``texts`` (`TEXT_FEATURES`)."""
    url, handle = RECOGNIZERS["URL"], RECOGNIZERS["HANDLE"]
    return {
        "text_words": np.fromiter((len(t.split()) for t in texts), dtype=float, count=len(texts)),
        "text_url": np.array([next(url(t), None) is not None for t in texts]),
        "text_handle": np.array([next(handle(t), None) is not None for t in texts]),
        "text_number": np.array([_DIGIT.search(t) is not None for t in texts]),
    }


@dataclass(frozen=True)
class Column:
    """A column of the released table: its name and whether it is a number (else a category)."""

    name: str
    numeric: bool


def table_columns(dataset: Dataset, withheld: Sequence[str] = ()) -> list[Column]:
    """The columns of the released table: the schema's fields the release shows, then the text's features."""
    fields = [Column(f.name, f.kind != "categorical") for f in dataset.schema.fields if f.name not in withheld]
    taken = {c.name for c in fields}
    return fields + [Column(name, name == "text_words") for name in TEXT_FEATURES if name not in taken]


def column_names(dataset: Dataset) -> list[str]:
    """Every name an attack's setting may give: the fields and the text's features."""
    return [c.name for c in table_columns(dataset)]


def check_columns(dataset: Dataset, names: Sequence[str] | None, what: str) -> None:
    """ConfigError when ``names`` (a setting's value, ``what`` in words) name a column the table does not have."""
    if names is None:
        return
    known = column_names(dataset)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(
            f"{what}: {', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not a column of the "
            f"released table; accepted: {', '.join(known)}"
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"{what}: a column is named twice ({', '.join(names)})")


_MISSING = "\x00missing"


@dataclass
class Encoded:
    """A table as arrays: a category as an integer code (codes shared by every table of one `Attackable`,
    missing values a code of their own), a number as a float (NaN when missing)."""

    values: dict[str, np.ndarray]
    rows: int


@dataclass
class Attackable:
    """The confidential side, prepared once per dataset: the columns, the split, and the attacked and control
    records encoded."""

    columns: list[Column]
    attacked: np.ndarray  # record positions whose released rows the intruder sees and whose originals she attacks
    control: np.ndarray  # record positions of the control records
    categories: dict[str, pd.Index]  # categorical column → its confidential categories (code = position)
    original: Encoded  # every record, encoded
    original_texts: np.ndarray
    n_fields: int  # the first columns are fields, the rest the text's features
    seed: int

    @classmethod
    def prepare(cls, dataset: Dataset, withheld: Sequence[str], seed: int) -> Attackable:
        """The table of ``dataset`` and its control split (seeded); `NotApplicable` with fewer than
        `MIN_RECORDS` records."""
        n = len(dataset.frame)
        if n < MIN_RECORDS:
            raise NotApplicable(
                f"needs at least {MIN_RECORDS} records to set half of them aside as the control the attacks are "
                f"read against; this data has {n:,}"
            )
        order = np.random.default_rng(seed).permutation(n)
        half = n // 2
        columns = table_columns(dataset, withheld)
        texts = dataset.texts.astype(str).to_numpy(dtype=object)
        frame = _with_features(dataset.frame.reset_index(drop=True), texts, columns)
        categories = {c.name: pd.Index(pd.unique(_as_text(frame[c.name]))) for c in columns if not c.numeric}
        n_fields = sum(1 for c in columns if c.name in dataset.schema.field_names)
        attacked, control = np.sort(order[:half]), np.sort(order[half : 2 * half])
        self = cls(columns, attacked, control, categories, Encoded({}, n), texts, n_fields, seed)
        self.original = self.encode(frame)
        return self

    @property
    def features(self) -> list[str]:
        """The text's features among the columns (a field of the same name is a field)."""
        return [c.name for c in self.columns[self.n_fields :]]

    def encode(self, frame: pd.DataFrame, columns: Sequence[Column] | None = None) -> Encoded:
        """``frame``'s ``columns`` (all by default) as arrays; a category the confidential data does not have
        gets a code of its own."""
        values: dict[str, np.ndarray] = {}
        for c in self.columns if columns is None else columns:
            if c.numeric:
                values[c.name] = pd.to_numeric(frame[c.name], errors="coerce").to_numpy(dtype=float)
            else:
                text = _as_text(frame[c.name])
                known = self.categories[c.name]
                codes = known.get_indexer(text)
                new = codes < 0
                if new.any():
                    codes[new] = len(known) + pd.factorize(text[new])[0]
                values[c.name] = codes
        return Encoded(values, len(frame))

    def release(self, data: pd.DataFrame, text_column: str) -> Encoded:
        """A release's table (every record), its text features computed again only for texts it changed."""
        texts = data[text_column].astype(str).to_numpy(dtype=object)
        changed = np.flatnonzero(texts != self.original_texts)
        frame = data.reset_index(drop=True)
        features = [c for c in self.columns if c.name in self.features]
        encoded = self.encode(frame, [c for c in self.columns if c.name not in self.features])
        if not len(changed):
            encoded.values.update({c.name: self.original.values[c.name] for c in features})
            return encoded
        fresh = _with_features(pd.DataFrame(index=range(len(changed))), texts[changed], features)
        fresh_codes = self.encode(fresh, features)
        for c in features:
            values = self.original.values[c.name].copy()
            values[changed] = fresh_codes.values[c.name]
            encoded.values[c.name] = values
        return encoded

    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def _with_features(frame: pd.DataFrame, texts: np.ndarray, columns: list[Column]) -> pd.DataFrame:
    features = text_features(texts.tolist())
    return frame.assign(
        **{
            c.name: features[c.name] if c.numeric else np.where(features[c.name], "True", "False")
            for c in columns
            if c.name in TEXT_FEATURES and c.name not in frame.columns
        }
    )


def _as_text(values: pd.Series) -> np.ndarray:
    """Values as text, a missing one as a category of its own."""
    return values.astype(object).where(values.notna(), _MISSING).astype(str).to_numpy(dtype=object)


def rows(table: Encoded, positions: np.ndarray) -> Encoded:
    """The rows ``positions`` of ``table``."""
    return Encoded({k: v[positions] for k, v in table.values.items()}, len(positions))
