"""Utility of synthesized counts and amounts as measures (Guo & Hu, Section 3): propensity Up, cluster Uc and the
eCDF measures (Section 3.1, `engine.measures.utility.distribution`) and the interval overlap (Section 3.2, Eq. 10,
`engine.measures.utility.inference`), computed from the shared `NumericMeasures`."""

from __future__ import annotations

import numpy as np

from engine.measures.base import MetricResult, ReleaseView
from engine.measures.bayes_counts import NumericMeasure
from engine.measures.utility.distribution import cluster_uc, ecdf_measures, main_effects, propensity_up
from engine.measures.utility.inference import ci_overlap


class _DistributionMeasure(NumericMeasure):
    """A global utility measure of Section 3.1: how well synthetic records are told from confidential ones."""

    kind = "utility"
    better = "lower"
    source = "Woo, Reiter, Oganian & Karr (2009); Guo & Hu, Section 3.1, Table 2"

    def main_effects(self, view: ReleaseView) -> np.ndarray:
        """The release's main-effect columns, shared by Up and Uc."""
        n = self.numeric
        return view.memo("main_effects", lambda: main_effects(view.data, n.design_fields, n.dataset.frame))


class PropensityUp(_DistributionMeasure):
    """Propensity-score utility Up (Woo et al. 2009; Guo & Hu, Section 3.1)."""

    id = "propensity_up"
    label = "Propensity score utility Up"
    card_label = "Propensity utility Up"
    meaning = (
        "How well a logistic regression on the main effects of all fields tells synthetic from confidential "
        "records: the mean squared distance of its propensity from the synthetic share (Woo et al. 2009; "
        "Guo & Hu, Table 2). 0 = indistinguishable, 0.25 = perfectly told apart."
    )
    high = 0.25

    def compute(self, view: ReleaseView) -> MetricResult:
        return propensity_up(self.numeric.confidential_X, self.main_effects(view))


class ClusterUc(_DistributionMeasure):
    """Cluster utility Uc, clusters drawn afresh from the seed (Woo et al. 2009; Guo & Hu, Section 3.1)."""

    id = "cluster_uc"
    label = "Cluster utility Uc"
    meaning = (
        "Confidential and synthetic records clustered together (UPGMA): the size-weighted squared deviation of "
        "each cluster's synthetic share from the overall share (Woo et al. 2009; Guo & Hu, Table 2). "
        "0 = every cluster mixes them evenly."
    )
    high = 0.25

    def compute(self, view: ReleaseView) -> MetricResult:
        n = self.numeric
        return cluster_uc(n.confidential_X, self.main_effects(view), n.clusters, rng=np.random.default_rng(n.seed))


class _EcdfMeasure(_DistributionMeasure):
    """One result of `ecdf_measures`, which computes Um and Ua for a release at once."""

    def compute(self, view: ReleaseView) -> MetricResult:
        n = self.numeric
        return view.memo("ecdf", lambda: ecdf_measures(n.dataset.frame, view.data, [f.name for f in n.fields]))[self.id]


class EcdfMax(_EcdfMeasure):
    """Largest eCDF difference Um of the worst field (Woo et al. 2009; Guo & Hu, Section 3.1)."""

    id = "ecdf_max"
    label = "eCDF largest difference Um"
    meaning = (
        "Largest difference between the empirical distribution functions of a synthesized field in the "
        "confidential and synthetic data, for the worst field (Woo et al. 2009; Guo & Hu, Table 2). "
        "0 = the same distribution."
    )


class EcdfAvg(_EcdfMeasure):
    """Mean squared eCDF difference Ua of the worst field (Woo et al. 2009; Guo & Hu, Section 3.1)."""

    id = "ecdf_avg"
    label = "eCDF mean squared difference Ua"
    meaning = (
        "Mean squared difference between the empirical distribution functions of a synthesized field in the "
        "confidential and synthetic data, for the worst field (Woo et al. 2009; Guo & Hu, Table 2)."
    )


class CiOverlap(NumericMeasure):
    """Mean interval overlap of the Section 3.2 quantities (Guo & Hu, Eq. 10; Karr et al. 2006)."""

    id = "ci_overlap"
    kind = "utility"
    better = "higher"
    label = "Confidence interval overlap"
    card_label = "Interval overlap"
    meaning = (
        "How much the 95% intervals of means, quantiles and regression coefficients from the synthetic data "
        "overlap those from the confidential data (Guo & Hu, Eq. 10), averaged over the quantities. 1 = the same "
        "intervals; 0 or below = an analyst would reach different conclusions."
    )
    source = "Guo & Hu, Section 3.2, Eq. 10 (after Karr et al. 2006)"
    low = float("-inf")

    def compute(self, view: ReleaseView) -> MetricResult:
        n = self.numeric
        return ci_overlap(n.confidential_estimates, n.estimates(view.data))
