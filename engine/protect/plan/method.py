"""A plan: an ordered release of registered methods, each applied to the data as the steps before it released it
(``redact+glm``: the text redacted at a level, then the sensitive fields synthesized from the redacted text).

A plan is a `Protector` like any method, made from its steps' declarations (`plan_class`), so that every path
that takes a method (sweep, release, export, replay, verify, compare) takes a plan. Its knobs are its steps'
knobs: the knob of each step but the last is a parameter of the plan (it decides what the next step is fitted
on), the last step's knob is the plan's knob. The fit fits each step once on the data as the steps before it
released it: a step's fit on given data is kept in this process (`STEP_FITS`), so moving a knob fits again only
from the step after it on, and moving the last knob only draws a release.

Randomness: the steps before the last release once per knob value, each with the generator of its own seed,
``SeedSequence([step_seed, position])`` (``step_seed`` a parameter of the plan), since the steps after it are
fitted on that release; the release's generator (replicate m under the run's seed) drives the last step only.
This is a simplification where a step before the last is random (md, rnn): the replicates vary the last
step's draws, not the synthetic text the fields are drawn from.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release, ReleaseDetail
from engine.protect.params import CORRECTIONS, GUARD_OFF, Param
from engine.protect.plan.steps import KnobValues, StepParam, plan_steps, step_ident, step_parameters

STEP_SEED = Param(
    "step_seed",
    int,
    0,
    "plans: the seed of the releases of the steps before the last (step i draws from SeedSequence([step_seed, i]))",
    low=0,
    high=2**63 - 1,
    expert=True,
)
STEP_FITS_KEPT = 16
STEP_FITS: OrderedDict[tuple[str, str, str, str], Fitted] = OrderedDict()
"""The fits of steps made in this process, by (method, parameters, fit identity, data fingerprint): the fit of a
step on data the steps before it released the same way is not made again."""


def fit_step(protector: Protector, dataset: Dataset, progress: Progress) -> Fitted:
    """``protector.fit(dataset)``, or the fit of the same step on the same data made before in this process."""
    key = (protector.name, repr(protector.params()), repr(protector.fit_identity(dataset)), dataset.fingerprint)
    if key in STEP_FITS:
        STEP_FITS.move_to_end(key)
        return STEP_FITS[key]
    fitted = protector.fit(dataset, progress)
    STEP_FITS[key] = fitted
    while len(STEP_FITS) > STEP_FITS_KEPT:
        STEP_FITS.popitem(last=False)
    return fitted


def step_rng(step_seed: int, position: int) -> np.random.Generator:
    """The generator of the release of the step at ``position`` (0 first) before a plan's last step."""
    return np.random.default_rng(np.random.SeedSequence([step_seed, position]))


def released_as(dataset: Dataset, release: Release) -> Dataset:
    """``dataset`` with its records as ``release`` released them (the columns it changed; the intruder's external
    records as they are): the data the next step of a plan is fitted on."""
    frame = dataset.frame.copy()
    for column in release.data.columns:
        if column in frame.columns:
            frame[column] = release.data[column].set_axis(frame.index)
    return replace(dataset, frame=frame)


@dataclass(frozen=True)
class PlanStep(ReleaseDetail):
    """One step of a plan's release: the method, its knob and value, and the plan's step seed (the step draws
    from ``SeedSequence([seed, position])``; None for the last step, which draws from the release's generator)."""

    position: int
    method: str
    title: str
    knob: str
    value: str
    seed: int | None
    section: ClassVar[str] = "facts"
    block: ClassVar[str] = "caption"

    def facts(self) -> tuple[tuple[str, str], ...]:
        if self.seed is None:
            return ((f"Plan step {self.position + 1}", f"{self.title}, at the release's {self.knob}"),)
        said = f"{self.title}, {self.knob} = {self.value}, drawn with step seed {self.seed} at position {self.position}"
        return ((f"Plan step {self.position + 1}", said),)


