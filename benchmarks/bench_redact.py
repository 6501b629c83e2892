"""Time the redaction path on the demo datasets: fit (spaCy), intruder training, one release (a slider
move), one evaluation, and a whole sweep. Not part of the tests.

    .venv/bin/python benchmarks/bench_redact.py [--data airline-tweets nyc-airbnb] [--json out.json]

Targets: a slider move (one release) well under a second; a five-level sweep of a demo under a minute after
the fit; the fit itself is paid once per dataset and cached on disk.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.data.load import load_dataset  # noqa: E402
from engine.measures.evaluate import Evaluator  # noqa: E402
from engine.protect import get_protector  # noqa: E402
from engine.sweep import make_release, run_sweep  # noqa: E402


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def bench(name: str) -> dict:
    dataset = load_dataset(name)
    protector = get_protector("redact")
    tracemalloc.start()
    fitted, t_fit = timed(protector.fit, dataset)
    _, peak_fit = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    evaluator, t_eval_setup = timed(Evaluator, dataset)
    releases = []
    for level in (0, 1, 2, 3, 4):
        _, t = timed(make_release, fitted, level, 0)
        releases.append(t)
    release = make_release(fitted, 2, 0)
    _, t_evaluate = timed(evaluator.evaluate, release)
    _, t_sweep = timed(run_sweep, dataset, protector, fitted=fitted, evaluator=evaluator)
    return {
        "dataset": name,
        "records": dataset.n_records,
        "fit_seconds": round(t_fit, 2),
        "fit_peak_python_mb": round(peak_fit / 2**20, 1),
        "intruder_training_seconds": round(t_eval_setup, 2),
        "slider_move_seconds_max": round(max(releases), 3),
        "evaluate_one_release_seconds": round(t_evaluate, 2),
        "sweep_5_levels_seconds_after_fit": round(t_sweep, 2),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=["airline-tweets", "nyc-airbnb"])
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    import os

    os.environ.setdefault("TEXTSDC_CACHE_DIR", tempfile.mkdtemp(prefix="textsdc-bench-"))
    results = [bench(name) for name in args.data]
    for r in results:
        print(json.dumps(r))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
