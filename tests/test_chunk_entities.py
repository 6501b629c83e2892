"""The chunks' named entities by category (Greve & Sablica, Section 3.1), found by spaCy's English model."""

from __future__ import annotations

import pytest

from engine.protect.swap.entities import chunk_entities

CHUNKS = [
    "Microsoft reported revenue of $5 billion in March, said Satya Nadella in Seattle.",
    "Thank you, operator. Good morning, everyone.",
    "Sales in Germany and in Germany again grew.",
]


def test_entities_of_each_chunk_by_category_with_offsets():
    found = chunk_entities(CHUNKS)
    first = found.values.loc[0]
    assert first["organization"] == ("Microsoft",)
    assert first["person"] == ("Satya Nadella",)
    assert first["location"] == ("Seattle",)
    assert first["money"] == ("$5 billion",)
    assert first["date"] == ("March",)
    assert all(v == () for v in found.values.loc[1])  # nothing to swap in a greeting
    assert found.values.loc[2, "location"] == ("Germany",)  # distinct entities; both mentions kept
    germany = found.mentions[found.mentions["chunk"] == 2]
    assert len(germany) == 2
    for _, m in found.mentions.iterrows():
        assert CHUNKS[m["chunk"]][m["start"] : m["end"]] == m["text"]


def test_categories_can_be_chosen():
    found = chunk_entities(CHUNKS[:1], {"company": ["ORG"], "place": ["GPE", "LOC"]})
    assert list(found.values.columns) == ["company", "place"]
    assert found.values.loc[0].tolist() == [("Microsoft",), ("Seattle",)]
    with pytest.raises(ValueError, match="no entity category"):
        chunk_entities(CHUNKS, {})
