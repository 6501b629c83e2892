"""A shrinkage-GLM sweep at scale, run as a steward runs it (`textsdc sweep`, in a fresh process): the λ path,
its 12 default grid values, M = 20 synthetic datasets each and every measure that applies, over 50,000
documents with a 5-level field. Not part of the tests.

    .venv/bin/python benchmarks/bench_scale.py [--documents 50000] [--jobs 2] [--json benchmarks/results_scale.json]

Target (issue 11): ≤ 10 minutes and ≤ 4 GB on 2 cores. Data: the reviews, tweets and profiles of
../shared/data as `bench_glm_path.corpus` assembles them (seeded shuffle, first n): the 5-level field
(rating, sentiment or gender mapped to 1…5) is synthesized; the 8-level field (department, airline or gender)
is a key field beside it, so the two-way cell differences are measured too. The corpus has no author column,
so the two author-based measures do not apply. Peak memory is the largest resident size of the command's
whole process tree (its joblib workers included), sampled every 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import tree_rss_mb  # noqa: E402
from bench_glm_path import corpus  # noqa: E402

SCHEMA = """text = "text"

[fields.rating]
kind = "categorical"
role = "sensitive"

[fields.group]
kind = "categorical"
role = "key"
"""


def run_measured(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak resident memory of the process tree (MB) and the output of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            time.sleep(0.2)

    threading.Thread(target=sample, daemon=True).start()
    out, _ = proc.communicate()
    done.set()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{out[-3000:]}")
    return time.perf_counter() - start, peak[0], out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=50_000)
    parser.add_argument("--replicates", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results_scale.json")
    args = parser.parse_args()
    texts, five, eight, source = corpus()
    if len(texts) < args.documents:
        raise SystemExit(f"{source} has {len(texts):,} documents, fewer than {args.documents:,}; nothing to measure")
    n = args.documents
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        frame = pd.DataFrame({"text": texts[:n], "rating": five[:n] + 1, "group": [f"g{g}" for g in eight[:n]]})
        frame.to_csv(work / "data.csv", index=False)
        (work / "schema.toml").write_text(SCHEMA)
        argv = [sys.executable, "-m", "engine.cli", "sweep", "--data", str(work / "data.csv")]
        argv += ["--schema", str(work / "schema.toml"), "--method", "glm", "--fields", "rating"]
        argv += ["--replicates", str(args.replicates), "--jobs", str(args.jobs), "--no-cache"]
        argv += ["--out", str(work / "results.json")]
        env = dict(os.environ, TEXTSDC_CACHE_DIR=str(work / "cache"), PYTHONPATH=str(ROOT))
        seconds, peak, _ = run_measured(argv, env)
        result = json.loads((work / "results.json").read_text())
    payload = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "source": source,
        "command": "textsdc sweep --method glm --fields rating --replicates 20 --jobs 2 --no-cache",
        "documents": n,
        "levels": int(frame["rating"].nunique()),
        "grid_values": len(result["grid"]),
        "replicates": result["replicates"],
        "measures": sorted({row["metric"] for row in result["rows"]}),
        "not_measured": result["skipped"],
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(peak),
        "targets": {"seconds": 600, "peak_rss_mb": 4096},
    }
    print(json.dumps(payload, indent=2))
    args.json.write_text(json.dumps(payload, indent=2) + "\n")


if __name__ == "__main__":
    main()
