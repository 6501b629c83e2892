"""Resident memory of a process and every process under it — the sweep's workers, spaCy's, the report's
Chromium — as the benchmarks measure their peaks: a process alone misses what its workers hold."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants (MB), from /proc; a process that ends meanwhile counts 0."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
            todo += [int(c) for c in children]
        except (OSError, StopIteration):
            continue
    return total / 1024


class TreeMemory:
    """The peak of `tree_rss_mb` of ``pid`` (default this process), sampled every ``every`` seconds while the
    block runs."""

    def __init__(self, pid: int | None = None, every: float = 0.2) -> None:
        self.pid, self.every, self.peak_mb = pid or os.getpid(), every, 0.0
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, tree_rss_mb(self.pid))
            self._stop.wait(self.every)

    def __enter__(self) -> TreeMemory:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
