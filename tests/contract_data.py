"""A small dataset every registered method can be fitted on quickly, with known structure (for the contract
test): 40 authors, five records each; the text mostly says how a record's sentiment is (so a model of the
field given the text has something to learn, but not everything), names the author's handle and pet word (so an intruder has something
to find) and the author's occupation (so the k-anonymity method has an attribute to swap), and each record has
a count and an amount that depend on a key field."""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema

WORDS = {"good": "great lovely smooth", "bad": "awful late rude", "meh": "okay fine average"}
PETS = ["zebra", "quokka", "narwhal", "axolotl", "okapi", "tapir", "gecko", "ibis", "lemur", "marmot"]
JOBS = ["teacher", "nurse", "lawyer", "engineer"]


def contract_dataset(n_authors: int = 40, per_author: int = 5, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    rows, ext = [], []
    for a in range(n_authors):
        user, pet = f"user{a:02d}", f"{PETS[a % len(PETS)]}{a // len(PETS)}"
        room = ["home", "room", "shared"][a % 3]
        for j in range(per_author):
            mood = ["good", "bad", "meh"][int(rng.integers(3))]
            said = mood if rng.random() < 0.7 else ["good", "bad", "meh"][int(rng.integers(3))]
            job = JOBS[a % len(JOBS)]
            text = f"@{user} the {pet} trip was {WORDS[said]} with Anna Smith in Paris #{pet} day {j} | {job}"
            base = {"home": 120, "room": 60, "shared": 20}[room]
            rows.append(
                {
                    "text": text,
                    "user": user,
                    "mood": mood,
                    "room": room,
                    "reviews": int(rng.poisson(5 + 3 * (a % 3))),
                    "nights": int(min(365, rng.poisson(40 + 50 * (a % 3)) * int(rng.random() > 0.2))),
                    "price": float(round(base * float(np.exp(rng.normal(0, 0.3))), 2)),
                }
            )
        ext.append({"text": f"my {pet} again, {WORDS['meh']} #{pet} @{user}", "user": user})
    schema = Schema(
        text="text",
        author="user",
        fields=(
            FieldSpec("mood", "categorical", "sensitive"),
            FieldSpec("room", "categorical", "key"),
            FieldSpec("reviews", "count", "key"),
            FieldSpec("nights", "count", "sensitive"),
            FieldSpec("price", "continuous", "sensitive"),
        ),
    )
    return Dataset("contract", pd.DataFrame(rows), schema, pd.DataFrame(ext), source="tests")
