"""Measures as classes, metric results, and what each metric means in the steward's words.

A measure is a `Measure` subclass declared next to the code that computes it and listed once in
`engine.measures.registry`. Its class attributes say what it is (id, kind, direction, label, meaning, source,
range, and which methods it applies to); `prepare` does the release-independent work once per dataset and
`compute` measures one release. Work several measures need (a topic model, the intruder's classifiers, one
matching pass) is done once through `PrepareContext.shared` and `ReleaseView.memo`.

Metric ids are stable snake_case names. A measure computed on the unprotected data as a baseline carries the
suffix ``_confidential``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import pandas as pd

from engine.errors import ConfigError, TextsdcError
from engine.measures.intruders import INTRUDER
from engine.progress import Progress
from engine.protect.params import Param

if TYPE_CHECKING:
    from engine.data.dataset import Dataset
    from engine.measures.settings import MeasureSettings
    from engine.protect.base import D, Fitted, Release

CONFIDENTIAL_SUFFIX = "_confidential"

Kind = Literal["risk", "utility"]
Better = Literal["lower", "higher", "one"]
Target = Literal["text", "categorical", "numeric", "release"]
KINDS: tuple[str, ...] = ("risk", "utility")
DIRECTIONS: tuple[str, ...] = ("lower", "higher", "one")
TARGETS: dict[str, str] = {
    "text": "methods that change the text",
    "categorical": "methods that synthesize categorical fields",
    "numeric": "methods that synthesize count or continuous fields",
    "release": "every method (the release as a whole, text and fields)",
}

Holding = Literal["released_fields", "key_fields", "other_texts", "background", "original_sample"]
HOLDINGS: dict[str, str] = {
    "released_fields": "the released table's fields",
    "key_fields": "the confidential key fields of the people she targets",
    "other_texts": "other texts written by the people she targets",
    "background": "a background corpus the steward declares (public documents of the same sources)",
    "original_sample": "part of the confidential records themselves (the attack's training or control split)",
}
"""What an attacker may be declared to hold, in the steward's words."""

Names = Literal["record", "author", "document", "value"]
NAMES: dict[str, str] = {
    "record": "which confidential record a released record is",
    "author": "who wrote a released text",
    "document": "which document (its metadata, e.g. the company) a released text or passage came from",
    "value": "a protected value of a record (inference)",
}
"""What an attack names when it succeeds."""

Baseline = Literal["chance", "control"]
BASELINES: dict[str, str] = {
    "chance": "its chance level (guessing at random)",
    "control": "its control records (the value is corrected by them already)",
}
"""What an attack's value is read against (`Attack.baseline`), in the steward's words."""

T = TypeVar("T")


@dataclass(frozen=True)
class Attack:
    """What a risk measure that is an attack declares: what the intruder ``holds`` (keys of `HOLDINGS`), what
    she ``names`` (a key of `NAMES`), her ``assumptions`` in plain words for the report, and the ``baseline`` its
    value is read against (a key of `BASELINES`):

    - "chance": the value is the attack's success, read against the success of guessing at random, which the
      measure gives each result in `MetricResult.chance`;
    - "control": the value is already corrected by a control, as the Anonymeter-style risks are (Giomi et al.
      2023: (attack − control) / (1 − control)); `MetricResult.chance` is then the random guess's success, shown
      for information and not subtracted again.

    A measure with an ``attack`` gives its value with higher = more exposed."""

    holds: tuple[Holding, ...]
    names: Names
    assumptions: str
    baseline: Baseline = "chance"

    def __post_init__(self) -> None:
        unknown: list[str] = [h for h in self.holds if h not in HOLDINGS]
        unknown += [] if self.names in NAMES else [self.names]
        unknown += [] if self.baseline in BASELINES else [self.baseline]
        if unknown or not self.holds or not self.assumptions.strip():
            raise ConfigError(
                f"attack declaration: unknown {unknown}, or no holdings or assumptions; holdings accepted: "
                f"{', '.join(HOLDINGS)}; names accepted: {', '.join(NAMES)}; baselines accepted: "
                f"{', '.join(BASELINES)}"
            )


