"""Metric results and the registry of what each metric means, in the steward's words.

Metric ids are stable snake_case names. A measure computed on the unprotected data as a baseline carries the
suffix ``_confidential``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import pandas as pd

CONFIDENTIAL_SUFFIX = "_confidential"


@dataclass(frozen=True)
class MetricInfo:
    id: str
    kind: Literal["risk", "utility"]
    better: Literal["lower", "higher"]
    label: str
    meaning: str
    low: float = 0.0
    high: float = 1.0


@dataclass(frozen=True)
class MetricResult:
    """One measured value; ``lo``/``hi`` is the 95% interval over replicates where there are several."""

    id: str
    value: float
    detail: pd.DataFrame | None = None
    lo: float | None = None
    hi: float | None = None

    @property
    def info(self) -> MetricInfo:
        return metric_info(self.id)

    @property
    def kind(self) -> str:
        return self.info.kind

    def as_confidential(self) -> MetricResult:
        return replace(self, id=self.id + CONFIDENTIAL_SUFFIX)


METRICS: dict[str, MetricInfo] = {
    m.id: m
    for m in [
        MetricInfo(
            "attack_identification_rate", "risk", "lower", "Attack identification rate",
            "Share of targeted people whom an intruder, holding other texts they wrote, picks out correctly "
            "among the released authors with a per-person linear SVM (Ororbia et al., Eq. 4). "
            "0 = nobody identified, 1 = everyone identified; ties count as a fair share.",
        ),
        MetricInfo(
            "unigram_cosine", "utility", "higher", "Word (unigram) similarity",
            "Average over authors of the cosine similarity between each author's word counts in the original "
            "and in the release. 1 = every author's vocabulary kept exactly.",
        ),
        MetricInfo(
            "bigram_cosine", "utility", "higher", "Word-pair (bigram) similarity",
            "Average over authors of the cosine similarity between each author's counts of adjacent word pairs "
            "in the original and in the release. 1 = word order and vocabulary kept exactly.",
        ),
    ]
}


def metric_info(metric_id: str) -> MetricInfo:
    """Look up a metric, understanding the ``_confidential`` suffix of baselines."""
    base = metric_id.removesuffix(CONFIDENTIAL_SUFFIX)
    info = METRICS.get(base)
    if info is None:
        from engine.errors import ConfigError

        raise ConfigError(f"unknown metric '{metric_id}'; known metrics: {', '.join(sorted(METRICS))}")
    if base != metric_id:
        return replace(info, id=metric_id, label=info.label + " (unprotected data)")
    return info
