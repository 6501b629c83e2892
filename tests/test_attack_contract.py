"""The attack contract over every registered method: a release of the contract data, with a background corpus
declared (other posts by the same authors), carries its worst applicable attack — name, value, interval and
chance level — in its manifest and its report, with the attacks' assumptions in words; and the worst attack is
the one furthest above its chance level."""

from __future__ import annotations

import json
from functools import cache

import pytest

from engine.measures.attacks import WORST_ATTACK, WorstAttack, advantage_result, worst_attack
from engine.measures.base import METRICS, MetricResult, metric_info
from engine.measures.settings import MeasureSettings
from engine.protect import METHODS
from tests.contract_data import contract_dataset
from tests.test_method_contract import build, ends


@cache
def dataset():
    return contract_dataset(n_authors=12, per_author=4)


def test_the_worst_attack_is_the_one_furthest_beyond_its_baseline_on_one_scale():
    a, b = "background_author_attack", "attack_identification_rate"  # both read against their chance level
    so = "singling_out_risk"  # corrected by its control already (Giomi et al. 2023): taken as it is
    assert METRICS[a].attack.baseline == METRICS[b].attack.baseline == "chance"
    assert METRICS[so].attack.baseline == "control"
    metrics = {
        a: MetricResult(a, 0.50, lo=0.40, hi=0.60, chance=0.45),  # (0.50 − 0.45) / 0.55 = 0.0909
        b: MetricResult(b, 0.30, lo=0.20, hi=0.40, chance=0.004),  # (0.30 − 0.004) / 0.996 = 0.2972: the worst
        so: MetricResult(so, 0.213, lo=0.15, hi=0.28, chance=0.2),  # 0.213 as it is (not 0.213 − 0.2 = 0.013)
        "unigram_cosine": MetricResult("unigram_cosine", 0.9),
        b + "_confidential": MetricResult(b + "_confidential", 0.99, chance=0.004),  # a baseline is no release
    }
    worst = worst_attack(metrics)
    assert worst is not None and worst.id == b and worst.baseline == "chance"
    assert worst.advantage == pytest.approx(0.296 / 0.996) == pytest.approx(0.29719, abs=1e-5)
    assert worst.card() == f"Worst attack: {metric_info(b).card} 0.300 [0.200–0.400], chance 0.004"
    assert "(0.300 − 0.004) / (1 − 0.004) = 0.297" in worst.scale_sentence()
    over = advantage_result(metrics)
    assert over is not None and over.id == WORST_ATTACK
    assert (over.value, over.lo, over.hi) == pytest.approx((0.296 / 0.996, 0.196 / 0.996, 0.396 / 0.996))

    # Singling out at 0.213 is worse than an attack at 0.20 against a chance of 0.004 ((0.196) / 0.996 = 0.1968),
    # which subtracting singling out's guess rate (0.213 − 0.2 = 0.013) would have hidden.
    metrics[b] = MetricResult(b, 0.20, lo=0.15, hi=0.25, chance=0.004)
    worst = worst_attack(metrics)
    assert worst is not None and worst.id == so and worst.advantage == pytest.approx(0.213)
    assert worst.card() == f"Worst attack: {metric_info(so).card} 0.213 [0.150–0.280], corrected by its control"
    over = advantage_result(metrics)
    assert over is not None and (over.value, over.lo, over.hi) == pytest.approx((0.213, 0.15, 0.28))  # as it is

    # Normalized, not subtracted: 0.95 against 0.90 takes half the room above chance, (0.05) / 0.10 = 0.5, worse
    # than 0.40 against 0.004 (0.396 / 0.996 = 0.3976), though 0.05 < 0.396.
    ranked = {a: MetricResult(a, 0.95, chance=0.90), b: MetricResult(b, 0.40, chance=0.004)}
    worst = worst_attack(ranked)
    assert worst is not None and worst.id == a and worst.advantage == pytest.approx(0.5)
    assert worst_attack({a: MetricResult(a, 0.5)}) is None  # no chance level: not read as an attack's success
    assert WorstAttack.from_dict(worst.to_dict()) == worst and worst.to_dict()["baseline"] == "chance"


def test_an_attack_declares_a_baseline_it_knows():
    from engine.errors import ConfigError
    from engine.measures.base import Attack

    with pytest.raises(ConfigError, match="baselines accepted: chance, control"):
        Attack(holds=("background",), names="author", assumptions="She guesses.", baseline="random")  # type: ignore


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_methods_release_carries_its_worst_attack_with_interval_and_chance(name, tmp_path):
    from engine.export.chosen import Prepared, Run, export_chosen
    from engine.record.manifest import read_record
    from engine.record.replay import ReplaySpec

    data = dataset()
    background = tmp_path / "background.csv"
    assert data.external is not None
    data.external.to_csv(background, index=False)  # other posts by the same authors, each with its author
    options = MeasureSettings(background=str(background))
    protector = build(name)
    f = protector.fit(data)
    private, _ = ends(f)
    out = tmp_path / "bundle"
    spec = ReplaySpec("the contract data", name, private, 0, 1, str(out), protector.params(), options=options)
    result = export_chosen(out, spec, Prepared(data, protector, f), run=Run(audit_log=tmp_path / "a", pdf=False))
    record = read_record(out)
    worst = record.worst_attack
    assert worst is not None, sorted(record.metrics)
    assert worst.lo is not None and worst.hi is not None and worst.lo <= worst.value <= worst.hi
    assert 0 < worst.chance < 1 and worst.assumptions and METRICS[worst.id].attack is not None
    assert "background_author_attack" in record.metrics, result.record.metrics
    assert record.metrics["background_author_attack"].chance == pytest.approx(1 / 12)
    style = record.metrics["stylometric_author_attack"]  # Burrows' Delta on the same background: a plug-in too
    assert style.chance == pytest.approx(1 / 12) and style.lo is not None and style.hi is not None
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    entry = manifest["worst_attack"]
    assert entry["baseline"] == METRICS[worst.id].attack.baseline and entry["advantage"] == pytest.approx(
        worst.advantage
    )
    assert {"label", "value", "lo", "hi", "chance", "assumptions"} <= set(entry) and entry["id"] == worst.id
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Attacks and what they assume" in report and "Worst attack:" in report
    assert "<th>Read against</th><th>Beyond its baseline</th>" in report and "(1 − baseline)" in report
    assert metric_info("background_author_attack").attack.assumptions.split(";")[0] in report