@dataclass(frozen=True)
class MetricInfo:
    """What a metric means. ``better`` is "lower", "higher" or "one" (closest to 1 is best, as for a ratio to
    its expectation under a good synthesizer); ``source`` is the paper and equation; ``applies_to`` one of
    `TARGETS`."""

    id: str
    kind: Kind
    better: Better
    label: str
    meaning: str
    low: float = 0.0
    high: float = 1.0
    source: str = ""
    applies_to: Target | None = None
    integer: bool = False  # a count: shown without decimals
    p_value: bool = False  # a p-value: below 0.001 shown as "< 0.001", as p-values are reported
    card_label: str = ""  # the name on a page's card, where ``label`` is too long for one
    attack: Attack | None = None  # the attack the risk measure is, if it is one
    on_every_page: bool = False  # shown on every method page's cards where measured (`Measure.on_every_page`)

    @property
    def card(self) -> str:
        """The measure's name on a card: ``card_label`` or ``label``."""
        return self.card_label or self.label

    def format(self, value: float) -> str:
        """``value`` as a card, a table and the report show it (`measured_number`): a count whole, a p-value
        below 0.001 as "< 0.001" (a McNemar p of 6e-05 is not "0.000")."""
        if value != value:  # NaN
            return "—"
        if self.integer:
            return f"{value:,.0f}"
        if self.p_value and 0 < value < 0.001:
            return "<\u00a00.001"  # a no-break space: one line on a card
        return measured_number(value)

    @property
    def better_text(self) -> str:
        return {"lower": "lower is better", "higher": "higher is better", "one": "closer to 1 is better"}[self.better]

    def goodness(self, value: float) -> float:
        """``value`` turned so that larger is always better (for frontiers and choices)."""
        return oriented(self.better, value)

    def badness(self, value: float) -> float:
        """``value`` turned so that smaller is always better: for a risk measure, smaller = less risk."""
        return -oriented(self.better, value)


def measured_number(value: float) -> str:
    """A measured value as a person reads it: 3 decimals between 0.001 and 1 (0.250, 0.008), 4 significant digits
    from 1 to 1,000 (9.811, 221.4), whole with thousands separators above; below 0.001, where 3 decimals would
    read 0.000, 3 significant digits (0.000545: a propensity score's values differ there), an exponent only
    below 1e-9."""
    size = abs(float(f"{value:.4g}"))  # as rounded, so 999.96 is "1,000", not "1000.0"
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 1:
        return f"{value:.{3 - math.floor(math.log10(size))}f}"
    if size >= 0.001 or value == 0:
        return f"{value:.3f}"
    if size < 1e-9:
        return f"{value:.2e}"
    return f"{value:.{2 - math.floor(math.log10(abs(value)))}f}".rstrip("0")


def oriented(better: Better, value: float) -> float:
    """``value`` of a measure whose direction is ``better`` turned so that larger is always better."""
    if better == "higher":
        return value
    if better == "lower":
        return -value
    return -abs(value - 1.0)


@dataclass(frozen=True)
class MetricResult:
    """One measured value; ``lo``/``hi`` is its 95% interval where it has one (over replicates, or the binomial
    interval of an attack's success); ``chance`` is the value an attack reaches by guessing at random (its
    `Attack`), which its value is read against unless the attack declares its value corrected by a control
    (`Attack.baseline`)."""

    id: str
    value: float
    detail: pd.DataFrame | None = None
    lo: float | None = None
    hi: float | None = None
    chance: float | None = None

    @property
    def info(self) -> MetricInfo:
        return metric_info(self.id)

    @property
    def kind(self) -> str:
        return self.info.kind

    def as_confidential(self) -> MetricResult:
        return replace(self, id=self.id + CONFIDENTIAL_SUFFIX)


