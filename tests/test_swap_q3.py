"""The acceptance of issue 13 on the 306 earnings calls of 2021 Q3 (../shared/data; skipped without it, and a
long run — the fit alone takes about ten minutes on 2 cores — so it runs only with TEXTSDC_LONG_TESTS=1; the
numbers of its last run are in benchmarks/results_swap.json and the README). The demo's acceptance checks
(test_swap_method.py) at M = 1 per rate, except DU: on this corpus the swapped chunks fit their clusters no worse
on net, so DU stays at 1 at all rates but two (Eq. 2.19 holds it there) — the issue's DU criterion is open, and
this test only holds DU to its definition."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from scipy.stats import spearmanr

from engine.data.load import load_dataset
from engine.frontier import frontier, select_by_tradeoff
from engine.measures.evaluate import Evaluator
from engine.protect import get_protector
from engine.sweep import run_sweep

ROOT = Path(__file__).resolve().parent.parent
METRICS = ["swap_dr", "swap_du", "swap_attack_accuracy", "swap_mcnemar_p"]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_swap", ROOT / "benchmarks" / "bench_swap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.long
@pytest.mark.slow
def test_risk_utility_and_the_intruder_fall_along_r_on_the_2021_q3_calls(tmp_path):
    bench = _bench()
    if not bench.Q3.is_file():
        pytest.skip(f"{bench.Q3} is absent (it is not part of the repository)")
    dataset = load_dataset(str(bench.q3_files(tmp_path)))
    protector = get_protector("swap")
    fitted = protector.fit(dataset)
    assert fitted.prepared.documents.size > 5000 and len(set(fitted.prepared.documents)) == 306
    evaluator = Evaluator(dataset, METRICS, fitted=fitted)
    sweep = run_sweep(dataset, protector, None, 1, 0, jobs=2, fitted=fitted, evaluator=evaluator)
    means = sweep.summary.pivot(index="knob", columns="metric", values="mean").sort_index()
    assert means.loc[0.0, "swap_dr"] == 1.0 and means.loc[0.0, "swap_du"] == 1.0
    for metric in ("swap_dr", "swap_attack_accuracy"):
        rho = spearmanr(means.index, means[metric]).statistic
        assert rho <= -0.8, (metric, rho, means[metric].round(4).tolist())
    assert ((means["swap_du"] >= 0) & (means["swap_du"] <= 1)).all()
    chosen = select_by_tradeoff(frontier(sweep.summary, "swap_dr", "swap_du"), a=1.0).knob
    attack = sweep.detail(chosen, "swap_attack_accuracy")
    swapped = attack[attack["chunks"] == "swapped targets"]
    assert (swapped["n"] >= 100).all()
    assert swapped["accuracy_post"].mean() <= swapped["accuracy_pre"].mean() * 2 / 3, swapped.to_dict("records")
    assert (swapped["p_value"] < 0.05).all()
