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
    """What a metric means. ``better`` is "lower", "higher" or "one" (closest to 1 is best, as for a ratio to
    its expectation under a good synthesizer)."""

    id: str
    kind: Literal["risk", "utility"]
    better: Literal["lower", "higher", "one"]
    label: str
    meaning: str
    low: float = 0.0
    high: float = 1.0

    @property
    def better_text(self) -> str:
        return {"lower": "lower is better", "higher": "higher is better", "one": "closer to 1 is better"}[self.better]

    def goodness(self, value: float) -> float:
        """``value`` turned so that larger is always better (for frontiers and choices)."""
        if self.better == "higher":
            return value
        if self.better == "lower":
            return -value
        return -abs(value - 1.0)


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
        MetricInfo(
            "identification_probability", "risk", "lower", "Identification probability",
            "Average probability that an intruder who knows a target's field values and holds another text by "
            "them puts on the target's own record: first keeping the records whose released fields match, then "
            "weighting them by writing-style similarity (Schneider et al. 2023, Eqs. 7–9). 1/number of records "
            "would be a blind guess.",
        ),
        MetricInfo(
            "confidential_value_rate", "risk", "lower", "Confidential values kept",
            "Share of synthesized field values that equal the confidential value (over records and synthesized "
            "fields). 1 = nothing changed; the share that random sampling from the field's distribution would "
            "keep is the sum of its squared level shares.",
        ),
        MetricInfo(
            "pmse_ratio", "utility", "one", "pMSE ratio",
            "Propensity-score mean squared error of telling synthetic from confidential records (text by random "
            "projection, fields and their interactions), divided by its mean when both come from the same distribution "
            "(Snoke et al. 2018; the null mean as derived in engine/measures/utility/pmse.py). About 1 = good synthesis; below 1 = over-fit to the confidential "
            "values; above 1 = under-fit. Mean over the projections.", high=float("inf"),
        ),
        MetricInfo(
            "pmse", "utility", "lower", "pMSE",
            "Propensity-score mean squared error: how well a logistic regression tells synthetic from "
            "confidential records. 0 = indistinguishable (which also happens when nothing was changed).",
            high=0.25,
        ),
        MetricInfo(
            "cell_difference_1way", "utility", "lower", "One-way cell differences",
            "Sum over the levels of each synthesized field of |synthetic count − confidential count| / "
            "confidential count (Schneider et al. 2023, Table 2). 0 = the field's distribution kept exactly.",
            high=float("inf"),
        ),
        MetricInfo(
            "cell_difference_2way", "utility", "lower", "Two-way cell differences",
            "The same summed relative differences over the cells of every two-way table that involves a "
            "synthesized field. 0 = every cross-tabulation kept exactly.", high=float("inf"),
        ),
        MetricInfo(
            "topic_content_correlation", "utility", "higher", "Topic content correlation",
            "Correlation, over the vocabulary, between the words each field level uses within each topic in the "
            "confidential and in the synthetic data, averaged over levels and topics (Schneider et al. 2023, "
            "Eqs. 4–5). 1 = what each level says about each topic is kept.", low=-1.0,
        ),
        MetricInfo(
            "topic_prevalence_ratio", "utility", "one", "Topic prevalence ratio",
            "For the chosen field level, its regression coefficient on each topic's share in the synthetic data "
            "divided by the confidential one, averaged over topics (Schneider et al. 2023, Table 5). 1 = how much "
            "that level talks about each topic is kept; below 1 = shrunk towards no relation.",
            low=float("-inf"), high=float("inf"),
        ),
        MetricInfo(
            "propensity_up", "utility", "lower", "Propensity score utility Up",
            "How well a logistic regression on the main effects of all fields tells synthetic from confidential "
            "records: the mean squared distance of its propensity from the synthetic share (Woo et al. 2009; "
            "Guo & Hu, Table 2). 0 = indistinguishable, 0.25 = perfectly told apart.", high=0.25,
        ),
        MetricInfo(
            "cluster_uc", "utility", "lower", "Cluster utility Uc",
            "Confidential and synthetic records clustered together (UPGMA): the size-weighted squared deviation of "
            "each cluster's synthetic share from the overall share (Woo et al. 2009; Guo & Hu, Table 2). "
            "0 = every cluster mixes them evenly.", high=0.25,
        ),
        MetricInfo(
            "ecdf_max", "utility", "lower", "eCDF largest difference Um",
            "Largest difference between the empirical distribution functions of a synthesized field in the "
            "confidential and synthetic data, for the worst field (Woo et al. 2009; Guo & Hu, Table 2). "
            "0 = the same distribution.",
        ),
        MetricInfo(
            "ecdf_avg", "utility", "lower", "eCDF mean squared difference Ua",
            "Mean squared difference between the empirical distribution functions of a synthesized field in the "
            "confidential and synthetic data, for the worst field (Woo et al. 2009; Guo & Hu, Table 2).",
        ),
        MetricInfo(
            "ci_overlap", "utility", "higher", "Confidence interval overlap",
            "How much the 95% intervals of means, quantiles and regression coefficients from the synthetic data "
            "overlap those from the confidential data (Guo & Hu, Eq. 10), averaged over the quantities. 1 = the same "
            "intervals; 0 or below = an analyst would reach different conclusions.", low=float("-inf"),
        ),
        *[
            MetricInfo(
                f"attribute_risk_r{rc}_p{rp}", "risk", "lower", f"Attribute risk AR (count ±{rc}, amount ±{rp}%)",
                f"Summed over records, the share of released records with the record's key values whose count is "
                f"within ±{rc} and amount within ±{rp}% of its confidential values: how often an intruder who knows "
                "the key values would guess the sensitive ones closely (Guo & Hu, Section 4.1, Table 3).",
                high=float("inf"),
            )
            for rc, rp in ((5, 5), (5, 10), (10, 5), (10, 10))
        ],
        MetricInfo(
            "emr", "risk", "lower", "Expected match risk (EMR)",
            "Expected number of records an intruder who knows a target's key values, count and amount correctly "
            "identifies among the released records that match them (count ±5, log amount ±5%); a record that "
            "matches c released records counts 1/c when it is among them (Reiter & Mitra 2009; Guo & Hu, Table 4).",
            high=float("inf"),
        ),
        MetricInfo(
            "tmr", "risk", "lower", "True match rate (TMR)",
            "Share of records whose match among the released records is unique and is the record itself "
            "(Reiter & Mitra 2009; Guo & Hu, Table 4).",
        ),
        MetricInfo(
            "fmr", "risk", "higher", "False match rate (FMR)",
            "Share of unique matches that point at the wrong record: the intruder is misled. Higher is safer "
            "(Reiter & Mitra 2009; Guo & Hu, Table 4); 0 on the unprotected data.",
        ),
        MetricInfo(
            "unique_matches", "risk", "lower", "Unique matches",
            "Number of records that match exactly one released record (true or false) on the key values, count "
            "±5 and log amount ±5% (Guo & Hu, Table 4).", high=float("inf"),
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
