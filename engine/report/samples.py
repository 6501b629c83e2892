"""Which records and attack targets a steward and a reviewer look at: one choice for the dashboard and the
report, so the reviewer sees the records the steward saw."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.protect.base import Release

SAMPLE_RECORDS = 8
ATTACK_TARGETS = 4


def protected_columns(dataset: Dataset, release: Release) -> list[str]:
    """The columns a release protects that the dataset has (the text when it names none)."""
    return [c for c in release.protected_columns if c in dataset.frame.columns] or [dataset.schema.text]


def _joined(frame: pd.DataFrame, cols: list[str]) -> pd.Series:
    """The values of ``cols`` per record as one string (to compare versions of a record)."""
    if len(cols) == 1:
        return frame[cols[0]].astype(str).reset_index(drop=True)
    return frame[cols].astype(str).agg("\x1f".join, axis=1).reset_index(drop=True)


def sample_records(dataset: Dataset, releases: Sequence[Release], n: int = SAMPLE_RECORDS) -> list[int]:
    """Records to show as samples: changed ones whose protected version differs at the most knob values.

    ``releases`` are the releases along the knob's grid (the same replicate); the same records are shown at
    every knob value, so moving the slider shows them change. Ties go to the earlier record.
    """
    if not releases or n <= 0:
        return []
    cols = protected_columns(dataset, releases[0])
    original = _joined(dataset.frame, cols)
    table = pd.concat([_joined(r.data, cols) for r in releases], axis=1, ignore_index=True)
    changed = table.ne(original, axis=0).any(axis=1).to_numpy()
    # Distinct versions per record, row by row in Python: pandas' nunique(axis=1) takes seconds on a few
    # thousand records, a set per row milliseconds.
    versions = np.array([len(set(row)) for row in pd.concat([original, table], axis=1).to_numpy()])
    ranked = pd.DataFrame({"versions": versions, "record": np.arange(len(table))})[changed]
    ranked = ranked.sort_values(["versions", "record"], ascending=[False, True], kind="stable")
    return [int(r) for r in ranked["record"].head(n)]


def changed_records(dataset: Dataset, release: Release, records: Sequence[int]) -> list[int]:
    """Which of ``records`` the release changed in any protected column."""
    cols = protected_columns(dataset, release)
    return [
        r
        for r in records
        if dataset.frame.iloc[r][cols].astype(str).tolist() != release.data.iloc[r][cols].astype(str).tolist()
    ]


def attack_targets(detail: pd.DataFrame | None, n: int = ATTACK_TARGETS) -> list[str]:
    """Up to ``n`` attack targets to draw first: about half identified, the rest the closest misses.

    Identified targets with the most credit come first; then the missed targets whose true author scored
    closest to the intruder's guess (the smallest gap between the top score and the true author's), a
    target with no evidence at all (every score 0) last.
    """
    if detail is None or detail.empty:
        return []
    true_score = detail[detail["is_true"].astype(bool)].groupby("target")["score"].max()
    per = detail.groupby("target", sort=True).agg(credit=("credit", "max"), top=("score", "max"))
    per["true"] = true_score.reindex(per.index).fillna(0.0)
    per["gap"] = per["top"] - per["true"]
    per["no_evidence"] = per["top"] <= 0
    per = per.reset_index()
    hit = per[per["credit"] > 0].sort_values(["credit", "top", "target"], ascending=[False, False, True])
    miss = per[per["credit"] <= 0].sort_values(
        ["no_evidence", "gap", "true", "target"], ascending=[True, True, False, True]
    )
    hits, misses = list(hit["target"]), list(miss["target"])
    chosen = hits[: n // 2] + misses[: n - min(len(hits), n // 2)]
    chosen += [t for t in hits if t not in chosen][: n - len(chosen)]
    return [str(t) for t in chosen[:n]]
