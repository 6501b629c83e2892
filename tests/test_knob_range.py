"""Where along a knob the measures change (issue 50, md's usable range): the grid refined where a measure changes
most between neighbours, and where utility begins along the knob with what the risk reads there."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.knob_range import gap_scores, midpoint, onset_text, refine, refine_points, utility_onset
from engine.protect.text_synthesis.multinomial_dirichlet import EPSILON_KNOB, PAPER_EPSILONS

STEP = 4321.0  # between the grid's 4,000 and 5,000


def summary_of(values: list[float], functions: dict[str, object], noise: float = 0.0) -> pd.DataFrame:
    rows = []
    for v in values:
        for metric, f in functions.items():
            mean = float(f(v))  # type: ignore[operator]
            rows.append(
                {"knob": v, "metric": metric, "kind": "utility", "mean": mean, "lo": mean - noise, "hi": mean + noise}
            )
    return pd.DataFrame(rows)


def step(v: float) -> float:
    return 0.01 if v < STEP else 0.6


def test_refinement_adds_points_inside_a_step_and_none_on_the_plateaus():
    measured: list[list[float]] = []

    def measure(new: list[float]) -> pd.DataFrame:
        measured.append(new)
        return summary_of(new, {"unigram_cosine": step})

    base = summary_of([float(e) for e in PAPER_EPSILONS], {"unigram_cosine": step})
    out = refine(EPSILON_KNOB, base, measure, budget=6)
    added = sorted(set(out["knob"]) - set(PAPER_EPSILONS))
    assert len(added) >= 3 and all(4000 < v < 5000 for v in added), added
    # each round halves the gap that holds the step, until its neighbours lie within 2% of each other
    below, above = max(v for v in out["knob"] if v < STEP), min(v for v in out["knob"] if v > STEP)
    assert above / below < 1.02 and [len(new) for new in measured] == [1] * len(added)
    # deterministic: the same sweep again adds the same points
    again = refine(EPSILON_KNOB, base, lambda new: summary_of(new, {"unigram_cosine": step}), budget=6)
    pd.testing.assert_frame_equal(out, again)


def test_a_smooth_or_flat_measure_or_noise_adds_nothing():
    grid = [float(e) for e in PAPER_EPSILONS]
    flat = summary_of(grid, {"u": lambda v: 0.3})
    assert refine_points(EPSILON_KNOB, flat, 6) == []
    smooth = summary_of(grid, {"u": lambda v: np.log(v) / np.log(10_000)})  # a little per gap
    assert refine_points(EPSILON_KNOB, smooth, 6) == []
    rng = np.random.default_rng(0)
    wobble = {v: float(rng.uniform(0, 0.01)) for v in grid}
    noisy = summary_of(grid, {"u": lambda v: wobble[v]}, noise=0.01)  # every change within the replicates' spread
    assert gap_scores(noisy).max() == 0 and refine_points(EPSILON_KNOB, noisy, 6) == []
    assert refine_points(EPSILON_KNOB, summary_of(grid, {"u": step}), 0) == []


def test_a_midpoint_is_geometric_on_a_log_knob_and_shown_as_measured():
    assert midpoint(EPSILON_KNOB, 5000, 10_000) == 7070.0  # √(5e7) = 7071.07…, three significant digits
    assert midpoint(EPSILON_KNOB, 0.1, 0.5) == 0.224
    from engine.protect.kanon.method import KANON_KNOB

    assert midpoint(KANON_KNOB, 5, 10) == 7.0 and midpoint(KANON_KNOB, 2, 3) is None  # no whole number between
    assert midpoint(EPSILON_KNOB, 4000, 4060) is None  # within 2%: not halved again


def table(rows: list[tuple[float, float, float]]) -> pd.DataFrame:
    """A hand-made sweep summary: (ε, unigram similarity, attack rate) per grid value."""
    out = []
    for eps, u, r in rows:
        out.append({"knob": eps, "metric": "unigram_cosine", "kind": "utility", "mean": u, "lo": u, "hi": u})
        out.append({"knob": eps, "metric": "attack_identification_rate", "kind": "risk", "mean": r, "lo": r, "hi": r})
    return pd.DataFrame(out)


def test_the_slider_text_says_where_utility_begins_and_what_the_attack_reads_there():
    sweep = table(
        [
            (10, 0.002, 0.0),
            (100, 0.012, 0.0),
            (1000, 0.01, 0.0),
            (3000, 0.04, 0.05),
            (5000, 0.2, 0.17),
            (10_000, 0.5, 0.4),
        ]
    )
    onset = utility_onset(EPSILON_KNOB, sweep, "unigram_cosine", "attack_identification_rate")
    # a tenth of the way from no similarity (0) to the best, 0.5, is 0.05: first reached at ε = 5,000, where the
    # attack reads 0.17
    assert onset is not None and onset.knob == 5000 and onset.risk_value == 0.17
    assert onset.level == pytest.approx(0.05)
    assert onset_text(EPSILON_KNOB, onset) == (
        "Utility begins near ε ≈ 5,000 on this data (word (unigram) similarity ≥ 0.050, a tenth of the way from "
        "0.000 to its best on the grid, 0.500); the attack identification rate reads 0.170 there."
    )
    # utility from the most private setting on: no plateau to explain
    early = table([(10, 0.3, 0.0), (100, 0.4, 0.1), (1000, 0.5, 0.2)])
    assert onset_text(EPSILON_KNOB, utility_onset(EPSILON_KNOB, early, "unigram_cosine")) == ""
    flat = table([(10, 0.3, 0.0), (100, 0.3, 0.1)])
    assert utility_onset(EPSILON_KNOB, flat, "unigram_cosine") is None


def test_the_onset_is_read_from_the_most_private_end_of_a_knob_that_protects_more_when_higher():
    from engine.protect.kanon.method import KANON_KNOB

    sweep = table([(2, 0.9, 0.5), (5, 0.8, 0.3), (20, 0.05, 0.1), (50, 0.01, 0.05)])
    onset = utility_onset(KANON_KNOB, sweep, "unigram_cosine", "attack_identification_rate")
    # from k = 50 down: a tenth of the way from 0 to 0.9 is 0.09, first reached at k = 5
    assert onset is not None and onset.knob == 5 and onset.risk_value == 0.3 and not onset.first


def test_a_refined_sweep_measures_the_added_values_as_a_sweep_of_the_whole_grid_would(tiny_dataset):
    from engine.protect import get_protector
    from engine.sweep import run_sweep

    protector = get_protector("md", vocabulary="data")
    metrics = ["unigram_cosine"]
    base = [0.5, 50.0, 5000.0]
    refined = run_sweep(tiny_dataset, protector, base, replicates=2, seed=4, metrics=metrics, refine=3, keep_releases=1)
    added = sorted(set(refined.grid) - set(base))
    assert 1 <= len(added) <= 3 and all(0.5 < v < 5000 for v in added)
    assert sorted(refined.summary["knob"].unique()) == refined.grid == sorted(refined.releases)
    whole = run_sweep(tiny_dataset, protector, refined.grid, replicates=2, seed=4, metrics=metrics, refine=0)
    pd.testing.assert_frame_equal(refined.summary, whole.summary)  # each value's draws do not depend on the grid
    assert refined.baseline.keys() == whole.baseline.keys()
    # in two processes the rounds share one shipment of the fit and the measures, with the same results
    again = run_sweep(tiny_dataset, protector, base, replicates=2, seed=4, metrics=metrics, refine=3, jobs=2)
    assert again.grid == refined.grid
    pd.testing.assert_frame_equal(again.summary, refined.summary)
    # the knob's own budget applies to its default grid only; a grid given is swept as given
    assert run_sweep(tiny_dataset, protector, base, replicates=1, seed=4, metrics=metrics).grid == base


def test_the_protect_page_puts_the_onset_under_its_knob():
    import json

    from dashboard import knob_view
    from dashboard.views.protect import _onset_note
    from engine.results import SweepResult

    summary = table([(10, 0.002, 0.0), (100, 0.01, 0.0), (3000, 0.2, 0.17), (10_000, 0.5, 0.4)])
    rows = summary.rename(columns={"mean": "value"}).assign(replicate=0)[
        ["knob", "replicate", "metric", "kind", "value"]
    ]
    grid = [10.0, 100.0, 3000.0, 10_000.0]
    sweep = SweepResult("d", "f", "md", EPSILON_KNOB, grid, 1, 0, rows, summary)
    note = _onset_note(sweep, "attack_identification_rate", "unigram_cosine")
    assert note.startswith("Utility begins near ε ≈ 3,000 on this data") and note.endswith("reads 0.170 there.")
    assert _onset_note(sweep, "attack_identification_rate", None) == ""
    views = [[knob_view.text(f"at {g}")] for g in grid]
    assert json.loads(knob_view.payload(EPSILON_KNOB, grid, views, note=note))["note"] == note
