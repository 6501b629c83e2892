"""Partially synthetic categorical fields conditioned on the text, synthesized one field after another.

The sequential scheme of Kinney et al. (2011) as Schneider, Hu, Mankad & Bale (2023, Section 3) use it: the
steward orders the sensitive fields; field j is modelled on the text and the *confidential* fields 1…j−1 and
synthesized from the text and the *synthetic* fields 1…j−1 drawn before it. Fields not selected stay as they
are, and the text is never changed. The models themselves (the shrinkage GLM, CART) live in their own modules
and plug in through `SequentialFitted.field_probabilities`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from engine.dataset import Dataset
from engine.errors import ConfigError, DataError
from engine.protect.base import Fitted, Knob, Protector, Release
from engine.text.features import WordCounts

FIELD_DETAIL_COLUMNS = ["record", "field", "original", "synthetic", "p_original"]


@dataclass(frozen=True)
class FieldLevels:
    """A categorical field coded 0..K−1, level 0 the most frequent (ties by name)."""

    name: str
    levels: tuple[str, ...]
    codes: np.ndarray

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @classmethod
    def of(cls, name: str, values: pd.Series) -> FieldLevels:
        counts = values.astype(str).value_counts()
        order = sorted(counts.index, key=lambda v: (-counts[v], v))
        lookup = {v: i for i, v in enumerate(order)}
        return cls(name, tuple(order), values.astype(str).map(lookup).to_numpy(np.int64))

    def encode(self, values: pd.Series) -> np.ndarray:
        """Codes of ``values``; −1 for a value this field never took."""
        lookup = {v: i for i, v in enumerate(self.levels)}
        return values.astype(str).map(lookup).fillna(-1).to_numpy(np.int64)


def synthesizable_fields(dataset: Dataset) -> list[str]:
    """The categorical fields that may be synthesized: sensitive or key fields with at least two levels."""
    return [f.name for f in dataset.schema.fields if f.kind == "categorical"]


def resolve_fields(dataset: Dataset, fields: Sequence[str] | None) -> list[str]:
    """The fields to synthesize, in order: ``fields`` checked against the schema, or by default the
    sensitive categorical fields in schema order. ConfigError names what is wrong and what is accepted."""
    schema = dataset.schema
    accepted = synthesizable_fields(dataset)
    if fields is None or len(fields) == 0:
        chosen = [f.name for f in schema.fields if f.kind == "categorical" and f.role == "sensitive"]
        if not chosen:
            raise ConfigError(
                "no sensitive categorical field to synthesize; mark one as sensitive in the schema or name the "
                f"fields to synthesize (categorical fields: {', '.join(accepted) or 'none'})"
            )
        return chosen
    chosen = list(fields)
    dup = sorted({f for f in chosen if chosen.count(f) > 1})
    if dup:
        raise ConfigError(f"field(s) {', '.join(dup)} listed more than once; give each field once, in order")
    for name in chosen:
        if name not in schema.field_names:
            raise ConfigError(f"no structured field named '{name}'; categorical fields are: {', '.join(accepted) or 'none'}")
        if schema.field(name).kind != "categorical":
            raise ConfigError(
                f"field '{name}' is a {schema.field(name).kind} field; these synthesizers draw categorical fields "
                f"only (categorical fields: {', '.join(accepted) or 'none'})"
            )
    return chosen


def field_levels(dataset: Dataset, names: Sequence[str], min_records: int = 2) -> list[FieldLevels]:
    """Coded fields, checking there are enough records and that each field takes at least two values."""
    if dataset.n_records < min_records:
        raise DataError(f"synthesis needs at least {min_records} records, the dataset has {dataset.n_records}")
    out = []
    for name in names:
        lv = FieldLevels.of(name, dataset.frame[name])
        if lv.n_levels < 2:
            raise DataError(
                f"field '{name}' takes a single value ({lv.levels[0]!r}) in every record; there is nothing to "
                "synthesize — leave it out of the synthesized fields"
            )
        out.append(lv)
    return out


def dummies(codes: np.ndarray, n_levels: int) -> sparse.csr_matrix:
    """Indicator columns of levels 1..K−1 (level 0, the most frequent, is the reference)."""
    n = len(codes)
    keep = codes > 0
    return sparse.csr_matrix(
        (np.ones(int(keep.sum())), (np.flatnonzero(keep), codes[keep] - 1)), shape=(n, max(n_levels - 1, 0))
    )


def design(text: sparse.csr_matrix, previous: Sequence[tuple[np.ndarray, int]]) -> sparse.csr_matrix:
    """The covariates of one field's model: the text's word counts and dummies of the fields before it."""
    blocks = [text] + [dummies(c, k) for c, k in previous]
    return sparse.hstack(blocks, format="csr", dtype=np.float64)


def design_names(vocabulary: Sequence[str], previous: Sequence[FieldLevels]) -> list[str]:
    names = [f"word:{w}" for w in vocabulary]
    for lv in previous:
        names += [f"{lv.name}={v}" for v in lv.levels[1:]]
    return names


def draw_categorical(P: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of the probability matrix P (rows sum to 1), by the inverse CDF of one uniform each."""
    cdf = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * cdf[:, -1]
    return np.minimum((cdf < u[:, None]).sum(axis=1), P.shape[1] - 1)


