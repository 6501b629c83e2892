"""The measures of synthesized count and continuous fields (Guo & Hu): what they share about the data.

Utility: propensity Up, cluster Uc, eCDF Um / Ua (Section 3.1) and the interval overlap of means, quantiles
and regression coefficients (Section 3.2, Eq. 10). Risk: attribute disclosure AR at four radius pairs
(Section 4.1), identification EMR / TMR / FMR and unique matches (Section 4.2), and how they move as the
intruder's knowledge of a key count gets noisier (Section 4.3, Eq. 11: the detail of ``emr`` is that curve).
The formulas live in `engine.measures.utility.distribution`, `engine.measures.utility.inference` and
`engine.measures.risk.matching`, the measure classes in `engine.measures.risk.counts` and
`engine.measures.utility.counts`; this module holds what they share about the confidential data
(`NumericMeasures`, prepared once per dataset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec
from engine.errors import ConfigError
from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.intruders import DEFAULT_INTRUDER, INTRUDER, INTRUDERS, Intruder, intruder
from engine.measures.risk.matching import RADIUS_PAIRS, UNCERTAINTY_LEVELS, attribute_risk_id
from engine.measures.utility.distribution import main_effects
from engine.measures.utility.inference import inferential_estimates
from engine.protect.params import Param

if TYPE_CHECKING:
    from engine.measures.settings import MeasureSettings

__all__ = [
    "ATTRIBUTE_RISK_METRICS",
    "IDENTIFICATION_METRICS",
    "UNCERTAINTY_LEVELS",
    "NumericMeasure",
    "NumericMeasures",
    "numeric_preparation",
    "uncertainty_field",
]  # and NUMERIC_METRICS, read lazily

ATTRIBUTE_RISK_METRICS = [attribute_risk_id(rc, rp) for rc, rp in RADIUS_PAIRS]
IDENTIFICATION_METRICS = ["emr", "tmr", "fmr", "unique_matches"]


def uncertainty_field(dataset: Dataset, synthesized: Sequence[str], name: str | None) -> str | None:
    """The key field whose value the intruder knows with noise (Eq. 11): ``name``, or by default the first
    key count field that is not synthesized (ReviewsCount in the paper); None when there is none."""
    keys = [f for f in dataset.schema.fields if f.role == "key" and f.name not in synthesized]
    if name is None:
        return next((f.name for f in keys if f.kind == "count"), None)
    if name not in [f.name for f in keys]:
        raise ConfigError(
            f"intruder-uncertainty field '{name}' must be an un-synthesized key field; key fields: "
            f"{', '.join(f.name for f in keys) or 'none'}"
        )
    if dataset.schema.field(name).kind != "count":
        raise ConfigError(f"intruder-uncertainty field '{name}' must be a count field (Eq. 11 is for counts)")
    return name


@dataclass
class NumericMeasures:
    """Everything about the confidential data the numeric measures need, computed once."""

    dataset: Dataset
    fields: list[FieldSpec]  # the synthesized count / continuous fields
    keys: list[str]  # what the intruder knows: the un-synthesized key fields
    noisy: str | None  # the key count known with noise (Eq. 11)
    seed: int
    clusters: int
    design_fields: list[FieldSpec]  # the main effects: the key and the synthesized fields
    confidential_X: np.ndarray  # their columns on the confidential data
    intruder: Intruder = INTRUDERS[DEFAULT_INTRUDER]  # the attacker preset the risk measures assume
    confidential_estimates: pd.DataFrame = field(init=False)  # the quantities of Section 3.2 on it

    def __post_init__(self) -> None:
        self.confidential_estimates = self.estimates(self.dataset.frame)

    @classmethod
    def prepare(
        cls,
        dataset: Dataset,
        synthesized: Sequence[str],
        seed: int = 0,
        clusters: int = 20,
        noisy: str | None = None,
        preset: str = DEFAULT_INTRUDER,
    ) -> NumericMeasures:
        schema = dataset.schema
        fields = [schema.field(f) for f in synthesized if schema.field(f).kind in ("count", "continuous")]
        keys = [f.name for f in schema.fields if f.role == "key" and f.name not in synthesized]
        noisy = uncertainty_field(dataset, synthesized, noisy)
        design = [f for f in schema.fields if f.name in keys or f.name in synthesized]
        return cls(
            dataset,
            fields,
            keys,
            noisy,
            seed,
            clusters,
            design,
            main_effects(dataset.frame, design, dataset.frame),
            intruder(preset),
        )

    @property
    def response(self) -> str | None:
        """The field whose logarithm the regression of Section 3.2 explains: the synthesized continuous one."""
        return next((f.name for f in self.fields if f.kind == "continuous"), None)

    def estimates(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The quantities of Section 3.2 on ``frame``, bootstrapped with a generator seeded afresh."""
        predictors = [f for f in self.design_fields if f.name not in {g.name for g in self.fields}]
        return inferential_estimates(
            frame,
            self.fields,
            predictors,
            self.response,
            np.random.default_rng(self.seed),
            reference=self.dataset.frame,
        )

    def split(self) -> tuple[list[str], list[str]]:
        """The synthesized count fields and the synthesized continuous fields."""
        counts = [f.name for f in self.fields if f.kind == "count"]
        return counts, [f.name for f in self.fields if f.kind == "continuous"]

    def evaluate(self, data: pd.DataFrame, wanted: Sequence[str]) -> dict[str, MetricResult]:
        """The ``wanted`` numeric measures of one release ``data`` (laid out like the dataset), computed as the
        `Evaluator` computes them (a shortcut for benchmarks that time families of measures)."""
        from engine.measures import registry  # the registry imports this module

        view = ReleaseView(self.dataset, data)
        out = {}
        for cls in registry.MEASURES:
            if cls.id in wanted and issubclass(cls, NumericMeasure):
                measure = cls()
                measure.numeric = self
                out[cls.id] = measure.compute(view)
        return out


