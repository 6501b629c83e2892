"""Peak memory of redaction as the corpus grows: the earnings calls of ../shared/data, one record per call
(the speeches of its prepared remarks joined), redacted at level 4 and exported with its report by the
command a steward runs (`textsdc release`), each size in a fresh process: the peak of that process and every
process under it together (spaCy's workers, the report's Chromium), sampled every 0.2 s, and the largest any one
of them reached. Not part of the tests.

    .venv/bin/python benchmarks/bench_memory.py [--calls 30 90 306] [--json benchmarks/results_memory.json]

Target (issue 11): peak resident memory ≤ 2 GB for all 306 calls, growing with the largest document rather
than with the corpus.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.tree_memory import TreeMemory  # noqa: E402

SOURCE = ROOT.parent / "shared" / "data" / "earnings_calls" / "ect_prepared_remarks_2021Q3.jsonl"
SCHEMA = 'text = "text"\ndocument = "call_id"\n\n[fields.ticker]\nkind = "categorical"\nrole = "sensitive"\n'


def calls_frame(n: int) -> pd.DataFrame:
    """The first ``n`` calls in call_id order: call_id, ticker and the prepared remarks as one text."""
    rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows.sort(key=lambda r: r["call_id"])
    return pd.DataFrame(
        {
            "call_id": r["call_id"],
            "ticker": r["ticker"],
            "text": "\n\n".join(f"{s.get('speaker', '')}: {s.get('speech', '')}" for s in r["prepared_remarks"]),
        }
        for r in rows[:n]
    )


def peak_rss_mb_of(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, the peak resident memory (MB) of one command's process tree, and the largest any single
    process of it reached (MB)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT)
        with TreeMemory(proc.pid) as tree:
            code = proc.wait()
        if code != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed:\n{err.read().decode(errors='replace')[-2000:]}")
    seconds = time.perf_counter() - start
    # ru_maxrss of the children is the largest of any descendant waited for: the runs go in ascending size
    return seconds, tree.peak_mb, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def bench(n: int, work: Path) -> dict:
    frame = calls_frame(n)
    folder = work / f"calls-{n}"
    folder.mkdir()
    frame.to_csv(folder / "data.csv", index=False)
    (folder / "schema.toml").write_text(SCHEMA)
    argv = [sys.executable, "-m", "engine.cli", "release", "--data", str(folder / "data.csv")]
    argv += ["--schema", str(folder / "schema.toml"), "--method", "redact", "--knob", "4"]
    argv += ["--out", str(folder / "bundle"), "--no-cache"]
    seconds, tree, largest = peak_rss_mb_of(argv)
    lengths = frame["text"].str.len()
    return {
        "calls": n,
        "characters": int(lengths.sum()),
        "largest_call_characters": int(lengths.max()),
        "release_seconds": round(seconds, 1),
        "peak_rss_mb_all_processes": round(tree),
        "peak_rss_mb_largest_process": round(largest),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, nargs="+", default=[30, 90, 306])
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results_memory.json")
    args = parser.parse_args()
    if not SOURCE.exists():
        raise SystemExit(f"{SOURCE} is not here (../shared/data); nothing to measure")
    rows = []
    for n in sorted(args.calls):  # ascending: RUSAGE_CHILDREN keeps the largest child so far
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(bench(n, Path(tmp)))
        print(rows[-1], flush=True)
    payload = {
        "machine": {"cores": __import__("os").cpu_count(), "python": platform.python_version()},
        "source": str(SOURCE.relative_to(ROOT.parent)),
        "command": "textsdc release --method redact --knob 4 --no-cache (fit, measures, bundle and report)",
        "rows": rows,
    }
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
