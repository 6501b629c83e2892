"""Time the neural text synthesizer (`rnn`) on a demo at its default settings: training (the fit) and the
generation of one release at each τ of the knob's grid, with the peak resident memory of each stage (JAX's
buffers live outside Python's allocator, so the process's peak RSS is measured, each stage in a process of
its own). Not part of the tests.

    .venv/bin/python benchmarks/bench_rnn.py [--data airline-tweets] [--json benchmarks/results_rnn.json]

Targets (issue 12): training on the airline demo under 5 minutes on 2 cores; generation of a release under 30 s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

import joblib
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine.protect  # noqa: E402, F401  (the protect package first: it sets up the import order)
from engine.data.load import load_dataset  # noqa: E402
from engine.protect import get_protector  # noqa: E402
from engine.protect.text_synthesis.rnn import TEMPERATURE_KNOB  # noqa: E402


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _train(name: str, path: str, out: mp.Queue) -> None:
    dataset = load_dataset(name)
    start = time.perf_counter()
    fitted = get_protector("rnn").fit(dataset)
    seconds = time.perf_counter() - start
    joblib.dump(fitted, path)
    out.put(
        {
            "records": dataset.n_records,
            "symbols": len(fitted.symbols),
            "epochs": len(fitted.losses),
            "loss_first_epoch": round(fitted.losses[0], 3),
            "loss_last_epoch": round(fitted.losses[-1], 3),
            "train_seconds": round(seconds, 1),
            "train_peak_rss_mb": round(_peak_mb()),
        }
    )


def _generate(path: str, out: mp.Queue) -> None:
    fitted = joblib.load(path)
    seconds = []
    for i, tau in enumerate(TEMPERATURE_KNOB.default_grid()):
        start = time.perf_counter()
        fitted.release(tau, np.random.default_rng(i))
        seconds.append(time.perf_counter() - start)
    out.put(
        {
            "release_seconds_median": round(float(np.median(seconds)), 2),
            "release_seconds_max": round(max(seconds), 2),
            "release_peak_rss_mb": round(_peak_mb()),
        }
    )


def _in_process(target, *args) -> dict:
    queue: mp.Queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def bench(name: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fitted.joblib")
        return {"dataset": name, **_in_process(_train, name, path), **_in_process(_generate, path)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["airline-tweets"])
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    results = [bench(name) for name in args.data]
    run = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}", "results": results}
    for r in results:
        print(json.dumps(r))
    if args.json:
        Path(args.json).write_text(json.dumps(run, indent=2) + "\n")


if __name__ == "__main__":
    main()
