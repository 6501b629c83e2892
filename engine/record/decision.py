"""The steward's decision a bundle records: who chose the release, when, why, and which alternatives were
weighed (the other pinned candidates, with their measures and the commands that make each of them again)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import ConfigError, DataError

MAX_TEXT = 4000


@dataclass(frozen=True)
class Alternative:
    """A candidate weighed and not chosen: its name, settings in a line, measures (value, lo, hi per metric),
    warnings and replay command."""

    name: str
    describe: str
    metrics: Mapping[str, Mapping[str, float | None]]
    warnings: tuple[str, ...]
    replay: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "candidate": self.describe,
            "metrics": {k: dict(v) for k, v in self.metrics.items()},
            "warnings": list(self.warnings),
            "replay": self.replay,
        }


@dataclass(frozen=True)
class Decision:
    """Who chose (``by``), why, on which date (ISO, default today), the chosen candidate's name, and the
    alternatives weighed."""

    by: str
    why: str
    chosen: str
    alternatives: tuple[Alternative, ...] = ()
    date: str = ""

    def __post_init__(self) -> None:
        for what, text in (("who decided", self.by), ("why this release", self.why)):
            if not text.strip():
                raise ConfigError(f"the decision note needs {what}: it is what a reviewer reads first")
            if len(text) > MAX_TEXT:
                raise ConfigError(f"the decision note's '{what}' is {len(text):,} characters; at most {MAX_TEXT:,}")
        date = self.date or dt.date.today().isoformat()
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise ConfigError(f"the decision date must be a date as YYYY-MM-DD, got {date!r}") from None
        object.__setattr__(self, "date", date)
        object.__setattr__(self, "by", self.by.strip())
        object.__setattr__(self, "why", self.why.strip())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "decision") -> Decision:
        """A decision as `to_dict` wrote it (a manifest's ``decision``); DataError names what is missing."""
        try:
            alternatives = tuple(
                Alternative(
                    str(a["name"]),
                    str(a["candidate"]),
                    dict(a.get("metrics", {})),
                    tuple(a.get("warnings", [])),
                    str(a.get("replay", "")),
                )
                for a in d.get("alternatives", [])
            )
            return cls(str(d["by"]), str(d["why"]), str(d["chosen"]), alternatives, str(d.get("date") or ""))
        except (KeyError, TypeError, AttributeError) as e:
            raise DataError(
                f"{source} is not a decision note (by, why, chosen, date, alternatives): missing {e}"
            ) from None

    @classmethod
    def load(cls, path: str | Path) -> Decision:
        """A decision note from a JSON file (`to_dict`'s layout)."""
        p = Path(path).expanduser()
        try:
            return cls.from_dict(json.loads(p.read_text(encoding="utf-8")), str(p))
        except FileNotFoundError:
            raise ConfigError(f"no decision note at {p}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise DataError(f"{p} is not a decision note in JSON: {e}") from None

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "date": self.date,
            "why": self.why,
            "chosen": self.chosen,
            "alternatives": [a.to_dict() for a in self.alternatives],
        }


def alternatives_of(pins: Sequence[Any], chosen: str, replay: Any) -> tuple[Alternative, ...]:
    """The pins other than ``chosen`` as alternatives (`engine.project.Pin`s); ``replay(candidate)`` gives each
    one's replay command."""
    return tuple(
        Alternative(p.candidate.name, p.candidate.describe(), p.metrics, tuple(p.warnings), replay(p.candidate))
        for p in pins
        if p.candidate.name != chosen
    )
