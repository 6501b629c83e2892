"""Settings of the measures of synthesized fields, kept apart so the command line can read them cheaply."""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ConfigError


@dataclass(frozen=True)
class MeasureOptions:
    """Settings of the measures: pMSE projections (Schneider et al. 2023 use 20 of 10 dimensions), topics of
    the topic model (5), the field level whose topic-prevalence coefficient is followed ("FIELD=LEVEL"; default
    the least frequent level of the first synthesized field), the seed of projections and topics, and vendor
    keywords left out of the topic model's words (as the synthesizers leave them out); for synthesized counts
    and amounts (Guo & Hu), the clusters of the cluster utility Uc (20) and the key count the intruder
    knows with noise in the intruder-uncertainty curves (default: the first un-synthesized key count)."""

    projections: int = 20
    projection_dim: int = 10
    topics: int = 5
    prevalence_level: str | None = None
    seed: int = 0
    vendor_keywords: tuple[str, ...] = ()
    clusters: int = 20
    uncertainty_field: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.projections <= 200:
            raise ConfigError(f"pMSE projections must be from 1 to 200, got {self.projections}")
        if not 1 <= self.projection_dim <= 100:
            raise ConfigError(f"pMSE projection dimension must be from 1 to 100, got {self.projection_dim}")
        if not 2 <= self.topics <= 50:
            raise ConfigError(f"topics must be from 2 to 50, got {self.topics}")
        if not 2 <= self.clusters <= 500:
            raise ConfigError(f"clusters must be from 2 to 500, got {self.clusters}")
