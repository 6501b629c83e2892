"""The attacker preset sets every risk measure's intruder: what she holds (texts) and what she knows (fields and
how closely) reach the papers' measures as each one states, and the default is the papers' own intruder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.measures.evaluate import Evaluator
from engine.measures.intruders import DEFAULT_INTRUDER, INTRUDERS
from engine.measures.registry import MEASURES
from engine.measures.risk.release_intruder import METRIC_ID as WHOLE
from engine.measures.settings import MeasureSettings
from tests.conftest import make_tiny_dataset

SCHNEIDER = "identification_probability"


def _evaluator(dataset: Dataset, ids: list[str], preset: str, fields: tuple[str, ...] = ()) -> Evaluator:
    return Evaluator(dataset, ids, fields=list(fields), options=MeasureSettings(intruder=preset))


def _listings() -> Dataset:
    """Five listings: a key (room), a sensitive count (days) and amount (price)."""
    frame = pd.DataFrame(
        {
            "text": [f"listing {i}" for i in range(5)],
            "room": ["a", "a", "a", "b", "b"],
            "days": [100, 108, 30, 10, 12],
            "price": [100.0, 100.0, 80.0, 50.0, 300.0],
        }
    )
    schema = Schema(
        text="text",
        fields=(
            FieldSpec("room", "categorical", "key"),
            FieldSpec("days", "count", "sensitive"),
            FieldSpec("price", "continuous", "sensitive"),
        ),
    )
    return Dataset("listings", frame, schema, None, source="tests")


def test_the_default_is_the_papers_intruder_and_every_risk_measure_says_how_it_reads_the_preset():
    assert DEFAULT_INTRUDER == "posts_and_fields"
    default = INTRUDERS[DEFAULT_INTRUDER]
    assert default.texts and default.knows == "fields" and default.tolerance is None
    assert default.closeness("count") == ("absolute", 5.0) and default.closeness("continuous") == ("log", 0.05)
    assert INTRUDERS["rough_fields"].closeness("count") == ("relative", 0.10)
    for cls in MEASURES:
        if cls.kind == "risk":
            assert cls.intruder_use.strip(), cls.id


def test_matching_measures_follow_what_she_knows_of_counts_and_amounts():
    d = _listings()
    ids = ["emr", "unique_matches"]
    fields = ("days", "price")
    # The papers' intruder: count ±5, amount ±5% on the log scale. Records 0 (100, 100) and 1 (108, 100) differ
    # by 8 days: each matches only itself; 2, 3, 4 likewise → EMR 5, 5 unique matches.
    paper = _evaluator(d, ids, "posts_and_fields", fields).evaluate(d.frame)
    assert paper["emr"].value == pytest.approx(5.0) and paper["unique_matches"].value == 5
    # Numbers to ±10%: 108 is within 10% of 100 and the prices are equal → records 0 and 1 match each other (1/2
    # each); 3 (10 days) and 4 (12 days) differ in price by 6× → unique. EMR = 1/2 + 1/2 + 1 + 1 + 1 = 4.
    rough = _evaluator(d, ids, "posts_and_rough_fields", fields).evaluate(d.frame)
    assert rough["emr"].value == pytest.approx(4.0) and rough["unique_matches"].value == 3
    # Keys only: she finds each record among its room's: room a (3 records) and b (2) → EMR = 1 + 1 = 2.
    keys = _evaluator(d, ids, "posts_and_keys", fields).evaluate(d.frame)
    assert keys["emr"].value == pytest.approx(2.0) and keys["unique_matches"].value == 0
    # An intruder who knows no field does not match records: not measured, with the reason.
    nothing = _evaluator(d, ids, "posts", fields)
    assert not set(ids) & set(nothing.available)
    assert "knows no field values" in nothing.skipped["emr"]


def test_schneiders_identification_follows_the_preset():
    d = make_tiny_dataset()
    release = d.frame.assign(mood=np.roll(d.frame["mood"].to_numpy(), 1))  # a synthesis that moved the mood
    default = _evaluator(d, [SCHNEIDER], "posts_and_fields", ("mood",))
    posts = _evaluator(d, [SCHNEIDER], "posts", ("mood",))
    # The papers' intruder knows the mood: moving it changes what she finds.
    assert default.evaluate(release)[SCHNEIDER].value != pytest.approx(default.evaluate(d.frame)[SCHNEIDER].value)
    # An intruder who knows no field links by writing alone: the synthesized mood does not change her result.
    assert posts.evaluate(release)[SCHNEIDER].value == pytest.approx(posts.evaluate(d.frame)[SCHNEIDER].value)
    # Without texts the two-stage attack is not made.
    no_texts = _evaluator(d, [SCHNEIDER], "rough_fields", ("mood",))
    assert SCHNEIDER not in no_texts.available
    assert "holds no texts" in no_texts.skipped[SCHNEIDER]


def test_the_authorship_attack_needs_her_texts():
    d = make_tiny_dataset()
    assert "attack_identification_rate" in _evaluator(d, ["attack_identification_rate"], "posts").available
    without = _evaluator(d, ["attack_identification_rate"], "rough_fields")
    assert "holds no texts" in without.skipped["attack_identification_rate"]


def test_the_whole_release_intruder_of_the_default_sees_a_synthesized_field():
    d = make_tiny_dataset()
    release = d.frame.assign(mood=np.roll(d.frame["mood"].to_numpy(), 1))
    default = _evaluator(d, [WHOLE], "posts_and_fields", ("mood",))
    keys = _evaluator(d, [WHOLE], "posts_and_keys", ("mood",))
    assert default.evaluate(release)[WHOLE].value < default.evaluate(d.frame)[WHOLE].value
    assert keys.evaluate(release)[WHOLE].value == pytest.approx(keys.evaluate(d.frame)[WHOLE].value)
