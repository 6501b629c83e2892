"""Pieces of a fit spread over worker processes (`engine.workers`): the same results as one process, a
progress bar that hears from the workers, and a piece's error raised where the work was asked for."""

from __future__ import annotations

import pytest

from engine.workers import Report, map_reporting


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
