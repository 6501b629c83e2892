"""Retraining the k-anonymity tagger on a steward's accepted records, as the Protect page's "Retrain the tagger"
does (`engine.annotation.retrain.cross_validated`: the folds and the model kept, in two processes): how long it
takes against the page's first-view target (30 s, issue 51: "retraining stays within the page's first-view
target") and the gain it shows. Not part of the tests.

    .venv/bin/python benchmarks/bench_retrain.py [--records 10 50 100] [--json benchmarks/results_retrain.json]

The steward's records are the cross-source gold set's posts (`assets/gold/privacy-attributes-cross/`: 100 WNUT-17
dev comments and 100 airline tweets, annotated under the gold set's guidelines), taken in their file's order from
its airline tweets, then its comments: text the packaged tagger was not trained on, as a steward's is. Wall time
is the call's; the first row's includes starting the two worker processes, as a steward's first retraining
does (the gold set's features are computed once per installation and kept in the cache folder, as on the page).
The machine's load average is kept beside each row: the figure is only as quiet as the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from engine.annotation.retrain import cross_validated
from engine.annotation.scores import ALL
from engine.annotation.spans import Annotations, RecordAnnotation
from engine.protect.kanon.gold import gold_set

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 30.0


def steward_records(n: int) -> list[RecordAnnotation]:
    """``n`` accepted records from the cross-source gold set: its airline tweets first, then its comments."""
    gold = gold_set("cross-source")
    posts = sorted(gold.posts.values(), key=lambda p: (p.kind != "airline-tweet", p.id))
    if n > len(posts):
        raise SystemExit(f"the cross-source gold set has {len(posts)} posts; asked for {n}")
    return [RecordAnnotation(i, p.text, tuple(gold.first[p.id])) for i, p in enumerate(posts[:n])]


def run(n: int, first: bool) -> dict:
    records = steward_records(n)
    annotations = Annotations("bench", "kanon", tuple(r.record for r in records), {r.record: r for r in records})
    load = os.getloadavg()[0]
    wall = time.perf_counter()
    gain = cross_validated(annotations)
    wall = time.perf_counter() - wall
    before, after = gain.before.get(ALL, "token"), gain.after.get(ALL, "token")
    assert before is not None and after is not None
    return {
        "records": n,
        "folds": gain.folds,
        "wall_s": round(wall, 1),
        "first_in_process": first,
        "load_before": round(load, 2),
        "recall_before": round(before.recall.value, 3),
        "recall_after": round(after.recall.value, 3),
        "precision_before": round(before.precision.value, 3),
        "precision_after": round(after.precision.value, 3),
        "within_target": wall <= TARGET_S,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results_retrain.json")
    args = parser.parse_args()
    rows = []
    for n in args.records:
        rows.append(run(n, not rows))
        print(json.dumps(rows[-1]), flush=True)
    payload = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "target_s": TARGET_S,
        "records_from": "assets/gold/privacy-attributes-cross (airline tweets first, then WNUT-17 dev comments)",
        "rows": rows,
    }
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
