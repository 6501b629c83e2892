"""The Protect page on 200,000 airline-style posts (issue 53), in headless Chromium as a steward meets it: the
first view (a sample's sweep, `dashboard.scaled`), the first ten knob moves after it, the time until the full sweep
made in the background replaces it, ten moves on the full view, and the peak memory of the server's process
tree. Not part of the tests.

    .venv/bin/python benchmarks/bench_scale_page.py [--records 200000] [--moves 10]
        [--json benchmarks/results_scale_page.json]

Targets: a first view ≤ 2 minutes on 2 cores, saying that it shows a sample; moves p95 ≤ 150 ms from the key
press to the page at rest, the first ten included; peak memory ≤ 4 GB. Data: `scripts/assemble_airline_scale.py`
(seed 0) from ../shared/data, into a temporary folder; the run stops with a message when ../shared/data is absent.
A fresh server with an empty cache folder opens it (`textsdc dashboard --data FILE`) at the page's defaults
(redaction). The clocks are bench_dashboard.py's: the first view from ``page.goto`` (outside wall clock) to the
page at rest, a move in the page from the key event to the page at rest. The machine's load average is kept at
the start and the end, since the trial runs beside other work.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import (  # noqa: E402
    ARGS,
    AT_REST,
    CHROMIUM,
    TRACKER,
    Case,
    Server,
    drop_os_cache,
    first_view,
    move_summary,
    moves,
    wait_for_idle_cpu,
)

SHARED = ROOT.parent / "shared" / "data"
FULL_SWEEP_TIMEOUT_S = 3 * 3600
SAMPLE_NOTE = "-record sample of "
FULL_NOTE = "Showing the sweep of all "


def _assembler():
    spec = importlib.util.spec_from_file_location("assemble", ROOT / "scripts" / "assemble_airline_scale.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page_text(page) -> str:
    return page.evaluate("() => document.body.innerText")


def _moves_row(page, n: int) -> dict:
    """``n`` moves on both clocks (bench_dashboard's `moves` and `move_summary`)."""
    return move_summary(moves(page, n))


def _write(path: Path, row: dict) -> None:
    """The row as measured so far (written after every stage: a long run that stops keeps what it measured)."""
    path.write_text(json.dumps(row | {"load_average_now": [round(x, 2) for x in os.getloadavg()]}, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results_scale_page.json")
    args = parser.parse_args()
    if not (SHARED / "SOURCES.md").is_file():
        raise SystemExit(f"{SHARED} is absent: the 200,000-post table is assembled from it; nothing to measure")
    from playwright.sync_api import sync_playwright

    from dashboard.scaled import SAMPLE_FIRST_RECORDS

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    row: dict = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "commit": commit.stdout.strip(),
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
        "page": "protect",
        "method": "redact (the page's default)",
        "sample_first_records": SAMPLE_FIRST_RECORDS,
        "targets": {"first_view_s": 120, "move_p95_ms": 150, "peak_rss_mb": 4096},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        counts = _assembler().write(work / "data", args.records, 0, SHARED)
        row["data"] = {k: v for k, v in counts.items() if k != "by_source"} | {
            "assembled_s": round(time.perf_counter() - started, 1)
        }
        data = work / "data" / "airline-scale.csv"
        case = Case("protect", "redact", str(data), "", "", 120)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            context = browser.new_context(viewport={"width": 1500, "height": 1100})  # a fresh profile
            context.add_init_script(TRACKER)  # the page's clock (bench_dashboard)
            page = context.new_page()
            row["waited_for_idle_cpu_s"] = wait_for_idle_cpu()  # the data assembled, the browser started
            row["os_cache"] = "dropped" if drop_os_cache() else "warm"
            server = Server(str(data), work / "cache", work / "server.log")
            try:
                goto = time.perf_counter()
                row["first_view"] = first_view(page, case, server.url) | {"server_start_s": server.start_s}
                text = _page_text(page)
                row["first_view"]["says_sample"] = SAMPLE_NOTE + f"{args.records:,}" in text
                row["first_view"]["note"] = next((line for line in text.splitlines() if SAMPLE_NOTE in line), "")
                _write(args.json, row | {"peak_rss_mb_so_far": round(server.peak_mb)})
                row["moves_on_sample"] = _moves_row(page, args.moves)
                _write(args.json, row | {"peak_rss_mb_so_far": round(server.peak_mb)})
                row["background"], said = [], 0.0  # what the note says of the full sweep, once a minute
                while FULL_NOTE not in (text := _page_text(page)):
                    now = time.perf_counter() - goto
                    if now > FULL_SWEEP_TIMEOUT_S:
                        raise SystemExit(f"no full sweep after {FULL_SWEEP_TIMEOUT_S} s; see {work / 'server.log'}")
                    if now - said >= 30:
                        note = next((line for line in text.splitlines() if SAMPLE_NOTE in line), "")
                        row["background"].append([round(now), note.partition(" — ")[2].partition(";")[0]])
                        _write(args.json, row | {"peak_rss_mb_so_far": round(server.peak_mb)})
                        said = now
                    time.sleep(2)
                row["full_sweep_noted_s"] = round(time.perf_counter() - goto, 1)  # the note says it is done
                _write(args.json, row | {"peak_rss_mb_so_far": round(server.peak_mb)})
                # the views of the full sweep are built after the note is drawn: the page at rest again
                page.evaluate("() => { window.__before = undefined; }")
                page.wait_for_function(AT_REST, timeout=FULL_SWEEP_TIMEOUT_S * 1000, polling=500)
                row["full_view_s"] = round(time.perf_counter() - goto, 1)
                row["peak_rss_mb_until_full_view"] = round(server.peak_mb)
                _write(args.json, row)
                row["moves_on_full"] = _moves_row(page, args.moves)
            finally:
                server.stop()
                browser.close()
        row["peak_rss_mb"] = round(server.peak_mb)
        # PSS counts a page shared by processes (a library's code) once: what they hold together
        row["peak_pss_mb"] = round(server.peak_pss_mb)
        row["peak_rss_at_s"] = server.peak_at_s  # since the server's launch
        row["memory_timeline"] = {"columns": ["s since launch", "MB of the tree", "MB of its workers"]} | {
            "rows": server.timeline
        }
    row["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    _write(args.json, row)
    print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
