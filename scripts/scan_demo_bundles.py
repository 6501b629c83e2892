"""Export every method's demo bundle at the ends and the middle of its knob's grid and scan every file of each
for what must not leave (`tests/leakage.py`: the data's URLs, e-mail addresses, phone numbers and @handles,
identifier columns in clear, replaced originals, cells a spreadsheet would run as formulas), with what the
release guard replaced in each. Writes the findings as JSON (exit status 1 when any bundle leaks).

    python scripts/scan_demo_bundles.py --out benchmarks/results_demo_scan.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.cache import fit_cached  # noqa: E402
from engine.data.load import load_dataset  # noqa: E402
from engine.protect import get_protector  # noqa: E402
from tests.leakage import scan_bundle  # noqa: E402

DEMOS = {
    "redact": "airline-tweets",
    "glm": "airline-tweets",
    "cart": "airline-tweets",
    "count-bayes": "nyc-airbnb",
    "md": "airline-tweets",
    "rnn": "airline-tweets",
    "swap": "earnings-calls",
    "kanon": "twitter-profiles",
}


def knobs(method: str, data: str) -> list[float]:
    """The ends and the middle of the method's grid on the data (a λ's range is the data's: fitted once here, and
    found in the cache by the command after)."""
    grid = fit_cached(get_protector(method), load_dataset(data)).knob.default_grid()
    return sorted({grid[0], grid[len(grid) // 2], grid[-1]})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", help="methods separated by commas")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "textsdc-demo-scan-cache"))
    a = parser.parse_args()
    os.environ["TEXTSDC_CACHE_DIR"] = a.cache  # the fits made here are the ones the commands find
    env = {**os.environ, "TEXTSDC_CHROMIUM": "none"}
    results, leaks = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for method, data in DEMOS.items():
            if a.only and method not in a.only.split(","):
                continue
            dataset = load_dataset(data)
            for value in knobs(method, data):
                out = Path(tmp) / f"{method}-{value:g}"
                args = [sys.executable, "-m", "engine.cli", "release", "--data", data, "--method", method]
                args += ["--knob", f"{value:.10g}", "--out", str(out), "--audit-log", str(Path(tmp) / "audit.sqlite")]
                start = time.perf_counter()
                done = subprocess.run(args, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
                took = round(time.perf_counter() - start, 1)
                row = {"method": method, "data": data, "knob": value, "seconds": took}
                if done.returncode != 0:
                    row["error"] = done.stderr.strip().splitlines()[-1:]
                    leaks += 1
                else:
                    tables = tuple(p.stem for p in out.glob("*.csv") if p.stem not in ("release", "changes"))
                    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
                    row["guard"] = manifest.get("guard")
                    row["findings"] = scan_bundle(out, dataset, tables=tables)
                    leaks += bool(row["findings"])
                print(json.dumps(row), file=sys.stderr, flush=True)
                results.append(row)
    a.out.write_text(json.dumps({"bundles": results, "leaking": leaks}, indent=2) + "\n", encoding="utf-8")
    return 1 if leaks else 0


if __name__ == "__main__":
    raise SystemExit(main())
