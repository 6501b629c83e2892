"""Every export check, registered in one line each; the order here is the order of the warnings
(`engine.export.checks.ExportCheck`)."""

from __future__ import annotations

from collections.abc import Mapping

from engine.data.dataset import Dataset
from engine.export.checks import (
    ExportCheck,
    KeptIdentifiers,
    MethodWarnings,
    OtherTextGuardedOnly,
    OwnIdentifiersInText,
    RiskAtUnprotectedLevel,
    SinglingOutByOtherFields,
    SwapMissesBackgroundTarget,
    UnchangedProtectedColumns,
    VerbatimTexts,
)
from engine.measures.base import MetricResult
from engine.protect.base import Release

CHECKS: tuple[type[ExportCheck], ...] = (
    MethodWarnings,
    UnchangedProtectedColumns,
    RiskAtUnprotectedLevel,
    VerbatimTexts,
    SinglingOutByOtherFields,
    OwnIdentifiersInText,
    OtherTextGuardedOnly,
    KeptIdentifiers,
    SwapMissesBackgroundTarget,
)

if len({c.id for c in CHECKS}) != len(CHECKS):
    raise RuntimeError("two registered export checks share an id")


def register(cls: type[ExportCheck]) -> type[ExportCheck]:
    """Add an export check after the registered ones (a plug-in kept outside this package; usable as a class
    decorator). `release_warnings` reads `CHECKS` when it runs, so the check is taken from then on."""
    global CHECKS
    if any(c.id == cls.id for c in CHECKS):
        raise TypeError(f"an export check with the id '{cls.id}' is registered already")
    CHECKS = (*CHECKS, cls)
    return cls


def release_warnings(dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
    """Every registered check's warnings about this release, in plain words, in order (empty: nothing to warn
    about)."""
    return [w for check in CHECKS for w in check.warnings(dataset, release, metrics)]