class NotApplicable(Exception):
    """Raised by `Measure.prepare` when the measure cannot apply to the data; the message is the reason, in the
    steward's words (it is shown as "not measured: <reason>")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Memo:
    """Values computed once per key. A `NotApplicable` or `TextsdcError` raised by the factory is remembered and
    raised again, so every measure sharing the work learns the same reason without the work being redone."""

    def __init__(self) -> None:
        self._values: dict[Hashable, tuple[bool, Any]] = {}

    def get(self, key: Hashable, factory: Callable[[], T]) -> T:
        if key in self._values:
            ok, value = self._values[key]
            if ok:
                return value
            raise value
        try:
            value = factory()
        except (NotApplicable, TextsdcError) as e:
            self._values[key] = (False, e)
            raise
        self._values[key] = (True, value)
        return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self._values


class PrepareContext:
    """What measures see while they prepare, once per dataset: the data, the synthesized fields (in order, and
    split into categorical and count / continuous ones), the measure settings (`settings[name]` for a setting
    the measure declares), progress, the `shared` memo, and the fitted method where the evaluator was given one
    (a measure of one method reads what its fit prepared)."""

    def __init__(
        self,
        dataset: Dataset,
        fields: Sequence[str],
        settings: MeasureSettings,
        progress: Progress,
        fitted: Fitted | None = None,
    ) -> None:
        self.dataset = dataset
        self.fitted = fitted
        self.fields = list(fields)
        self.categorical = [f for f in self.fields if dataset.schema.field(f).kind == "categorical"]
        self.numeric = [f for f in self.fields if f not in self.categorical]
        self.settings = settings
        self.progress = progress
        self._memo = Memo()

    def shared(self, key: Hashable, factory: Callable[[], T]) -> T:
        """``factory()`` computed once for all the measures that ask for ``key``."""
        return self._memo.get(key, factory)

    @property
    def withheld(self) -> tuple[str, ...]:
        """The fields every release of the fitted method leaves out of the bundle (none without a fit)."""
        return () if self.fitted is None else tuple(self.fitted.withheld_columns())

    def not_applicable(self, target: Target, methods: Sequence[str] = ()) -> str | None:
        """Why a measure of ``target`` (and of ``methods`` only, when given) does not apply to this method, or
        None when it does."""
        if methods and (self.fitted is None or self.fitted.method not in methods):
            return f"measures releases of the {', '.join(methods)} method only"
        return target_not_applicable(target, self.categorical, self.numeric)


def target_not_applicable(target: Target, categorical: Sequence[str], numeric: Sequence[str]) -> str | None:
    """Why a measure of ``target`` does not apply to a method that synthesizes the ``categorical`` and
    ``numeric`` fields (none: a method that changes the text), or None when it does."""
    fields = [*categorical, *numeric]
    if target == "release":
        return None
    if target == "text":
        return "measures changes to the text; this method leaves the text as it is" if fields else None
    have, what = (categorical, "categorical") if target == "categorical" else (numeric, "count or continuous")
    if have:
        return None
    if fields:
        return f"measures synthesized {what} fields; this method synthesizes none"
    return "measures synthesized fields; this method leaves every field as it is"


class ReleaseView:
    """One release as the measures see it: the released frame (laid out like the dataset), the `Release` when
    there is one, and the `memo` of work shared by several measures of this release."""

    def __init__(self, dataset: Dataset, release: Release | pd.DataFrame) -> None:
        self.dataset = dataset
        self.release = release
        self.data: pd.DataFrame = release if isinstance(release, pd.DataFrame) else release.data
        self._memo = Memo()

    def detail(self, kind: type[D]) -> D | None:
        """What the method reported about the release of type ``kind`` (`Release.detail`); None for a bare frame
        (the unprotected data) or a release without one."""
        return None if isinstance(self.release, pd.DataFrame) else self.release.detail(kind)

    def memo(self, key: Hashable, factory: Callable[[], T]) -> T:
        """``factory()`` computed once for all the measures of this release that ask for ``key``."""
        return self._memo.get(key, factory)


class Measure(ABC):
    """One measure of risk or utility. Subclasses set the class attributes and implement `compute`; those that
    have release-independent work do it in `prepare`, which may raise `NotApplicable` (or a `TextsdcError`,
    whose message is taken as the reason) to have the measure listed as not measured."""

    id: ClassVar[str]
    kind: ClassVar[Kind]
    better: ClassVar[Better]
    label: ClassVar[str]
    meaning: ClassVar[str]
    source: ClassVar[str]
    applies_to: ClassVar[Target]
    low: ClassVar[float] = 0.0
    high: ClassVar[float] = 1.0
    methods: ClassVar[tuple[str, ...]] = ()
    """The methods whose releases the measure applies to (it reads what their fit prepared); empty: every method
    of its target."""
    integer: ClassVar[bool] = False  # the value is a count (shown without decimals)
    card_label: ClassVar[str] = ""  # a shorter name for a page's card, where ``label`` is too long for one
    attack: ClassVar[Attack | None] = None
    """For a risk measure that is an attack: what the intruder holds, what she names, her assumptions."""
    p_value: ClassVar[bool] = False  # the value is a p-value (shown "< 0.001" below 0.001)
    on_every_page: ClassVar[bool] = False
    """Shown on the cards of every method's page where it was measured, beside the measures the method picks first
    (`Protector.shown_first`): the risks every release is read by (singling out, linkability, inference)."""
    reads_withheld: ClassVar[bool] = False
    """Whether `prepare` depends on the fields the fitted method's releases withhold (`PrepareContext.withheld`):
    an Evaluator given a ``shared`` one prepares such a measure again when its fit withholds any."""
    intruder_use: ClassVar[str] = ""
    """For a risk measure, how it reads the attacker preset (`engine.measures.intruders`), in one or two
    sentences; appended to its meaning wherever the meaning is shown."""
    settings: ClassVar[tuple[Param, ...]] = ()
    """The settings the measure reads (`PrepareContext.settings`), declared as a method's parameters are: the
    CLI's flags, the dashboard's widgets, the replay command and the cache key come from them. A risk measure
    reads the intruder preset besides (`declared_settings`)."""
    note: str = ""
    """How the measure is taken on this data (which classifier, which target), set by `prepare` where the data
    decides it; shown beside the measure's meaning in the CLI, the dashboard and the report."""
    task: str = ""
    """What the measure is taken on where the method decides it, in words ("predicting the field mood", "with the
    intruder matching records on airline"), set by `prepare`: two methods' values of the measure are on one scale
    only when their tasks are equal (`engine.compare` keeps a method measured on another task off the frontier
    across methods). Empty: the same task for every method."""

    @classmethod
    def declared_settings(cls) -> tuple[Param, ...]:
        """``settings``, and for a risk measure the intruder preset every risk measure assumes."""
        return (*cls.settings, INTRUDER) if cls.kind == "risk" and INTRUDER not in cls.settings else cls.settings

    @classmethod  # noqa: B027 - optional: most measures' settings need no look at the data
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        """Raise a ConfigError when a setting the measure declares cannot apply to ``dataset`` (a field it does
        not have), before anything costly is fitted; ``fields`` are those the method synthesizes. Each value was
        checked against its declaration already; nothing more by default."""

    def prepare(self, context: PrepareContext) -> None:  # noqa: B027 - optional: most measures have no such work
        """Release-independent work, once per dataset (nothing by default)."""

    def finish(self, context: PrepareContext) -> None:  # noqa: B027 - optional: most measures leave nothing running
        """What `prepare` began and left running (work in worker processes, `engine.workers.beside`) collected,
        once every measure of the Evaluator is prepared, so that the others were prepared meanwhile; it may raise
        as `prepare` does (nothing by default)."""

    @abstractmethod
    def compute(self, view: ReleaseView) -> MetricResult:
        """The measure of one release."""

    @classmethod
    def info(cls) -> MetricInfo:
        return MetricInfo(
            cls.id,
            cls.kind,
            cls.better,
            cls.label,
            f"{cls.meaning} Intruder: {cls.intruder_use}" if cls.intruder_use else cls.meaning,
            cls.low,
            cls.high,
            cls.source,
            cls.applies_to,
            cls.integer,
            cls.p_value,
            cls.card_label,
            cls.attack,
            cls.on_every_page,
        )


