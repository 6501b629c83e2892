"""Every measure, registered in one line each. The order here is the default order of measures (in tables,
reports and the dashboard); `engine.measures.base.METRICS` and `metric_info` read their metadata from here."""

from __future__ import annotations

from engine.errors import ConfigError
from engine.measures.base import Measure, Target
from engine.measures.equivalence_classes import Discernibility, LossMetric, QiUniqueShare, SmallestClass
from engine.measures.risk.attack import AttackIdentificationRate
from engine.measures.risk.company_attack import SwapAttackAccuracy, SwapMcNemarP
from engine.measures.risk.counts import (
    AttributeRiskR5P5,
    AttributeRiskR5P10,
    AttributeRiskR10P5,
    AttributeRiskR10P10,
    Emr,
    Fmr,
    Tmr,
    UniqueMatches,
)
from engine.measures.risk.identification import AuthorIdentificationProbability, IdentificationProbability
from engine.measures.risk.kept import ConfidentialValueRate
from engine.measures.risk.pitman import SwapDisclosureRisk
from engine.measures.risk.release_intruder import ReleaseIdentificationProbability
from engine.measures.utility.cells import CellDifference1way, CellDifference2way
from engine.measures.utility.classifier import ClassifierF1Ratio
from engine.measures.utility.counts import CiOverlap, ClusterUc, EcdfAvg, EcdfMax, PropensityUp
from engine.measures.utility.embedding_fit import SwapUtility
from engine.measures.utility.ngram import BigramCosine, UnigramCosine
from engine.measures.utility.pmse import Pmse, PmseRatio
from engine.measures.utility.sentiment import SentimentCosine
from engine.measures.utility.topics import TopicContentCorrelation, TopicPrevalenceRatio

MEASURES: tuple[type[Measure], ...] = (
    # Measures of the text, for methods that change the text (Ororbia, Linder & Snoke)
    AttackIdentificationRate,
    UnigramCosine,
    BigramCosine,
    SentimentCosine,
    # Measures of the named-entity swap (Greve & Sablica)
    SwapDisclosureRisk,
    SwapUtility,
    SwapAttackAccuracy,
    SwapMcNemarP,
    # Measures of k-anonymity of the attributes found in text (Abeywardana & Thayasivam)
    QiUniqueShare,
    SmallestClass,
    Discernibility,
    LossMetric,
    # Measures of synthesized categorical fields (Schneider, Hu, Mankad & Bale 2023)
    IdentificationProbability,
    AuthorIdentificationProbability,
    ConfidentialValueRate,
    TopicContentCorrelation,
    PmseRatio,
    Pmse,
    CellDifference1way,
    CellDifference2way,
    TopicPrevalenceRatio,
    # Measures of synthesized count and continuous fields (Guo & Hu)
    AttributeRiskR5P5,
    AttributeRiskR5P10,
    AttributeRiskR10P5,
    AttributeRiskR10P10,
    Emr,
    Tmr,
    Fmr,
    UniqueMatches,
    PropensityUp,
    ClusterUc,
    EcdfMax,
    EcdfAvg,
    CiOverlap,
    # Measures of the release as a whole, for every method (text and fields together); listed last so that
    # each method's own paper measures stay its first
    ReleaseIdentificationProbability,
    ClassifierF1Ratio,
)

_BY_ID: dict[str, type[Measure]] = {m.id: m for m in MEASURES}
if len(_BY_ID) != len(MEASURES):
    raise RuntimeError("two registered measures share an id")


def measure_ids(applies_to: Target | None = None) -> list[str]:
    """The registered ids in registry order, all or those of measures that apply to ``applies_to``."""
    return [m.id for m in MEASURES if applies_to is None or m.applies_to == applies_to]


def measure_class(metric_id: str) -> type[Measure]:
    """The class of a registered measure; ConfigError names the known ones."""
    cls = _BY_ID.get(metric_id)
    if cls is None:
        raise ConfigError(f"unknown metric '{metric_id}'; known metrics: {', '.join(sorted(_BY_ID))}")
    return cls
