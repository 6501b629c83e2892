"""The stylometric author attack (Burrows' Delta, `engine.measures.risk.stylometric_attack`) on the 50-author
tweet file of ../shared/data (issue 50). Not part of the tests; skipped cleanly without the file.

    .venv/bin/python benchmarks/bench_stylometric_attack.py [--json benchmarks/results_stylometric_attack.json]

Each author's 200 tweets are shuffled (seed 0) and split in two: 100 are the background corpus the steward
declares (other texts by the same people, each with its author), 100 the confidential data. The attack is
measured on the confidential data as it is (no protection: the `_confidential` baseline every release is read
beside), once with each author's tweets pooled (the release keeps the author column, pseudonymized) and once
tweet by tweet (the author column withheld); the background SVM attack (`background_author_attack`, word and
character n-grams) is measured alike for comparison.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FILE = ROOT.parent / "shared" / "data" / "tweets" / "authorship_50users_200tweets.csv"
PER_AUTHOR_BACKGROUND = 100
ATTACKS = ("stylometric_author_attack", "background_author_attack")


def decoded(raw: str) -> str:
    """The file stores each tweet as a Python bytes literal (b'...')."""
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw
    return value.decode("utf-8", "replace").strip() if isinstance(value, bytes) else str(value)


def split(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The confidential data and the background: each author's tweets shuffled, the first 100 the background."""
    frame = pd.read_csv(FILE)
    frame.columns = ["raw", "author"]
    frame = pd.DataFrame({"text": frame["raw"].map(decoded), "author": frame["author"].astype(str)})
    rng = np.random.default_rng(seed)
    background, data = [], []
    for _, tweets in frame.groupby("author", sort=True):
        order = rng.permutation(len(tweets))
        background.append(tweets.iloc[order[:PER_AUTHOR_BACKGROUND]])
        data.append(tweets.iloc[order[PER_AUTHOR_BACKGROUND:]])
    return pd.concat(data, ignore_index=True), pd.concat(background, ignore_index=True)


def entry(result) -> dict:
    d = result.detail.iloc[0]
    return {
        "value": round(result.value, 4),
        "lo": round(result.lo, 4),
        "hi": round(result.hi, 4),
        "chance": result.chance,
        "attacked": int(d["attacked"]),
        "named": int(d["named"]),
    }


def run() -> dict:
    from engine.data.dataset import Dataset
    from engine.data.schema import Schema
    from engine.measures.evaluate import Evaluator
    from engine.measures.settings import MeasureSettings

    started = time.perf_counter()
    data, background = split()
    with tempfile.TemporaryDirectory(prefix="bench-stylometric-") as folder:
        path = Path(folder) / "background.csv"
        background.to_csv(path, index=False)
        dataset = Dataset("a50", data, Schema(text="text", author="author"), source="benchmark")
        ev = Evaluator(dataset, list(ATTACKS), options=MeasureSettings(background=str(path)))
        assert not ev.skipped, ev.skipped
        pooled = ev.evaluate(data)
        records = ev.evaluate(data.drop(columns="author"))
    delta, svm = ATTACKS
    return {
        "data": f"{FILE.name}: {data['author'].nunique()} authors, {len(data):,} confidential tweets, "
        f"{len(background):,} background tweets ({PER_AUTHOR_BACKGROUND} per author, seed 0)",
        "authors": int(data["author"].nunique()),
        "pooled": entry(pooled[delta]),
        "records": entry(records[delta]),
        "svm_records": entry(records[svm]),  # the SVM attack names each record; it does not pool
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args()
    if not FILE.is_file():
        print(f"skipped: needs {FILE}")
        return
    result = run()
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
