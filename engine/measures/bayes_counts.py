"""The measures of synthesized count and continuous fields (Guo & Hu), prepared once per dataset.

Utility: propensity Up, cluster Uc, eCDF Um / Ua (Section 3.1) and the interval overlap of means, quantiles
and regression coefficients (Section 3.2, Eq. 10). Risk: attribute disclosure AR at four radius pairs
(Section 4.1), identification EMR / TMR / FMR and unique matches (Section 4.2), and how they move as the
intruder's knowledge of a key count gets noisier (Section 4.3, Eq. 11: the detail of ``emr`` is that curve).
The formulas live in `engine.measures.utility.distribution`, `engine.measures.utility.inference` and `engine.measures.risk.matching`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.base import MetricResult
from engine.measures.risk.matching import UNCERTAINTY_LEVELS, attribute_risks, identification_risk, intruder_uncertainty
from engine.data.schema import FieldSpec
from engine.measures.utility.distribution import cluster_uc, ecdf_measures, main_effects, propensity_up
from engine.measures.utility.inference import ci_overlap, inferential_estimates

ATTRIBUTE_RISK_METRICS = ["attribute_risk_r5_p5", "attribute_risk_r5_p10", "attribute_risk_r10_p5",
                          "attribute_risk_r10_p10"]
IDENTIFICATION_METRICS = ["emr", "tmr", "fmr", "unique_matches"]
NUMERIC_METRICS = [*ATTRIBUTE_RISK_METRICS, *IDENTIFICATION_METRICS, "propensity_up", "cluster_uc", "ecdf_max",
                   "ecdf_avg", "ci_overlap"]


def uncertainty_field(dataset: Dataset, synthesized: Sequence[str], name: str | None) -> str | None:
    """The key field whose value the intruder knows with noise (Eq. 11): ``name``, or by default the first
    key count field that is not synthesized (ReviewsCount in the paper); None when there is none."""
    keys = [f for f in dataset.schema.fields if f.role == "key" and f.name not in synthesized]
    if name is None:
        return next((f.name for f in keys if f.kind == "count"), None)
    if name not in [f.name for f in keys]:
        raise ConfigError(f"intruder-uncertainty field '{name}' must be an un-synthesized key field; key fields: "
                          f"{', '.join(f.name for f in keys) or 'none'}")
    if dataset.schema.field(name).kind != "count":
        raise ConfigError(f"intruder-uncertainty field '{name}' must be a count field (Eq. 11 is for counts)")
    return name


@dataclass
class NumericMeasures:
    """Everything about the confidential data the numeric measures need, computed once."""

    dataset: Dataset
    fields: list[FieldSpec]          # the synthesized count / continuous fields
    keys: list[str]                  # what the intruder knows: the un-synthesized key fields
    noisy: str | None                # the key count known with noise (Eq. 11)
    seed: int
    clusters: int
    _confidential_X: np.ndarray | None = None
    _confidential_estimates: pd.DataFrame | None = None
    _design_fields: list[FieldSpec] | None = None

    @classmethod
    def prepare(cls, dataset: Dataset, synthesized: Sequence[str], seed: int = 0, clusters: int = 20,
                noisy: str | None = None) -> NumericMeasures:
        schema = dataset.schema
        fields = [schema.field(f) for f in synthesized if schema.field(f).kind in ("count", "continuous")]
        keys = [f.name for f in schema.fields if f.role == "key" and f.name not in synthesized]
        out = cls(dataset, fields, keys, uncertainty_field(dataset, synthesized, noisy), seed, clusters)
        out._design_fields = [f for f in schema.fields if f.name in keys or f.name in synthesized]
        frame = dataset.frame
        out._confidential_X = main_effects(frame, out._design_fields, frame)
        out._confidential_estimates = out._estimates(frame)
        return out

    @property
    def response(self) -> str | None:
        """The field whose logarithm the regression of Section 3.2 explains: the synthesized continuous one."""
        return next((f.name for f in self.fields if f.kind == "continuous"), None)

    def _estimates(self, frame: pd.DataFrame) -> pd.DataFrame:
        predictors = [f for f in self._design_fields if f.name not in {g.name for g in self.fields}]
        return inferential_estimates(frame, self.fields, predictors, self.response,
                                     np.random.default_rng(self.seed), reference=self.dataset.frame)

    def _split(self) -> tuple[list[str], list[str]]:
        counts = [f.name for f in self.fields if f.kind == "count"]
        return counts, [f.name for f in self.fields if f.kind == "continuous"]

    def evaluate(self, data: pd.DataFrame, wanted: Sequence[str]) -> dict[str, MetricResult]:
        """The ``wanted`` numeric measures of one release ``data`` (laid out like the dataset)."""
        conf = self.dataset.frame
        counts, amounts = self._split()
        out: dict[str, MetricResult] = {}
        if set(wanted) & set(ATTRIBUTE_RISK_METRICS):
            out.update(attribute_risks(conf, data, self.keys, counts, amounts))
        if set(wanted) & set(IDENTIFICATION_METRICS):
            ident = identification_risk(conf, data, self.keys, counts, amounts)
            if self.noisy is not None:
                curve = intruder_uncertainty(conf, data, self.keys, self.noisy, UNCERTAINTY_LEVELS, self.seed,
                                             count_fields=counts, continuous_fields=amounts)
                ident["emr"] = MetricResult("emr", ident["emr"].value, detail=curve)
            out.update(ident)
        if {"propensity_up", "cluster_uc"} & set(wanted):
            X = main_effects(data, self._design_fields, conf)
            if "propensity_up" in wanted:
                out["propensity_up"] = propensity_up(self._confidential_X, X)
            if "cluster_uc" in wanted:
                out["cluster_uc"] = cluster_uc(self._confidential_X, X, self.clusters,
                                               rng=np.random.default_rng(self.seed))
        if {"ecdf_max", "ecdf_avg"} & set(wanted):
            out.update(ecdf_measures(conf, data, [f.name for f in self.fields]))
        if "ci_overlap" in wanted:
            out["ci_overlap"] = ci_overlap(self._confidential_estimates, self._estimates(data))
        return {k: v for k, v in out.items() if k in wanted}
