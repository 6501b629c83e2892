"""Which measures apply to a dataset and a method, and measuring one release with all of them.

The measures are the classes of `engine.measures.registry`, in its order. `Evaluator` prepares each once per
dataset (the intruder's classifiers, the writing-style distances of the identification risk, the random
projections of the pMSE, the topic model, ...; work several measures need is done once) and then measures
releases. Measures of the text apply to methods that change the text; measures of synthesized fields to
methods that change fields (``fields`` names them). A measure that cannot apply to the data is listed in
``skipped`` with the reason and never stops the others; a wrong setting given by the user is a ConfigError.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError, TextsdcError
from engine.measures import registry
from engine.measures.base import (
    Measure,
    MetricResult,
    NotApplicable,
    PrepareContext,
    ReleaseView,
    target_not_applicable,
)
from engine.measures.bayes_counts import NumericMeasure, NumericMeasures
from engine.measures.registry import measure_class, measure_ids
from engine.measures.settings import MeasureSettings
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Release

__all__ = [
    "FIELD_METRICS",
    "NUMERIC_METRICS",
    "TEXT_METRICS",
    "Evaluator",
    "MeasureSettings",
    "check_options",
]

TEXT_METRICS = measure_ids("text")
FIELD_METRICS = measure_ids("categorical")
NUMERIC_METRICS = measure_ids("numeric")


def _kinds(dataset: Dataset, fields: Sequence[str]) -> tuple[list[str], list[str]]:
    """The synthesized fields split into categorical and numeric (count or continuous) ones."""
    categorical = [f for f in fields if dataset.schema.field(f).kind == "categorical"]
    return categorical, [f for f in fields if f not in categorical]


def check_options(dataset: Dataset, fields: Sequence[str], options: MeasureSettings | None) -> None:
    """Check measure settings against the data before anything costly is fitted: each registered measure that
    applies to a method synthesizing ``fields`` checks the settings it declares (`Measure.check_settings`)."""
    if options is None:
        return
    categorical, numeric = _kinds(dataset, fields)
    for cls in registry.MEASURES:
        if target_not_applicable(cls.applies_to, categorical, numeric) is None:
            cls.check_settings(dataset, fields, options)


def _prepare(cls: type[Measure], context: PrepareContext) -> Measure | str:
    """The measure prepared for the data, or the reason, in the steward's words, why it cannot apply."""
    reason = context.not_applicable(cls.applies_to, cls.methods)
    if reason is not None:
        return reason
    measure = cls()
    try:
        measure.prepare(context)
    except NotApplicable as e:
        return e.reason
    except TextsdcError as e:  # e.g. too few words for the topic model, no overlap with the intruder's authors
        return str(e)
    return measure


def _finish(measure: Measure, context: PrepareContext) -> str | None:
    """None once what ``measure`` left running is collected, or the reason it cannot apply after all."""
    try:
        measure.finish(context)
    except NotApplicable as e:
        return e.reason
    except TextsdcError as e:
        return str(e)
    return None


class Evaluator:
    """Measures releases of one dataset; ``available`` lists the metrics that apply, ``skipped`` says why not.

    Parameters
    ----------
    dataset : the confidential data.
    metrics : metric ids to measure; default the measures of the whole release and the text measures, or, when
        ``fields`` is given, the measures of the whole release and of categorical synthesized fields (Schneider
        et al.) and of count / continuous ones (Guo & Hu) that apply, in registry order.
    fields : the fields a method synthesizes, in order (empty for methods that change the text).
    options : the measure settings (`MeasureSettings`); a setting that does not fit the data (an unknown
        prevalence level, an uncertainty field that is not an un-synthesized key count) is a ConfigError, raised
        before anything is prepared (`check_options`).
    fitted : the fitted method whose releases are measured; the measures of one method (`Measure.methods`)
        apply only with it, and are left out of the default list for other methods.
    shared : an Evaluator of the same dataset, fields and options without a fitted method; the measures of
        every method it prepared (or found not to apply) are taken from it as they are, so only the measures of
        ``fitted``'s own method, and those that read what its releases withhold (`Measure.reads_withheld`), are
        prepared here (the dashboard's pages share one).
    """

    def __init__(
        self,
        dataset: Dataset,
        metrics: Sequence[str] | None = None,
        progress: Progress = no_progress,
        fields: Sequence[str] = (),
        options: MeasureSettings | None = None,
        fitted: Fitted | None = None,
        shared: Evaluator | None = None,
    ) -> None:
        self.dataset = dataset
        self.options = options or MeasureSettings()
        self.fields, self.numeric_fields = _kinds(dataset, fields)
        if metrics:
            requested = list(metrics)
        else:
            requested = [
                m.id
                for m in registry.MEASURES
                if m.applies_to == "release"
                or (m.applies_to == "categorical" and self.fields)
                or (m.applies_to == "numeric" and self.numeric_fields)
                or (m.applies_to == "text" and not fields)
            ]
        if not metrics:
            method = fitted.method if fitted is not None else None
            requested = [m for m in requested if not measure_class(m).methods or method in measure_class(m).methods]
        unknown = [m for m in requested if m not in measure_ids()]
        if unknown:
            raise ConfigError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(sorted(measure_ids()))}")
        check_options(dataset, fields, self.options)

        context = PrepareContext(dataset, fields, self.options, progress, fitted)
        self.skipped: dict[str, str] = {}
        self._measures: list[Measure] = []
        reused = {m.id: m for m in shared._measures} if shared is not None else {}
        for metric_id in requested:
            cls = measure_class(metric_id)
            if shared is not None and not cls.methods and not (cls.reads_withheld and context.withheld):
                if metric_id in reused:
                    self._measures.append(reused[metric_id])
                elif metric_id in shared.skipped:
                    self.skipped[metric_id] = shared.skipped[metric_id]
                else:
                    raise ValueError(f"the shared Evaluator did not consider {metric_id!r}")
                continue
            prepared = _prepare(cls, context)
            if isinstance(prepared, str):
                self.skipped[metric_id] = prepared
            else:
                self._measures.append(prepared)
        # the shared Evaluator's measures were finished there
        finished = {m.id: _finish(m, context) for m in self._measures if m.id not in reused}
        self._measures = [m for m in self._measures if finished.get(m.id) is None]
        self.skipped.update({k: reason for k, reason in finished.items() if reason is not None})
        self.available = [m.id for m in self._measures]
        self.notes = {m.id: m.note for m in self._measures if m.note}
        self.tasks = {m.id: m.task for m in self._measures if m.task}

    @property
    def numeric(self) -> NumericMeasures | None:
        """What the measures of counts and amounts prepared about the confidential data (None when none is
        measured)."""
        return next((m.numeric for m in self._measures if isinstance(m, NumericMeasure)), None)

    def evaluate(
        self, release: Release | pd.DataFrame, report: Callable[[int], None] | None = None
    ) -> dict[str, MetricResult]:
        """All available metrics of one release (or of a frame laid out like the dataset); ``report`` is told how
        many are done after each."""
        view = ReleaseView(self.dataset, release)
        out = {}
        for k, measure in enumerate(self._measures, start=1):
            out[measure.id] = measure.compute(view)
            if report is not None:
                report(k)
        return out

    def baseline(self, report: Callable[[int], None] | None = None) -> dict[str, MetricResult]:
        """The measures on the unprotected data, with ids suffixed ``_confidential``."""
        measured = self.evaluate(self.dataset.frame, report)
        return {r.id: r for r in (v.as_confidential() for v in measured.values())}
