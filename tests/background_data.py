"""A hand-made corpus with a background (for the background attacks' tests): four companies, each with two
calls of five passages in the data and ten passages of another quarter in the background. A company's passages
carry two of its own words among common ones, so an intruder who read the background names most passages
before protection, and guesses (chance 1/4) once the companies' words are redacted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema

OWN_WORDS = {
    "AAA": ["turbine", "megawatt", "offshore", "blade"],
    "BBB": ["pharmacy", "vaccine", "clinical", "dosage"],
    "CCC": ["freight", "railcar", "locomotive", "tonnage"],
    "DDD": ["mortgage", "deposit", "lending", "branch"],
}
COMMON = "we our the quarter growth revenue strong margin year results customers expect guidance team".split()


def passage(rng: np.random.Generator, ticker: str) -> str:
    words = list(rng.choice(COMMON, size=10)) + list(rng.choice(OWN_WORDS[ticker], size=2, replace=False))
    rng.shuffle(words)
    return " ".join(words)


def background_dataset(seed: int = 0) -> Dataset:
    """The data: 4 companies × 2 calls × 5 passages; ``call_id`` is the document, ``ticker`` its metadata."""
    rng = np.random.default_rng(seed)
    rows = [
        {"text": passage(rng, t), "call_id": f"{t}_q3_{c}", "chunk": k + 1, "ticker": t}
        for t in OWN_WORDS
        for c in range(2)
        for k in range(5)
    ]
    schema = Schema(
        text="text",
        document="call_id",
        fields=(FieldSpec("chunk", "count", "other"), FieldSpec("ticker", "categorical", "sensitive")),
    )
    return Dataset("calls", pd.DataFrame(rows), schema, source="tests")


def background_file(folder: Path, seed: int = 1) -> Path:
    """The background corpus as a CSV in ``folder``: 10 passages of each company, another quarter's."""
    rng = np.random.default_rng(seed)
    rows = [{"text": passage(rng, t), "call_id": f"{t}_q1", "ticker": t} for t in OWN_WORDS for _ in range(10)]
    path = folder / "background.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def redacted(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every company's own words replaced by a placeholder."""
    own = {w for words in OWN_WORDS.values() for w in words}
    out = frame.copy()
    out["text"] = [" ".join("[REDACTED]" if w in own else w for w in t.split()) for t in out["text"]]
    return out


PARTNERS = {"AAA": "Siemens", "BBB": "Pfizer", "CCC": "Union Pacific", "DDD": "Wells Fargo"}
"""Each company's one partner organization: the only thing a swap of organizations exchanges."""
MONTHS = ["January", "March", "May", "July", "September", "November"]


def partner_passage(rng: np.random.Generator, ticker: str, own_words: bool) -> str:
    """A passage naming the company's partner (an organization the swap exchanges) in a month (a date it keeps);
    with ``own_words``, two of the company's own words that no swap touches."""
    words = " ".join(rng.choice(COMMON, size=8))
    extra = " " + " ".join(rng.choice(OWN_WORDS[ticker], size=2, replace=False)) if own_words else ""
    return f"In {rng.choice(MONTHS)} we signed a contract with {PARTNERS[ticker]}. We reported {words}{extra}."


def partner_dataset(own_words: bool, seed: int) -> Dataset:
    """4 companies × 2 calls of 5 passages each in one text (one row per call, ``call_id`` the document): for
    the swap and the background intruder."""
    rng = np.random.default_rng(seed)
    rows = [
        {
            "text": " ".join(partner_passage(rng, t, own_words) for _ in range(5)),
            "call_id": f"{t}_q3_{c}",
            "ticker": t,
        }
        for t in PARTNERS
        for c in range(2)
    ]
    schema = Schema(text="text", document="call_id", fields=(FieldSpec("ticker", "categorical", "sensitive"),))
    return Dataset("calls", pd.DataFrame(rows), schema, source="tests")


def partner_background(folder: Path, own_words: bool, seed: int = 1) -> Path:
    """The background of ``partner_dataset``: 10 passages of each company, another quarter's."""
    rng = np.random.default_rng(seed)
    rows = [
        {"text": partner_passage(rng, t, own_words), "call_id": f"{t}_q1", "ticker": t}
        for t in PARTNERS
        for _ in range(10)
    ]
    path = folder / "background.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path
