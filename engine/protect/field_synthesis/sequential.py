"""Partially synthetic fields conditioned on the text, synthesized one field after another.

The sequential scheme of Kinney et al. (2011) as Schneider, Hu, Mankad & Bale (2023, Section 3) use it: the
steward orders the sensitive fields; field j is modelled on the text (and any un-synthesized predictor fields)
and the *confidential* fields 1…j−1, and synthesized from the text and the *synthetic* fields 1…j−1 drawn
before it. Fields not selected stay as they are, and the text is never changed. The models themselves (the
shrinkage GLM, CART) live in their own modules and plug in through `SequentialFitted.field_probabilities`
(a probability per level) or, where that matrix would be too large, `SequentialFitted.draw_field`.

A categorical field is coded by its levels; a count or continuous field (CART only) by its distinct values in
increasing order, so a draw of a code returns a confidential value; in a later field's design it enters as one
numeric column (its value) instead of indicators.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import sparse

from engine.data.dataset import Dataset
from engine.data.levels import levels_by_frequency
from engine.data.schema import FieldSpec
from engine.errors import ConfigError, DataError
from engine.protect.base import Fitted, Knob, Protector, Release, ReleaseDetail
from engine.protect.params import Param
from engine.text.features import WordCounts

VENDOR_KEYWORDS = Param(
    "vendor_keywords",
    str,
    (),
    "words left out of the text features (e.g. the vendor's name)",
    many=True,
    label="Vendor keywords left out of the text features",
)
"""The text features' left-out words, a parameter of every field synthesizer that predicts from the text."""

FIELD_DETAIL_COLUMNS = ["record", "field", "original", "synthetic", "p_original"]


@dataclass(frozen=True)
class FieldDraws(ReleaseDetail):
    """What one synthesis release drew: per record and field its confidential and synthetic level and the
    probability that the draw returns the confidential one (``table``, columns `FIELD_DETAIL_COLUMNS`), read by
    the identification measures and shown in the internal review; and the posterior draw the release used.
    Never in the bundle: it holds the confidential values."""

    table: pd.DataFrame
    posterior_draw: int
    section: ClassVar[str] = "field-synthesis"
    block: ClassVar[str] = "samples"


@dataclass(frozen=True)
class FieldLevels:
    """A field coded 0..K−1: a categorical field by its levels, level 0 the most frequent (ties by name); a
    numeric (count or continuous) field by its distinct values in increasing order (``numeric`` True)."""

    name: str
    levels: tuple
    codes: np.ndarray
    numeric: bool = False

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    @property
    def values(self) -> np.ndarray:
        """The numeric value of each code (numeric fields)."""
        return np.asarray(self.levels, dtype=float)

    @classmethod
    def of(cls, name: str, values: pd.Series) -> FieldLevels:
        order = levels_by_frequency(values)
        lookup = {v: i for i, v in enumerate(order)}
        return cls(name, tuple(order), values.astype(str).map(lookup).to_numpy(np.int64))

    @classmethod
    def numeric_of(cls, name: str, values: pd.Series) -> FieldLevels:
        distinct, codes = np.unique(values.to_numpy(), return_inverse=True)
        return cls(name, tuple(distinct.tolist()), codes.astype(np.int64), numeric=True)

    def encode(self, values: pd.Series) -> np.ndarray:
        """Codes of ``values``; −1 for a value this field never took."""
        lookup = {v: i for i, v in enumerate(self.levels)}
        return values.astype(str).map(lookup).fillna(-1).to_numpy(np.int64)


def synthesizable_fields(dataset: Dataset, kinds: Sequence[str] = ("categorical",)) -> list[str]:
    """The fields of ``kinds`` that a method may synthesize."""
    return [f.name for f in dataset.schema.fields if f.kind in kinds]


