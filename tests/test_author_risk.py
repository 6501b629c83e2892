"""Issue 10: the identification risk of prolific authors (author-level identification probability) and the
warning when the intruder's texts are verbatim copies of released ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.measures.base import metric_info
from engine.measures.evaluate import FIELD_METRICS, Evaluator
from engine.measures.risk import identification
from engine.measures.risk.duplicates import count_verbatim, verbatim_intruder_texts, verbatim_warning
from engine.measures.risk.identification import (
    AUTHOR_METRIC_ID,
    METRIC_ID,
    IdentificationRisk,
    author_probabilities,
    match_keys,
)

# ---------------------------------------------------------------------------------------------------------------
# Hand-computed: the intruder's similarities are given, so every probability is a fraction of them.
#
# Released records 0, 1, 2 are by q (state NM), 3 by b (NM), 4 by c (NM), 5 by d (GA).
# External text 0 is q's, external text 1 is b's. Similarities (1/distance) of each external text to each record:
SIMILARITY = np.array(
    [
        [3.0, 3.0, 3.0, 0.5, 0.5, 7.0],  # q's text: NM total 10, each of q's records 3/10 = 0.3
        [1.0, 1.0, 1.0, 2.0, 5.0, 9.0],  # b's text: NM total 10, b's record 2/10 = 0.2
    ]
)
AUTHORS = ["q", "q", "q", "b", "c", "d"]


def hand_risk(confidential_states: list[str]) -> IdentificationRisk:
    frame = pd.DataFrame({"state": confidential_states})
    pairs = pd.DataFrame([(0, 0, "q"), (0, 1, "q"), (0, 2, "q"), (1, 3, "b")], columns=["external", "record", "target"])
    keys = match_keys(frame, ["state"])
    return IdentificationRisk(SIMILARITY, pairs, ["state"], keys[pairs["record"].to_numpy()])


def test_author_level_is_the_sum_over_the_authors_records_and_record_level_the_mean():
    states = ["NM", "NM", "NM", "NM", "NM", "GA"]
    risk = hand_risk(states)
    released = pd.DataFrame({"state": states})
    record = risk.evaluate(released)
    pairs = risk.pair_probabilities(released)
    author = author_probabilities(pairs)
    # Each of q's three records gets 3/10; b's one record 2/10.
    assert pairs["probability"].tolist() == pytest.approx([0.3, 0.3, 0.3, 0.2])
    # Record level: q's mean 0.3, b's 0.2, averaged over targets.
    assert record.value == pytest.approx((0.3 + 0.2) / 2)
    # Author level: q's sum 0.9, b's 0.2 (a single record: both measures agree on b).
    assert author.value == pytest.approx((0.9 + 0.2) / 2)
    assert author.id == AUTHOR_METRIC_ID and record.id == METRIC_ID
    assert author.value >= record.value
    per_target = identification.by_target(author.detail)
    assert per_target.to_dict() == pytest.approx({"b": 0.2, "q": 0.9})
    assert identification.by_target(record.detail).to_dict() == pytest.approx({"b": 0.2, "q": 0.3})
    assert author.detail["record_probability"].tolist() == pytest.approx([0.3, 0.3, 0.3, 0.2])


def test_a_record_released_elsewhere_drops_out_of_both():
    states = ["NM", "NM", "NM", "NM", "NM", "GA"]
    risk = hand_risk(states)
    # q's record 2 is released in GA: knowing NM the intruder keeps 0, 1, 3, 4 (similarities 3, 3, 0.5, 0.5).
    released = pd.DataFrame({"state": ["NM", "NM", "GA", "NM", "NM", "GA"]})
    record, author = risk.evaluate(released), author_probabilities(risk.pair_probabilities(released))
    q_record = (3 / 7 + 3 / 7 + 0) / 3
    b = 2 / (1 + 1 + 2 + 5)
    assert record.value == pytest.approx((q_record + b) / 2)
    assert author.value == pytest.approx((6 / 7 + b) / 2)


def test_records_with_different_known_values_are_not_added_across_first_stages():
    # q's record 2 is confidentially (and in the release) in GA: the intruder who knows record 2's values keeps
    # records 2 and 5 (3 / (3 + 7) = 0.3 on q); knowing record 0's or 1's, she keeps 0, 1, 3, 4 (6/7 on q).
    # Adding the three record-level probabilities (3/7 + 3/7 + 0.3 > 1) would not be a probability.
    states = ["NM", "NM", "GA", "NM", "NM", "GA"]
    risk = hand_risk(states)
    released = pd.DataFrame({"state": states})
    pairs = risk.pair_probabilities(released)
    assert pairs["probability"].sum() - 2 / 9 > 1.0  # the naive sum over q's records
    author = author_probabilities(pairs)
    b = 2 / (1 + 1 + 2 + 5)
    assert author.value == pytest.approx(((6 / 7 + 6 / 7 + 0.3) / 3 + b) / 2)
    assert (author.detail["probability"] <= 1.0).all()
    assert (author.detail["probability"] >= author.detail["record_probability"]).all()


# ---------------------------------------------------------------------------------------------------------------
# As a registered measure


def test_registered_next_to_the_identification_probability():
    assert FIELD_METRICS.index(AUTHOR_METRIC_ID) == FIELD_METRICS.index(METRIC_ID) + 1
    info = metric_info(AUTHOR_METRIC_ID)
    assert info.kind == "risk" and info.better == "lower" and (info.low, info.high) == (0.0, 1.0)
    assert "Schneider" in info.source and "Eq. 9" in info.source
    assert metric_info(AUTHOR_METRIC_ID + "_confidential").label.endswith("(unprotected data)")


def test_measured_with_the_identification_probability_from_one_preparation(tiny_dataset, monkeypatch):
    prepared, evaluated = [], []
    real_prepare = IdentificationRisk.prepare.__func__
    real_pairs = IdentificationRisk.pair_probabilities

    def counting_prepare(cls, *a, **k):
        prepared.append(1)
        return real_prepare(cls, *a, **k)

    def counting_pairs(self, *a, **k):
        evaluated.append(1)
        return real_pairs(self, *a, **k)

    monkeypatch.setattr(IdentificationRisk, "prepare", classmethod(counting_prepare))
    monkeypatch.setattr(IdentificationRisk, "pair_probabilities", counting_pairs)
    ev = Evaluator(tiny_dataset, metrics=[METRIC_ID, AUTHOR_METRIC_ID], fields=["mood"])
    assert ev.available == [METRIC_ID, AUTHOR_METRIC_ID] and len(prepared) == 1
    out = ev.evaluate(tiny_dataset.frame)
    assert len(evaluated) == 1  # one pass over the release serves both
    assert 0.0 <= out[METRIC_ID].value <= out[AUTHOR_METRIC_ID].value <= 1.0
    # Each of the six authors has four records: the author-level value sums what the record-level one averages.
    by_pair = out[AUTHOR_METRIC_ID].detail
    assert len(by_pair) == 24 and (by_pair["probability"] >= by_pair["record_probability"] - 1e-12).all()
    base = ev.baseline()
    assert base[AUTHOR_METRIC_ID + "_confidential"].value >= base[METRIC_ID + "_confidential"].value


def test_not_measured_when_every_target_has_one_record(tiny_dataset):
    frame = tiny_dataset.frame.drop_duplicates("user").reset_index(drop=True)
    single = Dataset("single", frame, tiny_dataset.schema, tiny_dataset.external, source="tests")
    ev = Evaluator(single, fields=["mood"])
    assert METRIC_ID in ev.available and AUTHOR_METRIC_ID not in ev.available
    assert "single released record" in ev.skipped[AUTHOR_METRIC_ID]


def test_not_measured_without_the_intruder_texts(tiny_dataset):
    bare = Dataset("bare", tiny_dataset.frame, tiny_dataset.schema, None, source="tests")
    ev = Evaluator(bare, fields=["mood"])
    assert "external texts" in ev.skipped[AUTHOR_METRIC_ID]
    assert ev.skipped[AUTHOR_METRIC_ID] == ev.skipped[METRIC_ID]


# ---------------------------------------------------------------------------------------------------------------
# Verbatim copies


def copies_dataset(external_texts: list[str]) -> Dataset:
    frame = pd.DataFrame(
        {
            "text": ["Great  product,\nwould buy again", "Terrible fit", "ok", "Great product, would buy again"],
            "user": ["a", "a", "b", "c"],
            "colour": ["red", "blue", "red", "blue"],
        }
    )
    external = pd.DataFrame({"text": external_texts, "user": ["a"] * len(external_texts)})
    schema = Schema(text="text", author="user", fields=(FieldSpec("colour", "categorical", "sensitive"),))
    return Dataset("copies", frame, schema, external, source="tests")


def test_verbatim_intruder_texts_counts_copies_after_whitespace_normalization():
    d = copies_dataset(["Great product, would buy   again ", "terrible fit", "Terrible\tfit", "new text", ""])
    # Copies: the first (whitespace differs) and the third (a tab for the space); not the lower-cased one, not
    # a new text, not the empty one.
    assert verbatim_intruder_texts(d) == (2, 5)
    assert count_verbatim(["a  b", "c"], ["a b"]) == (1, 2)
    assert count_verbatim([], ["a"]) == (0, 0)
    message = verbatim_warning(d)
    assert message is not None and "2 of the intruder's 5 external texts (40%)" in message
    assert "text protection" in message


def test_no_warning_below_the_share_or_without_external_texts(tiny_dataset):
    d = copies_dataset(["Terrible fit", *[f"new text {i}" for i in range(9)]])
    assert verbatim_intruder_texts(d) == (1, 10)
    assert verbatim_warning(d) is None  # 10% is not more than 10%
    assert verbatim_warning(d, share=0.05) is not None
    assert verbatim_intruder_texts(tiny_dataset) == (0, 6)
    bare = Dataset("bare", tiny_dataset.frame, tiny_dataset.schema, None, source="tests")
    assert verbatim_intruder_texts(bare) == (0, 0) and verbatim_warning(bare) is None


def test_the_data_page_warns_when_the_intruder_holds_copies(tmp_path, monkeypatch):
    d = copies_dataset(["Great product, would buy again", "Terrible fit", "new text"])
    d.frame.to_csv(tmp_path / "copies.csv", index=False)
    d.external.to_csv(tmp_path / "external.csv", index=False)
    (tmp_path / "copies.schema.toml").write_text(
        'text = "text"\nauthor = "user"\n\n[fields.colour]\nkind = "categorical"\nrole = "sensitive"\n\n'
        '[external]\nfile = "external.csv"\n'
    )
    app = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
    monkeypatch.setattr("sys.argv", ["app.py", "--data", str(tmp_path / "copies.csv")])
    at = AppTest.from_file(str(app), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = [w.value for w in at.warning]
    assert any("2 of the intruder's 3 external texts" in w for w in warnings), warnings
