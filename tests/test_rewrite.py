"""Rewriting a chunk after a swap: every mention of a swapped entity takes the partner's, suppressed ones become
placeholders, other text and categories stay, and the new offsets point at the new entities."""

from __future__ import annotations

import pandas as pd

from engine.protect.swap.rewrite import rewrite_chunk

TEXT = "Acme Corp met Jane Doe in Boston. Acme Corp said Boston grew; Jane Doe agreed in May."


def mentions_of(text: str, found: list[tuple[str, str]]) -> pd.DataFrame:
    rows, at = [], 0
    for category, entity in found:
        start = text.index(entity, at)
        rows.append((start, start + len(entity), category, entity))
        at = start + len(entity)
    return pd.DataFrame(rows, columns=["start", "end", "category", "text"])


def test_every_mention_takes_the_partners_entity_and_offsets_follow():
    found = [
        ("organization", "Acme Corp"),
        ("person", "Jane Doe"),
        ("location", "Boston"),
        ("organization", "Acme Corp"),
        ("location", "Boston"),
        ("person", "Jane Doe"),
        ("date", "May"),
    ]
    mentions = mentions_of(TEXT, found)
    before = {"organization": ("Acme Corp",), "person": ("Jane Doe",), "location": ("Boston",), "date": ("May",)}
    after = {"organization": ("Globex Incorporated",), "location": ("Austin",), "person": ()}
    text, new = rewrite_chunk(TEXT, mentions, before, after)
    assert text == (
        "Globex Incorporated met [Person] in Austin. Globex Incorporated said Austin grew; [Person] agreed in May."
    )
    for _, m in new.iterrows():
        assert text[m["start"] : m["end"]] == m["text"]
    assert new["original"].tolist() == [e for _, e in found]
    assert "Acme" not in text and "Jane" not in text and "Boston" not in text


def test_unchanged_values_leave_the_text_as_it_was():
    mentions = mentions_of(TEXT, [("organization", "Acme Corp"), ("person", "Jane Doe")])
    before = {"organization": ("Acme Corp",), "person": ("Jane Doe",)}
    text, new = rewrite_chunk(TEXT, mentions, before, before)
    assert text == TEXT and (new["text"] == new["original"]).all()