class _Metrics(Mapping[str, MetricInfo]):
    """Metric id → `MetricInfo` of every registered measure, in registry order. Read from the registry on first
    use (the registry imports the measures, which import this module), and again when it changes."""

    def __init__(self) -> None:
        self._infos: dict[str, MetricInfo] = {}
        self._of: tuple[type[Measure], ...] | None = None

    def _load(self) -> dict[str, MetricInfo]:
        from engine.measures import registry

        if self._of is not registry.MEASURES:
            self._infos = {m.id: m.info() for m in registry.MEASURES}
            self._of = registry.MEASURES
        return self._infos

    def __getitem__(self, metric_id: str) -> MetricInfo:
        return self._load()[metric_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"METRICS({list(self)})"


METRICS: Mapping[str, MetricInfo] = _Metrics()


def metric_info(metric_id: str) -> MetricInfo:
    """Look up a metric, understanding the ``_confidential`` suffix of baselines."""
    base = metric_id.removesuffix(CONFIDENTIAL_SUFFIX)
    info = METRICS.get(base)
    if info is None and base == "worst_attack":  # derived from the attacks measured, not a registered measure
        from engine.measures.attacks import WORST_ATTACK_INFO

        info = WORST_ATTACK_INFO
    if info is None:
        raise ConfigError(f"unknown metric '{metric_id}'; known metrics: {', '.join(sorted(METRICS))}")
    if base != metric_id:
        return replace(info, id=metric_id, label=info.label + " (unprotected data)")
    return info
