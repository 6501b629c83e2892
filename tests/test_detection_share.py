"""Residual detection risk (issue 50): the share of a gold set's spans a detector finds, its Wilson interval, what
each method that depends on detection states with its releases, and what the manifest records."""

from __future__ import annotations

import numpy as np
import pytest

from engine.protect import get_protector
from engine.protect.detection import DetectionShare
from engine.record.manifest import detection_from_manifest, detection_manifest
from engine.text.detection_quality import GoldDocument, word_tokens
from engine.text.detection_share import Found, pooled, spans_found, wilson_interval


def doc(text: str, spans: list[tuple[str, str]]) -> GoldDocument:
    out, at = [], 0
    for piece, label in spans:
        start = text.index(piece, at)
        out.append((start, start + len(piece), label))
        at = start + len(piece)
    return GoldDocument(text, tuple(out), word_tokens(text))


def test_wilson_interval_of_three_in_four_is_the_hand_computed_one():
    # p = 0.75, n = 4, z = 1.96: (0.75 + z²/8 ∓ z·√(0.75·0.25/4 + z²/64)) / (1 + z²/4)
    lo, hi = wilson_interval(3, 4)
    assert lo == pytest.approx(0.3006, abs=1e-4) and hi == pytest.approx(0.9544, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)  # 3.84 / 13.84
    lo_small, hi_small = wilson_interval(30, 40)
    assert hi_small - lo_small < hi - lo  # more items, a narrower interval
    with pytest.raises(ValueError, match="found ≤ total"):
        wilson_interval(5, 4)


def test_three_of_four_gold_spans_found_is_0_75_a_part_or_a_wrong_label_is_missed():
    gold = [
        doc("Alice Moore lives in Leeds", [("Alice Moore", "NAME"), ("Leeds", "PLACE")]),
        doc("call Bob at home in York", [("Bob", "NAME"), ("York", "PLACE")]),
        doc("nothing here", []),
    ]
    detected = [
        [(0, 11, "PER"), (21, 26, "LOC")],  # both found
        [(5, 8, "PER"), (20, 24, "ORG")],  # Bob found; York found under a label that does not stand for places
        [(0, 7, "PER")],  # a needless find changes no recall
    ]
    accept = {"NAME": {"PER"}, "PLACE": {"LOC"}}
    counts = spans_found(gold, detected, ["NAME", "PLACE"], accept)
    assert counts == {"NAME": Found(2, 2), "PLACE": Found(1, 2)}
    assert pooled(counts) == Found(3, 4) and pooled(counts).share == 0.75
    anything = spans_found(gold, detected, ["NAME", "PLACE"])  # redaction: any placeholder hides the span
    assert anything["PLACE"] == Found(2, 2)
    part = [[(0, 5, "PER"), (21, 26, "LOC")], [], []]  # "Alice" without "Moore": the surname stays in clear
    assert spans_found(gold, part, ["NAME"], accept)["NAME"] == Found(0, 2)
    with pytest.raises(ValueError, match="one list of detected spans per gold document"):
        spans_found(gold, detected[:2], ["NAME"])


def test_the_statement_says_the_share_its_interval_the_gold_and_what_is_not_measured():
    share = DetectionShare(
        detector="the tagger",
        what="quasi-identifiers (age, place)",
        gold="4 posts of a hand-made gold",
        found=3,
        total=4,
        parts=(("age", 2, 2), ("place", 1, 2)),
        guarantee="k ≥ 5 over the attributes found",
        unmeasured=("occupations",),
    )
    said = share.describe()
    assert said.startswith("k ≥ 5 over the attributes found; the tagger finds an estimated 75% [30–95%] of ")
    assert "3 of 4 in 4 posts of a hand-made gold" in said
    assert "fewest found: place, 50% of 2" in said and said.endswith("not measured: no gold for occupations.")
    assert share.facts() == (("Residual detection risk", said),)
    nothing = DetectionShare("the entity recognizer", "organizations, events", "", 0, 0)
    assert not nothing.measured and nothing.describe() == "not measured: no gold for organizations, events."
    # the manifest records the counts with what they give, and reads them back
    entry = detection_manifest(share)
    assert entry["share"] == 0.75 and entry["lo"] == pytest.approx(0.3006, abs=1e-4) and entry["statement"] == said
    assert detection_from_manifest(entry) == share
    assert detection_manifest(nothing)["share"] is None


def test_kanon_states_what_its_tagger_finds_on_held_out_gold_with_its_k(monkeypatch):
    from engine.protect.kanon import method
    from engine.protect.kanon.found import tagger_found

    posts, counts = tagger_found()
    assert posts == 192  # the 30% of 640 posts the tagger of the held-out split was not trained on
    shares = method.detection_shares()
    qi = shares[0]
    labels = ("QIAGE", "QIRACE", "QIREGION", "QIGENDER", "QILANG", "QIJOB")
    assert (qi.found, qi.total) == (sum(counts[x].found for x in labels), sum(counts[x].total for x in labels))
    assert 0 < qi.found < qi.total and (shares[1].found, shares[1].total) == (counts["DI"].found, counts["DI"].total)
    assert "192 held-out posts" in qi.describe()


@pytest.mark.slow
def test_the_shipped_held_out_counts_are_what_the_gold_and_tagger_give():
    import json

    from engine.protect.kanon.found import FOUND_FILE, held_out_found
    from engine.protect.kanon.tagger import SHIPPED, gold_texts, training_digest, training_items

    ids, texts, spans = gold_texts()
    items = training_items(texts, spans)
    saved = json.loads((SHIPPED / FOUND_FILE).read_text(encoding="utf-8"))
    assert saved["training_digest"] == training_digest(items), "run scripts/train_tagger.py and commit its output"
    posts, counts = held_out_found(items, ids, texts)
    assert saved["posts"] == posts and saved["found"] == {k: [c.found, c.total] for k, c in counts.items()}


def test_redaction_states_what_its_level_finds_of_the_shipped_gold(tiny_dataset):
    fitted = get_protector("redact", use_ner=False).fit(tiny_dataset)
    assert fitted.release(0, np.random.default_rng(0)).detail(DetectionShare) is None  # nothing is replaced
    one = fitted.release(1, np.random.default_rng(0))
    shares = [d for d in one.details if isinstance(d, DetectionShare)]
    assert [d.what.split(" (")[0] for d in shares] == ["direct identifiers"]
    assert shares[0].total > 0 and 0 < shares[0].found < shares[0].total  # handles, not names, without spaCy
    assert "URLs" in shares[0].unmeasured
    three = [d for d in fitted.release(3, None).details if isinstance(d, DetectionShare)]
    assert [d.what for d in three][1] == "places" and three[0].found >= shares[0].found
    assert "Residual detection risk" in dict(one.facts())


def test_the_swap_says_no_gold_annotates_organizations():
    from engine.protect.swap.entities import detection_shares

    (share,) = detection_shares(["organization", "event"], {})
    assert share.describe() == "not measured: no gold for organizations, events."
    measured = detection_shares(["organization", "person"], {"person": Found(3, 4)})
    assert measured[0].what == "people's names" and measured[0].unmeasured == ("organizations",)
