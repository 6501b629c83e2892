"""Which measures apply to a dataset and a method, and measuring one release with all of them.

Everything that does not depend on the release is prepared once in `Evaluator`: the intruder's classifiers,
the writing-style distances of the identification risk, the random projections of the pMSE and the topic
model. Measures of the text apply to methods that change the text; measures of synthesized fields to
methods that change fields (``fields`` names them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.options import MeasureOptions
from engine.measures.base import METRICS, MetricResult
from engine.measures.bayes_counts import NUMERIC_METRICS, NumericMeasures, uncertainty_field
from engine.protect.base import Progress, Release, no_progress
from engine.protect.field_synthesis.sequential import FieldLevels
from engine.measures.risk.attack import StyleAttack
from engine.measures.risk.identification import IdentificationRisk
from engine.text.features import synthesis_counts
from engine.measures.utility.cells import cell_differences
from engine.measures.utility.ngram import ngram_cosine
from engine.measures.utility.pmse import propensity_score, random_projections
from engine.measures.utility.topics import TopicModel, content_correlation, prevalence, prevalence_ratio

TEXT_METRICS = ["attack_identification_rate", "unigram_cosine", "bigram_cosine"]
FIELD_METRICS = [
    "identification_probability", "confidential_value_rate", "topic_content_correlation", "pmse_ratio", "pmse",
    "cell_difference_1way", "cell_difference_2way", "topic_prevalence_ratio",
]
_PMSE = {"pmse", "pmse_ratio"}
_TOPICS = {"topic_content_correlation", "topic_prevalence_ratio"}


def prevalence_level(levels: Sequence[FieldLevels], spec: str | None) -> tuple[str, str]:
    """The (field, level) whose topic-prevalence coefficient is followed: ``spec`` "FIELD=LEVEL", or by
    default the least frequent level of the first synthesized field. ConfigError names what is accepted."""
    by_name = {lv.name: lv.levels for lv in levels}
    if spec is None:
        return levels[0].name, levels[0].levels[-1]
    field, sep, level = spec.partition("=")
    if not sep or field not in by_name:
        raise ConfigError(
            f"topic prevalence level {spec!r} must be FIELD=LEVEL with FIELD one of the synthesized fields "
            f"({', '.join(by_name)})"
        )
    if level not in by_name[field][1:]:
        raise ConfigError(
            f"level {level!r} of {field} has no coefficient; choose one of {', '.join(by_name[field][1:])} "
            f"({by_name[field][0]!r}, the most frequent, is the reference)"
        )
    return field, level


def _kinds(dataset: Dataset, fields: Sequence[str]) -> tuple[list[str], list[str]]:
    """The synthesized fields split into categorical and numeric (count or continuous) ones."""
    categorical = [f for f in fields if dataset.schema.field(f).kind == "categorical"]
    return categorical, [f for f in fields if f not in categorical]


def check_options(dataset: Dataset, fields: Sequence[str], options: MeasureOptions | None) -> None:
    """Check measure settings against the data before anything costly is fitted."""
    if options is None or not fields:
        return
    categorical, numeric = _kinds(dataset, fields)
    if options.prevalence_level is not None and categorical:
        prevalence_level([FieldLevels.of(f, dataset.frame[f]) for f in categorical], options.prevalence_level)
    if numeric:
        uncertainty_field(dataset, fields, options.uncertainty_field)


class Evaluator:
    """Measures releases of one dataset; ``available`` lists the metrics that apply, ``skipped`` says why not.

    Parameters
    ----------
    dataset : the confidential data.
    metrics : metric ids to measure; default the text measures, or, when ``fields`` is given, the measures of
        categorical synthesized fields (Schneider et al.) and of count / continuous ones (Guo & Hu) that apply.
    fields : the fields a method synthesizes, in order (empty for methods that change the text).
    options : settings of the pMSE, topic and intruder-uncertainty measures.
    """

    def __init__(self, dataset: Dataset, metrics: Sequence[str] | None = None, progress: Progress = no_progress,
                 fields: Sequence[str] = (), options: MeasureOptions | None = None) -> None:
        self.dataset = dataset
        self.options = options or MeasureOptions()
        self.fields, self.numeric_fields = _kinds(dataset, fields)
        if metrics:
            requested = list(metrics)
        elif fields:
            requested = (FIELD_METRICS if self.fields else []) + (NUMERIC_METRICS if self.numeric_fields else [])
        else:
            requested = list(TEXT_METRICS)
        unknown = [m for m in requested if m not in METRICS]
        if unknown:
            raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(sorted(METRICS))}")
        self.skipped: dict[str, str] = {}
        self.attack: StyleAttack | None = None
        self.identification: IdentificationRisk | None = None
        self.projections: list[np.ndarray] = []
        self.topics: TopicModel | None = None
        self.levels: list[FieldLevels] = []
        self.numeric: NumericMeasures | None = None
        self.prevalence_choice: tuple[str, str] | None = None
        self._confidential_prevalence: pd.DataFrame | None = None
        schema = dataset.schema

        for group, have, what in ((FIELD_METRICS, self.fields, "categorical"),
                                  (NUMERIC_METRICS, self.numeric_fields, "count or continuous")):
            for m in (m for m in requested if m in group and not have):
                self.skipped[m] = (f"measures synthesized {what} fields; this method synthesizes none" if fields
                                   else "measures synthesized fields; this method leaves every field as it is")
        if self.numeric_fields and set(NUMERIC_METRICS) & set(requested):
            progress(0, 1, "preparing the measures of counts and amounts")
            self.numeric = NumericMeasures.prepare(dataset, list(fields), self.options.seed,
                                                   self.options.clusters, self.options.uncertainty_field)
        if self.fields:
            self.levels = [FieldLevels.of(f, dataset.frame[f]) for f in self.fields]
        if "attack_identification_rate" in requested:
            reason = self._external_unavailable()
            if reason:
                self.skipped["attack_identification_rate"] = reason
            else:
                ext = dataset.external
                self.attack = StyleAttack.train(
                    ext[schema.text].astype(str).tolist(), ext[schema.author].astype(str).tolist(),
                    dataset.authors.astype(str).tolist(), progress=progress,
                )
        if "identification_probability" in requested and self.fields:
            reason = self._external_unavailable()
            if reason:
                self.skipped["identification_probability"] = reason
            else:
                ext = dataset.external
                match = list(dict.fromkeys([*self.fields, *(f.name for f in schema.fields_with_role("key"))]))
                self.identification = IdentificationRisk.prepare(
                    dataset.texts.astype(str).tolist(), dataset.authors.astype(str).tolist(),
                    ext[schema.text].astype(str).tolist(), ext[schema.author].astype(str).tolist(),
                    dataset.frame, match, progress,
                )
        if self.fields and _PMSE & set(requested):
            progress(0, 1, "projecting the text for the pMSE")
            counts = synthesis_counts(dataset.texts.astype(str).tolist())
            self.projections = random_projections(counts.matrix, self.options.projections,
                                                  self.options.projection_dim, self.options.seed)
        if self.fields and _TOPICS & set(requested):
            self.topics = TopicModel.fit(dataset.texts.astype(str).tolist(), self.options.topics, self.options.seed,
                                         self.options.vendor_keywords, progress=progress)
            self.prevalence_choice = prevalence_level(self.levels, self.options.prevalence_level)
            self._confidential_prevalence = prevalence(self.topics, dataset.frame, self.fields, self._level_names())
        self.available = [m for m in requested if m not in self.skipped]

    def _external_unavailable(self) -> str | None:
        d = self.dataset
        if d.schema.author is None:
            return "needs an author column (who wrote each record)"
        if d.external is None or len(d.external) == 0:
            return "needs the intruder's external texts (a second file, or a hold-out rule in the schema)"
        return None

    def _level_names(self) -> dict[str, tuple[str, ...]]:
        return {lv.name: lv.levels for lv in self.levels}

    def evaluate(self, release: Release | pd.DataFrame) -> dict[str, MetricResult]:
        """All available metrics of one release (or of a frame laid out like the dataset)."""
        data = release.data if isinstance(release, Release) else release
        out: dict[str, MetricResult] = {}
        self._text_metrics(data, out)
        if self.fields:
            self._field_metrics(data, release, out)
        if self.numeric is not None:
            out.update(self.numeric.evaluate(data, [m for m in NUMERIC_METRICS if m in self.available]))
        return {m: out[m] for m in self.available if m in out}

    def _text_metrics(self, data: pd.DataFrame, out: dict[str, MetricResult]) -> None:
        schema = self.dataset.schema
        wanted = [m for m in TEXT_METRICS if m in self.available]
        if not wanted:
            return
        original = self.dataset.texts.astype(str).tolist()
        released = data[schema.text].astype(str).tolist()
        authors = None if schema.author is None else data[schema.author].astype(str).reset_index(drop=True)
        if "attack_identification_rate" in wanted:
            out["attack_identification_rate"] = self.attack.evaluate(released, authors.tolist())
        if "unigram_cosine" in wanted:
            out["unigram_cosine"] = ngram_cosine(original, released, authors, 1)
        if "bigram_cosine" in wanted:
            out["bigram_cosine"] = ngram_cosine(original, released, authors, 2)

    def _field_metrics(self, data: pd.DataFrame, release: Release | pd.DataFrame, out: dict[str, MetricResult]) -> None:
        conf = [lv.codes for lv in self.levels]
        syn = [lv.encode(data[lv.name]) for lv in self.levels]
        k = [lv.n_levels for lv in self.levels]
        if self.identification is not None:
            out["identification_probability"] = self.identification.evaluate(data)
        out["confidential_value_rate"] = self._kept(data, release)
        if self.projections:
            results = [propensity_score(Z, conf, syn, k) for Z in self.projections]
            per = pd.DataFrame({"projection": np.arange(1, len(results) + 1),
                                "pmse": [r.pmse for r in results], "pmse_ratio": [r.ratio for r in results],
                                "parameters": [r.n_parameters for r in results]})
            out["pmse"] = MetricResult("pmse", float(per["pmse"].mean()), detail=per)
            out["pmse_ratio"] = MetricResult("pmse_ratio", float(per["pmse_ratio"].mean()), detail=per)
        categorical = [f.name for f in self.dataset.schema.fields if f.kind == "categorical"]
        out.update(cell_differences(self.dataset.frame, data, self.fields, categorical))
        if self.topics is not None:
            out["topic_content_correlation"] = content_correlation(
                self.topics, [(lv.name, lv.levels, c, s) for lv, c, s in zip(self.levels, conf, syn)])
            field, level = self.prevalence_choice
            synthetic = prevalence(self.topics, data, self.fields, self._level_names())
            out["topic_prevalence_ratio"] = prevalence_ratio(self._confidential_prevalence, synthetic, field, level)

    def _kept(self, data: pd.DataFrame, release: Release | pd.DataFrame) -> MetricResult:
        """Share of synthesized values equal to the confidential ones; per record and field the values and,
        when the synthesizer reports it, the probability it gave the confidential value (Table 6)."""
        detail = release.info.get("field_detail") if isinstance(release, Release) else None
        if detail is not None:  # numeric fields synthesized beside categorical ones have their own measures
            detail = detail[detail["field"].isin(self.fields)].reset_index(drop=True)
        if detail is None or detail.empty:
            parts = []
            for lv in self.levels:
                parts.append(pd.DataFrame({
                    "record": np.arange(len(data)), "field": lv.name,
                    "original": self.dataset.frame[lv.name].astype(str).to_numpy(),
                    "synthetic": data[lv.name].astype(str).to_numpy(),
                }))
            detail = pd.concat(parts, ignore_index=True)
        same = (detail["original"].astype(str) == detail["synthetic"].astype(str)).to_numpy()
        return MetricResult("confidential_value_rate", float(same.mean()), detail=detail)

    def baseline(self) -> dict[str, MetricResult]:
        """The measures on the unprotected data, with ids suffixed ``_confidential``."""
        return {r.id: r for r in (v.as_confidential() for v in self.evaluate(self.dataset.frame).values())}
