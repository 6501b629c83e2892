"""The success rate of an attack with its Wilson interval, and the risk: the attack's success on the records the
release was made from, corrected by its success on control records it was not made from.

Giomi et al. (2023), the privacy-risk estimate of the framework: every attack is a series of Bernoulli trials, its
rate estimated with the Wilson score interval (Wilson 1927), and the risk is

    risk = (attack − control) / (1 − control),

the share of the room left by the control attack that the attack on the release's own records takes up: what
the release tells about *its* records beyond what it tells about anyone of the same population. Its error is
propagated from the two rates' (first-order, as the framework does) and the risk and its interval are bounded to
[0, 1]. The estimate of a rate is the Wilson interval's centre, as the framework reports it (at the sample sizes
used it differs from successes / attacks by well under a percent).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.stats import norm

from engine.intervals import wilson_score

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Rate:
    """A success rate: ``successes`` of ``attacks`` trials, its Wilson centre ``value`` and half-width ``error``."""

    successes: float
    attacks: int
    value: float
    error: float

    @property
    def lo(self) -> float:
        return max(self.value - self.error, 0.0)

    @property
    def hi(self) -> float:
        return min(self.value + self.error, 1.0)


def wilson(successes: float, attacks: int, confidence: float = CONFIDENCE) -> Rate:
    """The Wilson score estimate of a success rate and the half-width of its ``confidence`` interval
    (`engine.intervals.wilson_score`)."""
    if attacks <= 0:
        raise ValueError("a success rate needs at least one attack")
    if not 0 <= successes <= attacks:
        raise ValueError(f"successes ({successes}) must lie between 0 and the attacks ({attacks})")
    centre, half = wilson_score(successes, attacks, float(norm.ppf(0.5 * (1.0 + confidence))))
    return Rate(successes, attacks, centre, half)


@dataclass(frozen=True)
class Risk:
    """The risk of an attack corrected by its control (bounded to [0, 1]), with its interval, and the three rates
    it comes from."""

    value: float
    lo: float
    hi: float
    attack: Rate
    control: Rate
    baseline: Rate

    @property
    def beats_baseline(self) -> bool:
        """Whether the attack did better than guessing at random: when it did not, the framework warns that the
        attack tells nothing (its risk cannot be trusted to mean safety)."""
        return self.attack.value > self.baseline.value


def residual_risk(attack: Rate, control: Rate, baseline: Rate) -> Risk:
    """(attack − control) / (1 − control) with the first-order propagated error, bounded to [0, 1]. A control
    rate of 1 leaves no room to measure anything: the risk is then 0 with the interval [0, 1]."""
    room = 1.0 - control.value
    if room <= 0:
        return Risk(0.0, 0.0, 1.0, attack, control, baseline)
    value = (attack.value - control.value) / room
    error = math.hypot(attack.error / room, control.error * (attack.value - 1.0) / room**2)

    def bound(x: float) -> float:
        return min(max(x, 0.0), 1.0)

    return Risk(bound(value), bound(value - error), bound(value + error), attack, control, baseline)
