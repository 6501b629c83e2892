"""The protection contract (DESIGN.md): `Protector.fit` once, `Fitted.release(knob, rng)` many times.

Every method has exactly one privacy knob, described by a `Knob` so that the CLI validates it and the
dashboard builds its slider from it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from engine.errors import ConfigError

Progress = Callable[[int, int, str], None]
"""A progress callback: (done, total, what is being done)."""


def no_progress(done: int, total: int, what: str = "") -> None:
    """The progress callback that reports nothing."""


@dataclass(frozen=True)
class Knob:
    """The single privacy knob of a method.

    ``more_privacy`` says which direction of the knob protects more: ``"higher"`` (k, r, redaction level,
    λ, α) or ``"lower"`` (ε). A knob whose range depends on the data (λ) is described once more by the fitted
    method (`Fitted.knob`), with the range and grid of that data.
    """

    name: str
    symbol: str
    label: str
    low: float
    high: float
    default: float
    scale: Literal["linear", "log"] = "linear"
    integer: bool = False
    more_privacy: Literal["higher", "lower"] = "higher"
    grid: tuple[float, ...] = ()
    help: str = ""

    def validate(self, value: Any) -> float:
        """Return ``value`` as a number inside the knob's range or raise a ConfigError saying what is accepted."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{self.label} ({self.symbol}) must be a number, got {value!r}") from None
        if not math.isnan(v) and self.scale == "log" and not self.integer:
            # A value printed with a few digits may fall a hair outside the range it was read from.
            if self.low * (1 - 1e-5) <= v < self.low:
                v = self.low
            elif self.high < v <= self.high * (1 + 1e-5):
                v = self.high
        if math.isnan(v) or v < self.low or v > self.high:
            raise ConfigError(
                f"{self.label} ({self.symbol}) = {value!r} is out of range; accepted: {self._fmt(self.low)} to {self._fmt(self.high)}"
            )
        if self.integer:
            if v != int(v):
                raise ConfigError(f"{self.label} ({self.symbol}) must be a whole number, got {value!r}")
            return float(int(v))
        return v

    def default_grid(self) -> list[float]:
        if self.grid:
            return list(self.grid)
        if self.integer:
            return [float(v) for v in range(int(self.low), int(self.high) + 1)]
        if self.scale == "log":
            return [float(v) for v in np.geomspace(self.low, self.high, 9)]
        return [float(v) for v in np.linspace(self.low, self.high, 9)]

    def format(self, value: float) -> str:
        return self._fmt(value)

    def _fmt(self, value: float) -> str:
        if self.integer:
            return str(int(value))
        return f"{value:g}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "symbol": self.symbol, "label": self.label, "low": self.low, "high": self.high,
            "default": self.default, "scale": self.scale, "integer": self.integer,
            "more_privacy": self.more_privacy, "grid": list(self.default_grid()), "help": self.help,
        }


@dataclass(frozen=True)
class Release:
    """One protected copy of the data.

    ``changes`` is the per-record detail of what the method altered; for text methods it has the columns
    record (row position), column, start, end (character offsets in the original text), original,
    replacement, label.
    """

    data: pd.DataFrame
    method: str
    knob: float
    protected_columns: tuple[str, ...]
    changes: pd.DataFrame | None = None
    seed: int | None = None
    replicate: int = 0
    info: dict[str, Any] = field(default_factory=dict)


class Fitted(ABC):
    """What a method learned from one dataset; `release` is cheap and may be called many times.

    ``knob`` is the method's knob as it applies to this data (its range and grid may depend on the data).
    """

    method: str
    knob: Knob

    @property
    def synthesized_fields(self) -> list[str]:
        """The structured fields a release replaces (none for methods that change only the text)."""
        return []

    def path_grid(self) -> list[float]:
        """Every knob value the fit prepared (the whole λ or α path); by default the knob's grid."""
        return self.knob.default_grid()

    def snap(self, value: float, rel: float = 5e-5) -> float:
        """``value`` validated, and replaced by the path value it rounds from (a λ printed with six digits
        names the path point it was printed from, so the release is the one the sweep measured)."""
        v = self.knob.validate(value)
        path = np.asarray(self.path_grid(), dtype=float)
        if len(path):
            i = int(np.argmin(np.abs(path - v)))
            if abs(path[i] - v) <= rel * max(abs(path[i]), 1e-300):
                return float(path[i])
        return v

    @abstractmethod
    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        """Produce one protected copy at knob ``value`` using only ``rng`` for randomness; ``replicate`` is
        which of the M synthetic datasets this is (a method with a posterior sample gives each its own draw)."""


class Protector(ABC):
    """A protection method with one knob. Parameters go in ``__init__``; `fit` does the expensive work once."""

    name: str
    title: str
    description: str
    knob: Knob
    deterministic: bool = False
    changes: Literal["text", "fields"] = "text"
    """What a release replaces: the text, or structured fields (the dashboard gives each its own page)."""
    field_kinds: tuple[str, ...] = ()
    """The kinds of structured field a method synthesizes (categorical, count, continuous)."""

    def params(self) -> dict[str, Any]:
        """The parameters that, with the dataset's fingerprint, identify a fit (the cache key)."""
        return {}

    def check(self, dataset: Any) -> list[str]:
        """Raise a ConfigError / DataError now if the parameters cannot apply to ``dataset`` (before a fit);
        returns the fields a release will replace (none for methods that change only the text)."""
        return []

    @abstractmethod
    def fit(self, dataset: Any, progress: Progress = no_progress) -> Fitted:
        """Do everything that does not depend on the knob."""
