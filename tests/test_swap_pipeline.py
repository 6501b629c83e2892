"""The swap's steps composed on the earnings-calls demo (Greve & Sablica, Sections 2–3): nothing changes at
r = 0 (DR = DU = 1), a swap at r > 0 rewrites both chunks of a pair with each other's entities and lowers DR,
the ticker is gone from every chunk, and a seed fixes the release."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from engine.data.demos import DEMOS_DIR
from engine.protect.swap.pipeline import prepare, release

ROLES = {"organization": "S", "date": "S", "location": "U", "money": "F", "event": "C"}


@pytest.fixture(scope="module")
def prepared():
    data = pd.read_csv(DEMOS_DIR / "earnings-calls" / "data.csv").head(200)
    identifiers = {doc: {"Company Name": [ticker]} for doc, ticker in zip(data["call_id"], data["ticker"])}
    return data, prepare(data["text"].tolist(), data["call_id"].tolist(), ROLES, identifiers, clusters=4)


def test_nothing_changes_at_rate_zero(prepared):
    _, p = prepared
    r = release(p, 0.0, np.random.default_rng(0))
    assert r.swap.pairs == [] and r.risk.value == 1.0 and r.utility.value == 1.0
    assert r.chunks == p.reference
    events = p.entities.mentions.query("category == 'event'")
    assert len(events)  # C ("must change") is suppressed in the pre-swap data: each mention became "[Event]",
    for k, found in events.groupby("chunk"):  # and so did the same names where the recognizer missed them
        assert p.reference[k].count("[Event]") >= len(found) and p.chunks[k].count("[Event]") == 0
        for name in set(found["text"]):
            assert not re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", p.reference[k]), (k, name)


def test_a_swap_rewrites_both_chunks_and_lowers_the_risk(prepared):
    data, p = prepared
    assert not any(f" {t} " in f" {c} " for t, c in zip(data["ticker"], p.chunks))  # direct identifiers gone
    r = release(p, 0.2, np.random.default_rng(0))
    assert r.swap.pairs and r.risk.value < 1.0 and 0.0 <= r.utility.value <= 1.0
    values = p.entities.values
    for i, j in r.swap.pairs:
        assert p.documents[i] != p.documents[j]
        for a, b in ((i, j), (j, i)):
            now = r.mentions[a].query("category == 'organization'")
            assert len(now) and set(now["text"]) <= set(values.at[b, "organization"])  # the partner's now
            assert all(r.chunks[a][m.start : m.end] == m.text for m in now.itertuples())
    again = release(p, 0.2, np.random.default_rng(0))
    assert again.chunks == r.chunks and again.swap.pairs == r.swap.pairs
