"""Settings of the measures, declared once as `Param` (the CLI's flags, the dashboard's widgets and the replay
command come from `OPTION_PARAMETERS`), kept apart so the command line can read them cheaply."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from engine.errors import ConfigError
from engine.measures.intruders import DEFAULT_INTRUDER, INTRUDERS
from engine.protect.params import Param

OPTION_PARAMETERS: tuple[Param, ...] = (
    Param(
        "intruder",
        str,
        DEFAULT_INTRUDER,
        "the intruder every risk measure assumes (each states how it reads her in its meaning): "
        + "; ".join(f"{i.name}: {i.describe().removeprefix('The intruder ').rstrip('.')}" for i in INTRUDERS.values()),
        choices=tuple(INTRUDERS),
        choice_labels=tuple(i.label for i in INTRUDERS.values()),
        label="Intruder",
    ),
    Param(
        "projections",
        int,
        20,
        "synthesis measures: random projections of the text for the pMSE",
        low=1,
        high=200,
        label="pMSE projections",
    ),
    Param("topics", int, 5, "synthesis measures: topics of the topic model", low=2, high=50, label="Topics"),
    Param(
        "level",
        str,
        None,
        "synthesis measures: FIELD=LEVEL whose topic-prevalence coefficient is followed "
        "(default: the least frequent level of the first field)",
        label="Field level whose topic prevalence is followed",
    ),
    Param(
        "clusters",
        int,
        20,
        "count and amount measures: clusters of the cluster utility Uc",
        low=2,
        high=500,
        label="Clusters of the cluster utility Uc",
    ),
    Param(
        "uncertainty_field",
        str,
        None,
        "count and amount measures: the key count the intruder knows with "
        "noise of level S (default: the first un-synthesized key count)",
        fields=("count",),
        label="Key count known with noise (Eq. 11)",
    ),
    Param(
        "sentiment_field",
        str,
        None,
        "text measures: the categorical field of sentiment labels that trains the sentiment classifier "
        "(default: a categorical field whose name contains 'sentiment'; without one, the VADER lexicon)",
        fields=("categorical",),
        label="Sentiment labels",
    ),
    Param(
        "classifier_target",
        str,
        None,
        "every method: what the downstream classifier predicts, a categorical field or a #hashtag's use "
        "(default: the first sensitive categorical field, else the first categorical one; without one, the "
        "hashtag the most authors use)",
        label="Classifier target (field or #hashtag)",
    ),
)
"""The measure settings a steward chooses; their names are the `MeasureOptions` fields (``level`` is
``prevalence_level``)."""

TEXT_OPTIONS = ("sentiment_field", "classifier_target")
"""The settings of the measures of methods that change the text."""

_FIELD_OF = {"level": "prevalence_level"}


@dataclass(frozen=True)
class MeasureOptions:
    """Settings of the measures: pMSE projections (Schneider et al. 2023 use 20 of 10 dimensions), topics of
    the topic model (5), the field level whose topic-prevalence coefficient is followed ("FIELD=LEVEL"; default
    the least frequent level of the first synthesized field), the seed of projections and topics, and vendor
    keywords left out of the topic model's words (as the synthesizers leave them out); for synthesized counts
    and amounts (Guo & Hu), the clusters of the cluster utility Uc (20) and the key count the intruder
    knows with noise in the intruder-uncertainty curves (default: the first un-synthesized key count); for
    text methods (Ororbia, Linder & Snoke), the field of sentiment labels and the downstream classifier's
    target (a field or a #hashtag); for every method, the attacker preset every risk measure assumes
    (`engine.measures.intruders`)."""

    projections: int = 20
    projection_dim: int = 10
    topics: int = 5
    prevalence_level: str | None = None
    seed: int = 0
    vendor_keywords: tuple[str, ...] = ()
    clusters: int = 20
    uncertainty_field: str | None = None
    sentiment_field: str | None = None
    classifier_target: str | None = None
    intruder: str = DEFAULT_INTRUDER

    def __post_init__(self) -> None:
        for p in OPTION_PARAMETERS:
            p.coerce(getattr(self, _FIELD_OF.get(p.name, p.name)))
        if not 1 <= self.projection_dim <= 100:
            raise ConfigError(f"pMSE projection dimension must be from 1 to 100, got {self.projection_dim}")

    @classmethod
    def from_values(cls, values: Mapping[str, Any], vendor_keywords: tuple[str, ...] = ()) -> MeasureOptions:
        """Options from `OPTION_PARAMETERS` values (missing or None ones take their defaults)."""
        known = {f.name for f in fields(cls)}
        given = {_FIELD_OF.get(k, k): v for k, v in values.items() if v is not None}
        return cls(**{k: v for k, v in given.items() if k in known}, vendor_keywords=tuple(vendor_keywords))

    def values(self) -> dict[str, Any]:
        """The `OPTION_PARAMETERS` values of these options (for the replay command)."""
        return {p.name: getattr(self, _FIELD_OF.get(p.name, p.name)) for p in OPTION_PARAMETERS}
