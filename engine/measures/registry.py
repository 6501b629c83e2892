"""Every measure, registered in one line each. The order here is the default order of measures (in tables,
reports and the dashboard); `engine.measures.base.METRICS` and `metric_info` read their metadata from here."""

from __future__ import annotations

from collections.abc import Sequence

from engine.errors import ConfigError
from engine.measures.base import Measure, Target
from engine.measures.equivalence_classes import Discernibility, LossMetric, QiUniqueShare, SmallestClass
from engine.measures.risk.anonymeter_style.inference import InferenceRisk
from engine.measures.risk.anonymeter_style.linkability import LinkabilityRisk
from engine.measures.risk.anonymeter_style.singling_out import SinglingOutRisk
from engine.measures.risk.attack import AttackIdentificationRate
from engine.measures.risk.background_attack import (
    BackgroundAuthorAttack,
    BackgroundDocumentAttack,
    BackgroundDocumentLevel,
)
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
from engine.measures.risk.stylometric_attack import StylometricAuthorAttack
from engine.measures.utility.cells import CellDifference1way, CellDifference2way
from engine.measures.utility.classifier import ClassifierF1Ratio
from engine.measures.utility.counts import CiOverlap, ClusterUc, EcdfAvg, EcdfMax, PropensityUp
from engine.measures.utility.embedding_fit import SwapUtility
from engine.measures.utility.ngram import BigramCosine, UnigramCosine
from engine.measures.utility.pmse import Pmse, PmseRatio
from engine.measures.utility.sentiment import SentimentCosine
from engine.measures.utility.topics import TopicContentCorrelation, TopicPrevalenceRatio
from engine.protect.params import Param

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
    # Attacks of an intruder holding the background corpus the steward declares (issue 50)
    BackgroundDocumentAttack,
    BackgroundDocumentLevel,
    BackgroundAuthorAttack,
    StylometricAuthorAttack,
    ClassifierF1Ratio,
    # Singling out, linkability and inference on the released table (Giomi et al. 2023, Anonymeter)
    SinglingOutRisk,
    LinkabilityRisk,
    InferenceRisk,
)

if len({m.id for m in MEASURES}) != len(MEASURES):
    raise RuntimeError("two registered measures share an id")


def register(cls: type[Measure]) -> type[Measure]:
    """Add a measure after the registered ones (a plug-in kept outside this package; usable as a class decorator).
    Everything that lists the measures reads `MEASURES` when it runs, so the measure is taken from then on."""
    global MEASURES
    if any(m.id == cls.id for m in MEASURES):
        raise TypeError(f"a measure with the id '{cls.id}' is registered already")
    MEASURES = (*MEASURES, cls)
    return cls


def measure_ids(applies_to: Target | None = None) -> list[str]:
    """The registered ids in registry order, all or those of measures that apply to ``applies_to``."""
    return [m.id for m in MEASURES if applies_to is None or m.applies_to == applies_to]


def measure_class(metric_id: str) -> type[Measure]:
    """The class of a registered measure; ConfigError names the known ones."""
    cls = next((m for m in MEASURES if m.id == metric_id), None)
    if cls is None:
        known = ", ".join(sorted(m.id for m in MEASURES))
        raise ConfigError(f"unknown metric '{metric_id}'; known metrics: {known}")
    return cls


def setting_parameters(targets: Sequence[Target] | None = None) -> tuple[Param, ...]:
    """The settings the registered measures declare (`Measure.declared_settings`), each once, in registry order;
    with ``targets``, those of the measures of these targets only. A name means one thing everywhere: two
    measures that declare it differently are a TypeError, as two methods' parameters are."""
    out: dict[str, Param] = {}
    for m in MEASURES:
        for p in m.declared_settings():
            if out.setdefault(p.name, p) != p:
                raise TypeError(f"measure '{m.id}' declares the setting '{p.name}' differently from another measure")
    if targets is None:
        return tuple(out.values())
    wanted = {p.name for m in MEASURES if m.applies_to in targets for p in m.declared_settings()}
    return tuple(p for p in out.values() if p.name in wanted)
