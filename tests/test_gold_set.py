"""The privacy-attribute gold set (issue 14): span offsets, token labels and Cohen's κ on hand cases, and the
shipped files checked against each other (and against their source when ../shared/data is present)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from engine.errors import DataError
from engine.protect.kanon.gold import (
    GOLD_DIR,
    LABELS,
    agreement,
    cohen_kappa,
    read_posts,
    read_spans,
    resolve,
    token_labels,
    tokens,
)

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"


def test_spans_are_found_in_order_and_repeated_words_take_the_next_occurrence():
    text = "My mom is a nurse; her mom was a nurse too"
    spans = resolve(text, [["mom", "QIGENDER"], ["nurse", "QIJOB"], ["mom", "QIGENDER"], ["nurse", "QIJOB"]])
    assert spans == [(3, 6, "QIGENDER"), (12, 17, "QIJOB"), (23, 26, "QIGENDER"), (33, 38, "QIJOB")]
    with pytest.raises(DataError, match="'doctor' is not in the post"):
        resolve(text, [["doctor", "QIJOB"]], "p1")
    with pytest.raises(DataError, match="unknown label 'JOB'"):
        resolve(text, [["nurse", "JOB"]], "p1")


def test_tokens_keep_hashtags_handles_and_pronoun_sets_whole():
    text = "#Photographer, she/her @Ann_B 25yo!"
    assert [text[s:e] for s, e in tokens(text)] == ["#Photographer", ",", "she/her", "@Ann_B", "25yo", "!"]
    assert token_labels(text, [(0, 13, "QIJOB"), (23, 29, "DI")]) == ["QIJOB", "NONE", "NONE", "DI", "NONE", "NONE"]


def test_cohen_kappa_on_a_hand_computed_table():
    # 10 items: both say A on 4, both B on 3, a=A b=B on 2, a=B b=A on 1 → p_o = 0.7;
    # p_e = 0.6·0.5 + 0.4·0.5 = 0.5 → κ = (0.7 − 0.5) / 0.5 = 0.4.
    a = ["A"] * 4 + ["B"] * 3 + ["A"] * 2 + ["B"]
    b = ["A"] * 4 + ["B"] * 3 + ["B"] * 2 + ["A"]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["A", "A"], ["A", "A"]) == 1.0


def test_the_shipped_gold_set_is_whole_and_consistent():
    posts = read_posts()
    assert len(posts) >= 600
    assert {p.kind for p in posts.values()} == {"description", "tweet"}
    first = read_spans(GOLD_DIR / "annotations.jsonl", posts)
    second = read_spans(GOLD_DIR / "second_pass.jsonl", posts)
    assert set(first) == set(posts)
    assert len(second) >= len(posts) // 5 and set(second) <= set(posts)
    used = {label for spans in first.values() for _, _, label in spans}
    assert used == set(LABELS)
    kappa = agreement(posts, first, second)
    assert {"all"} < set(kappa) <= {"all", *LABELS}
    assert all(-1.0 <= v <= 1.0 for v in kappa.values())


def test_make_gold_sample_reproduces_the_shipped_posts(tmp_path):
    if not (SHARED_DATA / "SOURCES.md").is_file():
        pytest.skip(f"the raw data folder {SHARED_DATA} is absent (it is not part of the repository)")
    spec = importlib.util.spec_from_file_location("make_gold_sample", ROOT / "scripts" / "make_gold_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--data", str(SHARED_DATA), "--out", str(tmp_path)])
    assert (tmp_path / "posts.jsonl").read_bytes() == (GOLD_DIR / "posts.jsonl").read_bytes()
