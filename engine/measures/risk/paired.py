"""Did protection change what an intruder gets right? McNemar's exact test on paired outcomes (the same targets
attacked before and after protection; Greve & Sablica, Table 3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest


@dataclass(frozen=True)
class McNemar:
    """Targets the intruder named correctly before and not after (``lost``), and the reverse (``gained``); the
    two-sided exact p-value of "protection changes nothing" (each discordant pair equally likely either way)."""

    before_accuracy: float
    after_accuracy: float
    lost: int
    gained: int
    p_value: float


def mcnemar_exact(before: Sequence[bool], after: Sequence[bool]) -> McNemar:
    """McNemar's exact test: under no change, the lost among the b + c discordant targets are Binomial(b + c, ½);
    p = min(1, 2 · P(X ≤ min(b, c))). With no discordant target p = 1."""
    pre, post = np.asarray(before, dtype=bool), np.asarray(after, dtype=bool)
    if pre.shape != post.shape or pre.ndim != 1:
        raise ValueError(f"paired outcomes need two equal-length lists, got {pre.shape} and {post.shape}")
    if not len(pre):
        raise ValueError("no targets: McNemar's test needs at least one paired outcome")
    lost, gained = int((pre & ~post).sum()), int((~pre & post).sum())
    p = 1.0 if lost + gained == 0 else float(binomtest(min(lost, gained), lost + gained, 0.5).pvalue)
    return McNemar(float(pre.mean()), float(post.mean()), lost, gained, min(p, 1.0))
