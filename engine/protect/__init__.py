"""Protection methods, registered by name. Each exposes a `Protector` with exactly one knob.

Registering a method is one line, ``register(MyProtector)``; the CLI, the dashboard, the replay command and
the contract test (tests/test_method_contract.py) find it in `METHODS`.
"""

from __future__ import annotations

from typing import Any

from engine.data.schema import Schema
from engine.errors import ConfigError
from engine.protect.base import Fitted, Knob, Protector, Release
from engine.protect.bayes_counts.count_bayes import CountBayesSynthesizer
from engine.protect.field_synthesis.cart import CARTSynthesizer
from engine.protect.field_synthesis.glm import GLMSynthesizer
from engine.protect.kanon.method import KAnonymity
from engine.protect.params import Param
from engine.protect.plan import is_plan, plan_class
from engine.protect.redact import Redaction
from engine.protect.swap.method import EntitySwap
from engine.protect.text_synthesis.multinomial_dirichlet import MultinomialDirichletSynthesizer
from engine.protect.text_synthesis.rnn import RecurrentSynthesizer

METHODS: dict[str, type[Protector]] = {}


def register(cls: type[Protector]) -> type[Protector]:
    """Add a method to `METHODS` under its ``name`` (usable as a class decorator)."""
    for attr in ("name", "title", "description", "knob"):
        if not hasattr(cls, attr):
            raise TypeError(f"{cls.__name__} must declare '{attr}' to be registered")
    if cls.name in METHODS and METHODS[cls.name] is not cls:
        raise TypeError(f"a method named '{cls.name}' is registered already ({METHODS[cls.name].__name__})")
    METHODS[cls.name] = cls
    return cls


register(Redaction)
register(GLMSynthesizer)
register(CARTSynthesizer)
register(CountBayesSynthesizer)
register(MultinomialDirichletSynthesizer)
register(RecurrentSynthesizer)
register(EntitySwap)
register(KAnonymity)


def method_class(name: str) -> type[Protector]:
    """The method registered as ``name``, or the plan ``name`` names (``redact+glm``: registered methods joined by
    ``+``, `engine.protect.plan`); ConfigError naming what is accepted otherwise."""
    if is_plan(name):
        return plan_class(name, METHODS)
    cls = METHODS.get(name)
    if cls is None:
        raise ConfigError(
            f"unknown method '{name}'; available methods: {', '.join(sorted(METHODS))}, or a plan of them joined "
            "by '+' (e.g. redact+glm)"
        )
    return cls


def is_method(name: str) -> bool:
    """Whether ``name`` is a registered method or a plan of registered methods."""
    try:
        method_class(name)
    except ConfigError:
        return False
    return True


def get_protector(name: str, **params: Any) -> Protector:
    """A protector by its registered name, e.g. ``get_protector("redact")``, or a plan's (``redact+glm``);
    ConfigError for an unknown name or parameter."""
    return method_class(name)(**params)


def schema_parameters(schema: Schema, method: str) -> dict[str, Any]:
    """The settings the data's schema gives ``method`` ([methods.METHOD]), checked against its parameters:
    ConfigError naming the schema's section and what is accepted, for a method that does not exist (any
    section), a parameter it does not have, or a value it does not take."""
    unknown = [m for m, _ in schema.methods if m not in METHODS]
    if unknown:
        raise ConfigError(
            f"schema: [methods.{unknown[0]}] names no method; the methods are {', '.join(sorted(METHODS))}"
        )
    if method not in METHODS:
        return {}
    declared = {p.name: p for p in METHODS[method].parameters}
    out = {}
    for name, value in schema.method_settings(method).items():
        if name not in declared:
            raise ConfigError(
                f"schema: [methods.{method}] has no parameter '{name}'; its parameters: {', '.join(declared) or 'none'}"
            )
        try:
            out[name] = declared[name].coerce(value, method)
        except ConfigError as exc:
            raise ConfigError(f"schema: [methods.{method}] {exc}") from None
    return out


__all__ = [
    "METHODS",
    "Fitted",
    "Knob",
    "Param",
    "Protector",
    "Release",
    "get_protector",
    "is_method",
    "method_class",
    "register",
    "schema_parameters",
]
