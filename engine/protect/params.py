"""A method's parameters, declared once (DESIGN.md: a method is one self-describing plug-in).

A `Param` says a parameter's name, type, default, range or choices, help and whether it is an expert setting.
From a method's tuple of `Param` come its constructor's checks, `Protector.params()` (which round-trips
through `get_protector`) and the fit-cache key, the CLI flags and their help, the replay command and the
dashboard's widgets. Nothing else lists a method's parameters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import ConfigError

SCALARS: tuple[type, ...] = (str, int, float, bool)

RESERVED_NAMES = frozenset(
    {"address", "audit_log", "backend", "data", "encoding", "grid", "jobs", "json", "knob", "method", "no_cache", "out"}
    | {"overwrite", "port", "replicate", "replicates", "schema", "seed", "allow_remote", "scheduler", "with_frontier"}
    | {"gold", "level", "ner", "methods", "risk", "utility", "bundle", "replay", "delimiter", "bad_rows"}
    | {"session", "name", "check", "a", "b", "limit", "pin", "by", "why", "date", "decision", "recorded_out"}
    | {"key", "key_out", "replace", "refine", "ledger", "ledger_override", "path", "dataset", "explain", "annotations"}
)
"""Names the commands use for their own settings: a method parameter of that name would collide with them
(`tests/test_plugin.py` checks that the CLI's own flags are all here)."""


@dataclass(frozen=True)
class Param:
    """One parameter of a method (or of the measures).

    ``type`` is str, int, float or bool; ``many`` makes the value a tuple of them (comma-separated on the
    command line). ``default`` None means "chosen from the data" (the help says how). ``fields`` names the
    kinds of structured field the value names (categorical, count, continuous): the dashboard offers the
    dataset's fields of those kinds; ``synthesized`` marks the fields a release replaces (a page for some
    kinds offers those only), and ``suggest`` what the dashboard fills in first: "sensitive" (the sensitive
    fields of those kinds) or "key" (the key fields). ``expert`` settings sit behind an expander on the
    dashboard. ``example`` is a value other than the default that the method accepts, where the type alone
    cannot suggest one (a list of TYPE=VALUE entries): the contract tests try it.
    """

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    many: bool = False
    fields: tuple[str, ...] = ()
    expert: bool = False
    label: str = ""
    synthesized: bool = False
    suggest: str = ""
    example: Any = None
    choice_labels: tuple[str, ...] = ()
    """How the dashboard names each of ``choices`` (the CLI takes the choices themselves)."""
    quick: Any = None
    """The value a live page starts from where the default would keep a first view waiting (20 random projections
    of the pMSE where 5 show the trend); None: the default. The CLI, the replay and the report use the default."""
    field_levels: bool = False
    """The value is FIELD=LEVEL, a level of one of the fields of kinds ``fields`` (the dashboard offers the levels
    of the fields a release synthesizes)."""

    def __post_init__(self) -> None:
        if self.type not in SCALARS:
            raise TypeError(f"parameter {self.name}: type must be one of str, int, float, bool")
        if self.suggest not in ("", "sensitive", "key"):
            raise TypeError(f"parameter {self.name}: suggest must be '', 'sensitive' or 'key'")
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise TypeError(f"parameter name {self.name!r} must be a public Python identifier")
        if self.choice_labels and len(self.choice_labels) != len(self.choices):
            raise TypeError(f"parameter {self.name}: one label per choice")

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--vendor-keywords``."""
        return "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        """The widget label: ``label`` or the name in words."""
        return self.label or self.name.replace("_", " ").capitalize()

    @property
    def named(self) -> str:
        """The parameter in messages: its label and name (``pMSE projections (projections)``) or its name."""
        return f"{self.label} ({self.name})" if self.label else self.name

    @property
    def accepted(self) -> str:
        """What the parameter accepts, in words (for messages and help)."""
        what = {str: "text", int: "a whole number", float: "a number", bool: "true or false"}[self.type]
        if self.choices:
            what = "one of " + ", ".join(map(str, self.choices))
        elif self.low is not None and self.high is not None:
            what += f" from {_fmt(self.low)} to {_fmt(self.high)}"
        elif self.low is not None:
            what += f" ≥ {_fmt(self.low)}"
        if self.many:
            plural = {str: "names", int: "whole numbers", float: "numbers", bool: "true or false"}[self.type]
            what = f"{plural} separated by commas" + (
                "" if what in ("text", "a whole number", "a number") else f", each {what.removeprefix('a ')}"
            )
        return what

    def coerce(self, value: Any, method: str = "") -> Any:
        """``value`` checked and converted (a list to a tuple); ConfigError names the parameter, the method and
        what is accepted."""
        if value is None:
            if self.default is None:
                return None
            raise ConfigError(f"{self._who(method)} needs a value; accepted: {self.accepted}")
        if self.many:
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise ConfigError(f"{self._who(method)} must be a list; accepted: {self.accepted}")
            return tuple(self._one(v, method) for v in value)
        return self._one(value, method)

    def _one(self, value: Any, method: str) -> Any:
        where = f" (a parameter of method '{method}')" if method else ""
        if self.choices:
            bad = ConfigError(f"{self.named} {value!r} is not one of {', '.join(map(str, self.choices))}{where}")
        else:
            bad = ConfigError(f"{self.named} must be {self.accepted}, got {value!r}{where}")
        if self.type is bool:
            if not isinstance(value, bool):
                raise bad
            v: Any = value
        elif self.type is int:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
                raise bad
            v = int(value)
        elif self.type is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(float(value)):
                raise bad
            v = float(value)
        else:
            if not isinstance(value, str) or not value.strip():
                raise bad
            v = value.strip()
        if self.choices and v not in self.choices:
            raise bad
        if (self.low is not None and v < self.low) or (self.high is not None and v > self.high):
            raise bad
        return v

    def parse(self, text: str) -> Any:
        """A value from command-line text ("a,b" for a list); ConfigError if it is not of the parameter's type."""
        parts = [t.strip() for t in text.split(",") if t.strip()] if self.many else [text.strip()]
        out = []
        for part in parts:
            try:
                out.append(self.type(part) if self.type is not bool else part.lower() in ("1", "true", "yes"))
            except ValueError:
                raise ConfigError(f"{self.flag} {text!r} is not accepted; accepted: {self.accepted}") from None
        return tuple(out) if self.many else out[0]

    def to_cli(self, value: Any) -> list[str]:
        """The command-line words that give ``value`` (nothing for the default)."""
        if value is None or _same(value, self.default):
            return []
        if self.type is bool:
            return [self.flag if value else "--no-" + self.flag[2:]]
        if self.many:
            return [self.flag, ",".join(_text(v) for v in value)]
        return [self.flag, _text(value)]

    def _who(self, method: str) -> str:
        return f"parameter '{self.name}'" + (f" of method '{method}'" if method else "")


GUARD_TYPES: tuple[str, ...] = (
    "URL",
    "EMAIL",
    "PHONE",
    "HANDLE",
    "CREDIT_CARD",
    "IBAN",
    "US_SSN",
    "IP_ADDRESS",
    "NAME",
)
"""What the release guard (`engine.protect.guard`) finds after every method: the validated formats, and the
names of the data's identifier columns and identifiers file (NAME)."""

GUARD_OFF = Param(
    "guard_off",
    str,
    (),
    "every method: the identifiers the release guard leaves as the method released them (by default it replaces "
    "every URL, e-mail address, phone number, @handle, card number, IBAN, social security number, IP address "
    "and name of an identifier column the method left; a type left alone is stated in the manifest, the report "
    "and a warning)",
    choices=GUARD_TYPES,
    many=True,
    expert=True,
    label="Identifiers the release guard leaves alone",
)
"""A parameter every method has (`engine.protect.base.Protector`): it decides the releases, not the fit."""

CORRECTIONS = Param(
    "corrections",
    str,
    "none",
    "every method: whether the detectors run with the allow and deny lists the steward kept from the "
    "corrections of an annotated sample (kept: strings the steward removed are never replaced, strings the "
    "steward added are always replaced, by redaction, the swap's entity recognizer, k-anonymity's tagger and the "
    "release guard; the release records the lists' digest and counts, not their strings, and is replayed only where "
    "they are kept or given with --annotations FILE)",
    choices=("none", "kept"),
    expert=True,
    label="Corrections from the annotated sample",
)
"""A parameter every method has (`engine.protect.base.Protector`): the release guard's lists decide its
releases; redaction's, the swap's and k-anonymity's decide their fits (`fit_identity` holds their digest)."""

RUN_PARAMETERS = frozenset({GUARD_OFF.name, CORRECTIONS.name})
"""The parameters every method shares that decide its releases but not its fit (left out of the fit-cache key,
kept in the sweep's)."""


def _fmt(v: float) -> str:
    """A bound in words: a whole number exactly, with thousands separators (a seed's 9,223,372,036,854,775,807);
    a float as ``%g`` gives it beyond a million (1e+40, not its 41 digits)."""
    if isinstance(v, int):
        return f"{v:,}"
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e6 else f"{v:g}"


def _text(v: Any) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return tuple(a) == tuple(b)
    return bool(a == b)


def coerce_all(declared: Sequence[Param], given: Mapping[str, Any], method: str) -> dict[str, Any]:
    """Every declared parameter's value: ``given`` checked, defaults for the rest; ConfigError on an unknown
    name, naming the parameters that are accepted."""
    names = {p.name for p in declared}
    unknown = sorted(set(given) - names)
    if unknown:
        raise ConfigError(
            f"method '{method}' has no parameter {', '.join(map(repr, unknown))}; its parameters: "
            f"{', '.join(p.name for p in declared) or 'none'}"
        )
    return {p.name: p.coerce(given.get(p.name, p.default), method) for p in declared}
