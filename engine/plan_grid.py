"""A plan swept over the grid of its knobs: for each value of the knob of the step before the last, the sweep
along the last step's knob (`engine.sweep.run_sweep`, the plan fitted at that value: the fit of the steps
before it is kept, `engine.protect.plan.method.STEP_FITS`). Its frontier is the set of grid points no other
beats on both the risk and the utility measure; each line's chosen point is the last step's own rule (the
pMSE ratio closest to 1 where it was measured, else the knob's default).

A plan of three steps is swept over the knob of its middle step, the first step's knob held at its value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.frontier import frontier, pareto_mask, select_by_pmse_ratio
from engine.measures.settings import MeasureSettings
from engine.progress import Progress, no_progress
from engine.protect import get_protector
from engine.protect.base import Knob
from engine.protect.plan import Plan
from engine.protect.plan.steps import step_ident
from engine.results import SweepResult
from engine.sweep import run_sweep


@dataclass
class PlanGrid:
    """The sweeps of a plan along its last knob, by the value of the knob of the step before the last."""

    method: str
    upstream: Knob
    """The knob of the step before the last (the lines' colour)."""
    sweeps: dict[float, SweepResult]
    _frontiers: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict, repr=False, compare=False)

    @property
    def knob(self) -> Knob:
        """The last step's knob (along each line)."""
        return next(iter(self.sweeps.values())).knob

    def frontier(self, risk: str, utility: str) -> pd.DataFrame:
        """One row per grid point: ``upstream`` (the knob of the step before the last), ``knob`` (the last's),
        the mean risk and utility with their intervals, and ``pareto``: the points no other point of the grid
        beats on both (those that leave the risk where it is on the unprotected data left out); made once per
        pair of measures."""
        if (risk, utility) not in self._frontiers:
            self._frontiers[(risk, utility)] = self._frontier(risk, utility)
        return self._frontiers[(risk, utility)].copy()

    def _frontier(self, risk: str, utility: str) -> pd.DataFrame:
        tables = [
            frontier(s.summary, risk, utility, s.baseline_value(risk)).assign(upstream=u)
            for u, s in self.sweeps.items()
        ]
        t = pd.concat(tables, ignore_index=True)
        protecting = ~t["unprotected"].astype(bool).to_numpy()
        t["pareto"] = False
        t.loc[protecting, "pareto"] = pareto_mask(
            t.loc[protecting, "risk_score"].to_numpy(float), t.loc[protecting, "utility_score"].to_numpy(float)
        )
        return t

    def chosen(self, upstream: float) -> float:
        """The last knob's chosen value on the line at ``upstream``: the pMSE ratio closest to 1 (Schneider et
        al.'s λ*) where it was measured, else the knob's default (the grid value nearest it)."""
        sweep = self.sweeps[upstream]
        if "pmse_ratio" in sweep.metric_ids:
            return select_by_pmse_ratio(sweep.summary, sweep.knob.symbol).best
        return min(sweep.grid, key=lambda v: abs(v - sweep.knob.default))

    def at(self, upstream: float, value: float, metric: str) -> tuple[float, float | None, float | None]:
        """The mean of ``metric`` at the grid point (``upstream``, ``value``) with its interval."""
        row = self.sweeps[upstream].summary
        row = row[(row["metric"] == metric) & (row["knob"] == value)]
        if row.empty:
            raise ConfigError(f"{metric} was not measured at {self.knob.symbol} = {self.knob.format(value)}")
        r = row.iloc[0]
        return float(r["mean"]), _number(r.get("lo")), _number(r.get("hi"))


def coarse_grid(knob: Knob, most: int = 5) -> list[float]:
    """``most`` values of ``knob``'s grid spread evenly along it (the whole grid where it is no longer), and the
    value nearest its default where they miss it: a grid of both knobs sweeps the last knob once per value, and
    md's 21 values of ε would be 21 sweeps."""
    grid = knob.default_grid()
    if len(grid) <= most:
        return grid
    picked = {grid[round(i * (len(grid) - 1) / (most - 1))] for i in range(most)}
    picked.add(min(grid, key=lambda v: abs(v - knob.default)))
    return sorted(picked)


def _number(v: object) -> float | None:
    return None if v is None or pd.isna(v) else float(v)  # type: ignore[arg-type]


def sweep_plan_grid(
    dataset: Dataset,
    plan: Plan,
    upstream_grid: Sequence[float] | None = None,
    replicates: int = 1,
    seed: int = 0,
    jobs: int = 1,
    options: MeasureSettings | None = None,
    progress: Progress = no_progress,
    metrics: list[str] | None = None,
) -> PlanGrid:
    """Sweep ``plan`` along its last knob at every value of ``upstream_grid`` of the knob of the step before the
    last (default: that knob's grid), with the same seed, replicates, measure settings and measures (``metrics``,
    default all that apply)."""
    if len(plan.step_classes) < 2:
        raise ConfigError(f"'{plan.name}' is a plan of one step; sweep the method itself")
    before = plan.step_classes[-2]
    knob = before.knob
    grid = [knob.validate(v) for v in (knob.default_grid() if upstream_grid is None else upstream_grid)]
    if not grid:
        raise ConfigError(f"the grid of {knob.label.lower()} ({knob.symbol}) is empty; give at least one value")
    name = f"{step_ident(before.name)}__{knob.name}"
    sweeps: dict[float, SweepResult] = {}
    for i, value in enumerate(grid, 1):

        def report(done: int, total: int, what: str = "", _i: int = i, _v: float = value) -> None:
            progress(done, total, f"{knob.symbol} = {knob.format(_v)} ({_i} of {len(grid)}): {what}")

        at = get_protector(plan.name, **{**plan.params(), name: int(value) if knob.integer else value})
        sweeps[float(value)] = run_sweep(
            dataset, at, replicates=replicates, seed=seed, jobs=jobs, options=options, progress=report, metrics=metrics
        )
    return PlanGrid(method=plan.name, upstream=knob, sweeps=sweeps)
