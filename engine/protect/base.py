"""The protection contract (DESIGN.md): `Protector.fit` once, `Fitted.release(knob, rng, replicate)` many times.

Every method has exactly one privacy knob, described by a `Knob` so that the CLI validates it and the
dashboard builds its slider from it.
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import numpy as np
import pandas as pd

from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.params import CORRECTIONS, GUARD_OFF, RESERVED_NAMES, Param, coerce_all

if TYPE_CHECKING:
    from engine.protect.guard import Guard
from engine.text.detection_quality import DetectionQuality


def three_significant(value: float) -> str:
    """``value`` with three significant digits, as a person reads a knob: 0.00851, 12.3, 1, 1,500, 10,000,000; an
    exponent only outside 0.0001 … 999,999,999, written as typed (6.21e-5). Knob values on a grid are at least a
    few per cent apart, so three digits tell them apart, and a value typed back (`knob_number`) snaps to the same
    grid point."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    magnitude = math.floor(math.log10(abs(value)))
    if not -4 <= magnitude < 9:
        mantissa, exponent = f"{value:.2e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    if magnitude >= 3:
        return f"{value:,.0f}"
    text = f"{value:.{max(2 - magnitude, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def knob_number(text: str) -> float:
    """A knob value as a person types it, the way `three_significant` writes it: "0.5", "1,000,000", "6.21e-5"
    (thousands separators are dropped); ValueError naming what is accepted otherwise."""
    try:
        return float(str(text).replace(",", "").strip())
    except ValueError:
        raise ValueError(f"'{text}' is not a number; e.g. 0.5, 1,000,000 or 6.21e-5") from None


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
    refine: int = 0
    """How many knob values a sweep of the default grid may add where a measure changes most between
    neighbours (`engine.knob_range`; a continuous knob only)."""

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
        """The value as shown to a person (three significant digits; see `three_significant`)."""
        return str(int(value)) if self.integer else three_significant(value)

    def _fmt(self, value: float) -> str:
        """The value in full (six significant digits), for the accepted range of an error message."""
        if self.integer:
            return str(int(value))
        return f"{value:g}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "symbol": self.symbol,
            "label": self.label,
            "low": self.low,
            "high": self.high,
            "default": self.default,
            "scale": self.scale,
            "integer": self.integer,
            "more_privacy": self.more_privacy,
            "grid": list(self.default_grid()),
            "help": self.help,
        }


class ReleaseDetail:
    """What a method reports about one release beyond its data, as a typed object (each method's own subclass).

    ``section`` names the report section that shows it (`engine.report.sections`: the section applies to a
    release that carries a detail naming it) and ``block`` what the method's dashboard page shows it as;
    `facts` are the (label, text) lines the report's facts table and the page's captions show.
    """

    section: ClassVar[str] = ""
    block: ClassVar[str] = ""

    def facts(self) -> tuple[tuple[str, str], ...]:
        """Lines about the release in words: (label, text); none by default."""
        return ()

    def changed_columns(self) -> tuple[str, ...]:
        """Columns besides the method's protected ones that this step of the release changed (the release
        guard's); none by default."""
        return ()


@dataclass(frozen=True)
class Statement(ReleaseDetail):
    """One line a method states about a release in words (what a redaction level replaces, what ε covers)."""

    label: str
    text: str
    section: ClassVar[str] = "facts"
    block: ClassVar[str] = "caption"

    def facts(self) -> tuple[tuple[str, str], ...]:
        return ((self.label, self.text),)


D = TypeVar("D", bound=ReleaseDetail)