def resolve_fields(
    dataset: Dataset, fields: Sequence[str] | None, kinds: Sequence[str] = ("categorical",)
) -> list[str]:
    """The fields to synthesize, in order: ``fields`` checked against the schema, or by default the sensitive
    categorical fields in schema order — and when ``kinds`` admits count/continuous fields and no sensitive
    field is categorical, the sensitive fields of those kinds, in schema order. ConfigError names what is
    wrong and what is accepted."""
    schema = dataset.schema
    accepted = synthesizable_fields(dataset, kinds)
    what = "categorical" if tuple(kinds) == ("categorical",) else "/".join(kinds)
    if fields is None or len(fields) == 0:
        chosen = [
            f.name
            for f in schema.fields
            if f.kind == "categorical" and f.role == "sensitive" and "categorical" in kinds
        ]
        if not chosen:
            chosen = [f.name for f in schema.fields if f.kind in kinds and f.role == "sensitive"]
        if not chosen:
            raise ConfigError(
                f"no sensitive {what} field to synthesize; mark one as sensitive in the schema or name the "
                f"fields to synthesize ({what} fields: {', '.join(accepted) or 'none'})"
            )
        return chosen
    chosen = list(fields)
    dup = sorted({f for f in chosen if chosen.count(f) > 1})
    if dup:
        raise ConfigError(f"field(s) {', '.join(dup)} listed more than once; give each field once, in order")
    for name in chosen:
        if name not in schema.field_names:
            raise ConfigError(f"no structured field named '{name}'; {what} fields are: {', '.join(accepted) or 'none'}")
        if schema.field(name).kind not in kinds:
            raise ConfigError(
                f"field '{name}' is a {schema.field(name).kind} field; these synthesizers draw {what} fields "
                f"only ({what} fields: {', '.join(accepted) or 'none'})"
            )
    return chosen


def numeric_column(frame: pd.DataFrame, spec: FieldSpec, what: str = "field") -> pd.Series:
    """The column of a count or continuous field, checked: numbers and no missing values (DataError naming the
    field, and how many rows are missing)."""
    column = frame[spec.name]
    if not pd.api.types.is_numeric_dtype(column):
        raise DataError(
            f"{what} '{spec.name}' is declared {spec.kind} but holds text (dtype {column.dtype}), not "
            "numbers; declare it categorical or clean the column"
        )
    missing = int(column.isna().sum())
    if missing:
        raise DataError(
            f"{what} '{spec.name}' has {missing} missing value(s) in {len(column)} rows; fill or drop those rows first"
        )
    return column


def field_levels(dataset: Dataset, names: Sequence[str], min_records: int = 2) -> list[FieldLevels]:
    """Coded fields, checking there are enough records and that each field takes at least two values (and,
    for count and continuous fields, that it holds numbers and no missing values)."""
    if dataset.n_records < min_records:
        raise DataError(f"synthesis needs at least {min_records} records, the dataset has {dataset.n_records}")
    out = []
    for name in names:
        spec = dataset.schema.field(name)
        if spec.kind == "categorical":
            lv = FieldLevels.of(name, dataset.frame[name])
        else:
            lv = FieldLevels.numeric_of(name, numeric_column(dataset.frame, spec))
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


def previous_columns(codes: np.ndarray, lv: FieldLevels) -> sparse.csr_matrix:
    """How an earlier field enters a later field's design: indicators of its levels, or its numeric value."""
    if lv.numeric:
        return sparse.csr_matrix(lv.values[codes][:, None])
    return dummies(codes, lv.n_levels)


def design(
    text: sparse.csr_matrix,
    previous: Sequence[tuple[np.ndarray, FieldLevels]],
    predictors: sparse.csr_matrix | None = None,
) -> sparse.csr_matrix:
    """The covariates of one field's model: the text's word counts, the un-synthesized ``predictors`` and the
    fields before it (``(codes, FieldLevels)``: confidential codes at fit, synthetic ones at release)."""
    blocks = [text] + ([predictors] if predictors is not None and predictors.shape[1] else [])
    blocks += [previous_columns(codes, lv) for codes, lv in previous]
    return sparse.hstack(blocks, format="csr", dtype=np.float64)


