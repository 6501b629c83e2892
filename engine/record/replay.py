"""How a release is made again: `ReplaySpec`, written as the `textsdc release` command the manifest and the report
print (`ReplaySpec.command`) and read back from it (`ReplaySpec.parse`), both from the methods' and the measures'
declarations. The CLI's bundles and the dashboard's exports record it the same way, and `textsdc verify` reads
it back to make the release again. The command writes to the bundle's folder with ``-replay`` added
(`replay_folder`): run as printed, it makes a new folder beside the bundle under review, never over it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import ConfigError, DataError
from engine.measures.registry import setting_parameters
from engine.measures.settings import MeasureSettings
from engine.protect import is_method, method_class
from engine.protect.params import Param
from engine.protect.plan import KnobValues, Plan, StepParam

REPLAY_SUFFIX = "-replay"
_VALUED = (
    *("--data", "--schema", "--encoding", "--delimiter", "--bad-rows", "--method", "--knob", "--replicates"),
    *("--replicate", "--seed", "--out"),
)


@dataclass(frozen=True)
class ReplaySpec:
    """Everything `textsdc release` needs to write a release again: the data (a demo name or a file, with its
    schema file, encoding, delimiter and what to do with rows of the wrong length where they are not the
    defaults), the method and the parameters that differ
    from its defaults, the measure settings, the knob, seed, M and the replicate, the folder the bundle names, and
    whether the report draws the frontier. ``out`` is the folder the command writes to: given the bundle's
    folder, the spec keeps `replay_folder` of it."""

    data: str
    method: str
    knob: float
    seed: int
    replicates: int
    out: str
    params: Mapping[str, Any] = field(default_factory=dict)
    options: MeasureSettings = field(default_factory=MeasureSettings)
    replicate: int = 0
    schema: str | None = None
    encoding: str | None = None
    with_frontier: bool = False
    delimiter: str | None = None
    bad_rows: str = "error"

    def __post_init__(self) -> None:
        object.__setattr__(self, "out", replay_folder(self.out))

    def command(self) -> str:
        """The shell command that replays the release: every method parameter and measure setting that is not
        its default, the knob with ten significant digits (a λ of the path snaps back to it), seed and M."""
        parts = ["textsdc", "release", "--data", self.data]
        if self.schema:
            parts += ["--schema", self.schema]
        if self.encoding:
            parts += ["--encoding", self.encoding]
        if self.delimiter:
            parts += ["--delimiter", "tab" if self.delimiter == "\t" else self.delimiter]
        if self.bad_rows != "error":
            parts += ["--bad-rows", self.bad_rows]
        parts += ["--method", self.method]
        cls = method_class(self.method)
        for p in cls.parameters:
            if not _step_knob(p):
                parts += p.to_cli(self.params.get(p.name, p.default))
        values = self.options.values()
        for p in setting_parameters():
            parts += p.to_cli(values[p.name])
        parts += _knob_words(cls, self.params, self.knob) + ["--replicates", str(self.replicates)]
        parts += ["--replicate", str(self.replicate), "--seed", str(self.seed), "--out", self.out]
        if self.with_frontier:
            parts.append("--with-frontier")
        return shlex.join(parts)

    @classmethod
    def parse(cls, command: str) -> ReplaySpec:
        """The spec a `command` wrote; DataError naming what is not a `textsdc release` command it could write."""
        words = shlex.split(command)
        if words[:2] != ["textsdc", "release"]:
            raise DataError(f"the replay command is not a `textsdc release` command: {command!r}")
        method = words[words.index("--method") + 1] if "--method" in words[:-1] else ""
        if not is_method(method):
            raise DataError(f"the replay command names no method this textsdc has: {command!r}")
        kind = method_class(method)
        declared = (*(p for p in kind.parameters if not _step_knob(p)), *setting_parameters())
        switches = {p.flag for p in declared if p.type is bool} | {"--with-frontier"}
        given: dict[str, str] = {}
        flags: dict[str, str | bool] = {}
        knobs: list[str] = []
        k = 2
        while k < len(words):
            word = words[k]
            if word in switches or (word.startswith("--no-") and "--" + word[5:] in switches):
                flags[word], k = True, k + 1
            elif word == "--knob" and k + 1 < len(words):
                knobs.append(words[k + 1])
                given[word], k = words[k + 1], k + 2
            elif word.startswith("--") and k + 1 < len(words):
                (given if word in _VALUED else flags)[word], k = words[k + 1], k + 2
            else:
                raise DataError(f"the replay command has {word!r}, which `textsdc release` does not write")
        missing = [f for f in ("--data", "--method", "--knob", "--out") if f not in given]
        if missing:
            raise DataError(f"the replay command gives no {', '.join(missing)}: {command!r}")
        params = _values(tuple(p for p in kind.parameters if not _step_knob(p)), flags)
        options = _values(setting_parameters(), flags)
        unknown = sorted(set(flags) - _flags(declared) - {"--with-frontier"})
        if unknown:
            raise DataError(
                f"the replay command gives {', '.join(unknown)}, which neither method '{method}' nor the measures take"
            )
        try:
            knob = _knob_read(kind, knobs, params)
        except ConfigError as exc:
            raise DataError(f"the replay command's knobs do not read: {exc}") from None
        try:
            return cls(
                data=given["--data"],
                method=method,
                knob=knob,
                seed=int(given.get("--seed", "0")),
                replicates=int(given.get("--replicates", "1")),
                out=given["--out"],
                params=params,
                options=MeasureSettings(options),
                replicate=int(given.get("--replicate", "0")),
                schema=given.get("--schema"),
                encoding=given.get("--encoding"),
                with_frontier="--with-frontier" in flags,
                delimiter=given.get("--delimiter"),
                bad_rows=given.get("--bad-rows", "error"),
            )
        except ValueError as exc:
            raise DataError(f"the replay command {command!r} does not read as numbers where it should: {exc}") from None


def replay_folder(out: str) -> str:
    """The folder a replay of the bundle in ``out`` writes to: ``out`` with ``-replay`` added, or ``out`` itself
    when it already ends so (the replay of a replay names the same folder, so its record is the bundle's)."""
    trimmed = out.rstrip("/") or out
    if Path(trimmed).name in ("", ".", ".."):  # "." or "..": the folder's own name
        trimmed = str(Path(trimmed).resolve())
    return trimmed if trimmed.endswith(REPLAY_SUFFIX) else trimmed + REPLAY_SUFFIX


def _step_knob(p: Param) -> bool:
    """Whether ``p`` is the knob of a plan's step before the last (written ``--knob NAME=VALUE``)."""
    return isinstance(p, StepParam) and p.is_knob


def _knob_words(cls: type, params: Mapping[str, Any], knob: float) -> list[str]:
    """``--knob VALUE`` for a method; for a plan ``--knob NAME=VALUE`` per step, its last step's last."""
    if not issubclass(cls, Plan):
        return ["--knob", f"{knob:.10g}"]
    knobs = [c.knob for c in cls.step_classes]
    upstream = [params.get(p.name, p.default) for p in cls.parameters if _step_knob(p)]
    return KnobValues(cls.steps_of(), (*map(float, upstream), float(knob))).words(knobs)


def _knob_read(cls: type, knobs: list[str], params: dict[str, Any]) -> float:
    """The knob value of the --knob words ``knobs``; a plan's step knobs before the last go into ``params``."""
    if not issubclass(cls, Plan):
        if len(knobs) != 1:
            raise ConfigError(f"a method has one knob, the command gives {len(knobs)}")
        return float(knobs[0])
    steps = [c.knob for c in cls.step_classes]
    defaults = (*(float(p.default) for p in cls.parameters if _step_knob(p)), steps[-1].default)
    values = KnobValues.parse(knobs, cls.steps_of(), steps, defaults)
    if not values.given[-1]:
        raise ConfigError(f"no --knob {steps[-1].name}=VALUE for the plan's last step")
    params.update(values.as_params(steps))
    return values.values[-1]


def _flags(declared: tuple[Param, ...]) -> set[str]:
    return {f for p in declared for f in (p.flag, "--no-" + p.flag[2:])}


def _values(declared: tuple[Param, ...], flags: Mapping[str, str | bool]) -> dict[str, Any]:
    """The values of ``declared`` parameters among ``flags`` (a boolean as its flag or --no- flag)."""
    out: dict[str, Any] = {}
    for p in declared:
        if p.flag in flags:
            value = flags[p.flag]
            out[p.name] = True if p.type is bool else p.parse(str(value))
        elif p.type is bool and "--no-" + p.flag[2:] in flags:
            out[p.name] = False
    return out