@dataclass
class SequentialFitted(Fitted):
    """A fitted sequential synthesizer of categorical fields; subclasses give each field's probabilities."""

    frame: pd.DataFrame
    fields: list[FieldLevels]
    text: WordCounts
    knob: Knob
    method: str = "synthesis"
    info: dict = field(default_factory=dict)

    @abstractmethod
    def field_probabilities(self, j: int, X: sparse.csr_matrix, value: float, draw: int) -> np.ndarray:
        """Predictive probabilities (n × K_j) of field j's levels given its design ``X`` at knob ``value``,
        under posterior draw ``draw`` (see `posterior_draw`)."""

    @property
    def synthesized_fields(self) -> list[str]:
        return [lv.name for lv in self.fields]

    def posterior_draw(self, rng: np.random.Generator) -> int:
        """Which of the fitted models a release uses; one model (the posterior mode) unless overridden."""
        return 0

    @abstractmethod
    def complexity(self) -> pd.DataFrame:
        """Model size along the knob, one row per (knob, field): columns knob, field, size, what."""

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        value = self.knob.validate(value)
        data = self.frame.copy()
        synthetic: list[tuple[np.ndarray, int]] = []
        detail = []
        draw = self.posterior_draw(rng)
        for j, lv in enumerate(self.fields):
            X = design(self.text.matrix, synthetic)
            P = self.field_probabilities(j, X, value, draw)
            drawn = draw_categorical(P, rng)
            synthetic.append((drawn, lv.n_levels))
            levels = np.asarray(lv.levels, dtype=object)
            data[lv.name] = pd.Series(levels[drawn], index=data.index, dtype=self.frame[lv.name].dtype)
            detail.append(pd.DataFrame({
                "record": np.arange(len(drawn)), "field": lv.name, "original": levels[lv.codes],
                "synthetic": levels[drawn], "p_original": P[np.arange(len(drawn)), lv.codes],
            }))
        field_detail = pd.concat(detail, ignore_index=True)[FIELD_DETAIL_COLUMNS]
        return Release(
            data=data, method=self.method, knob=float(value),
            protected_columns=tuple(lv.name for lv in self.fields), changes=None,
            info={"field_detail": field_detail, "posterior_draw": draw},
        )


class FieldSynthesizer(Protector):
    """A protector that replaces categorical fields (given in ``fields``, in order) and leaves the text."""

    changes = "fields"
    fields: list[str] | None = None

    def check(self, dataset: Dataset) -> list[str]:
        names = resolve_fields(dataset, self.fields)
        field_levels(dataset, names)
        return names
