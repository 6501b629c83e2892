"""Pieces of a fit spread over worker processes (`engine.workers`): the same results as one process, a
progress bar that hears from the workers, and a piece's error raised where the work was asked for; objects
shipped to the workers once."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from joblib import Parallel, delayed

from engine.workers import Report, Shipped, map_reporting, shipped_once


def _squares_up_to(n: int, report: Report) -> list[int]:
    if n < 0:
        raise ValueError(f"no squares up to {n}")
    out = []
    for k in range(n):
        out.append(k * k)
        report(k + 1)
    return out


@pytest.mark.parametrize("processes", [1, 2])
def test_results_in_order_and_progress_reaches_the_total(processes):
    reports: list[tuple[int, int, str]] = []
    out = map_reporting(_squares_up_to, [3, 5, 4], 5, lambda *r: reports.append(r), "squaring", processes)
    assert out == [[0, 1, 4], [0, 1, 4, 9, 16], [0, 1, 4, 9]]
    assert reports[0] == (0, 15, "squaring") and reports[-1][:2] == (15, 15)
    assert [r[0] for r in reports] == sorted(r[0] for r in reports)


@pytest.mark.parametrize("processes", [1, 2])
def test_a_pieces_error_is_raised_to_the_caller(processes):
    with pytest.raises(ValueError, match="no squares up to -1"):
        map_reporting(_squares_up_to, [2, -1, 3], 3, lambda *r: None, "squaring", processes)


def _loaded_in(shipped: Shipped) -> tuple[int, int, int]:
    objects = shipped.load()
    return os.getpid(), id(objects), int(objects["values"].sum())


def test_shipped_objects_are_read_once_per_process_and_their_file_removed():
    with shipped_once({"values": np.arange(5)}) as shipped:
        path = Path(shipped.path)
        assert path.is_file() and path.parent.stat().st_mode & 0o077 == 0  # readable by this user only
        first = shipped.load()
        assert first["values"].tolist() == [0, 1, 2, 3, 4] and shipped.load() is first
        seen = Parallel(n_jobs=2)(delayed(_loaded_in)(shipped) for _ in range(8))
    assert {total for _, _, total in seen} == {10}
    by_process: dict[int, set[int]] = {}
    for pid, ident, _ in seen:
        by_process.setdefault(pid, set()).add(ident)
    assert all(len(idents) == 1 for idents in by_process.values())  # each worker loaded it once, then reused it
    assert not path.exists() and not path.parent.exists()
    with shipped_once({"values": np.arange(3)}) as other:
        assert other.load()["values"].sum() == 3  # a new handle replaces what this process held