@dataclass(frozen=True)
class Release:
    """One protected copy of the data.

    ``changes`` is the per-record detail of what the method altered; for text methods it has the columns
    record (row position), column, start, end (character offsets in the original text), original,
    replacement, label. A row whose replacement is its original marks a span the method found and kept as
    written (the k-anonymity method's sensitive attributes), shown in the review and counted as no change. ``changes_ship`` says whether they may leave in the bundle (without their originals): a
    swap's would tell which chunks kept their true entities, so its changes stay in the internal review.
    ``withheld`` names columns the method protects by leaving them out of the bundle (the swap's document
    metadata: which company a chunk came from); the measures still see them. ``tables`` are further public
    tables the bundle writes as ``<name>.csv`` (the k-anonymity method's released quasi-identifier table).
    ``warnings`` are what the method must tell before the release leaves (the bundle's manifest and report carry
    them, so they name no confidential value); ``review_tables`` go to the internal review only, titled by
    their keys (the swap's names that no identifiers file listed). ``details`` are what the method reports
    beyond the data (`ReleaseDetail`: its statements, a synthesizer's draws, an anonymization's classes), read
    by type with `detail`.
    """

    data: pd.DataFrame
    method: str
    knob: float
    protected_columns: tuple[str, ...]
    changes: pd.DataFrame | None = None
    seed: int | None = None
    replicate: int = 0
    details: tuple[ReleaseDetail, ...] = ()
    changes_ship: bool = True
    withheld: tuple[str, ...] = ()
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    review_tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    def detail(self, kind: type[D]) -> D | None:
        """The release's detail of type ``kind`` (the first, when there are several), or None."""
        return next((d for d in self.details if isinstance(d, kind)), None)

    def facts(self) -> tuple[tuple[str, str], ...]:
        """Every detail's lines in words, in the order the method gave its details."""
        return tuple(fact for d in self.details for fact in d.facts())

    def fact(self, label: str) -> str | None:
        """The text of the fact labelled ``label`` (`facts`), or None."""
        return dict(self.facts()).get(label)

    def compact(self) -> Release:
        """The release with only its protected columns (what a sweep keeps to show a release again without
        holding the unchanged columns once per knob value); `within` puts it back into the data."""
        changed = [c for d in self.details for c in d.changed_columns()]
        kept = [c for c in dict.fromkeys([*self.protected_columns, *changed]) if c in self.data.columns]
        return replace(self, data=self.data[kept].copy())

    def within(self, frame: pd.DataFrame) -> Release:
        """A compact release completed with the unchanged columns of ``frame`` (the data it was made from)."""
        data = frame.copy(deep=False)
        for column in self.data.columns:
            data[column] = self.data[column].set_axis(frame.index)
        return replace(self, data=data)


@dataclass(frozen=True)
class CheckReport:
    """What a method's `GoldCheck` found: a table (a row per knob value), per knob value the detection quality
    per type (`engine.text.detection_quality.DetectionQuality`, keyed by a readable name such as "level 4";
    `engine.figures.detection.detection_figure` draws it, on the page and on the command line alike), and lines
    to read."""

    table: pd.DataFrame
    scores: dict[str, DetectionQuality]
    notes: tuple[str, ...] = ()
    default: str = ""
    """The key of ``scores`` shown first."""


@dataclass(frozen=True)
class GoldCheck:
    """A check of a method against a gold-annotated file the steward brings (redaction: how well it finds
    identifiers). The dashboard offers an upload for it on the method's page; ``run(path, protector,
    progress)`` reads the file (DataError naming what is wrong and what is accepted) and scores the method
    with the protector's parameters."""

    title: str
    help: str
    suffixes: tuple[str, ...]
    run: Callable[[Path, Protector, Progress], CheckReport]
    knob_key: Callable[[float], str] = str
    """The key of `CheckReport.scores` at a knob value (redaction: 4 → "level 4")."""


class Fitted(ABC):
    """What a method learned from one dataset; `release` is cheap and may be called many times.

    ``knob`` is the method's knob as it applies to this data (its range and grid may depend on the data).
    The optional abilities (`complexity`, `diagnostics`, `coefficients`) return None unless the method has
    them; the CLI, the report and the dashboard show whatever is not None.
    """

    method: str
    knob: Knob
    guard: Guard | None = None
    """The release guard every product path attaches after the fit (`engine.cache.fit_cached`); `make_release`
    applies it to each release. None: releases as the method makes them (a fit made by hand, in a test)."""

    @property
    def synthesized_fields(self) -> list[str]:
        """The structured fields a release replaces (none for methods that change only the text)."""
        return []

    def withheld_columns(self) -> tuple[str, ...]:
        """The columns every release leaves out of the bundle (`Release.withheld`); none by default. Measures
        that read released field values do not use them (no one who receives a release sees them)."""
        return ()

    def path_grid(self) -> list[float]:
        """Every knob value the fit prepared (the whole λ or α path); by default the knob's grid."""
        return self.knob.default_grid()

    def snap(self, value: float, rel: float = 5e-3) -> float:
        """``value`` validated, and replaced by the path value it rounds from: a λ shown with three significant
        digits (`Knob.format`, within half a unit of the third digit, 0.5 %) names the path point it was shown
        for, so the release is the one the sweep measured; path points lie several per cent apart."""
        v = self.knob.validate(value)
        path = np.asarray(self.path_grid(), dtype=float)
        if len(path):
            i = int(np.argmin(np.abs(path - v)))
            if abs(path[i] - v) <= rel * max(abs(path[i]), 1e-300):
                return float(path[i])
        return v

    def complexity(self) -> pd.DataFrame | None:
        """Model size along the knob, one row per (knob, field): columns knob, field, size, what (non-zero
        coefficients, splits); None for a method without a model."""
        return None

    def diagnostics(self, grid: Sequence[float]) -> pd.DataFrame | None:
        """Convergence diagnostics of the fit at each knob value of ``grid`` (columns knob, parameter, rhat,
        ess, poor); None for a method that samples no posterior."""
        return None

    def coefficients(self, value: float) -> pd.DataFrame | None:
        """The model's coefficients at knob ``value`` (a table the dashboard shows); None without a model."""
        return None

    @abstractmethod
    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        """Produce one protected copy at knob ``value`` using only ``rng`` for randomness; ``replicate`` is
        which of the M synthetic datasets this is (a method with a posterior sample gives each its own draw)."""


