"""The interval of an attack's success: a share of targets named, read as a binomial proportion."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval of a share ``successes``/``n`` (0–1 for n = 0). ``successes`` may be fractional
    (ties credited as a fair share), read as that many of ``n``."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)
