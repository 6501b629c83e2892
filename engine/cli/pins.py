"""The CLI's session commands: `pin` a candidate into a session file, show a `session` (and check its numbers
are reproduced), `diff` two pins' releases, and `export` a pin with the steward's decision note. Thin: the work
is `engine.candidates`, `engine.project` and `engine.export.chosen`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from engine import MAX_SEED
from engine.atomic import atomic_write_bytes
from engine.cache import fit_cached
from engine.candidates import Candidate, diff_releases, measure_candidate, metrics_table, release_of
from engine.cli.args import (
    add_key_arguments,
    add_ledger_arguments,
    knob_values,
    ledger_of,
    load,
    measure_options,
    method_params,
    protector_of,
)
from engine.cli.commands import print_export
from engine.cli.progress import progress_bar
from engine.data.dataset import Dataset
from engine.errors import ConfigError, DataError
from engine.export.chosen import Prepared, Run, export_chosen
from engine.export.keys import check_key_target
from engine.export.staging import check_target
from engine.project import Project, differences, session_path
from engine.record.decision import Decision, alternatives_of
from engine.sweep import check_replicates


def _open(session: str) -> tuple[Project, Dataset]:
    """The project in ``session`` and its data, checked to be the data the session was made on."""
    project = Project.load(session)
    return project, project.load_data()


def _print_table(table: pd.DataFrame) -> None:
    if table.empty:
        print("  no pinned candidate yet: add one with `textsdc pin`")
        return
    with pd.option_context("display.max_columns", None, "display.width", 200, "display.max_colwidth", 60):
        print(table.set_index("pin").T.to_string())


def cmd_pin(args: argparse.Namespace) -> int:
    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"--seed must be a whole number from 0 to 2^63 − 1 ({MAX_SEED}), got {args.seed}")
    check_replicates(args.replicates)
    options = {k: v for k, v in measure_options(args).values().items() if v is not None}
    dataset = load(args)
    upstream, last = knob_values(args, protector_of(args, dataset))
    if last is None:
        raise ConfigError(f"--knob: give the value of the knob of {args.method}'s last step (NAME=VALUE)")
    candidate = Candidate(
        args.name,
        args.method,
        knob=last,
        seed=args.seed,
        replicates=args.replicates,
        replicate=args.replicate,
        params={**method_params(args, schema=dataset.schema), **upstream},
        options=options,
    )
    path = session_path(args.session)
    project = Project.load(path) if path.is_file() else None
    if project is None:
        project = Project(
            args.data,
            dataset.fingerprint,
            schema=args.schema,
            encoding=args.encoding,
            delimiter=args.delimiter,
            bad_rows=args.bad_rows,
            schema_toml=dataset.schema.to_toml() if args.schema else None,
        )
    else:
        project.check_dataset(dataset.fingerprint)
    measured = measure_candidate(dataset, candidate, progress_bar("measuring"), use_cache=not args.no_cache)
    pin = project.pin(measured)
    project.look_at(measured.candidate)
    written = project.save(path)
    print(f"pinned '{pin.candidate.name}': {pin.candidate.describe()}")
    for warning in pin.warnings:
        print(f"textsdc: warning: {warning}", file=sys.stderr)
    _print_table(project.table())
    print(f"wrote {written}")
    return 0


def cmd_session(args: argparse.Namespace) -> int:
    project, dataset = _open(args.session)
    print(f"session on {project.data} ({dataset.n_records:,} records), {len(project.pins)} pin(s)")
    _print_table(project.table())
    if project.history:
        print("history (latest last):")
        for k, c in enumerate(project.history[-10:], start=max(1, len(project.history) - 9)):
            print(f"  {k}. {c.name}: {c.describe()}")
    if not args.check:
        return 0
    found = []
    for pin in project.pins:
        measured = measure_candidate(dataset, pin.candidate, progress_bar(f"measuring {pin.candidate.name}"))
        found += [f"{pin.candidate.name}: {line}" for line in differences(pin.metrics, metrics_table(measured.metrics))]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} difference(s) between the numbers saved and measured again")
        return 1
    print("every pin's numbers are reproduced")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    project, dataset = _open(args.session)
    releases = []
    for name in (args.a, args.b):
        candidate = project.get(name).candidate
        fitted = fit_cached(candidate.protector(), dataset, progress_bar(f"fitting {name}"))
        releases.append(release_of(fitted, candidate))
    diff = diff_releases(
        releases[0], releases[1], text_column=dataset.schema.text, names=(args.a, args.b), limit=args.limit
    )
    print(f"{diff.differing_records:,} of {diff.n_records:,} records differ between '{args.a}' and '{args.b}'")
    print(diff.counts.to_string(index=False))
    if args.out:
        atomic_write_bytes(Path(args.out), diff.csv())
        print(f"wrote the first {len(diff.records):,} differing cells to {args.out}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out).expanduser()
    check_target(out, args.replace)
    if args.key_out:
        check_key_target(args.key_out, out)
    project, dataset = _open(args.session)
    pin = project.get(args.pin)
    decision = Decision(
        by=args.by,
        why=args.why,
        chosen=pin.candidate.name,
        alternatives=alternatives_of(
            project.pins, pin.candidate.name, lambda c: project.replay(c, f"./{c.name}").command()
        ),
        date=args.date or "",
    )
    progress = progress_bar("export")
    measured = measure_candidate(dataset, pin.candidate, progress)
    changed = differences(pin.metrics, metrics_table(measured.metrics))
    if changed:
        raise DataError(
            f"pin '{pin.candidate.name}' no longer measures as it did when pinned, so its numbers would not be "
            "the ones weighed: " + "; ".join(changed[:5])
        )
    c = measured.candidate
    prepared = Prepared(dataset, c.protector(), measured.fitted, sweep=None if args.with_frontier else measured.point)
    spec = project.replay(c, args.out, args.with_frontier)
    run = Run(progress=progress, key_out=args.key_out, replace=args.replace, ledger=ledger_of(args))
    result = export_chosen(args.out, spec, prepared, decision, run)
    print(f"exported '{c.name}': {c.describe()}, decided by {decision.by} on {decision.date}")
    print_export(result)
    return 0


def add_parsers(sub: Any, data_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The session commands on the `textsdc` parser; ``data_args`` adds the data, method and measure flags."""
    p = sub.add_parser("pin", help="measure one candidate release and pin it, by name, in a session file")
    data_args(p)
    p.add_argument("--session", required=True, help="session file to add the pin to (created if missing)")
    p.add_argument("--name", required=True, help="the pin's name, e.g. 'redact level 2'")
    p.add_argument(
        "--knob",
        action="append",
        required=True,
        help="knob value of the candidate; for a plan, one NAME=VALUE per step (--knob level=2 --knob lambda=0.012)",
    )
    p.add_argument("--replicate", type=int, default=0, help="which replicate the candidate releases (default 0)")
    p.set_defaults(func=cmd_pin)

    s = sub.add_parser("session", help="show a session's pins side by side; --check measures them again")
    s.add_argument("session", help="a session file written by `textsdc pin` or the dashboard")
    s.add_argument(
        "--check", action="store_true", help="measure every pin again and report any number that differs (exit 1)"
    )
    s.set_defaults(func=cmd_session)

    d = sub.add_parser("diff", help="which records and fields differ between two pinned candidates' releases")
    d.add_argument("--session", required=True, help="the session file holding both pins")
    d.add_argument("a", help="the first pin's name")
    d.add_argument("b", help="the second pin's name")
    d.add_argument("--limit", type=int, default=200, help="differing cells to keep for --out (default 200)")
    d.add_argument("--out", help="CSV file to write the differing cells into (record, column, both values)")
    d.set_defaults(func=cmd_diff)

    e = sub.add_parser("export", help="export a pinned candidate with the decision note: who, why, alternatives")
    e.add_argument("--session", required=True, help="the session file holding the pins")
    e.add_argument("--pin", required=True, help="the name of the pin to export")
    e.add_argument("--by", required=True, help="who decided, e.g. 'A. Steward, data office'")
    e.add_argument("--why", required=True, help="why this release and not the other pins")
    e.add_argument("--date", help="the decision's date, YYYY-MM-DD (default today)")
    e.add_argument(
        "--with-frontier", action=argparse.BooleanOptionalAction, default=False, help="also draw the frontier"
    )
    e.add_argument("--out", required=True, help="folder to write the bundle into")
    add_key_arguments(e, key=False)
    add_ledger_arguments(e)
    e.set_defaults(func=cmd_export)
