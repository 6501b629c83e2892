"""The ledger in words: the figures a manifest records, one line per release, and an entry explained (what
`textsdc ledger` prints and the Export page shows)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.ledger.checks import knob_text
from engine.ledger.entry import Entry, Step
from engine.measures.base import measured_number
from engine.protect.claims import epsilon_text
from engine.record.manifest import LedgerNote


def releases_text(n: int) -> str:
    """ "1 release", "3 releases"."""
    return f"{n:,} release" + ("" if n == 1 else "s")


def ledger_figures(note: LedgerNote) -> str:
    """The cumulative figures of a release (`LedgerNote.describe`)."""
    return note.describe()


def step_text(step: Step) -> str:
    """A step in words: method, knob, ε."""
    knob = f"{step.knob_name or 'knob'} = {knob_text(step)}"
    eps = "" if step.epsilon is None else f", ε = {epsilon_text(step.epsilon)}"
    return f"{step.method} at {knob}{eps}"


def entry_line(entry: Entry) -> str:
    """One line of the listing: number, time, bundle, steps, records, ε, findings and override."""
    steps = " then ".join(step_text(s) for s in entry.steps)
    parts = [f"{entry.number:>3}  {entry.time_utc}  {entry.bundle}: {steps}, {entry.records:,} records"]
    if entry.repeat_of is not None:
        parts.append(f"makes release {entry.repeat_of} again")
    elif entry.findings:
        parts.append(f"{len(entry.findings):,} finding(s), exported over them")
    return "; ".join(parts)


def dataset_lines(entries: Sequence[Entry]) -> list[str]:
    """The releases of one dataset: a heading with its cumulative figures, then a line per release."""
    first = entries[0]
    counted = [e for e in entries if e.repeat_of is None]
    spent = [e.epsilon for e in counted if e.epsilon is not None]
    eps = "" if not spent else f", ε spent {epsilon_text(sum(spent))} over {len(spent):,} of them"
    head = f"{first.dataset} (fingerprint {first.fingerprint[:12]}): {releases_text(len(counted))}{eps}"
    return [head, *(entry_line(e) for e in entries)]


def explain(entry: Entry) -> list[str]:
    """An entry explained: when and where, the records (count, not which), each step, the treatment of each
    column, ε, the averaging figures, the findings and the reason given to export over them."""
    lines = [
        f"Release {entry.number} of {entry.dataset} (fingerprint {entry.fingerprint[:12]}), written {entry.time_utc}",
        f"  bundle {entry.bundle} at {entry.location}; manifest SHA-256 {entry.manifest_sha256}",
        f"  covers {entry.records:,} records (identified by a digest of the records, not the records); seed "
        f"{entry.seed}, replicate {entry.replicate} of {entry.replicates}",
    ]
    if entry.repeat_of is not None:
        lines.append(f"  makes release {entry.repeat_of} again byte for byte: it discloses nothing new")
    for i, step in enumerate(entry.steps, 1):
        lines.append(f"  step {i}: {step_text(step)}")
    lines.append("  columns: " + "; ".join(f"{c} {t}" for c, t in entry.columns.items()))
    if entry.epsilon is not None:
        lines.append(f"  ε spent by this release: {epsilon_text(entry.epsilon)}")
    for a in entry.averaging:
        unit = "standard deviations (RMS)" if a.kind == "numeric" else "share of records missed"
        lines.append(
            f"  {a.column} synthesized {a.releases:,} time(s) from these records: one release "
            f"{measured_number(a.single)}, their average {measured_number(a.average)} from the confidential values "
            f"({unit})"
        )
    if entry.note is not None:
        lines.append(f"  figures its manifest records: {ledger_figures(entry.note)}")
    for f in entry.findings:
        lines.append(f"  finding: {f}")
    if entry.override:
        lines.append(f"  exported over the findings for this reason: {entry.override}")
    elif not entry.findings:
        lines.append("  the ledger's checks found nothing")
    return lines


def so_far(earlier: Sequence[Entry]) -> str:
    """The earlier releases of the records of an export, in a sentence (the Export page's cumulative figures)."""
    if not earlier:
        return "The release ledger holds no release of these records yet."
    last = earlier[-1]
    spent = [e.epsilon for e in earlier if e.epsilon is not None]
    eps = "" if not spent else f"; together they spend ε = {epsilon_text(sum(spent))} ({len(spent):,} of them spend ε)"
    which = "" if len(earlier) == 1 else ", the last"
    return (
        f"The release ledger holds {releases_text(len(earlier))} of these records{which}: the bundle {last.bundle} "
        f"({' then '.join(step_text(s) for s in last.steps)}, written {last.time_utc}){eps}."
    )


def adds(entry: Entry, note: LedgerNote) -> str:
    """What an export adds to the earlier releases of its records, in a sentence."""
    if entry.repeat_of is not None:
        return (
            f"This export makes release {entry.repeat_of} again byte for byte (the same records, method, knob, seed "
            "and replicate): it discloses nothing new, and the manifest records that release's figures."
        )
    columns = ", ".join(f"{c} {t}" for c, t in entry.columns.items())
    eps = "" if note.epsilon_total is None else f", ε spent on them {epsilon_text(note.epsilon_total)} in all"
    return (
        f"This export adds {' then '.join(step_text(s) for s in entry.steps)} on {entry.records:,} records "
        f"({columns}): with it, {releases_text(note.releases)} of these records{eps}."
    )
