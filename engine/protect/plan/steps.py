"""What a plan is made of: its steps read from a name such as ``redact+glm``, the parameters of each step under
its own name (``glm.fields``), and the knob values of every step (`KnobValues`, of which a single method's knob is
the case of one step).

A plan's name is its steps' registered names joined by ``+``, in the order they apply. A step's parameter is
declared once more for the plan as a `StepParam`: named ``glm__fields`` in Python, written ``--glm.fields`` on
the command line. The knob of every step but the last is a parameter of the plan too (it decides the text or
fields the next step is fitted on); the last step's knob is the plan's knob, moved without fitting again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import ConfigError
from engine.protect.params import RUN_PARAMETERS, Param

if TYPE_CHECKING:
    from engine.protect.base import Knob, Protector

SEPARATOR = "+"
MAX_STEPS = 3


def is_plan(name: str) -> bool:
    """Whether ``name`` names a plan (two or more steps joined by ``+``)."""
    return SEPARATOR in name


def plan_steps(name: str, methods: Mapping[str, type[Protector]]) -> tuple[str, ...]:
    """The registered methods a plan's ``name`` names, in order; ConfigError naming what is wrong (an unknown
    or empty step, a step twice, too many steps) and what is accepted."""
    steps = tuple(s.strip() for s in name.split(SEPARATOR))
    if any(not s for s in steps):
        raise ConfigError(f"plan '{name}' has an empty step; write the methods joined by '+', e.g. redact+glm")
    unknown = [s for s in steps if s not in methods]
    if unknown:
        raise ConfigError(f"plan '{name}': no method '{unknown[0]}'; each step is one of {', '.join(sorted(methods))}")
    twice = sorted({s for s in steps if steps.count(s) > 1})
    if twice:
        raise ConfigError(f"plan '{name}' names {twice[0]} twice; each method can be one step of a plan only once")
    if len(steps) > MAX_STEPS:
        raise ConfigError(f"plan '{name}' has {len(steps)} steps; a plan has at most {MAX_STEPS}")
    return steps


def step_ident(step: str) -> str:
    """A step's name as it can prefix a Python name (``count-bayes`` → ``count_bayes``)."""
    return step.replace("-", "_")


@dataclass(frozen=True)
class StepParam(Param):
    """A parameter of one step of a plan: ``step``'s parameter ``inner``, named ``<step>__<inner>`` and written
    ``--<step>.<inner>`` on the command line. A knob of a step before the last (``is_knob``) is written
    ``--knob NAME=VALUE`` instead."""

    step: str = ""
    inner: str = ""
    is_knob: bool = False

    @property
    def flag(self) -> str:
        return f"--{self.step}.{self.inner.replace('_', '-')}"


def step_param(step: str, p: Param) -> StepParam:
    """``p`` of method ``step`` as a parameter of a plan."""
    fields = {f: getattr(p, f) for f in Param.__dataclass_fields__}
    fields.update(name=f"{step_ident(step)}__{p.name}", help=f"{step}: {p.help}", step=step, inner=p.name)
    return StepParam(**fields)


def knob_param(step: str, knob: Knob) -> StepParam:
    """The knob of ``step`` (a step before the plan's last) as a parameter of the plan: its range, a whole number
    where the knob is one, its default."""
    return StepParam(
        name=f"{step_ident(step)}__{knob.name}",
        type=int if knob.integer else float,
        default=int(knob.default) if knob.integer else float(knob.default),
        help=f"{step}: {knob.label.lower()} ({knob.symbol}) of this step: {knob.help}",
        low=knob.low,
        high=knob.high,
        label=f"{knob.label} ({step})",
        step=step,
        inner=knob.name,
        is_knob=True,
    )


def step_parameters(steps: Sequence[str], methods: Mapping[str, type[Protector]]) -> tuple[StepParam, ...]:
    """A plan's own parameters: the knob of every step but the last, then every step's declared parameters but
    those every method shares (the release guard's, which the plan has once)."""
    out: list[StepParam] = [knob_param(s, methods[s].knob) for s in steps[:-1]]
    for s in steps:
        out += [step_param(s, p) for p in methods[s].parameters if p.name not in RUN_PARAMETERS]
    return tuple(out)


@dataclass(frozen=True)
class KnobValues:
    """A value for the knob of each step, in step order: what `--knob level=2 --knob λ=0.012` gives. A single
    method's knob is the case of one step (`--knob 0.5`)."""

    steps: tuple[str, ...]
    values: tuple[float, ...]
    given: tuple[bool, ...] = ()
    """Which steps' values were given (the others are their defaults)."""

    @classmethod
    def parse(
        cls, given: Sequence[str | float], steps: Sequence[str], knobs: Sequence[Knob], defaults: Sequence[float]
    ) -> KnobValues:
        """The knob values ``given`` (``NAME=VALUE`` by the knob's name or symbol, ``λ=`` or ``lambda=``; a bare
        value for a one-step plan or a single method), checked against each step's knob; the others keep
        ``defaults``. ConfigError naming the knob that is unknown, given twice or out of range, and what is
        accepted."""
        names: dict[str, int] = {}
        for i, knob in enumerate(knobs):
            for alias in (knob.name, knob.symbol, steps[i], f"{steps[i]}.{knob.name}"):
                names.setdefault(alias.lower(), i)
        accepted = ", ".join(f"{k.name}=VALUE" for k in knobs)
        out = list(defaults)
        seen: set[int] = set()
        for item in given:
            text = str(item)
            if "=" not in text:
                if len(knobs) != 1:
                    raise ConfigError(f"--knob {text!r}: a plan has a knob per step; give {accepted}")
                i, value = 0, text
            else:
                name, value = (t.strip() for t in text.split("=", 1))
                if name.lower() not in names:
                    raise ConfigError(f"--knob {text!r}: no step's knob is named '{name}'; accepted: {accepted}")
                i = names[name.lower()]
            if i in seen:
                raise ConfigError(f"--knob: the {knobs[i].label.lower()} ({knobs[i].symbol}) is given twice")
            seen.add(i)
            try:
                number = float(str(value).replace(",", ""))
            except ValueError:
                raise ConfigError(f"--knob {text!r}: '{value}' is not a number; e.g. {accepted}") from None
            out[i] = knobs[i].validate(number)
        return cls(tuple(steps), tuple(float(v) for v in out), tuple(i in seen for i in range(len(knobs))))

    def words(self, knobs: Sequence[Knob]) -> list[str]:
        """The command-line words that give these values: ``--knob NAME=VALUE`` per step (ASCII names), or
        ``--knob VALUE`` for one step, ten significant digits."""
        if len(self.values) == 1:
            return ["--knob", f"{self.values[0]:.10g}"]
        return [w for k, v in zip(knobs, self.values) for w in ("--knob", f"{k.name}={v:.10g}")]

    def as_params(self, knobs: Sequence[Knob]) -> dict[str, Any]:
        """The values of every step but the last, as the plan's parameters (`knob_param`: a whole number where
        the knob is one)."""
        return {
            f"{step_ident(s)}__{k.name}": int(v) if k.integer else v
            for s, k, v in zip(self.steps[:-1], knobs[:-1], self.values[:-1])
        }
