"""The worst applicable attack of a release: among the measures that are attacks (`Measure.attack`) and were
measured on it, the one whose success goes furthest beyond its own baseline, every attack put on one scale.

The scale is the Anonymeter framework's risk (Giomi et al. 2023): (value − baseline) / (1 − baseline), the share
of the room left above the baseline that the attack takes up. An attack read against its chance level
(`Attack.baseline` "chance": guessing at random, `MetricResult.chance`) is put on it by that formula; an
Anonymeter-style risk (`Attack.baseline` "control") is that formula already, with its control as the baseline,
and is taken as it is (subtracting its random guess's rate again would correct it twice). Its interval is moved
by the same transform. An attack at 0.30 against a chance of 0.004 reads (0.30 − 0.004) / 0.996 = 0.297 and is
worse than a singling-out risk of 0.213; one at 0.50 against a chance of 0.45 reads 0.091. The manifest records
the worst, the report states it with every attack's assumptions, the pages show it on a card and `compare` can
put it on the frontier's risk axis."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from engine.measures.base import (
    BASELINES,
    CONFIDENTIAL_SUFFIX,
    HOLDINGS,
    METRICS,
    NAMES,
    Baseline,
    MetricInfo,
    MetricResult,
    metric_info,
)

WORST_ATTACK = "worst_attack"
"""The id of the worst applicable attack's success beyond its baseline, a row of every sweep that measured an
attack (`advantage_result`): a frontier's and `compare`'s risk axis like any risk measure's."""
WORST_ATTACK_INFO = MetricInfo(
    WORST_ATTACK,
    "risk",
    "lower",
    "Worst attack: success beyond its baseline",
    "How far the worst applicable attack on the release goes beyond its own baseline, every attack on one "
    "scale: (value − baseline) / (1 − baseline), the share of the room above the baseline the attack takes up, "
    "as the Anonymeter framework (Giomi et al. 2023) reads its risks. The baseline is the chance level (guessing "
    "at random) for an attack that names authors, documents or records; singling out, linkability and inference "
    "are corrected by their control records already and taken as they are. Its interval is moved alike. 0: no "
    "attack does better than its baseline; 1: the attack succeeds wherever its baseline fails.",
    low=-1.0,
    high=1.0,
    source=(
        "the attacks measured on the release, each read against its baseline as Giomi, Boenisch, Wehmeyer & "
        "Tasnádi (2023) read an attack against its control"
    ),
    card_label="Worst attack beyond baseline",
)


def beyond(value: float, baseline: float) -> float:
    """(value − baseline) / (1 − baseline): the share of the room above ``baseline`` that ``value`` takes up
    (negative below the baseline); 0 where the baseline leaves no room (a baseline of 1)."""
    room = 1.0 - baseline
    return 0.0 if room <= 0 else (value - baseline) / room


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
    the chance level (guessing at random), the ``baseline`` its value is read against (`Attack.baseline`), and
    what the intruder holds, names and assumes."""

    id: str
    label: str
    value: float
    lo: float | None
    hi: float | None
    chance: float
    holds: tuple[str, ...]
    names: str
    assumptions: str
    baseline: Baseline = "chance"

    def scaled(self, x: float) -> float:
        """``x`` (the value or an end of its interval) on the one scale of every attack: (x − chance) /
        (1 − chance) for an attack read against chance, ``x`` itself for one corrected by its control."""
        return x if self.baseline == "control" else beyond(x, self.chance)

    @property
    def advantage(self) -> float:
        """How far the attack goes beyond its baseline, on the one scale of every attack (`scaled`)."""
        return self.scaled(self.value)

    @property
    def against(self) -> str:
        """What the value is read against, as the card says it: "chance 0.004" or "corrected by its control"."""
        if self.baseline == "control":
            return "corrected by its control"
        return f"chance {metric_info(self.id).format(self.chance)}"

    def card(self) -> str:
        """ "Worst attack: <name> <value> [lo–hi], chance <c>" (or ", corrected by its control"), with the
        measures' number format."""
        info = metric_info(self.id)
        interval = (
            f" [{info.format(self.lo)}–{info.format(self.hi)}]" if self.lo is not None and self.hi is not None else ""
        )
        return f"Worst attack: {info.card} {info.format(self.value)}{interval}, {self.against}"

    def scale_sentence(self) -> str:
        """How its value was put on the one scale of every attack, with the numbers."""
        info = metric_info(self.id)
        if self.baseline == "control":
            return (
                f"Its value is a risk corrected by its control records already ((attack − control) / (1 − control)), "
                f"taken as it is: {info.format(self.advantage)} beyond its baseline"
            )
        return (
            f"Beyond its chance level, on the scale of the control-corrected risks: ({info.format(self.value)} − "
            f"{info.format(self.chance)}) / (1 − {info.format(self.chance)}) = {info.format(self.advantage)}"
        )

    def sentence(self) -> str:
        """The attack in words: what she holds and names, her assumptions and what her success is read against."""
        held = "; ".join(HOLDINGS[h] for h in self.holds)
        return (
            f"The intruder holds {held}; she names {NAMES[self.names]}. {self.assumptions} Her success is read "
            f"against {BASELINES[self.baseline]}."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "value": self.value,
            "lo": self.lo,
            "hi": self.hi,
            "chance": self.chance,
            "baseline": self.baseline,
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
            "control" if d.get("baseline") == "control" else "chance",
        )


def attack_ids(metrics: Mapping[str, Any]) -> list[str]:
    """The measures of ``metrics`` that are attacks (on the release, not the unprotected baselines)."""
    return [
        m for m in metrics if not m.endswith(CONFIDENTIAL_SUFFIX) and m in METRICS and METRICS[m].attack is not None
    ]


def worst_attack(metrics: Mapping[str, Measured]) -> WorstAttack | None:
    """The attack of ``metrics`` that goes furthest beyond its baseline on the one scale of every attack
    (`WorstAttack.advantage`), among those measured with a finite value and a chance level; None when no attack
    was."""
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
            attack.baseline,
        )
        if best is None or candidate.advantage > best.advantage:
            best = candidate
    return best


def _finite(v: float | None) -> float | None:
    return None if v is None or not math.isfinite(v) else float(v)


def advantage_result(metrics: Mapping[str, MetricResult]) -> MetricResult | None:
    """The worst applicable attack of one release's ``metrics`` as the measure `WORST_ATTACK`: how far it goes
    beyond its baseline, with its interval moved by the same transform (None: no attack measured with a chance
    level)."""
    worst = worst_attack(metrics)
    if worst is None:
        return None
    return MetricResult(
        WORST_ATTACK,
        worst.advantage,
        lo=None if worst.lo is None else worst.scaled(worst.lo),
        hi=None if worst.hi is None else worst.scaled(worst.hi),
    )
