"""Each measure's own peak memory on a large release: the 200,000 airline-style posts of
`scripts/assemble_airline_scale.py` (from ../shared/data), redacted (the Protect page's default), every measure
the page prepares, then for two knob values the release and each measure in turn, in this one process as a
large table's full sweep runs them (`engine.workers.giving_way(held_once=True)`). A step's peak is the process's
resident high-water mark (``VmHWM``, reset through ``/proc/self/clear_refs`` before the step) over its resident
memory as the step began, after a garbage collection and ``malloc_trim``. Not part of the tests; Linux only.

    .venv/bin/python benchmarks/bench_measure_memory.py [--records 200000] [--json benchmarks/results_measure_memory.json]

Context (issue 53): the 200,000-post page's peak memory target is 4 GB; a piece of its full sweep adds the
largest of these peaks to what the server holds.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
KNOBS = (1.0, 3.0)


def _status() -> dict[str, int]:
    """Resident memory now and its high-water mark, in MB."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) // 1024
    return out


def _reset() -> int:
    """A garbage collection and ``malloc_trim``, then the high-water mark set to now; the resident MB."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    Path("/proc/self/clear_refs").write_text("5")
    return _status()["VmRSS"]


def _measured(step):
    """[seconds, resident MB before, peak MB over it, resident MB after] of ``step()``, and its value."""
    before = _reset()
    started = time.perf_counter()
    value = step()
    after = _status()
    return [round(time.perf_counter() - started, 1), before, after["VmHWM"] - before, after["VmRSS"]], value


def _each_measure(evaluator, release) -> dict[str, list]:
    """`_measured` of each measure of ``evaluator`` on ``release``, told apart by `Evaluator.evaluate`'s report."""
    steps: dict[str, list] = {}
    mark = {"before": _reset(), "at": time.perf_counter()}

    def report(done: int) -> None:
        now = _status()
        steps[evaluator.available[done - 1]] = [
            round(time.perf_counter() - mark["at"], 1),
            mark["before"],
            now["VmHWM"] - mark["before"],
            now["VmRSS"],
        ]
        mark["before"], mark["at"] = _reset(), time.perf_counter()

    evaluator.evaluate(release, report)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results_measure_memory.json")
    args = parser.parse_args()
    if not SHARED.is_dir():
        raise SystemExit(f"{SHARED} is absent: the table is assembled from it; nothing to measure")
    from engine.cache import fit_cached
    from engine.data.load import load_dataset
    from engine.measures.evaluate import Evaluator
    from engine.protect import get_protector
    from engine.sweep import make_release
    from engine.workers import giving_way

    spec = importlib.util.spec_from_file_location("assemble", ROOT / "scripts" / "assemble_airline_scale.py")
    assert spec is not None and spec.loader is not None
    assemble = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(assemble)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    row: dict = {
        "machine": {"cores": len(os.sched_getaffinity(0)), "python": platform.python_version()},
        "commit": commit.stdout.strip(),
        "records": args.records,
        "method": "redact",
        "columns": ["seconds", "resident MB before", "peak MB over it", "resident MB after"],
    }
    with tempfile.TemporaryDirectory(prefix="textsdc-bench-") as work:
        assemble.write(Path(work), args.records, 0, SHARED)
        dataset = load_dataset(Path(work) / "airline-scale.csv")
        with giving_way(held_once=True):  # as the page's full sweep: everything in this thread, nothing shipped
            row["fit"], fitted = _measured(lambda: fit_cached(get_protector("redact"), dataset, use_cache=False))
            row["measures prepared"], evaluator = _measured(
                lambda: Evaluator(dataset, None, fields=fitted.synthesized_fields, fitted=fitted)
            )
            for knob in KNOBS:
                made, release = _measured(lambda: make_release(fitted, knob, 0, 1))  # noqa: B023
                row[f"knob {knob:g}"] = {"release": made, **_each_measure(evaluator, release)}
                del release
                print(json.dumps({f"knob {knob:g}": row[f"knob {knob:g}"]}), flush=True)
    args.json.write_text(json.dumps(row, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
