"""The privacy-attribute gold sets (issue 14; the cross-source one, issue 51): span offsets, token labels and
Cohen's κ on hand cases, and the shipped files checked against each other (and against their source when
../shared/data is present)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from engine.errors import DataError
from engine.protect.kanon.gold import (
    CROSS_GOLD_DIR,
    GOLD_DIR,
    LABELS,
    agreement,
    cohen_kappa,
    gold_set,
    read_posts,
    read_spans,
    resolve,
    span_problems,
    token_labels,
    tokens,
)
from tests.conftest import SHARED_DATA, needs_shared_files

ROOT = Path(__file__).resolve().parent.parent


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


def test_span_problems_name_what_is_wrong():
    text = "Kenny's wife lives in LA-ish Texas"
    sound = [[0, 5, "DI", "Kenny"], [8, 12, "SA", "wife"], [22, 24, "QIREGION", "LA"], [29, 34, "QIREGION", "Texas"]]
    assert span_problems(text, sound) == []  # a name before 's and a place before -ish are whole enough
    assert span_problems(text, [[0, 4, "DI", "Kenn"]]) == ["'Kenn' at 0–4: cuts a word"]
    assert span_problems(text, [[8, 12, "SA", "life"]]) == ["'life' at 8–12: the post has 'wife' there"]
    assert span_problems(text, [[8, 12, "WIFE", "wife"]])[0].endswith("the labels are " + ", ".join(LABELS))
    out_of_order = span_problems(text, [[8, 12, "SA", "wife"], [0, 5, "DI", "Kenny"]])
    assert out_of_order == ["'Kenny' at 0–5: before or inside the span before it (which ends at 12)"]
    assert span_problems(text, [[30, 99, "DI", "x"]]) == ["'x' at 30–99: outside the post's 34 characters"]


def test_gold_sets_are_read_by_name_through_one_loader():
    assert gold_set().folder == GOLD_DIR and gold_set("cross-source").folder == CROSS_GOLD_DIR
    with pytest.raises(DataError, match="no gold set 'cross'; the gold sets are in-split, cross-source"):
        gold_set("cross")


def test_the_shipped_cross_source_gold_set_is_whole_and_consistent():
    cross = gold_set("cross-source")
    posts = cross.posts
    assert len(posts) == 200
    kinds = [p.kind for p in posts.values()]
    assert kinds.count("wnut17") == 100 and kinds.count("airline-tweet") == 100
    assert set(cross.first) == set(posts)
    assert len(cross.second) >= 60 and set(cross.second) <= set(posts)
    assert not {p.text for p in posts.values()} & {p.text for p in read_posts().values()}  # no post of the own set
    for name in ("annotations.jsonl", "second_pass.jsonl"):  # offsets exact, labels known, whole words, in order
        for line in (CROSS_GOLD_DIR / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            assert span_problems(posts[row["id"]].text, row["spans"]) == [], (name, row["id"])
    used = {label for spans in cross.first.values() for _, _, label in spans}
    assert used == set(LABELS)
    # agreement.json is what the shipped passes give, and the spans it counts are the first pass's
    stored = json.loads((CROSS_GOLD_DIR / "agreement.json").read_text(encoding="utf-8"))
    kappa = agreement(posts, cross.first, cross.second)
    assert stored["token_kappa"] == {k: round(v, 3) for k, v in kappa.items()}
    assert stored["posts"] == len(posts) and stored["second_pass_posts"] == len(cross.second)
    assert sum(stored["spans_per_label"].values()) == sum(len(s) for s in cross.first.values())
    assert {"all", "DI", "QIREGION"} < set(kappa) and all(-1.0 <= v <= 1.0 for v in kappa.values())


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wnut_tokens_are_joined_back_by_the_stated_rule():
    detokenize = _script("make_cross_gold_sample").detokenize
    assert detokenize(["That", "´", "s", "insane", "and", "good", "."]) == "That´s insane and good."
    assert (
        detokenize(["I", "do", "n", "'", "t", "see", "(", "really", ")", "#", "bots", "!!"])
        == "I don't see (really) #bots!!"
    )
    assert detokenize(["a", "'", "quote", "'", "s"]) == "a ' quote's"


def test_make_gold_sample_reproduces_the_shipped_posts(tmp_path):
    script = _script("make_gold_sample")
    needs_shared_files(script.SOURCE)
    script.main(["--data", str(SHARED_DATA), "--out", str(tmp_path)])
    assert (tmp_path / "posts.jsonl").read_bytes() == (GOLD_DIR / "posts.jsonl").read_bytes()


def test_make_cross_gold_sample_reproduces_the_shipped_posts(tmp_path):
    script = _script("make_cross_gold_sample")
    needs_shared_files(script.WNUT, script.AIRLINE)
    script.main(["--data", str(SHARED_DATA), "--out", str(tmp_path)])
    assert (tmp_path / "posts.jsonl").read_bytes() == (CROSS_GOLD_DIR / "posts.jsonl").read_bytes()
