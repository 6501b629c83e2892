"""Resident memory of a process and every process under it — the sweep's workers, spaCy's, the report's
Chromium — as the benchmarks measure their peaks: a process alone misses what its workers hold."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def _read_kb(pid: int, file: str, key: str) -> int:
    """The ``key`` line of /proc/<pid>/``file`` (kB); OSError or StopIteration once the process has ended."""
    status = Path(f"/proc/{pid}/{file}").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith(key))


def _tree_sum_mb(pid: int, file: str, key: str) -> float:
    """The ``key`` line of /proc/<p>/``file`` summed over ``pid`` and its descendants (MB); a process that ends
    meanwhile counts 0."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += _read_kb(p, file, key)
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
            todo += [int(c) for c in children]
        except (OSError, StopIteration):
            continue
    return total / 1024


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` alone (MB; 0 once it has ended)."""
    try:
        return _read_kb(pid, "status", "VmRSS:") / 1024
    except (OSError, StopIteration):
        return 0.0


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its descendants (MB). A page that several of them share (a library's
    code, a model file they map) counts once per process, so the sum overstates what they hold together."""
    return _tree_sum_mb(pid, "status", "VmRSS:")


def tree_pss_mb(pid: int) -> float:
    """Proportional memory of ``pid`` and its descendants (MB): each shared page divided among the processes
    that share it, so the sum is the memory they hold together."""
    return _tree_sum_mb(pid, "smaps_rollup", "Pss:")


class TreeMemory:
    """The peaks of `tree_rss_mb` and `tree_pss_mb` of ``pid`` (default this process), sampled every ``every``
    seconds while the block runs."""

    def __init__(self, pid: int | None = None, every: float = 0.2) -> None:
        self.pid, self.every, self.peak_mb, self.peak_pss_mb = pid or os.getpid(), every, 0.0, 0.0
        self._stop = threading.Event()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, tree_rss_mb(self.pid))
            self.peak_pss_mb = max(self.peak_pss_mb, tree_pss_mb(self.pid))
            self._stop.wait(self.every)

    def __enter__(self) -> TreeMemory:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
