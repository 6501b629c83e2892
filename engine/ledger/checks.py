"""The ledger's checks: what a new release adds to the earlier releases of the same records. Each is a
`LedgerCheck`, a pure function of the earlier entries and the new one that returns its findings in plain words
with their figures (never a value of the data, nor an earlier bundle's name or place); `LEDGER_CHECKS` lists them, `register` adds one. A finding stops
the export until the steward overrides it with a reason (`engine.export.ledgered`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from engine.ledger.averaging import AVERAGING_RATIO
from engine.ledger.entry import Entry, Step
from engine.ledger.treatments import protection_rank
from engine.measures.base import measured_number
from engine.protect import METHODS
from engine.protect.claims import epsilon_text


def knob_text(step: Step, value: float | None = None) -> str:
    """The knob value of ``step`` (or ``value`` of its knob) as its method's knob shows it (`Knob.format`)."""
    v = step.knob if value is None else value
    cls = METHODS.get(step.method)
    return measured_number(v) if cls is None else cls.knob.format(v)


def release_name(entry: Entry) -> str:
    """An earlier release by its number in the ledger, never its bundle's name or place: a finding travels in
    the new bundle's manifest and report (`textsdc ledger` and the refusal name the bundle to the steward)."""
    return f"ledger release {entry.number}"


def epsilon_total(earlier: Sequence[Entry], new: Entry) -> tuple[float | None, int]:
    """The ε the releases spend together, and how many of them spend ε: under sequential composition (Dwork &
    Roth 2014, The Algorithmic Foundations of Differential Privacy, Theorem 3.16) mechanisms of ε₁…ε_k run on the
    same records are together (Σ εᵢ)-differentially private. None: no release of them spends ε."""
    spent = [e.epsilon for e in (*earlier, new) if e.epsilon is not None]
    return (sum(spent), len(spent)) if spent else (None, 0)


class LedgerCheck(ABC):
    """One check of a new release against the earlier releases of the same records (`earlier`: oldest first,
    repeats of a release left out). ``id`` names it."""

    id: ClassVar[str]

    @classmethod
    @abstractmethod
    def findings(cls, earlier: Sequence[Entry], new: Entry) -> list[str]:
        """What the steward must weigh before ``new`` leaves, in plain words with figures (none: nothing)."""


class EpsilonComposition(LedgerCheck):
    """A differentially private release of records an earlier one spent ε on already: the ε add up."""

    id = "epsilon-composition"

    @classmethod
    def findings(cls, earlier: Sequence[Entry], new: Entry) -> list[str]:
        before = [e for e in earlier if e.epsilon is not None]
        if new.epsilon is None or not before:
            return []
        total, _ = epsilon_total(earlier, new)
        assert total is not None
        spent = sum(e.epsilon or 0.0 for e in before)
        return [
            f"this release spends ε = {epsilon_text(new.epsilon)} on records {len(before):,} earlier release(s) "
            f"spent ε = {epsilon_text(spent)} on ({', '.join(release_name(e) for e in before)}): together they "
            f"spend ε = {epsilon_text(total)} (sequential composition, Dwork & Roth 2014, Theorem 3.16), and the "
            "guarantee a recipient of all of them is held to is that sum"
        ]


class TextLessProtected(LedgerCheck):
    """The text released again less protected than an earlier release of the same records: a recipient of both
    reads it at its least protected, and what the earlier one took out is back."""

    id = "text-less-protected"

    @classmethod
    def findings(cls, earlier: Sequence[Entry], new: Entry) -> list[str]:
        now = new.columns.get(new.text)
        if now is None:
            return []
        out = []
        for e in earlier:
            then = e.columns.get(e.text)
            if then is None:
                continue
            if protection_rank(now) < protection_rank(then):
                out.append(
                    f"the text is released {now} here but was released {then} in {release_name(e)} of the same "
                    f"records: a recipient of both reads what the earlier release took out"
                )
                continue
            weaker = _weaker_knob(e, new, then) if now == then else None
            if weaker is not None:
                out.append(weaker)
        return out


def _text_step(entry: Entry) -> Step | None:
    """The last step of ``entry`` that protected the text."""
    return next((s for s in reversed(entry.steps) if s.columns.get(entry.text) not in (None, "in clear")), None)


