"""Protection methods, registered by name. Each exposes a `Protector` with exactly one knob."""

from __future__ import annotations

from engine.errors import ConfigError
from engine.protect.base import Fitted, Knob, Protector, Release
from engine.protect.field_synthesis.cart import CARTSynthesizer
from engine.protect.bayes_counts.count_bayes import CountBayesSynthesizer
from engine.protect.field_synthesis.glm import GLMSynthesizer
from engine.protect.redact import Redaction

METHODS: dict[str, type[Protector]] = {
    Redaction.name: Redaction,
    GLMSynthesizer.name: GLMSynthesizer,
    CARTSynthesizer.name: CARTSynthesizer,
    CountBayesSynthesizer.name: CountBayesSynthesizer,
}


def get_protector(name: str, **params) -> Protector:
    """A protector by its registered name, e.g. ``get_protector("redact")``."""
    cls = METHODS.get(name)
    if cls is None:
        raise ConfigError(f"unknown method '{name}'; available methods: {', '.join(sorted(METHODS))}")
    return cls(**params)


__all__ = ["METHODS", "Fitted", "Knob", "Protector", "Release", "get_protector"]
