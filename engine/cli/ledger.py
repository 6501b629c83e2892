"""`textsdc ledger`: the release ledger of this machine (or the file ``--path`` names), listed per dataset, and
one entry explained with ``--explain``."""

from __future__ import annotations

import argparse
from typing import Any

from engine.errors import ConfigError
from engine.ledger.explain import dataset_lines, explain
from engine.ledger.store import LEDGER_ENV, read_ledger


def cmd_ledger(args: argparse.Namespace) -> int:
    ledger = read_ledger(args.path)
    entries = ledger.entries
    if args.dataset:
        entries = tuple(e for e in entries if e.fingerprint.startswith(args.dataset) or e.dataset == args.dataset)
    if args.explain is not None:
        chosen = next((e for e in ledger.entries if e.number == args.explain), None)
        if chosen is None:
            raise ConfigError(
                f"the release ledger {ledger.path} has no entry {args.explain}; its entries are numbered 1 to "
                f"{len(ledger.entries)}"
                if ledger.entries
                else f"the release ledger {ledger.path} has no entry yet"
            )
        print("\n".join(explain(chosen)))
        return 0
    if not entries:
        print(f"no release recorded in {ledger.path}" + (f" for {args.dataset}" if args.dataset else ""))
        return 0
    print(f"release ledger {ledger.path}")
    fingerprints = list(dict.fromkeys(e.fingerprint for e in entries))
    for fp in fingerprints:
        print()
        print("\n".join(dataset_lines([e for e in entries if e.fingerprint == fp])))
    return 0


def add_parser(sub: Any) -> None:
    """The `ledger` command."""
    g = sub.add_parser("ledger", help="list the releases the release ledger recorded, per dataset; --explain one")
    g.add_argument(
        "--path",
        metavar="FILE",
        help=f"the ledger file (default: ${LEDGER_ENV}, else ledger.json in the textsdc cache folder)",
    )
    g.add_argument("--dataset", help="only this dataset: its name or the start of its fingerprint")
    g.add_argument("--explain", type=int, metavar="N", help="explain entry N: its steps, columns, ε, findings, reason")
    g.set_defaults(func=cmd_ledger)
