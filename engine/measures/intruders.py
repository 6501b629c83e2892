"""Attacker presets: a few intruders described in plain words, each fixing what the whole-release intruder
(`engine.measures.risk.release_intruder`) holds and knows. The preset is a measure setting (``--intruder``),
so it reaches the CLI, the dashboard, the replay command and the manifest from its declaration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.errors import ConfigError

Knows = Literal["nothing", "keys", "all"]


@dataclass(frozen=True)
class Intruder:
    """What an intruder holds and knows about the people she targets.

    ``texts``: she holds other texts by them (the dataset's external records). ``knows``: which of their field
    values she knows — none, the key fields (role "key": what an outsider can observe, such as a location or a
    rating), or every field. ``tolerance``: how roughly she knows numbers, as a share of the value (0.1: a
    released 108 matches a known 100); categories she knows exactly."""

    name: str
    label: str
    texts: bool
    knows: Knows
    tolerance: float = 0.0

    def describe(self) -> str:
        """The intruder in one sentence, for pages, reports and manifests."""
        held = "holds other texts by the people she targets" if self.texts else "holds no text by them"
        known = {
            "nothing": "knows none of their field values",
            "keys": "knows their key field values (such as location or rating)",
            "all": "knows all their field values",
        }[self.knows]
        rough = f", numbers only to within ±{self.tolerance:.0%}" if self.tolerance and self.knows != "nothing" else ""
        return f"The intruder {held} and {known}{rough}."


INTRUDERS: dict[str, Intruder] = {
    i.name: i
    for i in (
        Intruder("posts", "Has other posts by the person", texts=True, knows="nothing"),
        Intruder("posts_and_keys", "Has other posts and knows their key fields", texts=True, knows="keys"),
        Intruder(
            "posts_and_rough_fields",
            "Has other posts and knows all their fields, numbers roughly (±10%)",
            texts=True,
            knows="all",
            tolerance=0.10,
        ),
        Intruder(
            "rough_fields", "Knows all their fields, numbers roughly (±10%)", texts=False, knows="all", tolerance=0.10
        ),
    )
}
DEFAULT_INTRUDER = "posts_and_keys"


def intruder(name: str | None) -> Intruder:
    """The preset called ``name`` (the default for None); ConfigError names the presets."""
    found = INTRUDERS.get(name or DEFAULT_INTRUDER)
    if found is None:
        raise ConfigError(f"unknown intruder '{name}'; the presets are: {', '.join(INTRUDERS)}")
    return found
