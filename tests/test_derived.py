"""Values derived from a dataset alone, kept by its fingerprint (`engine.data.derived`)."""

from __future__ import annotations

import dataclasses

from engine.data import derived as derived_module
from engine.data.derived import derived
from tests.contract_data import contract_dataset


def test_a_value_is_worked_out_once_per_dataset_and_key_and_the_oldest_leave_first(monkeypatch):
    monkeypatch.setattr(derived_module, "KEPT", 2)
    data = contract_dataset()
    calls: list[str] = []
    assert derived(data, "rows", lambda: calls.append("a") or len(data.frame)) == len(data.frame)
    assert derived(data, "rows", lambda: calls.append("b") or -1) == len(data.frame)  # kept
    same = dataclasses.replace(data)  # an equal dataset loaded again: the same fingerprint
    assert derived(same, "rows", lambda: calls.append("c") or -1) == len(data.frame)
    other = dataclasses.replace(data, frame=data.frame.head(3))
    assert derived(other, "rows", lambda: calls.append("d") or 3) == 3  # another dataset: its own value
    assert derived(data, "cols", lambda: calls.append("e") or 9) == 9  # another key
    assert calls == ["a", "d", "e"]
    assert derived(data, "rows", lambda: calls.append("f") or 7) == 7  # beyond KEPT the oldest was dropped
