"""scripts/train_ner.py: WNUT-17's types become the small model's labels, the original model's dates and numbers
are kept where the gold says nothing (pseudo-rehearsal), and training is the same under the same seed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CONLL = """I\tO
met\tO
John\tB-person
Smith\tI-person
in\tO
Paris\tB-location
on\tO
5\tO
May\tO
2020\tO
.\tO

Bought\tO
a\tO
Pixel\tB-product
from\tO
Google\tB-corporation
yesterday\tO

watching\tO
Star\tB-creative-work
Wars\tI-creative-work
with\tO
the\tO
Lakers\tB-group
"""


@pytest.fixture(scope="module")
def train_ner():
    spec = importlib.util.spec_from_file_location("train_ner", ROOT / "scripts" / "train_ner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gold_types_map_to_spacy_labels_and_the_models_dates_are_rehearsed(train_ner, tmp_path):
    import spacy

    from engine.text.entities import SPACY_MODEL

    source = tmp_path / "tiny.conll"
    source.write_text(CONLL, encoding="utf-8")
    nlp = spacy.load(SPACY_MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"])
    examples, lost = train_ner.training_examples(nlp, source)
    assert lost == 0 and len(examples) == 3
    first = {(e.text, e.label_) for e in examples[0].reference.ents}
    assert {("John Smith", "PERSON"), ("Paris", "GPE")} <= first
    assert ("5 May 2020", "DATE") in first  # not in the gold: the original model's date, kept
    assert {(e.text, e.label_) for e in examples[1].reference.ents} >= {("Pixel", "PRODUCT"), ("Google", "ORG")}
    assert {(e.text, e.label_) for e in examples[2].reference.ents} >= {
        ("Star Wars", "WORK_OF_ART"),
        ("Lakers", "ORG"),
    }


def test_training_is_the_same_under_the_same_seed(train_ner, tmp_path):
    source = tmp_path / "tiny.conll"
    source.write_text(CONLL, encoding="utf-8")
    done = [train_ner.train(tmp_path / f"run{i}", epochs=2, seed=0, source=source) for i in range(2)]
    assert done[0]["posts"] == 3 and done[0]["epochs"] == 2
    first, second = ((tmp_path / f"run{i}" / "ner" / "model").read_bytes() for i in range(2))
    assert first == second