CLUSTERS = Param(
    "clusters",
    int,
    20,
    "count and amount measures: clusters of the cluster utility Uc",
    low=2,
    high=500,
    label="Clusters of the cluster utility Uc",
)
UNCERTAINTY_FIELD = Param(
    "uncertainty_field",
    str,
    None,
    "count and amount measures: the key count the intruder knows with noise of level S (default: the first "
    "un-synthesized key count)",
    fields=("count",),
    label="Key count known with noise (Eq. 11)",
)


def numeric_preparation(context: PrepareContext) -> NumericMeasures:
    """`NumericMeasures.prepare` once for all the numeric measures of an evaluator."""

    def prepare() -> NumericMeasures:
        s = context.settings
        context.progress(0, 1, "preparing the measures of counts and amounts")
        return NumericMeasures.prepare(
            context.dataset, context.fields, s.seed, s[CLUSTERS.name], s[UNCERTAINTY_FIELD.name], s[INTRUDER.name]
        )

    return context.shared("numeric", prepare)


class NumericMeasure(Measure):
    """A measure of synthesized count / continuous fields, computed from the shared `NumericMeasures` (whose
    preparation reads the clusters of Uc and the key count known with noise)."""

    applies_to = "numeric"
    settings = (CLUSTERS, UNCERTAINTY_FIELD)
    numeric: NumericMeasures

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        uncertainty_field(dataset, fields, settings[UNCERTAINTY_FIELD.name])

    def prepare(self, context: PrepareContext) -> None:
        self.numeric = numeric_preparation(context)


def __getattr__(name: str) -> list[str]:
    """``NUMERIC_METRICS``: the ids of the numeric measures in registry order (read lazily: the registry
    imports this module)."""
    if name == "NUMERIC_METRICS":
        from engine.measures.registry import measure_ids

        return measure_ids("numeric")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
