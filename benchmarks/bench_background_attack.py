"""The background attacker against the named-entity swap on the 306 earnings calls of 2021 Q3, with the 225
calls of 2021 Q1 as the background corpus (issue 50). Not part of the tests; skipped cleanly without the files.

    .venv/bin/python benchmarks/bench_background_attack.py [--json benchmarks/results_background_attack.json]
    .venv/bin/python benchmarks/bench_background_attack.py --docs   # rewrite docs/swap.md's table from the JSON

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
    from engine.intervals import wilson

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


BEGIN, END = "<!-- background-attack-table:begin -->", "<!-- background-attack-table:end -->"
PAGE = ROOT / "docs" / "swap.md"
"""The page holding the benchmark's table, between the markers."""
TARGET = 0.5
"""Issue 50's target: the swapped chunks named as released at most half as often as with nothing swapped (the
measure's `engine.measures.risk.background_attack.TARGET_RATIO`, which the dashboard and the bundle check)."""


def markdown(results: dict) -> str:
    """The table of docs/swap.md from a results JSON: per rate DR, DU, the attacked chunks named, the swapped
    chunks named before → after against the target, and the calls named with their chunks pooled."""

    def named(share: dict) -> str:
        return f"{share['accuracy']:.3f} ({share['named']:,} of {share['n']:,})"

    out = [
        f"The intruder trained on the {results['background']['rows']:,} calls of {results['background']['file']} "
        f"(one label per company, chance {results['chance']:.3g}) attacks the {results['attacked_chunks']:,} chunks "
        f"of the {results['calls']:,} calls of {results['data']} whose company the background holds "
        f'({results["chunks"]:,} chunks in all). "before" is a swapped chunk with the identifiers suppressed and '
        "nothing swapped; the target is at most half of it.",
        "",
        "| case | r | DR | DU | attacked chunks named | swapped chunks named, before → after | target | reached | "
        "calls named, chunks pooled |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for name, case in results["cases"].items():
        before, after = case["swapped_chunks_before"], case["swapped_chunks_after"]
        if before["n"]:
            swapped = f"{before['accuracy']:.3f} → {after['accuracy']:.3f} ({before['n']:,} chunks)"
            target = f"≤ {TARGET * before['accuracy']:.3f}"
            reached = "yes" if after["named"] <= TARGET * before["named"] else "**no**"
        else:
            swapped, target, reached = "—", "—", "—"
        out.append(
            f"| {name} | {case['rate']:g} | {case['swap_dr']:.3f} | {case['swap_du']:.3f} "
            f"| {named(case['all_attacked_chunks'])} | {swapped} | {target} | {reached} "
            f"| {named(case['documents_named_pooled'])} |"
        )
    out.append("")
    return "\n".join(out)


def with_table(page: str, results: dict) -> str:
    """``page`` with the table of ``results`` between its background-attack-table markers."""
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{markdown(results)}{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results_background_attack.json"))
    ap.add_argument("--docs", action="store_true", help="write the table of docs/swap.md from --json and stop")
    args = ap.parse_args()
    if args.docs:
        results = json.loads(Path(args.json).read_text(encoding="utf-8"))
        PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8"), results), encoding="utf-8")
        return 0
    missing = [p for p in (Q3, Q1) if not p.is_file()]
    if missing:
        print(f"skipped: {', '.join(map(str, missing))} absent (not part of the repository)")
        return 0
    run(Path(args.json))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
