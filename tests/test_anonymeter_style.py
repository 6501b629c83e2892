"""Singling out, linkability and inference (Giomi et al. 2023) on hand-made tables: a release that is the data
itself exposes its people, one of independent random values does not, the same seed gives the same numbers, and
what cannot be measured or set says why."""

import math

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError
from engine.measures.evaluate import Evaluator, MeasureSettings, check_options
from engine.measures.risk.anonymeter_style.measure import rate
from engine.measures.risk.anonymeter_style.rates import residual_risk, wilson
from engine.measures.risk.anonymeter_style.singling_out import counts, matrix, singles_out
from engine.measures.risk.anonymeter_style.table import Attackable, rows

IDS = ["singling_out_risk", "linkability_risk", "inference_risk"]


def people(n: int = 600, seed: int = 0, keys: int = 3) -> Dataset:
    """People with an age, an income and a town the intruder may know, and a diagnosis to protect."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "text": [f"note {i} about visit" + (" see https://x.org" if i % 7 == 0 else "") for i in range(n)],
            "age": rng.integers(18, 90, n).astype(float),
            "income": rng.normal(50_000, 15_000, n).round(),
            "town": rng.choice([f"town{i}" for i in range(40)], n),
            "diagnosis": rng.choice(["flu", "asthma", "diabetes", "migraine", "none"], n),
        }
    )
    fields = [
        FieldSpec("age", "count", "key"),
        FieldSpec("town", "categorical", "key" if keys >= 3 else "other"),
        FieldSpec("income", "continuous", "key" if keys >= 2 else "other"),
        FieldSpec("diagnosis", "categorical", "sensitive"),
    ]
    return Dataset("people", frame, Schema(text="text", fields=tuple(fields)), None, source="tests")


def independent(d: Dataset, seed: int = 1) -> pd.DataFrame:
    """A release of the same shape whose every column is drawn again, independently of the records."""
    rng = np.random.default_rng(seed)
    return d.frame.assign(**{c: rng.permutation(d.frame[c].to_numpy()) for c in d.frame.columns})


def measured(d: Dataset, release: pd.DataFrame, **settings) -> dict:
    ev = Evaluator(d, IDS, options=MeasureSettings(settings))
    assert ev.available == IDS, ev.skipped
    return ev.evaluate(release)


def test_a_release_that_is_the_data_exposes_its_people_to_all_three_attacks():
    d = people()
    out = measured(d, d.frame)
    for mid in IDS:
        r = out[mid]
        assert r.lo is not None and r.hi is not None and r.chance is not None
        assert r.lo <= r.value <= r.hi
        assert r.lo > 0.3, (mid, r.value, r.lo)  # clearly exposed, interval and all
        detail = r.detail
        assert rate(detail, "attack") > rate(detail, "control")
        assert r.chance == pytest.approx(rate(detail, "baseline"))
    # Linked: each target's own record is nearest on both halves; inferred: her own record's diagnosis.
    assert out["linkability_risk"].value > 0.9 and out["inference_risk"].value > 0.9


def test_a_release_of_independent_random_values_shows_no_risk_and_its_interval_covers_zero():
    d = people()
    out = measured(d, independent(d))
    for mid in IDS:
        r = out[mid]
        assert r.value < 0.1, (mid, r.value)
        assert r.lo == 0.0, (mid, r.lo)


def test_the_same_seed_gives_the_same_numbers_and_another_seed_another_split():
    d = people()

    def values(seed: int) -> list[tuple]:
        ev = Evaluator(d, IDS, options=MeasureSettings(seed=seed))
        out = ev.evaluate(d.frame)
        return [(out[m].value, out[m].lo, out[m].hi, out[m].chance) for m in IDS]

    assert values(3) == values(3)
    assert values(3) != values(4)
    # A release measured twice by one evaluator reads the same: each release draws afresh from the seed.
    ev = Evaluator(d, IDS)
    first, second = ev.evaluate(d.frame), ev.evaluate(d.frame)
    assert all(first[m].value == second[m].value for m in IDS)


def test_the_control_split_is_two_equal_halves_of_distinct_records_and_the_release_rows_follow_them():
    d = people(n=201)
    side = Attackable.prepare(d, (), seed=0)
    assert len(side.attacked) == len(side.control) == 100
    assert not set(side.attacked) & set(side.control)
    released = side.release(d.frame, "text")
    assert np.array_equal(rows(released, side.attacked).values["age"], d.frame["age"].to_numpy()[side.attacked])
    assert side.names() == [
        "age",
        "town",
        "income",
        "diagnosis",
        "text_words",
        "text_url",
        "text_handle",
        "text_number",
    ]
    assert released.values["text_url"].tolist() == side.original.values["text_url"].tolist()
    # A changed text has its features computed again.
    edited = d.frame.assign(text=["one two three four five six seven https://y.org @bob 42"] * len(d.frame))
    table = side.release(edited, "text")
    assert set(table.values["text_words"]) == {10.0}
    url = side.categories["text_url"].get_loc("True")
    assert set(table.values["text_url"]) == {url}


def test_wilson_rates_and_the_risk_match_hand_computed_values():
    rate = wilson(30, 100)
    z = 1.959963984540054
    centre = (30 + z * z / 2) / (100 + z * z)
    half = z / (100 + z * z) * math.sqrt(30 * 70 / 100 + z * z / 4)
    assert rate.value == pytest.approx(centre) and rate.error == pytest.approx(half)
    attack, control, baseline = wilson(60, 100), wilson(20, 100), wilson(1, 100)
    risk = residual_risk(attack, control, baseline)
    expected = (attack.value - control.value) / (1 - control.value)
    error = math.hypot(
        attack.error / (1 - control.value), control.error * (attack.value - 1) / (1 - control.value) ** 2
    )
    assert risk.value == pytest.approx(expected)
    assert (risk.lo, risk.hi) == pytest.approx((expected - error, expected + error))
    # Worse on the release's people than on the control: no risk, bounded at 0.
    assert residual_risk(wilson(10, 100), wilson(40, 100), baseline).value == 0.0
    with pytest.raises(ValueError, match="between 0 and the attacks"):
        wilson(5, 4)


def test_a_predicatesingles_out_where_it_matches_one_record_alone():
    # Columns: a category (codes) and a number; the median of the number is 5.
    data = np.array([[0, 1.0], [0, 5.0], [1, 9.0], [1, 9.0], [1, 2.0], [2, 5.0]])
    numeric = np.array([False, True])
    medians = np.array([0.0, 5.0])
    # On the category alone: only code 2 is held by one record.
    assert singles_out(data, numeric, medians, (0,)).tolist() == [False, False, False, False, False, True]
    # On both: 9 is above the median, so "≥ 9" within code 1 matches two records; "≤ 2" within code 1 one.
    assert singles_out(data, numeric, medians, (0, 1)).tolist() == [True, False, False, False, True, True]


def test_counts_evaluate_every_operator(monkeypatch):
    from engine.measures.risk.anonymeter_style import singling_out as so

    data = np.array([[0.0, 1.0], [1.0, np.nan], [1.0, 3.0]])
    p = so.Predicates(
        columns=np.array([[0, 1], [0, 1], [0, 1], [0, 1]]),
        operators=np.array([[so.EQ, so.GE], [so.NE, so.MISSING], [so.EQ, so.PRESENT], [so.EQ, so.LT]]),
        values=np.array([[1.0, 2.0], [0.0, np.nan], [1.0, np.nan], [0.0, 2.0]]),
    )
    assert counts(p, data).tolist() == [1, 1, 1, 1]
    assert matrix(Attackable.prepare(people(), (), 0).original, []).shape == (600, 0)


def test_what_cannot_be_measured_says_why():
    small = Evaluator(people(n=80), IDS)
    for mid in IDS:
        assert "at least 100 records" in small.skipped[mid]
    one_key = Evaluator(people(keys=1), IDS)
    assert "at least two key fields" in one_key.skipped["linkability_risk"]
    assert "singling_out_risk" in one_key.available and "inference_risk" in one_key.available
    no_keys = people()
    no_keys = Dataset(
        "no-keys",
        no_keys.frame,
        Schema(
            text="text",
            fields=tuple(
                FieldSpec(f.name, f.kind, "other" if f.role == "key" else f.role) for f in no_keys.schema.fields
            ),
        ),
        None,
    )
    ev = Evaluator(no_keys, IDS)
    assert "key field" in ev.skipped["inference_risk"] and "key fields" in ev.skipped["linkability_risk"]
    blind = Evaluator(people(), IDS, options=MeasureSettings(intruder="posts"))
    assert "knows none" in blind.skipped["linkability_risk"] and "knows none" in blind.skipped["inference_risk"]
    assert "singling_out_risk" in blind.available


def test_bad_settings_are_config_errors_naming_what_is_accepted():
    d = people()
    with pytest.raises(
        ConfigError, match="'weight' is not a column of the released table; accepted: age, town, income"
    ):
        check_options(d, [], MeasureSettings(linkability_first=("weight",)))
    with pytest.raises(ConfigError, match="must share no column; both name age"):
        check_options(d, [], MeasureSettings(linkability_first=("age",), linkability_second=("age", "town")))
    with pytest.raises(ConfigError, match="'mood' is not a field of the data; accepted: age, town, income, diagnosis"):
        check_options(d, [], MeasureSettings(inference_secret="mood"))
    with pytest.raises(ConfigError, match="must be a whole number from 20"):
        MeasureSettings(n_attacks=5)


def test_settings_choose_the_columns_and_the_number_of_attacks():
    d = people()
    ev = Evaluator(
        d,
        IDS,
        options=MeasureSettings(
            linkability_first=("age", "text_words"),
            linkability_second=("income",),
            inference_secret="town",
            n_attacks=100,
        ),
    )
    out = ev.evaluate(d.frame)
    assert all(out[m].detail["attacks"].iloc[0] == 100 for m in IDS)
    assert ev.tasks["linkability_risk"] == "linking age and text_words with income"
    assert ev.tasks["inference_risk"] == "inferring town from age and income"
    assert out["inference_risk"].value > 0.9  # her own record, found by age and income, tells her town


def test_predicates_found_by_sorting_are_those_a_record_by_record_count_finds():
    """`singles_out` decides uniqueness by sorting; on random tables with ties and missing values it agrees with
    counting every record's matches one by one."""
    from itertools import combinations

    rng = np.random.default_rng(0)

    def one_by_one(data, numeric, medians, subset):
        out = []
        for row in data:
            match = np.ones(len(data), dtype=bool)
            for j in subset:
                v, column = row[j], data[:, j]
                if np.isnan(v):
                    match &= np.isnan(column)
                elif not numeric[j]:
                    match &= column == v
                else:
                    match &= column >= v if v > medians[j] else column <= v
            out.append(match.sum() == 1)
        return np.array(out)

    numeric = np.array([False, True, True, True, True])
    for _ in range(8):
        n = int(rng.integers(5, 200))
        data = np.column_stack(
            [
                rng.integers(0, 3, n),
                rng.integers(0, 8, n),
                rng.integers(0, 6, n),
                rng.normal(size=n).round(1),
                rng.integers(0, 4, n),
            ]
        ).astype(float)
        data[:, 1:][rng.random((n, 4)) < 0.05] = np.nan
        medians = np.array([np.nanmedian(data[:, j]) for j in range(5)])
        for subset in combinations(range(5), 3):
            assert np.array_equal(
                singles_out(data, numeric, medians, subset), one_by_one(data, numeric, medians, subset)
            )


