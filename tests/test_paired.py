"""McNemar's exact test on an intruder's paired outcomes, against values computed by hand."""

from __future__ import annotations

import pytest

from engine.measures.risk.paired import mcnemar_exact


def test_exact_p_value_by_hand():
    # 10 targets lost, 2 gained, 8 right both times, 5 wrong both times: p = 2 (1 + 12 + 66) / 2^12
    before = [True] * 10 + [False] * 2 + [True] * 8 + [False] * 5
    after = [False] * 10 + [True] * 2 + [True] * 8 + [False] * 5
    result = mcnemar_exact(before, after)
    assert (result.lost, result.gained) == (10, 2)
    assert result.p_value == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert result.before_accuracy == pytest.approx(18 / 25) and result.after_accuracy == pytest.approx(10 / 25)


def test_no_change_and_bad_input():
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    assert mcnemar_exact([True, True, True], [False, False, False]).p_value == pytest.approx(0.25)  # 2 · 1/8
    with pytest.raises(ValueError, match="equal-length"):
        mcnemar_exact([True], [True, False])
    with pytest.raises(ValueError, match="at least one"):
        mcnemar_exact([], [])
