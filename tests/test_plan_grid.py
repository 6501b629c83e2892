"""A plan swept over the grid of its two knobs (`engine.plan_grid`) and its frontier figure
(`engine.figures.plans`)."""

from __future__ import annotations

from functools import cache

import pandas as pd
import pytest

from engine.errors import ConfigError
from engine.figures.plans import plan_frontier_figure
from engine.plan_grid import sweep_plan_grid
from engine.protect import get_protector
from engine.sweep import run_sweep
from tests.contract_data import contract_dataset

RISK, UTILITY = "release_identification_probability", "pmse_ratio"
METRICS = [RISK, UTILITY, "classifier_f1_ratio"]


@cache
def grid():
    plan = get_protector("redact+glm", redact__use_ner=False, glm__n_lambda=20)
    return sweep_plan_grid(contract_dataset(), plan, [0, 1], metrics=METRICS)


def test_a_plans_grid_has_a_line_per_value_of_the_knob_before_the_last():
    g = grid()
    assert sorted(g.sweeps) == [0.0, 1.0] and g.upstream.name == "level" and g.knob.name == "lambda"
    table = g.frontier(RISK, UTILITY)
    assert len(table) == sum(len(s.grid) for s in g.sweeps.values())
    assert table["pareto"].any() and not table["pareto"].all()


def test_the_line_at_the_no_op_level_is_the_synthesizer_alone():
    alone = run_sweep(contract_dataset(), get_protector("glm", n_lambda=20), metrics=METRICS)
    plan_line = grid().sweeps[0.0].summary.drop(columns=[], errors="ignore")
    pd.testing.assert_frame_equal(plan_line.reset_index(drop=True), alone.summary.reset_index(drop=True))


def test_redacting_the_handles_first_lowers_the_whole_release_risk_at_each_lines_chosen_point():
    g = grid()
    at = {level: g.at(level, g.chosen(level), RISK)[0] for level in (0.0, 1.0)}
    assert at[1.0] < at[0.0], at


def test_the_figure_draws_a_line_per_level_the_best_points_and_the_current_one():
    g = grid()
    lam = g.chosen(1.0)
    fig = plan_frontier_figure(g, RISK, UTILITY, current=(1.0, lam))
    names = [t.name for t in fig.data]
    assert names[:2] == ["Redaction level 0 (along λ)", "Redaction level 1 (along λ)"]
    assert fig.data[0].line.color != fig.data[1].line.color
    assert names[2].startswith("Best over both knobs") and names[3] == f"This release: level 1, λ {g.knob.format(lam)}"
    assert len(fig.data[2].x) == int(g.frontier(RISK, UTILITY)["pareto"].sum())


def test_a_plan_of_one_step_has_no_grid():
    from engine.protect import METHODS
    from engine.protect.plan import plan_class

    with pytest.raises(ConfigError, match="a plan of one step"):
        sweep_plan_grid(contract_dataset(), plan_class("glm", METHODS)())


def test_a_coarse_grid_keeps_at_most_five_values_spread_along_the_knob_and_the_default():
    from engine.plan_grid import coarse_grid
    from engine.protect import METHODS

    assert coarse_grid(METHODS["redact"].knob) == [0, 1, 2, 3, 4]
    eps = METHODS["md"].knob
    picked = coarse_grid(eps)
    grid = eps.default_grid()
    assert picked[0] == grid[0] and picked[-1] == grid[-1] and len(picked) <= 6
    assert min(grid, key=lambda v: abs(v - eps.default)) in picked
    assert picked == sorted(set(picked))
