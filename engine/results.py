"""The tidy result of a sweep: every (knob, replicate, metric) value, summaries and per-record detail."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engine.measures.base import CONFIDENTIAL_SUFFIX, MetricResult, metric_info
from engine.protect.base import Knob, Release


def interval95(values: np.ndarray) -> tuple[float, float, float]:
    """Mean and the central 95% range (2.5% and 97.5% quantiles) of values over replicates.

    The range describes how much one release can differ from another at the same knob; with one replicate,
    or a deterministic method, it collapses onto the mean.
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    return float(v.mean()), float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))


@dataclass
class SweepResult:
    """Results of a knob grid × M replicates.

    rows:     one row per (knob, replicate, metric): columns knob, replicate, metric, kind, value, and the
              release's own interval and chance level where the measure gives them (lo, hi, chance; NaN
              otherwise: `MetricResult`).
    summary:  one row per (knob, metric): columns knob, metric, kind, mean, lo, hi, chance (`summarize`).
    baseline: metrics on the unprotected data, ids with the ``_confidential`` suffix.
    details:  per-record detail at each knob: ``details[knob][metric_id]`` is a DataFrame with a
              ``replicate`` column (use `detail` to pick one replicate).
    complexity: model size along the knob (columns knob, field, size, what) for methods that report it.
    releases: the compact releases (`Release.compact`) of the first replicates at each knob, where the sweep
              was asked to keep them (``releases[knob][replicate]``; a large table's in files,
              `engine.releases_on_disk.ReleasesOnDisk`).
    notes:    how each measure was taken on this data (`Measure.note`); ``tasks`` what it was taken on where the
              method decides it (`Measure.task`), and ``withheld`` the columns the method's releases leave out.
    """

    dataset: str
    fingerprint: str
    method: str
    knob: Knob
    grid: list[float]
    replicates: int
    seed: int
    rows: pd.DataFrame
    summary: pd.DataFrame
    baseline: dict[str, MetricResult] = field(default_factory=dict)
    details: dict[float, dict[str, pd.DataFrame]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    complexity: pd.DataFrame | None = None
    releases: Mapping[float, list[Release]] = field(default_factory=dict)
    tasks: dict[str, str] = field(default_factory=dict)
    withheld: tuple[str, ...] = ()

    def detail(self, knob: float, metric: str, replicate: int | None = None) -> pd.DataFrame | None:
        """Per-record detail of ``metric`` at grid value ``knob`` (every replicate, or one)."""
        d = self.details.get(knob, {}).get(metric)
        if d is None or replicate is None or "replicate" not in d.columns:
            return d
        return d[d["replicate"] == replicate].reset_index(drop=True)

    @property
    def metric_ids(self) -> list[str]:
        return list(dict.fromkeys(self.rows["metric"]))

    def baseline_value(self, metric: str) -> float | None:
        """``metric`` on the unprotected data, where it was measured and is a number."""
        b = self.baseline.get(metric + CONFIDENTIAL_SUFFIX)
        if b is None or b.value is None or math.isnan(b.value):
            return None
        return float(b.value)

    def metric_at(self, knob: float, metric: str) -> MetricResult:
        """Mean and interval of one metric at one grid value."""
        s = self.summary[(self.summary["knob"] == knob) & (self.summary["metric"] == metric)]
        if s.empty:
            raise KeyError(f"no result for {metric} at {self.knob.symbol}={knob}")
        r = s.iloc[0]
        detail = self.detail(knob, metric)
        chance = r.get("chance")
        return MetricResult(
            metric,
            float(r["mean"]),
            detail=detail,
            lo=float(r["lo"]),
            hi=float(r["hi"]),
            chance=None if chance is None or pd.isna(chance) else float(chance),
        )

    def metrics_at(self, knob: float) -> dict[str, MetricResult]:
        return {m: self.metric_at(knob, m) for m in self.metric_ids}

    def uncertainty_curves(self, knobs: Sequence[float] | None = None) -> pd.DataFrame | None:
        """EMR, TMR, FMR and unique matches as the intruder's knowledge of a key count gets noisier (Guo & Hu,
        Section 4.3, Eq. 11, levels S), at ``knobs`` (default: the whole grid) for every replicate, and on the
        confidential data (column ``data``); None when the sweep measured no such curve."""
        parts, measured = [], []
        for knob in self.grid if knobs is None else knobs:
            d = self.detail(knob, "emr")
            if d is not None and "S" in d.columns:
                parts.append(d.assign(knob=knob, data="synthetic"))
                measured.append(knob)
        if not parts:
            return None
        base = self.baseline.get("emr" + CONFIDENTIAL_SUFFIX)
        if base is not None and base.detail is not None and "S" in base.detail.columns:
            parts += [base.detail.assign(knob=k, data="confidential", replicate=0) for k in measured]
        cols = ["data", "knob", "replicate", "S", "emr", "tmr", "fmr", "unique_matches"]
        return pd.concat(parts, ignore_index=True)[cols]

    def to_json_dict(self) -> dict[str, Any]:
        """The `results.json` layout: rows, summary, baseline and provenance."""
        return {
            "dataset": self.dataset,
            "fingerprint": self.fingerprint,
            "method": self.method,
            "knob": self.knob.to_dict(),
            "grid": self.grid,
            "replicates": self.replicates,
            "seed": self.seed,
            "rows": self.rows.to_dict(orient="records"),
            "summary": self.summary.to_dict(orient="records"),
            "baseline": {
                k: {"value": v.value, "lo": v.lo, "hi": v.hi, "chance": v.chance, "kind": metric_info(k).kind}
                for k, v in self.baseline.items()
            },
            "skipped": self.skipped,
            "notes": self.notes,
            "tasks": self.tasks,
            "withheld": list(self.withheld),
            "complexity": None if self.complexity is None else self.complexity.to_dict(orient="records"),
        }


ROW_COLUMNS = ["knob", "replicate", "metric", "kind", "value", "lo", "hi", "chance"]
"""The columns of `SweepResult.rows`."""
SUMMARY_COLUMNS = ["knob", "metric", "kind", "mean", "lo", "hi", "chance"]
"""The columns of `SweepResult.summary`."""


def result_row(knob: float, replicate: int, result: MetricResult) -> dict[str, Any]:
    """One row of `SweepResult.rows`: the release's value with its own interval and chance level (NaN where the
    measure gives none)."""

    def number(v: float | None) -> float:
        return float("nan") if v is None else float(v)

    return {
        "knob": knob,
        "replicate": replicate,
        "metric": result.id,
        "kind": metric_info(result.id).kind,
        "value": result.value,
        "lo": number(result.lo),
        "hi": number(result.hi),
        "chance": number(result.chance),
    }


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% interval over replicates for each (knob, metric), and the chance level (its mean over the
    replicates, NaN for a measure that has none).

    Where a measure gives each release an interval of its own (an attack's binomial interval), the interval is
    the widest of the spread over replicates and the mean of the releases' own intervals: with one replicate it
    is the release's own, not a point."""
    out = []
    for (knob, metric), g in rows.groupby(["knob", "metric"], sort=True):
        mean, lo, hi = interval95(g["value"].to_numpy())
        own = g.dropna(subset=["lo", "hi"]) if {"lo", "hi"} <= set(g.columns) else g.iloc[:0]
        if len(own) and not math.isnan(mean):
            lo, hi = min(lo, float(own["lo"].mean())), max(hi, float(own["hi"].mean()))
        chances = g["chance"].dropna() if "chance" in g.columns else g["value"].iloc[:0]
        chance = float(chances.mean()) if len(chances) else float("nan")
        kind = g["kind"].iloc[0]
        out.append(
            {"knob": float(knob), "metric": metric, "kind": kind, "mean": mean, "lo": lo, "hi": hi, "chance": chance}
        )
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)
