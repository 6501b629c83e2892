"""The stylometric author attack (Burrows' Delta on a declared background corpus): Delta as Burrows defines it on
hand-computed values; well above chance on authors who differ in function-word habits but share their topics,
near chance where their styles are the same; not measured, with a reason, without a background or a shared
author. Every corpus here is made by hand; the figures on the 50-author tweets are the benchmark's
(`benchmarks/results_stylometric_attack.json`), not a test's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import Schema
from engine.measures.base import metric_info
from engine.measures.evaluate import Evaluator
from engine.measures.settings import MeasureSettings
from engine.text.delta import DeltaProfiles, StyleCounts, function_vocabulary, words_of

ID = "stylometric_author_attack"
TOPIC = "flight delay crew seat airport bag gate ticket refund plane weather pilot runway lounge boarding".split()
HABITS = "however indeed thus rather quite perhaps although whereas moreover therefore".split()
COMMON = "the a of to and in".split()


def text(rng: np.random.Generator, habits: np.ndarray) -> str:
    """Thirty words: eighteen topic words everyone uses, six common function words, six of the author's habits."""
    words = [
        *rng.choice(TOPIC, size=18),
        *rng.choice(COMMON, size=6),
        *rng.choice(HABITS, size=6, p=habits),
    ]
    rng.shuffle(words)
    return " ".join(words)


def corpus(tmp_path: Path, same_style: bool, authors: int = 10, records: int = 6, seed: int = 0) -> tuple:
    """The data (``records`` texts per author) and a background (ten other texts per author) as a CSV file. Each
    author favours two of the habit words (or, ``same_style``, every author draws them alike)."""
    rng = np.random.default_rng(seed)
    habits = []
    for k in range(authors):
        p = np.full(len(HABITS), 0.2 / (len(HABITS) - 2))
        if not same_style:
            p[k % len(HABITS)] = p[(3 * k + 1) % len(HABITS)] = 0.4
        else:
            p = np.full(len(HABITS), 1 / len(HABITS))
        habits.append(p / p.sum())
    data = [{"text": text(rng, habits[k]), "author": f"u{k}"} for k in range(authors) for _ in range(records)]
    background = [{"text": text(rng, habits[k]), "author": f"u{k}"} for k in range(authors) for _ in range(10)]
    path = tmp_path / "background.csv"
    pd.DataFrame(background).to_csv(path, index=False)
    dataset = Dataset("posts", pd.DataFrame(data), Schema(text="text", author="author"), source="tests")
    return dataset, path


def test_delta_is_the_mean_absolute_difference_of_z_scores():
    profiles = DeltaProfiles(
        vocabulary=("the",),
        labels=np.array(["A", "B"], dtype=object),
        keep=np.array([True, True]),
        mean=np.array([0.1, 0.2]),
        std=np.array([0.05, 0.1]),
        z=np.array([[1.0, -1.0], [-1.0, 1.0]]),
    )
    # frequencies 0.15 and 0.1 per word: z = (0.15 − 0.1) / 0.05 = 1 and (0.1 − 0.2) / 0.1 = −1, A's profile
    counts = StyleCounts(("f1", "f2"), np.array([[3.0, 2.0], [1.0, 5.0]]), np.array([20.0, 10.0]))
    # the second text: 0.1 and 0.5 per word, z = 0 and 3: Delta to A (1 + 4) / 2 = 2.5, to B (1 + 2) / 2 = 1.5
    assert profiles.delta(counts) == pytest.approx(np.array([[0.0, 2.0], [2.5, 1.5]]))
    assert profiles.scores.__doc__ and profiles.chance == 0.5


