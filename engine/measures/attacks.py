"""The worst applicable attack of a release: among the measures that are attacks (`Measure.attack`) and were
measured on it with a chance level, the one whose success is furthest above chance (its value minus its chance
level: an attack at 0.30 against a chance of 0.004 is worse than one at 0.50 against a chance of 0.45). The
manifest records it, the report states it with every attack's assumptions, the pages show it on a card and
`compare` can put it on the frontier's risk axis."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from engine.measures.base import CONFIDENTIAL_SUFFIX, HOLDINGS, METRICS, NAMES, MetricInfo, MetricResult, metric_info

WORST_ATTACK = "worst_attack"
"""The id of the worst applicable attack's advantage over chance, a row of every sweep that measured an attack
(`advantage_result`): a frontier's and `compare`'s risk axis like any risk measure's."""
WORST_ATTACK_INFO = MetricInfo(
    WORST_ATTACK,
    "risk",
    "lower",
    "Worst attack: advantage over chance",
    "How far the success of the worst applicable attack on the release (of the attacks measured, the one "
    "furthest above its chance level) is above what guessing gives: its value minus its chance level, with its "
    "interval moved alike. 0: no attack does better than guessing.",
    low=-1.0,
    high=1.0,
    source="the attacks measured on the release, each read against its chance level",
    card_label="Worst attack over chance",
)


class Measured(Protocol):
    """What the worst attack reads of a measure: its value, interval and chance level (a `MetricResult` or the
    record's `Measured`)."""

    @property
    def value(self) -> float | None: ...
    @property
    def lo(self) -> float | None: ...
    @property
    def hi(self) -> float | None: ...
    @property
    def chance(self) -> float | None: ...


@dataclass(frozen=True)
class WorstAttack:
    """The worst applicable attack of one release: the measure's id and name, its value with its 95% interval,
    the chance level, and what the intruder holds, names and assumes."""

    id: str
    label: str
    value: float
    lo: float | None
    hi: float | None
    chance: float
    holds: tuple[str, ...]
    names: str
    assumptions: str

    @property
    def advantage(self) -> float:
        """How far the attack's success is above chance (value − chance)."""
        return self.value - self.chance

    def card(self) -> str:
        """ "Worst attack: <name> <value> [lo–hi], chance <c>", with the measures' number format."""
        info = metric_info(self.id)
        interval = (
            f" [{info.format(self.lo)}–{info.format(self.hi)}]" if self.lo is not None and self.hi is not None else ""
        )
        return f"Worst attack: {info.card} {info.format(self.value)}{interval}, chance {info.format(self.chance)}"

    def sentence(self) -> str:
        """The attack in words: what she holds and names, and her assumptions."""
        held = "; ".join(HOLDINGS[h] for h in self.holds)
        return f"The intruder holds {held}; she names {NAMES[self.names]}. {self.assumptions}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "chance": self.chance,
            "advantage": self.advantage,
            "holds": list(self.holds),
            "names": self.names,
            "assumptions": self.assumptions,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WorstAttack:
        return cls(
            str(d["id"]),
            str(d["label"]),
            float(d["value"]),
            None if d.get("lo") is None else float(d["lo"]),
            None if d.get("hi") is None else float(d["hi"]),
            float(d["chance"]),
            tuple(str(h) for h in d["holds"]),
            str(d["names"]),
            str(d["assumptions"]),
        )


def attack_ids(metrics: Mapping[str, Any]) -> list[str]:
    """The measures of ``metrics`` that are attacks (on the release, not the unprotected baselines)."""
    return [
        m for m in metrics if not m.endswith(CONFIDENTIAL_SUFFIX) and m in METRICS and METRICS[m].attack is not None
    ]


def worst_attack(metrics: Mapping[str, Measured]) -> WorstAttack | None:
    """The attack of ``metrics`` with the largest advantage over chance (value − chance), among those measured
    with a finite value and a chance level; None when no attack was."""
    best: WorstAttack | None = None
    for mid in attack_ids(metrics):
        m = metrics[mid]
        if m.value is None or m.chance is None or not math.isfinite(m.value) or not math.isfinite(m.chance):
            continue
        info = METRICS[mid]
        attack = info.attack
        assert attack is not None
        candidate = WorstAttack(
            mid,
            info.label,
            float(m.value),
            _finite(m.lo),
            _finite(m.hi),
            float(m.chance),
            tuple(attack.holds),
            attack.names,
            attack.assumptions,
        )
        if best is None or candidate.advantage > best.advantage:
            best = candidate
    return best


def _finite(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


def advantage_result(metrics: Mapping[str, MetricResult]) -> MetricResult | None:
    """The worst applicable attack of one release's ``metrics`` as the measure `WORST_ATTACK`: its advantage over
    chance, with its interval moved by the chance level (None: no attack measured with a chance level)."""
    worst = worst_attack(metrics)
    if worst is None:
        return None
    return MetricResult(
        WORST_ATTACK,
        worst.advantage,
        lo=None if worst.lo is None else worst.lo - worst.chance,
        hi=None if worst.hi is None else worst.hi - worst.chance,
    )
