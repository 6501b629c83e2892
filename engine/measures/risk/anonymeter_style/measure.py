"""What the three measures share: the released table and control split prepared once per dataset, the release's
table made once for the three, and the risk with its interval and chance level as a `MetricResult`."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pandas as pd

from engine.measures.base import Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.measures.risk.anonymeter_style.rates import residual_risk, wilson
from engine.measures.risk.anonymeter_style.table import N_ATTACKS, Attackable, Column, Encoded, rows
from engine.measures.shared import preset_of
from engine.protect.params import Param

ROWS = ("attack", "control", "baseline")
"""The rows of a result's detail (its column ``attack``): the attack on the records the release was made from, on
the control records, and the random guess."""


class AnonymeterRisk(Measure):
    """A risk of the Anonymeter framework (Giomi et al. 2023) on the released table: the subclass says which
    attack and makes it in `attack_counts`."""

    kind = "risk"
    better = "lower"
    applies_to = "release"
    reads_withheld = True  # a withheld field is not in the released table
    settings: ClassVar[tuple[Param, ...]] = (N_ATTACKS,)
    stream = 0  # the attack's own stream of the measures' seed
    on_every_page = True  # the three risks a regulator reads every release by: on every method page's cards
    reads_known_fields: ClassVar[str] = ""
    """What the attack does with her targets' field values ("link", "infer from"), if it needs them: not measured
    for an intruder preset who knows none."""

    def prepare(self, context: PrepareContext) -> None:
        withheld = tuple(context.withheld)
        self.side = context.shared(
            ("anonymeter_table", withheld),
            lambda: Attackable.prepare(context.dataset, withheld, context.settings.seed),
        )
        self.n_attacks = int(context.settings[N_ATTACKS.name])
        self.text_column = context.dataset.schema.text
        self.seed = context.settings.seed
        if self.reads_known_fields and preset_of(context).knows == "nothing":
            raise NotApplicable(
                "the chosen intruder knows none of her targets' field values, so she has nothing to "
                + self.reads_known_fields
            )
        self.prepare_attack(context)
        half = len(self.side.attacked)
        self.note = (
            f"{self.note} {min(self.n_attacks, half):,} attacks on the released rows of {half:,} records drawn at "
            f"random (seed {self.seed}), against as many on the {len(self.side.control):,} control records; "
            f"columns: {', '.join(self.side.names())}."
        ).strip()

    def prepare_attack(self, context: PrepareContext) -> None:  # noqa: B027 - optional: singling out needs none
        """The attack's own preparation: its columns and note (nothing by default)."""

    def columns(self, names: Sequence[str]) -> list[Column]:
        by_name = {c.name: c for c in self.side.columns}
        return [by_name[n] for n in names]

    def tables(self, view: ReleaseView) -> tuple[Encoded, Encoded, Encoded]:
        """The released rows of the attacked records, the attacked records' confidential rows and the control's."""
        released = view.memo(
            ("anonymeter_release", id(self.side)), lambda: self.side.release(view.data, self.text_column)
        )
        side = self.side
        return rows(released, side.attacked), rows(side.original, side.attacked), rows(side.original, side.control)

    def rng(self) -> np.random.Generator:
        """A fresh generator for each release, so that a release's risk does not depend on what came before."""
        return np.random.default_rng([self.seed, self.stream])

    def result(self, attack: int, control: int, baseline: int, attacks: int, found: int | None = None) -> MetricResult:
        """The risk (attack corrected by control, as the framework reports it) with its 95% interval, the
        baseline's rate as the chance level, and the three rates in the detail."""
        rates = [wilson(attack, attacks), wilson(control, attacks), wilson(baseline, attacks)]
        risk = residual_risk(*rates)
        detail = pd.DataFrame(
            {
                "attack": ROWS,
                "successes": [r.successes for r in rates],
                "attacks": attacks,
                "rate": [r.value for r in rates],
                "lo": [r.lo for r in rates],
                "hi": [r.hi for r in rates],
            }
        )
        if found is not None:
            detail["found"] = found  # singling out: the predicates there were to draw from
        return MetricResult(self.id, risk.value, detail=detail, lo=risk.lo, hi=risk.hi, chance=risk.baseline.value)

    def compute(self, view: ReleaseView) -> MetricResult:
        return self.attack_result(*self.tables(view))

    @abstractmethod
    def attack_result(self, released: Encoded, attacked: Encoded, control: Encoded) -> MetricResult:
        """The attack on one release's table: its released rows, the attacked and the control records."""


def listed(names: Sequence[str]) -> str:
    """Names in words: "a", "a and b", "a, b and c"."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def rate(detail: pd.DataFrame, which: str) -> float:
    """The success rate of ``which`` of `ROWS` in a result's detail (the mean over replicates, where a sweep
    kept several)."""
    return float(detail.loc[detail["attack"] == which, "rate"].mean())