def _weaker_knob(before: Entry, new: Entry, treatment: str) -> str | None:
    """A finding when the new release's text step is the earlier one's method at a knob that protects less."""
    a, b = _text_step(before), _text_step(new)
    if a is None or b is None or a.method != b.method or a.knob == b.knob:
        return None
    less = b.knob < a.knob if b.more_privacy == "higher" else b.knob > a.knob
    if not less:
        return None
    knob = b.knob_name or "knob"
    return (
        f"the text is {treatment} by {b.method} at {knob} = {knob_text(b)}, which protects less than "
        f"{knob_text(a)} in {release_name(before)} of the same records: a recipient of both reads it "
        "at the weaker setting"
    )


class TextBesideFieldSynthesis(LedgerCheck):
    """The text in clear in one release and a field synthesis in another of the same records, in either order: the
    field synthesis was measured as the only release of those records, but the text in clear names each record
    (its words, its author's style, the fields it mentions) and a recipient of both can join them record by record
    (the same records, the same pseudonyms); so the synthetic fields no longer stand apart from the text their
    measures assumed unknown, and the earlier release's measures understate the risk of the two together."""

    id = "text-beside-field-synthesis"

    @classmethod
    def findings(cls, earlier: Sequence[Entry], new: Entry) -> list[str]:
        new_fields = _synthesized_fields(new)
        new_clear = new.columns.get(new.text) == "in clear"
        clear_before = [e for e in earlier if e.columns.get(e.text) == "in clear"]
        synthesis_before = [e for e in earlier if _synthesized_fields(e)]
        out = []
        if new_fields and clear_before:
            out.append(
                f"this release synthesizes the field(s) {', '.join(new_fields)}, and {_names(clear_before)} of the "
                "same records carried the text in clear: a recipient of both can join them record by record, and "
                "the text names what the synthesis is to hide"
            )
        if new_clear and [e for e in synthesis_before if e not in clear_before or not new_fields]:
            fields = sorted({c for e in synthesis_before for c in _synthesized_fields(e)})
            out.append(
                f"this release carries the text in clear, and {_names(synthesis_before)} of the same records "
                f"synthesized the field(s) {', '.join(fields)}: a recipient of both can join them record by record, "
                "and the text names what the synthesis was to hide"
            )
        return out


def _names(entries: Sequence[Entry]) -> str:
    return ", ".join(release_name(e) for e in entries)


def _synthesized_fields(entry: Entry) -> list[str]:
    return [c for c, t in entry.columns.items() if t == "synthesized" and c != entry.text]


class SyntheticAveraging(LedgerCheck):
    """Repeated synthetic releases of the same field whose average comes closer to the confidential values than
    one release does (`engine.ledger.averaging`). The rule: over two or more releases of a field from the same
    records, the distance of their average is at most `AVERAGING_RATIO` of one release's distance (the mean over
    the releases): averaging brings a recipient at least 10% closer."""

    id = "synthetic-averaging"

    @classmethod
    def findings(cls, earlier: Sequence[Entry], new: Entry) -> list[str]:
        out = []
        for a in new.averaging:
            if a.releases < 2 or not a.average <= AVERAGING_RATIO * a.single:
                continue
            closer = 1 - a.average / a.single if a.single > 0 else 1.0
            if a.kind == "numeric":
                figures = (
                    f"their mean is {measured_number(a.average)} standard deviations from the confidential values "
                    f"(root mean square over the records), one release {measured_number(a.single)}"
                )
            else:
                figures = (
                    f"their most frequent category is the confidential one for {1 - a.average:.0%} of the records, "
                    f"one release's value for {1 - a.single:.0%}"
                )
            out.append(
                f"the field {a.column} has now been synthesized {a.releases:,} times from the same records: "
                f"{figures}; averaging the releases brings a recipient {closer:.0%} closer to the confidential values"
            )
        return out


LEDGER_CHECKS: tuple[type[LedgerCheck], ...] = (
    EpsilonComposition,
    TextLessProtected,
    TextBesideFieldSynthesis,
    SyntheticAveraging,
)


def register(cls: type[LedgerCheck]) -> type[LedgerCheck]:
    """Add a ledger check after the registered ones (usable as a class decorator)."""
    global LEDGER_CHECKS
    if any(c.id == cls.id for c in LEDGER_CHECKS):
        raise TypeError(f"a ledger check with the id '{cls.id}' is registered already")
    LEDGER_CHECKS = (*LEDGER_CHECKS, cls)
    return cls


def ledger_findings(earlier: Sequence[Entry], new: Entry) -> list[str]:
    """Every registered check's findings about ``new`` beside ``earlier``, in order."""
    return [f for check in LEDGER_CHECKS for f in check.findings(earlier, new)]
