"""Attacker presets: a few intruders described in plain words, each fixing what every risk measure's intruder
holds and knows. The preset is a measure setting (``--intruder``), so it reaches the CLI, the dashboard, the
replay command and the manifest from its declaration.

How the measures read it (each states it in its meaning, `Measure.intruder_use`):
- ``texts``: the attacks that weigh writing (the whole-release intruder, Schneider et al.'s identification,
  Ororbia et al.'s authorship attack, the company attack of the swap) are not measured for an intruder who
  holds no text, except the whole-release one, which then links on field values alone;
- ``knows``: the fields the record-linkage measures match on (the whole-release intruder, Schneider et al.'s
  first stage, Guo & Hu's EMR / TMR / FMR / unique matches and attribute risk);
- ``tolerance``: how closely a known number must agree (Guo & Hu's radii when None).

The default, ``posts_and_fields``, is the intruder the papers assume, so the papers' measures keep their
published definitions unless the steward chooses another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.errors import ConfigError
from engine.protect.params import Param

Knows = Literal["nothing", "keys", "fields"]
COUNT_RADIUS = 5.0
"""Guo & Hu's closeness of a known count (Section 4.2): a released count within ±5."""
LOG_RADIUS = 0.05
"""Guo & Hu's closeness of a known amount (Section 4.2): |log y' − log y| ≤ 0.05·|log y|."""


@dataclass(frozen=True)
class Intruder:
    """What an intruder holds and knows about the people she targets.

    ``texts``: she holds other texts by them (the dataset's external records). ``knows``: which of their field
    values she knows — none, the key fields (role "key": what an outsider can observe, such as a location or a
    rating), or the key fields and the fields being protected (role "sensitive"; Schneider et al.'s measure
    also the fields the method synthesizes, as in its paper). ``tolerance``: how roughly she knows numbers, as a share of the value (0.1: a released 108
    matches a known 100); None: as Guo & Hu's intruder, a count within ±5 and an amount within ±5% on the log
    scale. Categories she knows exactly."""

    name: str
    label: str
    texts: bool
    knows: Knows
    tolerance: float | None = None

    def knows_role(self, role: str) -> bool:
        """Whether she knows the values of fields of schema role ``role`` ("key", "sensitive", "other")."""
        return role == "key" and self.knows != "nothing" or role == "sensitive" and self.knows == "fields"

    def closeness(self, kind: str) -> tuple[Literal["absolute", "relative", "log"], float]:
        """How a known number of field kind ``kind`` ("count" or "continuous") must agree with a released one:
        (how, radius) as `engine.measures.risk.matching.close` reads them."""
        if self.tolerance is not None:
            return "relative", self.tolerance
        return ("absolute", COUNT_RADIUS) if kind == "count" else ("log", LOG_RADIUS)

    def describe(self) -> str:
        """The intruder in one sentence, for pages, reports and manifests."""
        held = "holds other texts by the people she targets" if self.texts else "holds no text by them"
        known = {
            "nothing": "knows none of their field values",
            "keys": "knows their key field values (such as location or airline)",
            "fields": "knows their key field values and those of the fields being protected (such as rating or price)",
        }[self.knows]
        if self.knows == "nothing":
            rough = ""
        elif self.tolerance is None:
            rough = ", a count to within ±5 and an amount to within ±5% on the log scale (Guo & Hu)"
        else:
            rough = f", numbers only to within ±{self.tolerance:.0%}"
        return f"The intruder {held} and {known}{rough}."


INTRUDERS: dict[str, Intruder] = {
    i.name: i
    for i in (
        Intruder("posts", "Has other posts by the person", texts=True, knows="nothing"),
        Intruder("posts_and_keys", "Has other posts and knows their key fields", texts=True, knows="keys"),
        Intruder(
            "posts_and_fields",
            "Has other posts and knows their fields (the papers' intruder)",
            texts=True,
            knows="fields",
        ),
        Intruder(
            "posts_and_rough_fields",
            "Has other posts and knows their fields, numbers roughly (±10%)",
            texts=True,
            knows="fields",
            tolerance=0.10,
        ),
        Intruder(
            "rough_fields", "Knows their fields, numbers roughly (±10%)", texts=False, knows="fields", tolerance=0.10
        ),
    )
}
DEFAULT_INTRUDER = "posts_and_fields"


def intruder(name: str | None) -> Intruder:
    """The preset called ``name`` (the default for None); ConfigError names the presets."""
    found = INTRUDERS.get(name or DEFAULT_INTRUDER)
    if found is None:
        raise ConfigError(f"unknown intruder '{name}'; the presets are: {', '.join(INTRUDERS)}")
    return found


INTRUDER = Param(
    "intruder",
    str,
    DEFAULT_INTRUDER,
    "the intruder every risk measure assumes (each states how it reads her in its meaning): "
    + "; ".join(f"{i.name}: {i.describe().removeprefix('The intruder ').rstrip('.')}" for i in INTRUDERS.values()),
    choices=tuple(INTRUDERS),
    choice_labels=tuple(i.label for i in INTRUDERS.values()),
    label="Intruder",
)
"""The attacker preset, a setting every risk measure reads (`Measure.declared_settings`)."""
