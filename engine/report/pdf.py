"""The reviewer report as PDF, printed from its HTML by a headless Chromium on this machine.

Chromium runs with a throw-away profile and every outside connection refused (the report is self-contained:
Plotly's script is inlined), waits for the figures to draw, and prints without page headers. The PDF's two
timestamps (creation and modification) are set to a fixed date of the same length and the ids of its tagged
structure to their ranks, so the same report prints to the same bytes with the same Chromium; the bundle stays
deterministic.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from engine.errors import ConfigError

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
ENV = "TEXTSDC_CHROMIUM"
"""An environment variable naming the browser to print with (a path), or "none" to print no PDF."""
_DATES = re.compile(rb"\(D:\d{14}[-+Z][0-9']*\)")
FIXED_DATE = b"(D:19800101000000+00'00')"


def fixed_dates(pdf: bytes) -> bytes:
    """``pdf`` with its timestamps set to `FIXED_DATE` (only where the length stays, so offsets hold)."""
    return _DATES.sub(lambda m: FIXED_DATE if len(m.group()) == len(FIXED_DATE) else m.group(), pdf)


_NODES = re.compile(rb"\(node(\d{8})\)")


def stable_node_ids(pdf: bytes) -> bytes:
    """``pdf`` with the ids of its tagged structure ("(node00000018)", Chromium's numbers of the page's elements)
    replaced by their ranks, in the same order and of the same length, so offsets hold and the id tree stays
    sorted. Chromium numbers every element the page ever created, and a script that made one more element
    before a table (Plotly's drawing) shifted every later id by one: the same report printed other bytes
    (a clean-clone test run, node00000018 against node00000019)."""
    ranks = {n: k for k, n in enumerate(sorted({int(m) for m in _NODES.findall(pdf)}), start=1)}
    return _NODES.sub(lambda m: b"(node%08d)" % ranks[int(m.group(1))], pdf)


def find_browser() -> str | None:
    """The Chromium to print with: `ENV` when set (None when it says "none"), else the first of `BROWSERS`."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "none", "0") else chosen
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def print_pdf(html: Path, pdf: Path, browser: str, timeout: float = 120.0) -> None:
    """Print ``html`` to ``pdf`` with ``browser``; ConfigError when it fails or times out."""
    with tempfile.TemporaryDirectory(prefix="textsdc-print-") as profile:
        target = Path(profile) / "report.pdf"
        command = [
            browser,
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-sync",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing is fetched from any host
            f"--user-data-dir={profile}",
            "--no-pdf-header-footer",
            "--virtual-time-budget=20000",  # let the figures draw before printing
            f"--print-to-pdf={target}",
            Path(html).resolve().as_uri(),
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        try:
            run = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise ConfigError(f"printing the report to PDF with {browser} took over {timeout:.0f} s") from None
        except OSError as exc:
            raise ConfigError(f"could not start {browser} to print the report to PDF: {exc}") from None
        if run.returncode != 0 or not target.is_file() or target.stat().st_size == 0:
            tail = run.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
            raise ConfigError(f"{browser} could not print the report to PDF: {tail[0]}")
        pdf.write_bytes(stable_node_ids(fixed_dates(target.read_bytes())))
