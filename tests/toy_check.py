"""A toy export check written the way a contributor would add one: a module with an `ExportCheck`, registered in
one line (by the tests that use it). It warns of released texts that end with an exclamation mark."""

from __future__ import annotations

from collections.abc import Mapping

from engine.data.dataset import Dataset
from engine.export.checks import ExportCheck
from engine.measures.base import MetricResult
from engine.protect.base import Release


class ShoutingTexts(ExportCheck):
    id = "toy-shouting-texts"

    @classmethod
    def warnings(cls, dataset: Dataset, release: Release, metrics: Mapping[str, MetricResult]) -> list[str]:
        shouting = int(release.data[dataset.schema.text].astype(str).str.endswith("!").sum())
        return [f"{shouting:,} released texts end with an exclamation mark (toy check)"] if shouting else []
