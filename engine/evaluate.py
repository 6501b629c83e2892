"""Which measures apply to a dataset, and measuring one release with all of them.

What does not depend on the release (the intruder's trained classifiers) is prepared once in `Evaluator`.
"""

from __future__ import annotations

import pandas as pd

from engine.dataset import Dataset
from engine.errors import ConfigError
from engine.metrics import METRICS, MetricResult
from engine.protect.base import Progress, Release, no_progress
from engine.risk.attack import StyleAttack
from engine.utility.ngram import ngram_cosine

TEXT_METRICS = ["attack_identification_rate", "unigram_cosine", "bigram_cosine"]


class Evaluator:
    """Measures releases of one dataset; ``available`` lists the metrics that apply, ``skipped`` says why not."""

    def __init__(self, dataset: Dataset, metrics: list[str] | None = None, progress: Progress = no_progress) -> None:
        self.dataset = dataset
        requested = list(metrics) if metrics else list(TEXT_METRICS)
        unknown = [m for m in requested if m not in METRICS]
        if unknown:
            raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(sorted(METRICS))}")
        self.skipped: dict[str, str] = {}
        self.attack: StyleAttack | None = None
        if "attack_identification_rate" in requested:
            reason = self._attack_unavailable()
            if reason:
                self.skipped["attack_identification_rate"] = reason
            else:
                ext, schema = dataset.external, dataset.schema
                self.attack = StyleAttack.train(
                    ext[schema.text].astype(str).tolist(),
                    ext[schema.author].astype(str).tolist(),
                    dataset.authors.astype(str).tolist(),
                    progress=progress,
                )
        self.available = [m for m in requested if m not in self.skipped]

    def _attack_unavailable(self) -> str | None:
        d = self.dataset
        if d.schema.author is None:
            return "needs an author column (who wrote each record)"
        if d.external is None or len(d.external) == 0:
            return "needs the intruder's external texts (a second file, or a hold-out rule in the schema)"
        return None

    def evaluate(self, release: Release | pd.DataFrame) -> dict[str, MetricResult]:
        """All available metrics of one release (or of a frame laid out like the dataset)."""
        data = release.data if isinstance(release, Release) else release
        schema = self.dataset.schema
        original = self.dataset.texts.astype(str).tolist()
        released = data[schema.text].astype(str).tolist()
        authors = None if schema.author is None else data[schema.author].astype(str).reset_index(drop=True)
        out: dict[str, MetricResult] = {}
        for m in self.available:
            if m == "attack_identification_rate":
                out[m] = self.attack.evaluate(released, authors.tolist())
            elif m == "unigram_cosine":
                out[m] = ngram_cosine(original, released, authors, 1)
            elif m == "bigram_cosine":
                out[m] = ngram_cosine(original, released, authors, 2)
        return out

    def baseline(self) -> dict[str, MetricResult]:
        """The measures on the unprotected data, with ids suffixed ``_confidential``."""
        return {r.id: r for r in (v.as_confidential() for v in self.evaluate(self.dataset.frame).values())}