class Protector(ABC):
    """A protection method with one knob: a self-describing plug-in (DESIGN.md).

    A subclass declares ``name``, ``title``, ``description``, ``knob`` and its ``parameters`` (a tuple of
    `Param`), and implements `fit`. The constructor takes exactly the declared parameters as keywords, checks
    each (ConfigError naming what is accepted) and stores it as an attribute; `validate` adds checks that
    involve several parameters. `params` returns them all, so ``get_protector(name, **p.params())`` rebuilds
    the same protector, and the fit-cache key is derived from them.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    knob: ClassVar[Knob]
    parameters: ClassVar[tuple[Param, ...]] = ()
    deterministic: ClassVar[bool] = False
    changes: ClassVar[Literal["text", "fields"]] = "text"
    """What a release replaces: the text, or structured fields (the dashboard gives each its own page)."""
    protects_by: ClassVar[Literal["redacted", "generalised", "synthesized"]] = "redacted"
    """What the method does to the columns it protects, as the release ledger ranks a release against the earlier
    ones of the same records (`engine.ledger.treatments`): replaced where something was found (redaction, a swap:
    the default), generalised, or drawn from a model (synthesized)."""
    field_kinds: ClassVar[tuple[str, ...]] = ()
    """The kinds of structured field a method synthesizes (categorical, count, continuous)."""
    shown_first: ClassVar[tuple[str, ...]] = ()
    """The measures a page shows first for this method (its cards, its first risk and utility picks), in order,
    those that apply."""
    gold_check: ClassVar[GoldCheck | None] = None
    """A check against a gold file the steward brings, if the method has one (`GoldCheck`)."""
    detects: ClassVar[str] = ""
    """What the method's protection depends on finding in the text ("identifiers"), if anything: its releases
    (all but those that replace nothing) then say what share of it its detector finds on gold
    (`engine.protect.detection.DetectionShare`)."""
    fits_in_threads: ClassVar[bool] = False
    """Whether its fit computes in threads of the calling process (a model's own thread pool) and sends nothing to
    worker processes, leaving part of the cores idle: the dashboard then prepares the measures beside it."""
    change_labels: ClassVar[dict[str, str]] = {}
    """What the labels of its releases' changes name ("QIAGE" → "age"), when they say what kind of value each
    change replaced: the sample texts then colour every change by its label and name it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for common in (GUARD_OFF, CORRECTIONS):  # every method's releases pass the release guard
            if common not in cls.parameters:
                cls.parameters = (*cls.parameters, common)
        names = [p.name for p in cls.parameters]
        if len(set(names)) != len(names):
            raise TypeError(f"{cls.__name__} declares a parameter twice: {names}")
        taken = sorted(set(names) & RESERVED_NAMES)
        if taken:
            raise TypeError(
                f"{cls.__name__} names a parameter {', '.join(taken)}, which the commands use for their own "
                "settings; choose another name (e.g. training_seed)"
            )
        cls.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default) for p in cls.parameters]
        )

    def __init__(self, **params: Any) -> None:
        for key, value in coerce_all(self.parameters, params, self.name).items():
            setattr(self, key, value)
        self.validate()

    def validate(self) -> None:  # noqa: B027 (a hook; by default every combination is accepted)
        """Raise a ConfigError if the parameters do not fit together (each one alone was checked)."""

    def params(self) -> dict[str, Any]:
        """Every declared parameter's value (lists as tuples): the constructor's keywords."""
        return {p.name: getattr(self, p.name) for p in self.parameters}

    def fit_identity(self, dataset: Any = None) -> dict[str, Any]:
        """What besides the parameters and the data's own rows decides a fit on ``dataset`` (e.g. a model's
        version, a companion file's contents); part of the fit-cache key."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.params().items())})"

    def check(self, dataset: Any) -> list[str]:
        """Raise a ConfigError / DataError now if the parameters cannot apply to ``dataset`` (before a fit);
        returns the fields a release will replace (none for methods that change only the text)."""
        return []

    @abstractmethod
    def fit(self, dataset: Any, progress: Progress = no_progress) -> Fitted:
        """Do everything that does not depend on the knob."""