@dataclass
class PlanFitted(Fitted):
    """A plan fitted at the knob values of its steps before the last: their releases (made once) and the last
    step's fit on the data they released. `release` draws the last step's release and joins the steps'."""

    method: str
    steps: tuple[str, ...]
    fits: tuple[Fitted, ...]
    upstream: tuple[Release, ...]
    step_facts: tuple[PlanStep, ...]
    knob: Knob = field(init=False)

    def __post_init__(self) -> None:
        self.knob = self.fits[-1].knob

    @property
    def last(self) -> Fitted:
        return self.fits[-1]

    @property
    def synthesized_fields(self) -> list[str]:
        return list(dict.fromkeys(f for fitted in self.fits for f in fitted.synthesized_fields))

    def withheld_columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for fitted in self.fits for c in fitted.withheld_columns()))

    def path_grid(self) -> list[float]:
        return self.last.path_grid()

    def complexity(self) -> pd.DataFrame | None:
        return self.last.complexity()

    def diagnostics(self, grid: Sequence[float]) -> pd.DataFrame | None:
        return self.last.diagnostics(grid)

    def coefficients(self, value: float) -> pd.DataFrame | None:
        return self.last.coefficients(value)

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        last = self.last.release(value, rng, replicate)
        if not self.upstream:
            return last
        return joined(self.method, (*self.upstream, last), self.step_facts, last.knob)


def joined(method: str, releases: Sequence[Release], steps: Sequence[PlanStep], knob: float) -> Release:
    """One release of a plan from its steps' (the last one's data holds what every step released): the columns
    each protected, the changes of each (a text step's offsets are in the text as the step before it released
    it), their details after the steps' own lines, every warning and table once."""
    changes = [r.changes for r in releases if r.changes is not None and len(r.changes)]
    return Release(
        data=releases[-1].data,
        method=method,
        knob=knob,
        protected_columns=tuple(dict.fromkeys(c for r in releases for c in r.protected_columns)),
        changes=pd.concat(changes, ignore_index=True) if changes else releases[-1].changes,
        details=(*steps, *(d for r in releases for d in r.details)),
        changes_ship=all(r.changes_ship for r in releases),
        withheld=tuple(dict.fromkeys(c for r in releases for c in r.withheld)),
        tables={k: v for r in releases for k, v in r.tables.items()},
        warnings=tuple(dict.fromkeys(w for r in releases for w in r.warnings)),
        review_tables={k: v for r in releases for k, v in r.review_tables.items()},
    )