def test_the_report_section_gives_each_risk_its_interval_chance_and_assumptions_and_says_what_was_not_measured():
    from types import SimpleNamespace

    from engine.measures.base import measured_number, metric_info
    from engine.report.wp29 import SinglingOutLinkabilityInferenceSection, interval

    d = people(keys=1)
    ev = Evaluator(d, IDS)
    metrics = ev.evaluate(d.frame)
    report = SimpleNamespace(metrics=metrics, skipped=ev.skipped, notes=ev.notes)
    html = "".join(SinglingOutLinkabilityInferenceSection.html(report, internal=False))
    assert "<h2>Singling out, linkability and inference</h2>" in html
    assert "not measured: needs two tables of the intruder" in html
    for mid in ("singling_out_risk", "inference_risk"):
        r = metrics[mid]
        lo, hi = interval(r)
        assert (lo, hi) == pytest.approx((r.lo, r.hi))  # one release: the attack's own Wilson interval
        assert f"{measured_number(r.value)}</td><td>{measured_number(lo)}–{measured_number(hi)}" in html
        assert measured_number(r.chance) in html
        assert metric_info(mid).attack.assumptions.split(".")[0].replace("'", "&#x27;") in html
    assert "conditions that isolate one released record" in html


def test_the_nearest_released_record_is_drawn_evenly_among_equally_near_ones():
    from engine.measures.risk.anonymeter_style.nearest import nearest
    from engine.measures.risk.anonymeter_style.table import Column, Encoded

    columns = [Column("town", False), Column("age", True)]
    released = Encoded({"town": np.array([0, 0, 0, 1, 1]), "age": np.array([30.0, 30.0, 30.0, 50.0, np.nan])}, 5)
    targets = Encoded({"town": np.array([0] * 3000 + [1, 1]), "age": np.array([31.0] * 3000 + [49.0, np.nan])}, 3002)
    chosen = nearest(targets, released, columns, np.random.default_rng(0))
    assert set(chosen[:3000]) == {0, 1, 2}
    assert np.bincount(chosen[:3000], minlength=3).min() > 900  # each of the three tied records about a third
    assert chosen[3000:].tolist() == [3, 4]  # a missing value is nearest to a missing one