def predictor_matrix(frame: pd.DataFrame, fields: Sequence[FieldSpec]) -> sparse.csr_matrix:
    """Un-synthesized predictor fields as columns: indicators of a categorical field's levels (all but the most
    frequent, as `dummies`), a count or continuous field's value (DataError if it is not numbers or has gaps)."""
    blocks = []
    for f in fields:
        if f.kind == "categorical":
            lv = FieldLevels.of(f.name, frame[f.name])
            blocks.append(dummies(lv.codes, lv.n_levels))
        else:
            values = numeric_column(frame, f, what="predictor field").to_numpy(dtype=float)
            blocks.append(sparse.csr_matrix(values[:, None]))
    return sparse.hstack(blocks, format="csr") if blocks else sparse.csr_matrix((len(frame), 0))


def draw_categorical(P: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of the probability matrix P (rows sum to 1), by the inverse CDF of one uniform each."""
    cdf = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * cdf[:, -1]
    return np.minimum((cdf < u[:, None]).sum(axis=1), P.shape[1] - 1)


@dataclass
class SequentialFitted(Fitted):
    """A fitted sequential synthesizer; subclasses give each field's probabilities (or draws)."""

    frame: pd.DataFrame
    fields: list[FieldLevels]
    text: WordCounts
    knob: Knob
    method: str = "synthesis"
    predictors: sparse.csr_matrix | None = None

    @abstractmethod
    def field_probabilities(self, j: int, X: sparse.csr_matrix, value: float, draw: int) -> np.ndarray:
        """Predictive probabilities (n × K_j) of field j's levels given its design ``X`` at knob ``value``,
        under posterior draw ``draw`` (see `posterior_draw`)."""

    def draw_field(
        self, j: int, X: sparse.csr_matrix, value: float, draw: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """One synthetic code of field j per record, and per record the probability that the draw returns its
        confidential code; by default by the inverse CDF of `field_probabilities` (one uniform per record)."""
        P = self.field_probabilities(j, X, value, draw)
        drawn = draw_categorical(P, rng)
        return drawn, P[np.arange(len(drawn)), self.fields[j].codes]

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
        synthetic: list[tuple[np.ndarray, FieldLevels]] = []
        detail = []
        draw = self.posterior_draw(rng)
        for j, lv in enumerate(self.fields):
            X = design(self.text.matrix, synthetic, self.predictors)
            drawn, p_original = self.draw_field(j, X, value, draw, rng)
            synthetic.append((drawn, lv))
            levels = np.asarray(lv.levels, dtype=object)
            data[lv.name] = pd.Series(levels[drawn], index=data.index, dtype=self.frame[lv.name].dtype)
            detail.append(
                pd.DataFrame(
                    {
                        "record": np.arange(len(drawn)),
                        "field": lv.name,
                        "original": levels[lv.codes],
                        "synthetic": levels[drawn],
                        "p_original": p_original,
                    }
                )
            )
        field_detail = pd.concat(detail, ignore_index=True)[FIELD_DETAIL_COLUMNS]
        return Release(
            data=data,
            method=self.method,
            knob=float(value),
            protected_columns=tuple(lv.name for lv in self.fields),
            changes=None,
            details=(FieldDraws(field_detail, draw),),
        )


CATEGORICAL_FIRST: tuple[str, ...] = (
    "identification_probability",
    "author_identification_probability",
    "confidential_value_rate",
    "pmse_ratio",
    "topic_content_correlation",
    "cell_difference_2way",
)
"""The measures a synthesis of categorical fields is shown with first: Schneider et al.'s identification risk,
their utility and the values kept."""
NUMERIC_FIRST: tuple[str, ...] = ("attribute_risk_r5_p5", "emr", "fmr", "propensity_up", "ci_overlap")
"""The measures a synthesis of counts and amounts is shown with first: Guo & Hu's attribute and identification
risk, their propensity utility and the interval overlap of the estimates."""


class FieldSynthesizer(Protector):
    """A protector that replaces structured fields (given in ``fields``, in order) and leaves the text."""

    changes = "fields"
    protects_by = "synthesized"
    shown_first = CATEGORICAL_FIRST
    fields: tuple[str, ...] | None = None
    field_kinds: ClassVar[tuple[str, ...]] = ("categorical",)

    def check(self, dataset: Dataset) -> list[str]:
        names = resolve_fields(dataset, self.fields, self.field_kinds)
        field_levels(dataset, names)
        return names
