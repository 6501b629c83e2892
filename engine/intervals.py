"""Wilson's score interval of a binomial proportion (Wilson 1927, "Probable inference, the law of succession, and
statistical inference", JASA 22(158)): the one home of the intervals of an attack's success, of Anonymeter-style
rates and of a detector's share of gold spans.

For ``k`` successes in ``n`` trials and the normal quantile ``z``,

    centre = (k + z²/2) / (n + z²),    half-width = z / (n + z²) · √(k(n − k)/n + z²/4),

the same as (p̂ + z²/2n ∓ z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n) with p̂ = k/n.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson_score(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The centre and half-width of Wilson's interval of ``successes`` of ``n`` (``successes`` may be fractional:
    ties credited as a fair share). ValueError unless n > 0 and 0 ≤ successes ≤ n."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"a proportion needs 0 ≤ found ≤ total and total > 0; got {successes} of {n}")
    z2 = z * z
    denominator = n + z2
    centre = (successes + z2 / 2) / denominator
    half = z / denominator * math.sqrt(successes * (n - successes) / n + z2 / 4)
    return centre, half


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's 95% interval (lo, hi) of ``successes`` of ``n``, within [0, 1]; (0, 1) for n = 0 (nothing measured:
    any share)."""
    if n == 0:
        return 0.0, 1.0
    centre, half = wilson_score(successes, n, z)
    # exactly 0 below no success and 1 above all successes, as the formula gives them without rounding
    lo = 0.0 if successes == 0 else max(0.0, centre - half)
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return lo, hi
