"""Rewriting a chunk after a swap: every mention of a swapped entity takes the partner's, suppressed ones become
placeholders, other text and categories stay, and the new offsets point at the new entities."""

from __future__ import annotations

from engine.protect.swap.edits import apply
from engine.protect.swap.rewrite import rewritten

TEXT = "Acme Corp met Jane Doe in Boston. Acme Corp said Boston grew; Jane Doe agreed in May."


def mentions_of(text: str, found: list[tuple[str, str]]) -> list[tuple[int, int, str, str]]:
    rows, at = [], 0
    for category, entity in found:
        start = text.index(entity, at)
        rows.append((start, start + len(entity), category, entity))
        at = start + len(entity)
    return rows


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
    text, edits, new = rewritten(TEXT, mentions, before, after, source="B")
    assert text == (
        "Globex Incorporated met [Person] in Austin. Globex Incorporated said Austin grew; [Person] agreed in May."
    )
    for start, end, _, entity, _ in new:
        assert text[start:end] == entity
    assert [m[4] for m in new] == [e for _, e in found]
    assert apply(TEXT, edits) == text and len(edits) == 6  # May (F) stays
    assert [label for *_, label in edits][:2] == ["organization swapped in from document B", "suppressed [Person]"]
    assert "Acme" not in text and "Jane" not in text and "Boston" not in text


def test_unchanged_values_leave_the_text_as_it_was():
    mentions = mentions_of(TEXT, [("organization", "Acme Corp"), ("person", "Jane Doe")])
    before = {"organization": ("Acme Corp",), "person": ("Jane Doe",)}
    text, edits, new = rewritten(TEXT, mentions, before, before)
    assert text == TEXT and edits == [] and all(m[3] == m[4] for m in new)
