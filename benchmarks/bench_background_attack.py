"""The background attacker against the named-entity swap on the 306 earnings calls of 2021 Q3, with the 225
calls of 2021 Q1 as the background corpus (issue 50). Not part of the tests; skipped cleanly without the files.

    .venv/bin/python benchmarks/bench_background_attack.py [--json benchmarks/results_background_attack.json]

The intruder is the measure's own (`engine.measures.risk.background_attack.BackgroundIntruder`: word 1–2-gram
and character 3–5-gram TF-IDF, a linear SVM one company against the rest) trained on the Q1 calls labelled by
ticker. It attacks the swap's chunks of the Q3 calls whose company has a Q1 call:

- with the identifiers suppressed and nothing swapped (r = 0: the chunks as D_pre holds them),
- at the swap's default rate and at its top rate (the chunks as released),

on every attacked chunk and on the chunks each rate swaps (before: their r = 0 text; after: as released), and
at document level (each call's chunks pooled, the sum of their scores), with DU and DR at each rate.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_swap import Q3, SHARED, q3_files  # noqa: E402

Q1 = SHARED / "ect_prepared_remarks_2021Q1.jsonl"


def share(correct: np.ndarray) -> dict:
    from engine.measures.risk.binomial import wilson

    n, k = int(correct.size), int(correct.sum())
    lo, hi = wilson(k, n)
    return {"n": n, "named": k, "accuracy": round(k / n, 4) if n else None, "lo": round(lo, 4), "hi": round(hi, 4)}


def run(out: Path) -> dict:
    from engine.data.background import read_background
    from engine.data.load import load_dataset
    from engine.measures.base import ReleaseView
    from engine.measures.evaluate import Evaluator
    from engine.measures.risk.background_attack import BackgroundIntruder
    from engine.measures.swapped import released_chunks
    from engine.protect import get_protector
    from engine.sweep import make_release

    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench-background-"))  # the identifiers file stays beside the data
    dataset = load_dataset(str(q3_files(tmp)))
    background = read_background(Q1)
    labels_bg = background.frame["ticker"].astype(str).to_numpy(dtype=object)
    intruder = BackgroundIntruder.train(background.texts(), labels_bg)
    protector = get_protector("swap")
    t = time.perf_counter()
    fitted = protector.fit(dataset)
    fit_seconds = time.perf_counter() - t
    labels = np.asarray(fitted.labels, dtype=object)  # each chunk's company
    documents = np.asarray(fitted.prepared.documents)
    attacked = np.isin(labels, intruder.labels)
    evaluator = Evaluator(dataset, ["swap_dr", "swap_du"], fitted=fitted)
    knob = fitted.knob
    rates = {"nothing swapped": 0.0, "default rate": float(knob.default), "top rate": float(knob.high)}

    def named(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        scores = intruder.scores(texts)
        return intruder.labels[np.argmax(scores, axis=1)] == labels, scores

    def pooled(scores: np.ndarray) -> np.ndarray:
        docs, codes = np.unique(documents, return_inverse=True)
        sums = np.zeros((len(docs), scores.shape[1]))
        np.add.at(sums, codes, scores)
        truth = np.array([labels[codes == i][0] for i in range(len(docs))], dtype=object)
        keep = np.isin(truth, intruder.labels)
        return (intruder.labels[np.argmax(sums, axis=1)] == truth)[keep]

    cases, before = {}, None
    for name, rate in rates.items():
        release = make_release(fitted, rate, seed=0)
        view = ReleaseView(dataset, release)
        correct, scores = named(released_chunks(fitted, view))
        swapped = np.zeros(len(labels), dtype=bool) if rate == 0 else np.asarray(fitted_swapped(release), dtype=bool)
        if before is None:
            before = correct
        measured = evaluator.evaluate(release)
        cases[name] = {
            "rate": rate,
            "all_attacked_chunks": share(correct[attacked]),
            "swapped_chunks_before": share(before[attacked & swapped]),
            "swapped_chunks_after": share(correct[attacked & swapped]),
            "documents_named_pooled": share(pooled(scores)),
            "swap_dr": round(measured["swap_dr"].value, 4),
            "swap_du": round(measured["swap_du"].value, 4),
        }
        print(name, json.dumps(cases[name]), flush=True)
    result = {
        "data": Q3.name,
        "background": {"file": background.name, "rows": background.rows, "sha256": background.sha256},
        "calls": int(dataset.n_records),
        "chunks": int(len(labels)),
        "attacked_chunks": int(attacked.sum()),
        "companies_in_background": int(len(intruder.labels)),
        "chance": round(intruder.chance, 5),
        "cases": cases,
        "fit_seconds": round(fit_seconds, 1),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def fitted_swapped(release) -> list[bool]:
    from engine.protect.swap.method import SwapDetail

    detail = release.detail(SwapDetail)
    return [] if detail is None else list(detail.swapped)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results_background_attack.json"))
    args = ap.parse_args()
    missing = [p for p in (Q3, Q1) if not p.is_file()]
    if missing:
        print(f"skipped: {', '.join(map(str, missing))} absent (not part of the repository)")
        return 0
    run(Path(args.json))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
