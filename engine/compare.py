"""Several protection methods on one dataset, with one seed, one number of replicates and one set of measure
settings, put on one risk–utility frontier.

Each method is swept along its own knob (`engine.sweep.run_sweep`, its fit cached as usual); the comparison
keeps the measures every method took, and the frontier across methods is the set of (method, knob value) pairs
no other pair beats on both the risk and the utility measure chosen (Greve & Sablica, Eq. 2.7, across methods
instead of along one knob).

Methods share a frontier only where their measures were taken on the same task. Where the method decides what a
measure is taken on (`Measure.task`), a method that withholds a column from its releases changes it: the
classifier F1 ratio then predicts another field (the withheld one is no target), and the whole-release intruder
matches records on fewer fields (so its risk falls because a column is missing, not because of the method).
Such a method is shown apart: its own line is drawn, but its points are not on the frontier across methods, and
`Comparison.apart` says why. The task the others share is the one most methods were measured on (on a tie, that
of the first method that withholds nothing). Re-measuring every method on what all of them release (another
classifier target, an intruder who ignores the withheld fields) would hide the difference instead and
re-sweep every method; a steward who wants that sets the measure settings (``classifier_target``) herself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError, TextsdcError
from engine.frontier import frontier, pareto_mask
from engine.measures.base import metric_info
from engine.measures.settings import MeasureSettings
from engine.progress import Progress, no_progress
from engine.protect import METHODS, get_protector, is_method, method_class
from engine.protect.detection import DetectionShare
from engine.results import SweepResult
from engine.sweep import run_sweep

PREFERRED_RISKS = ("release_identification_probability", "attack_identification_rate")
"""The risk measures a comparison shows first, the first every method took: the whole-release intruder (the
same attack on text and fields, for every method), then the share of authors an intruder with other texts by
them picks out."""


@dataclass
class Comparison:
    """The sweeps of several methods on one dataset, by method name, with the settings each ran with."""

    dataset: str
    fingerprint: str
    seed: int
    replicates: int
    sweeps: dict[str, SweepResult]
    params: dict[str, dict[str, Any]]
    options: dict[str, Any] = field(default_factory=dict)
    """The measure settings every method was measured with (`MeasureSettings.values`: the intruder preset, ...)."""

    def rows(self) -> pd.DataFrame:
        """One row per (method, knob value, measure): method, knob, metric, kind, mean, lo, hi, chance."""
        frames = [s.summary.assign(method=m) for m, s in self.sweeps.items()]
        out = pd.concat(frames, ignore_index=True)
        return out.reindex(columns=["method", "knob", "metric", "kind", "mean", "lo", "hi", "chance"])

    def common(self, kind: str) -> list[str]:
        """The measures of ``kind`` ("risk" or "utility") every method took, in the first method's order."""
        taken = [list(dict.fromkeys(s.summary.loc[s.summary["kind"] == kind, "metric"])) for s in self.sweeps.values()]
        return [m for m in taken[0] if all(m in t for t in taken[1:])] if taken else []

    def default_pair(self) -> tuple[str, str]:
        """The risk and utility measures shown first: the first of `PREFERRED_RISKS` every method took, else
        the first common risk measure, and the first common utility measure."""
        risks, utilities = self.common("risk"), self.common("utility")
        if not risks or not utilities:
            taken = "; ".join(f"{m}: {', '.join(s.metric_ids)}" for m, s in self.sweeps.items())
            raise ConfigError(
                "the methods share no risk and utility measure to put on one frontier; each took: " + taken
            )
        risk = next((r for r in PREFERRED_RISKS if r in risks), risks[0])
        return risk, utilities[0]

    def tasks(self, metric: str) -> dict[str, str]:
        """What each method's ``metric`` was taken on, by method (`Measure.task`; "" where no method decides it)."""
        return {m: s.tasks.get(metric, "") for m, s in self.sweeps.items()}

    def shared_task(self, metric: str) -> str:
        """The task of ``metric`` the methods on the frontier share: the one most methods were measured on; on a
        tie, that of the first method whose releases withhold nothing (else of the first method)."""
        tasks = self.tasks(metric)
        if not tasks:
            return ""
        counts = Counter(tasks.values())
        order = sorted(tasks, key=lambda m: bool(self.sweeps[m].withheld))  # stable: the order given otherwise
        return tasks[max(order, key=lambda m: counts[tasks[m]])]

    def apart(self, risk: str, utility: str) -> dict[str, str]:
        """The methods whose ``risk`` or ``utility`` was taken on another task than `shared_task`, each with why,
        in words; they are kept off the frontier across methods."""
        reasons: dict[str, list[str]] = {}
        for metric in dict.fromkeys((risk, utility)):
            shared, label = self.shared_task(metric), metric_info(metric).label
            for m, task in self.tasks(metric).items():
                if task != shared:
                    reasons.setdefault(m, []).append(
                        f"{label} {task or 'on a task not recorded'} (the methods on the frontier: "
                        f"{shared or 'a task not recorded'})"
                    )
        out = {}
        for m, parts in reasons.items():
            withheld = self.sweeps[m].withheld
            why = f"its releases withhold {', '.join(withheld)}, so it is" if withheld else "it is"
            out[m] = (
                f"{_title(m)} is kept off the frontier across methods: {why} measured on another task — "
                f"{'; '.join(parts)}."
            )
        return out

    def task_line(self, risk: str, utility: str) -> str:
        """What the methods on the frontier were measured on, in one sentence (true of every method but those
        `apart` names, which it names)."""
        apart = [_title(m) for m in self.apart(risk, utility)]
        who = "every method" + (f" but {', '.join(apart)}" if apart else "")
        tasks = [
            f"{metric_info(m).label} {self.shared_task(m)}"
            for m in dict.fromkeys((risk, utility))
            if self.shared_task(m)
        ]
        return f"The same task for {who}" + (f": {'; '.join(tasks)}." if tasks else ".")

    def frontier(self, risk: str, utility: str) -> pd.DataFrame:
        """One row per (method, knob value) with the mean risk and utility and their intervals; ``unprotected``
        marks the knob values that leave the risk where it is on the unprotected data (redaction level 0),
        ``apart`` the methods measured on another task (`apart`), and ``pareto`` the other pairs that no other
        such pair of any method beats on both."""
        for metric, kind in ((risk, "risk"), (utility, "utility")):
            if metric not in self.common(kind):
                raise ConfigError(
                    f"{kind} measure '{metric}' was not taken by every method; common {kind} measures: "
                    f"{', '.join(self.common(kind)) or 'none'}"
                )
        tables = [
            frontier(s.summary, risk, utility, s.baseline_value(risk)).assign(method=m) for m, s in self.sweeps.items()
        ]
        t = pd.concat(tables, ignore_index=True)
        t["apart"] = t["method"].isin(list(self.apart(risk, utility)))
        protecting = ~t["unprotected"].astype(bool).to_numpy() & ~t["apart"].to_numpy(bool)
        t["pareto"] = False
        t.loc[protecting, "pareto"] = pareto_mask(
            t.loc[protecting, "risk_score"].to_numpy(float), t.loc[protecting, "utility_score"].to_numpy(float)
        )
        return t

    def detection(self, method: str) -> dict[float, tuple[DetectionShare, ...]]:
        """What ``method``'s detector finds on gold at each knob value its sweep kept a release of
        (`DetectionShare`, the residual detection risk of a method that declares `Protector.detects`): the
        shares of its first kept release there; empty for a method whose protection detects nothing, and a knob
        value whose release replaces nothing has none."""
        sweep = self.sweeps[method]
        if not method_class(method).detects:
            return {}
        return {  # one release read at a time: a large table's are read from files (`ReleasesOnDisk`)
            float(knob): tuple(d for d in kept[0].details if isinstance(d, DetectionShare))
            for knob in sorted(sweep.releases)
            if (kept := sweep.releases[knob])
        }

    def detection_text(self, method: str, knob: float, gold: bool = True) -> str:
        """The residual detection risk of ``method`` at ``knob`` in a line: each kind detected with its share and
        interval, then (``gold``) the gold and the kinds no gold annotates ("identifiers 87% [80–92%]; places
        17% [11–25%] on 640 posts of ..."); without ``gold``, each kind by its short name (a table's cell); ""
        where the method detects nothing or its release at ``knob`` replaces nothing."""
        shares = self.detection(method).get(float(knob), ())
        if not shares:
            return ""
        if not gold:  # the kinds by their short names ("direct identifiers", not what they include)
            return "; ".join(f"{d.what.split(' (')[0]} {d.estimate()}" for d in shares)
        said = "; ".join(f"{d.what} {d.estimate()}" for d in shares)
        golds = list(dict.fromkeys(d.gold for d in shares if d.measured))
        unmeasured = [what for d in shares for what in d.unmeasured]
        return (
            said
            + (f" on {', '.join(golds)}" if golds else "")
            + (f" (no gold for {', '.join(unmeasured)})" if unmeasured else "")
        )

    def detection_golds(self) -> list[str]:
        """The gold sets the methods' detection shares are measured on, each once."""
        return list(
            dict.fromkeys(d.gold for m in self.sweeps for v in self.detection(m).values() for d in v if d.measured)
        )

    def detection_lines(self) -> list[str]:
        """The residual detection risk of every method whose protection depends on detection, a line per knob
        value (one line for the method where every knob value finds the same)."""
        out = []
        for method in self.sweeps:
            knob = self.sweeps[method].knob
            texts = {k: self.detection_text(method, k) for k in self.detection(method)}
            said = {k: t for k, t in texts.items() if t}
            if not said:
                continue
            if len(set(said.values())) == 1 and len(said) == len(texts):
                out.append(f"  {method:<12} every {knob.symbol}: {next(iter(said.values()))}")
                continue
            out.extend(f"  {method:<12} {knob.symbol} {knob.format(k)}: {t}" for k, t in said.items())
        return out

    def detection_rows(self) -> list[dict[str, Any]]:
        """One row per (method, knob value, kind detected): the detector, what it finds, the gold's name, the
        share found with its Wilson 95% interval (None where no gold annotates the kind) and the counts."""
        rows = []
        for method in self.sweeps:
            for knob, shares in self.detection(method).items():
                for d in shares:
                    lo, hi = d.interval() if d.measured else (None, None)
                    rows.append(
                        {
                            "method": method,
                            "knob": knob,
                            "detector": d.detector,
                            "what": d.what,
                            "gold": d.gold,
                            "share": d.share if d.measured else None,
                            "lo": lo,
                            "hi": hi,
                            "found": d.found,
                            "total": d.total,
                            "unmeasured": list(d.unmeasured),
                        }
                    )
        return rows

    def to_json(self, risk: str, utility: str) -> dict[str, Any]:
        """What `textsdc compare` writes: the settings, every method with what its measures were taken on, every
        measure of every method and knob value, and the frontier across methods on ``risk`` and ``utility``, with
        the task its methods share and the methods shown apart, each with why, and the residual detection risk of
        the methods whose protection depends on detection (`detection_rows`)."""
        front = self.frontier(risk, utility)

        def plain(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")

        return {
            "dataset": self.dataset,
            "fingerprint": self.fingerprint,
            "seed": self.seed,
            "replicates": self.replicates,
            "options": self.options,
            "methods": {
                m: {"knob": s.knob.symbol, "params": self.params[m], "tasks": s.tasks, "withheld": list(s.withheld)}
                for m, s in self.sweeps.items()
            },
            "rows": plain(self.rows()),
            "frontier": {
                "risk": risk,
                "utility": utility,
                "tasks": {m: self.shared_task(m) for m in (risk, utility)},
                "same_task": self.task_line(risk, utility),
                "apart": self.apart(risk, utility),
                "points": plain(
                    front[
                        [
                            "method",
                            "knob",
                            "risk",
                            "risk_lo",
                            "risk_hi",
                            "utility",
                            "utility_lo",
                            "utility_hi",
                            "apart",
                            "pareto",
                        ]
                    ]
                ),
                "pareto": plain(front.loc[front["pareto"], ["method", "knob"]]),
            },
            "detection": self.detection_rows(),
        }


def _title(method: str) -> str:
    return method_class(method).title if is_method(method) else method


def applicable_methods(dataset: Dataset, params: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, str]:
    """Every registered method, by name, with "" when it applies to ``dataset`` (with its ``params``, default
    none) or the reason it refuses the data."""

    out = {}
    for name in METHODS:
        try:
            get_protector(name, **dict((params or {}).get(name, {}))).check(dataset)
            out[name] = ""
        except TextsdcError as exc:
            out[name] = str(exc)
    return out


def compare_methods(
    dataset: Dataset,
    settings: Sequence[tuple[str, Mapping[str, Any]]],
    replicates: int = 1,
    seed: int = 0,
    jobs: int = 1,
    options: MeasureSettings | None = None,
    progress: Progress = no_progress,
) -> Comparison:
    """Sweep each (method, parameters) of ``settings`` on ``dataset`` with the same seed, replicates and measure
    settings; the progress says which method of how many is running."""

    if len(settings) < 2:
        raise ConfigError("a comparison needs at least two methods, e.g. --methods redact,md")
    names = [m for m, _ in settings]
    if len(set(names)) != len(names):
        raise ConfigError(f"a method is named twice: {', '.join(names)}")
    protectors = [(m, get_protector(m, **dict(p))) for m, p in settings]
    for _, protector in protectors:
        protector.check(dataset)
    sweeps: dict[str, SweepResult] = {}
    for i, (name, protector) in enumerate(protectors, 1):

        def report(done: int, total: int, what: str = "", _i: int = i, _name: str = name) -> None:
            progress(done, total, f"method {_i} of {len(protectors)} ({_name}): {what}")

        sweeps[name] = run_sweep(
            dataset,
            protector,
            replicates=replicates,
            seed=seed,
            jobs=jobs,
            progress=report,
            options=options,
            keep_releases=1 if protector.detects else 0,  # the residual detection risk is read off its releases
        )
    return Comparison(
        dataset=dataset.name,
        fingerprint=dataset.fingerprint,
        seed=seed,
        replicates=replicates,
        sweeps=sweeps,
        params={name: protector.params() for name, protector in protectors},
        options=(options or MeasureSettings()).values(),
    )
