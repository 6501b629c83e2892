"""Inference: the inference attack of Giomi et al. (2023) (the framework's inference evaluation).

The intruder knows the auxiliary columns of her targets (by default the key fields) and wants their secret (by
default the first sensitive field). For each target she finds the released record nearest on the auxiliary
columns (`engine.measures.risk.anonymeter_style.nearest`) and guesses that its secret is the target's.

- **Attack.** ``n_attacks`` attacked records drawn at random; a success when the guess is right: the same
  category, or for a number within 5% of the target's value (`TOLERANCE`; two missing values agree).
- **Control.** As many control records, guessed through the same release.
- **Baseline.** For each target the secret of a released record drawn at random.

Stated choice: the framework's code measures a number's closeness relative to the *guess*; here it is relative
to the target's value, so a guess of the wrong sign never counts as close.
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
from engine.measures.risk.anonymeter_style.table import N_ATTACKS, Column, Encoded, rows
from engine.protect.params import Param

if TYPE_CHECKING:
    from engine.measures.settings import MeasureSettings

TOLERANCE = 0.05
"""How close a guessed number must be to the target's, as a share of the target's value (the framework's)."""


@dataclass(frozen=True)
class Outcome:
    attack: int
    control: int
    baseline: int
    attacks: int


def correct(guesses: np.ndarray, secrets: np.ndarray, numeric: bool) -> np.ndarray:
    """Which guesses are right: equal categories, numbers within `TOLERANCE` of the secret, or both missing."""
    if not numeric:
        return guesses == secrets
    both_missing = np.isnan(guesses) & np.isnan(secrets)
    with np.errstate(invalid="ignore"):
        close = np.abs(guesses - secrets) <= TOLERANCE * np.abs(secrets)
    return both_missing | close


def infer(
    released: Encoded,
    attacked: Encoded,
    control: Encoded,
    known: Sequence[Column],
    secret: Column,
    n_attacks: int,
    rng: np.random.Generator,
) -> Outcome:
    """The inference attack through ``released`` on ``n_attacks`` attacked and as many control records."""
    n = min(n_attacks, attacked.rows, control.rows)
    released_secret = released.values[secret.name]

    def guessed(targets: Encoded) -> tuple[int, np.ndarray]:
        chosen = rows(targets, np.sort(rng.choice(targets.rows, n, replace=False)))
        guesses = released_secret[nearest(chosen, released, known, rng)]
        return int(correct(guesses, chosen.values[secret.name], secret.numeric).sum()), chosen.values[secret.name]

    attack, secrets = guessed(attacked)
    held_out, _ = guessed(control)
    blind = released_secret[rng.integers(0, released.rows, n)]
    return Outcome(attack, held_out, int(correct(blind, secrets, secret.numeric).sum()), n)


SECRET = Param(
    "inference_secret",
    str,
    None,
    "inference (Anonymeter): the field the intruder tries to infer from the key fields (default: the first "
    "sensitive field)",
    fields=("categorical", "count", "continuous"),  # unset on a page too: the measure takes the first sensitive
    label="Inference: the field she infers",
)


def secret_and_known(dataset: Dataset, secret: str | None) -> tuple[str, list[str]]:
    """The field inferred and the key fields she knows besides it; ConfigError for a field the data lacks,
    `NotApplicable` without a sensitive field or a key field to infer from."""
    fields = dataset.schema.field_names
    if secret is not None and secret not in fields:
        raise ConfigError(
            f"{SECRET.named}: {secret!r} is not a field of the data; accepted: {', '.join(fields) or 'none'}"
        )
    if secret is None:
        sensitive = [f.name for f in dataset.schema.fields_with_role("sensitive")]
        if not sensitive:
            raise NotApplicable("needs a field to infer: the data has no sensitive field (or name one as a setting)")
        secret = sensitive[0]
    known = [f.name for f in dataset.schema.fields_with_role("key") if f.name != secret]
    if not known:
        raise NotApplicable(f"needs a key field that the intruder knows, to infer {secret} from; the data has none")
    return secret, known


class InferenceRisk(AnonymeterRisk):
    """The inference risk of the release (Giomi et al. 2023; see the module)."""

    id = "inference_risk"
    label = "Inference risk (Anonymeter)"
    card_label = "Inference"
    meaning = (
        "Inference, in the words of the Article 29 Working Party: can a person's protected value be deduced from "
        "the release? An intruder who knows her targets' key fields takes the released record nearest to them and "
        "guesses that its value of the protected field (by default the first sensitive field) is theirs. The "
        "risk is how much more often she guesses right for the people the release was made from than for "
        "control people it was not made from: (attack − control) / (1 − control). 0 = no better than what the "
        "release teaches about anyone of the population; 1 = right for every one of them. Shown with its 95% "
        "interval; the chance level is the success of guessing the value of a released record drawn at random "
        "(shown, not subtracted: the risk is read against the control)."
    )
    source = (
        "Giomi, Boenisch, Wehmeyer & Tasnádi (2023), PoPETs, the inference evaluation (nearest-neighbour guess "
        "of a secret column; risk against a control split, Wilson intervals); Article 29 Working Party, Opinion "
        "05/2014"
    )
    attack = Attack(
        holds=("released_fields", "key_fields"),
        names="value",
        baseline="control",  # a risk corrected by its control already (Giomi et al. 2023), taken as it is
        assumptions=(
            "She holds the released table and knows her targets' true key fields; she guesses the protected "
            "field from the released record nearest to them (a category must be the same, a number within 5%). "
            "Half the records, drawn at random, are the control: she attacks the released rows of the other "
            "half. What a release teaches about everyone (a category common among people like the target) counts "
            "in the control too and is not risk here. The methods learned from all the records, so the control "
            "is not wholly unseen and the risk may be slightly understated."
        ),
    )
    intruder_use = (
        "not measured for an intruder who knows none of her targets' field values; otherwise she knows the key "
        "fields and infers the field the setting names (what the preset says she knows of it is set aside)."
    )
    settings = (N_ATTACKS, SECRET)
    reads_known_fields = "infer from"
    stream = 3

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        try:
            secret_and_known(dataset, settings[SECRET.name])
        except NotApplicable:
            pass  # said when the measure prepares

    def prepare_attack(self, context: PrepareContext) -> None:
        secret, known = secret_and_known(context.dataset, context.settings[SECRET.name])
        if secret not in self.side.names():
            raise NotApplicable(f"the releases withhold {secret}, so it cannot be inferred from them")
        known = [k for k in known if k in self.side.names()]
        if not known:
            raise NotApplicable("the releases withhold every key field the intruder would infer from")
        (self.secret,), self.known = self.columns([secret]), self.columns(known)
        self.task = f"inferring {secret} from {listed(known)}"
        self.note = f"She infers {secret} from {listed(known)}."

    def attack_result(self, released: Encoded, attacked: Encoded, control: Encoded) -> MetricResult:
        outcome = infer(released, attacked, control, self.known, self.secret, self.n_attacks, self.rng())
        return self.result(outcome.attack, outcome.control, outcome.baseline, outcome.attacks)
