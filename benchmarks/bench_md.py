"""Time the Multinomial–Dirichlet text synthesizer (`md`) on a demo: the fit (word counts) and one release
(one posterior draw: a slider move) at the paper's ε values, with peak Python memory. Not part of the tests.

    .venv/bin/python benchmarks/bench_md.py [--data airline-tweets] [--json benchmarks/results_md.json]

Target (issue 12): a release of the airline demo under 1 s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.data.load import load_dataset  # noqa: E402
from engine.protect import get_protector  # noqa: E402
from engine.protect.text_synthesis.multinomial_dirichlet import EPSILON_KNOB, PAPER_EPSILONS  # noqa: E402


def bench(name: str, vocabulary: str) -> dict:
    """Times without tracing (tracemalloc slows Python several-fold), then peak memory in a traced pass."""
    dataset = load_dataset(name)
    protector = get_protector("md", vocabulary=vocabulary)
    start = time.perf_counter()
    fitted = protector.fit(dataset)
    fit_seconds = time.perf_counter() - start
    seconds = []
    for i, epsilon in enumerate(PAPER_EPSILONS):
        start = time.perf_counter()
        fitted.release(epsilon, np.random.default_rng(i))
        seconds.append(time.perf_counter() - start)
    tracemalloc.start()
    protector.fit(dataset)
    _, fit_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    fitted.release(EPSILON_KNOB.default, np.random.default_rng(0))
    _, release_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "dataset": name,
        "vocabulary": vocabulary,
        "records": dataset.n_records,
        "authors": len(fitted.users),
        "vocabulary_words": len(fitted.vocabulary),
        "fit_seconds": round(fit_seconds, 3),
        "fit_peak_python_mb": round(fit_peak / 2**20, 1),
        "release_seconds_median": round(float(np.median(seconds)), 3),
        "release_seconds_max": round(max(seconds), 3),
        "release_peak_python_mb": round(release_peak / 2**20, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["airline-tweets"])
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    results = [bench(name, vocabulary) for name in args.data for vocabulary in ("public", "data")]
    run = {"machine": f"{platform.machine()}, {platform.python_version()}", "results": results}
    for r in results:
        print(json.dumps(r))
    if args.json:
        Path(args.json).write_text(json.dumps(run, indent=2) + "\n")


if __name__ == "__main__":
    main()