def test_the_profiles_count_function_words_marks_and_word_lengths():
    assert words_of("The cat's   HAT, don't!") == ["the", "cat's", "hat", "don't"]
    assert function_vocabulary(["the cat and the hat", "of the mat and"]) == ("the", "and", "of")  # ties by name
    texts = ["the cat and the hat.", "of the mat, and the bat", "we the many", "we of the few!"]
    profiles = DeltaProfiles.train(texts, np.array(["A", "A", "B", "B"], dtype=object))
    # the ×4, and, of, we ×2, few, many ×1 ("cat", "hat", "mat", "bat" are no function words): by count, then name
    assert profiles.vocabulary == ("the", "and", "of", "we", "few", "many")
    counts = profiles.counts(["the cat and the hat."])
    by_name = dict(zip(counts.names, counts.counts[0], strict=True))
    assert (by_name["word:the"], by_name["word:and"], by_name["mark:."], by_name["length:3"]) == (2, 1, 1, 5)
    assert counts.words[0] == 5
    # two authors: each kept feature's z-scores are ±1/√2 (the sample deviation of two values), opposite
    assert np.allclose(np.abs(profiles.z), 1 / np.sqrt(2)) and np.allclose(profiles.z.sum(axis=0), 0)
    with pytest.raises(ValueError, match="at least two authors"):
        DeltaProfiles.train(["the cat"], np.array(["A"], dtype=object))


def test_authors_who_differ_in_function_words_but_share_topics_are_named_well_above_chance(tmp_path):
    data, background = corpus(tmp_path, same_style=False)
    ev = Evaluator(data, [ID], options=MeasureSettings(background=str(background)))
    assert not ev.skipped, ev.skipped
    pooled = ev.evaluate(data.frame)[ID]  # each author's six texts pooled: ten authors to name
    assert pooled.chance == pytest.approx(0.1)
    assert pooled.detail is not None and pooled.detail["unit"].iloc[0] == "authors"
    # 180 words an author are short for Delta (Burrows read thousands), yet 7 of 10 are named against 1 by chance
    assert pooled.detail["attacked"].iloc[0] == 10 and pooled.value >= 0.6 and pooled.lo > 0.3
    records = ev.evaluate(data.frame.drop(columns="author"))[ID]  # the author column withheld: record by record
    assert records.detail is not None and records.detail["unit"].iloc[0] == "records"
    assert records.detail["attacked"].iloc[0] == 60 and records.value >= 0.4 and records.lo > 0.3
    assert records.lo <= records.value <= records.hi
    # topic words alone (the habits replaced by one word everyone uses) leave her guessing
    plain = data.frame.assign(text=data.frame["text"].str.replace("|".join(HABITS), "also", regex=True))
    topical = ev.evaluate(plain.drop(columns="author"))[ID]
    assert topical.value <= 0.2 and topical.lo <= 0.1


def test_authors_of_one_style_are_named_near_chance(tmp_path):
    data, background = corpus(tmp_path, same_style=True, authors=10, records=20)
    ev = Evaluator(data, [ID], options=MeasureSettings(background=str(background)))
    result = ev.evaluate(data.frame.drop(columns="author"))[ID]
    assert result.chance == pytest.approx(0.1) and result.detail["attacked"].iloc[0] == 200
    assert result.value <= 0.2 and result.lo <= 0.1 <= result.hi  # chance lies in her interval


def test_not_measured_without_a_background_or_a_shared_author(tmp_path):
    data, background = corpus(tmp_path, same_style=False)
    assert Evaluator(data, [ID]).skipped[ID] == "no background corpus declared (--background, or the Data page)"
    other = pd.read_csv(background).assign(author=lambda f: "x" + f["author"])
    other.to_csv(background, index=False)
    ev = Evaluator(data, [ID], options=MeasureSettings(background=str(background)))
    assert ev.skipped[ID] == "the background corpus has no author in its column 'author' in common with the data"
    info = metric_info(ID)
    assert info.attack is not None and info.attack.names == "author" and info.attack.baseline == "chance"
    assert "Burrows" in info.source and "function words" in info.meaning


def test_the_committed_figure_on_fifty_authors_is_the_one_the_docs_show():
    """The committed benchmark (benchmarks/results_stylometric_attack.json) is the figure docs/measures.md shows."""
    root = Path(__file__).resolve().parents[1]
    result = json.loads((root / "benchmarks" / "results_stylometric_attack.json").read_text(encoding="utf-8"))
    docs = (root / "docs" / "measures.md").read_text(encoding="utf-8")
    for unit in ("pooled", "records", "svm_records"):
        r = result[unit]
        assert f"{r['value']:.3f} [{r['lo']:.3f}–{r['hi']:.3f}]" in docs, unit
        assert r["chance"] == pytest.approx(1 / result["authors"])