class Plan(Protector):
    """The steps of a plan, each a registered method with its parameters; `plan_class` makes one subclass per
    sequence of steps, with its name, title, parameters and the last step's knob."""

    step_classes: ClassVar[tuple[type[Protector], ...]] = ()

    @classmethod
    def steps_of(cls) -> tuple[str, ...]:
        """The names of the plan's steps, in order."""
        return tuple(c.name for c in cls.step_classes)

    @property
    def steps(self) -> tuple[str, ...]:
        return self.steps_of()

    def step_protectors(self) -> tuple[Protector, ...]:
        """Each step's method with its parameters (the plan's release-guard settings for every step)."""
        common = {GUARD_OFF.name: getattr(self, GUARD_OFF.name), CORRECTIONS.name: getattr(self, CORRECTIONS.name)}
        out = []
        for cls in self.step_classes:
            prefix = f"{step_ident(cls.name)}__"
            own = {
                p.inner: getattr(self, p.name)
                for p in self.parameters
                if isinstance(p, StepParam) and p.name.startswith(prefix) and not p.is_knob
            }
            out.append(cls(**own, **common))
        return tuple(out)

    def upstream_values(self) -> tuple[float, ...]:
        """The knob value of every step but the last."""
        return tuple(float(getattr(self, f"{step_ident(cls.name)}__{cls.knob.name}")) for cls in self.step_classes[:-1])

    def step_record(self, last: float) -> tuple[dict[str, Any], ...]:
        """The steps as a release record keeps them: each method, its knob's name, symbol and value (``last``
        for the last step), and what it drew with (the step seed and its position; the release's seed for the
        last)."""
        values = (*self.upstream_values(), float(last))
        seed: int = self.step_seed  # type: ignore[attr-defined]  # a declared parameter (STEP_SEED)
        return tuple(
            {
                "method": cls.name,
                "knob": {"name": cls.knob.name, "symbol": cls.knob.symbol, "value": value},
                "seed": {"step_seed": seed, "position": i} if i < len(values) - 1 else "the release's seed",
            }
            for i, (cls, value) in enumerate(zip(self.step_classes, values))
        )

    def knob_values(self, last: float) -> KnobValues:
        """The plan's knob values with ``last`` for its last step."""
        return KnobValues(self.steps, (*self.upstream_values(), float(last)))

    def check(self, dataset: Any) -> list[str]:
        return list(dict.fromkeys(f for p in self.step_protectors() for f in p.check(dataset)))

    def fit_identity(self, dataset: Any = None) -> dict[str, Any]:
        return {p.name: p.fit_identity(dataset) for p in self.step_protectors()}

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> PlanFitted:
        protectors = self.step_protectors()
        fits: list[Fitted] = []
        upstream: list[Release] = []
        facts: list[PlanStep] = []
        data = dataset
        values = self.upstream_values()
        for i, protector in enumerate(protectors):
            progress(0, 1, f"fitting step {i + 1} of {len(protectors)}: {protector.title}")
            fitted = fit_step(protector, data, progress)
            fits.append(fitted)
            if i == len(protectors) - 1:
                facts.append(PlanStep(i, protector.name, protector.title, fitted.knob.symbol, "", None))
                break
            seed: int = self.step_seed  # type: ignore[attr-defined]  # a declared parameter (STEP_SEED)
            value = fitted.snap(values[i])
            release = fitted.release(value, step_rng(seed, i), 0)
            upstream.append(release)
            facts.append(
                PlanStep(i, protector.name, protector.title, fitted.knob.symbol, fitted.knob.format(value), seed)
            )
            data = released_as(data, release)
        return PlanFitted(
            method=self.name, steps=self.steps, fits=tuple(fits), upstream=tuple(upstream), step_facts=tuple(facts)
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.name, self.params()))


def _rebuilt(name: str, params: Mapping[str, Any]) -> Protector:
    """A plan again from its name and parameters (a plan's class is made, not importable, so pickle asks here)."""
    from engine.protect import get_protector  # the registry imports this module

    return get_protector(name, **params)


@lru_cache(maxsize=64)
def _plan_class(steps: tuple[str, ...], classes: tuple[type[Protector], ...]) -> type[Plan]:
    last = classes[-1]
    methods = dict(zip(steps, classes))
    titles = [c.title for c in classes]
    namespace: dict[str, Any] = {
        "name": "+".join(steps),
        "title": ", then ".join([titles[0], *(t[0].lower() + t[1:] for t in titles[1:])]),
        "description": " ".join(
            [f"A plan of {len(steps)} steps, each applied to the data as the steps before it released it."]
            + [f"Step {i + 1}, {c.title}: {c.description}" for i, c in enumerate(classes)]
            + (
                [f"{last.title} is fitted on the text as the steps before it released it."]
                if last.changes == "fields" and any(c.changes == "text" for c in classes[:-1])
                else []
            )
        ),
        "knob": last.knob,
        "parameters": (*step_parameters(steps, methods), STEP_SEED),
        "deterministic": all(c.deterministic for c in classes),
        "changes": "fields" if any(c.changes == "fields" for c in classes) else "text",
        "field_kinds": tuple(dict.fromkeys(k for c in classes for k in c.field_kinds)),
        "shown_first": tuple(dict.fromkeys(m for c in reversed(classes) for m in c.shown_first)),
        "detects": next((c.detects for c in classes if c.detects), ""),
        "change_labels": {k: v for c in classes for k, v in c.change_labels.items()},
        "step_classes": classes,
    }
    return type(f"Plan_{'_'.join(step_ident(s) for s in steps)}", (Plan,), namespace)


def plan_class(name: str, methods: Mapping[str, type[Protector]]) -> type[Plan]:
    """The plan ``name`` (``redact+glm``) of the registered ``methods``; ConfigError naming what is wrong."""
    steps = plan_steps(name, methods)
    return _plan_class(steps, tuple(methods[s] for s in steps))
