"""Linkability: the linkability attack of Giomi et al. (2023) (the framework's linkability evaluation).

The intruder holds two tables about the same people that share no column: one with the columns ``first`` of the
targets' confidential records, one with the columns ``second`` (by default the key fields, split in two). She
links them through the release: for each target she finds the released record nearest on the first columns and
the one nearest on the second (`engine.measures.risk.anonymeter_style.nearest`); when the two are the same
released record she has linked the two halves of the target.

- **Attack.** ``n_attacks`` attacked records drawn at random; a success when both halves meet at one released
  record (the framework's one nearest neighbour).
- **Control.** As many control records, linked through the same release.
- **Baseline.** Each half's released record drawn at random: a success when the two draws are the same record
  (about 1 / the released records).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.measures.base import Attack, MetricResult, NotApplicable, PrepareContext
from engine.measures.risk.anonymeter_style.measure import AnonymeterRisk, listed
from engine.measures.risk.anonymeter_style.nearest import nearest
from engine.measures.risk.anonymeter_style.table import N_ATTACKS, Column, Encoded, check_columns, rows
from engine.protect.params import Param

if TYPE_CHECKING:
    from engine.measures.settings import MeasureSettings


@dataclass(frozen=True)
class Outcome:
    attack: int
    control: int
    baseline: int
    attacks: int


def link(
    released: Encoded,
    attacked: Encoded,
    control: Encoded,
    first: Sequence[Column],
    second: Sequence[Column],
    n_attacks: int,
    rng: np.random.Generator,
) -> Outcome:
    """The linkability attack through ``released`` on ``n_attacks`` attacked and as many control records."""
    n = min(n_attacks, attacked.rows, control.rows)

    def links(targets: Encoded) -> int:
        chosen = rows(targets, np.sort(rng.choice(targets.rows, n, replace=False)))
        return int((nearest(chosen, released, first, rng) == nearest(chosen, released, second, rng)).sum())

    attack, held_out = links(attacked), links(control)
    guesses = rng.integers(0, released.rows, (n, 2))
    return Outcome(attack, held_out, int((guesses[:, 0] == guesses[:, 1]).sum()), n)


LINK_FIRST = Param(
    "linkability_first",
    str,
    None,
    "linkability (Anonymeter): the columns of the intruder's first table about her targets, fields or the text's "
    "features text_words, text_url, text_handle, text_number (default: the first half of the key fields)",
    many=True,
    fields=("categorical", "count", "continuous"),
    label="Linkability: the intruder's first table",
)
LINK_SECOND = Param(
    "linkability_second",
    str,
    None,
    "linkability (Anonymeter): the columns of her second table, none of the first's (default: the key fields "
    "not in the first table)",
    many=True,
    fields=("categorical", "count", "continuous"),
    label="Linkability: the intruder's second table",
)


def link_columns(
    dataset: Dataset, first: Sequence[str] | None, second: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """The two column sets of the linkability attack, the settings' or the key fields split in two; ConfigError
    for a column the released table lacks or one named in both, `NotApplicable` when a set comes out empty."""
    check_columns(dataset, first, LINK_FIRST.named)
    check_columns(dataset, second, LINK_SECOND.named)
    keys = [f.name for f in dataset.schema.fields_with_role("key")]
    if first is None and second is None:
        if len(keys) < 2:
            raise NotApplicable(
                "needs two tables of the intruder to link: at least two key fields to split between them (this "
                f"data has {len(keys)}), or the two sets of columns given as settings"
            )
        half = (len(keys) + 1) // 2
        return keys[:half], keys[half:]
    a = list(first) if first is not None else [k for k in keys if k not in (second or ())]
    b = list(second) if second is not None else [k for k in keys if k not in a]
    both = sorted(set(a) & set(b))
    if both:
        raise ConfigError(
            f"{LINK_FIRST.named} and {LINK_SECOND.named} must share no column; both name {', '.join(both)}"
        )
    if not a or not b:
        raise NotApplicable(
            "needs two tables of the intruder that share no column: the key fields left for the "
            f"{'first' if not a else 'second'} table are none (give both sets of columns as settings)"
        )
    return a, b


class LinkabilityRisk(AnonymeterRisk):
    """The linkability risk of the release (Giomi et al. 2023; see the module)."""

    id = "linkability_risk"
    label = "Linkability risk (Anonymeter)"
    card_label = "Linkability"
    meaning = (
        "Linkability, in the words of the Article 29 Working Party: can two records about the same person be "
        "linked through the release? An intruder holds two tables about her targets that share no column (by "
        "default their key fields, split in two); for each target she takes the released record nearest to each "
        "table's values and has linked the two when it is the same record. The risk is how much more often she "
        "links the people the release was made from than control people it was not made from: "
        "(attack − control) / (1 − control). 0 = no more than for anyone else; 1 = every one of them. Shown with its "
        "95% interval; the chance level is the success of linking through records drawn at random (shown, "
        "not subtracted: the risk is read against the control)."
    )
    source = (
        "Giomi, Boenisch, Wehmeyer & Tasnádi (2023), PoPETs, the linkability evaluation (nearest neighbours on "
        "two disjoint sets of columns; risk against a control split, Wilson intervals); Article 29 Working Party, "
        "Opinion 05/2014"
    )
    attack = Attack(
        holds=("released_fields", "key_fields"),
        names="record",
        baseline="control",  # a risk corrected by its control already (Giomi et al. 2023), taken as it is
        assumptions=(
            "She holds the released table and two tables with her targets' true values of two sets of columns "
            "that share none (by default the key fields split in two), and links them through the released "
            "record nearest to both, by a distance that counts a differing category as 1 and a number's "
            "difference as a share of its range. Half the records, drawn at random, are the control: she "
            "attacks the released rows of the other half. The methods learned from all the records, so the "
            "control is not wholly unseen and the risk may be slightly understated."
        ),
    )
    intruder_use = (
        "not measured for an intruder who knows none of her targets' field values; otherwise the two tables are "
        "the columns the settings name (by default the key fields split in two)."
    )
    settings = (N_ATTACKS, LINK_FIRST, LINK_SECOND)
    reads_known_fields = "link"
    stream = 2

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        try:
            link_columns(dataset, settings[LINK_FIRST.name], settings[LINK_SECOND.name])
        except NotApplicable:
            pass  # said when the measure prepares

    def prepare_attack(self, context: PrepareContext) -> None:
        first, second = link_columns(
            context.dataset, context.settings[LINK_FIRST.name], context.settings[LINK_SECOND.name]
        )
        hidden = [c for c in (*first, *second) if c not in self.side.names()]
        if hidden:
            raise NotApplicable(f"the releases withhold {listed(hidden)}, which the intruder's tables would link on")
        self.first, self.second = self.columns(first), self.columns(second)
        self.task = f"linking {listed(first)} with {listed(second)}"
        self.note = f"The intruder's tables: {listed(first)}; {listed(second)}."

    def attack_result(self, released: Encoded, attacked: Encoded, control: Encoded) -> MetricResult:
        outcome = link(released, attacked, control, self.first, self.second, self.n_attacks, self.rng())
        return self.result(outcome.attack, outcome.control, outcome.baseline, outcome.attacks)
