"""The `textsdc` command: datasets, sweep, release, compare, pins and sessions, annotate, the release ledger,
verify, evaluate-detection and dashboard. Its flags come from the methods' and the measures' declarations (`engine.cli.args`).

A user error prints one line (``textsdc: error: ...``) and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from engine.backends import BACKENDS
from engine.cli.annotate import add_parsers as add_annotate_parsers
from engine.cli.args import (
    add_annotations_argument,
    add_data_arguments,
    add_key_arguments,
    add_ledger_arguments,
    add_parameter_flags,
    add_reading_arguments,
    count_argument,
    knob_argument,
)
from engine.cli.commands import (
    cmd_compare,
    cmd_datasets,
    cmd_evaluate_detection,
    cmd_release,
    cmd_sweep,
    cmd_verify,
)
from engine.cli.dashboard import cmd_dashboard, is_loopback
from engine.cli.ledger import add_parser as add_ledger_parser
from engine.cli.pins import add_parsers
from engine.cli.progress import OPEN_BARS, close_bars
from engine.data.load import left_out_hint
from engine.errors import TextsdcError, one_line, os_error_message

__all__ = ["build_parser", "is_loopback", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse's parser (its commands' too) whose usage error is one line, ``textsdc: error: ...`` with where
    to read the options, rather than the usage block of every flag; the exit status stays 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"textsdc: error: {one_line(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The `textsdc` parser; the method and measure flags come from their declarations (`Param`)."""
    p = _Parser(prog="textsdc", description="Disclosure control for text and the fields beside it.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("datasets", help="list the demo datasets")
    d.add_argument("--json", action="store_true", help="print as JSON")
    d.set_defaults(func=cmd_datasets)

    s = sub.add_parser("sweep", help="measure risk and utility along the knob grid")
    add_data_arguments(s)
    s.add_argument(
        "--knob",
        action="append",
        help="a plan's knobs of the steps before the last, NAME=VALUE (--knob level=2); the sweep goes along the "
        "last step's knob",
    )
    s.add_argument(
        "--grid",
        help="knob values separated by commas, or 'path' for every λ or α the method fits (default: the method's grid)",
    )
    s.add_argument(
        "--refine",
        type=count_argument,
        metavar="N",
        help="add up to N knob values where a measure changes most between neighbouring ones (a continuous knob; "
        "default: the number the method's knob declares for its own grid, e.g. 6 for md's ε; 0: none)",
    )
    s.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="where releases and measures run: local processes (--jobs of them, default) or a Dask cluster",
    )
    s.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="with --backend dask: the scheduler of a running cluster, e.g. tcp://10.0.0.5:8786 "
        "(default: a local Dask cluster of --jobs workers for this run)",
    )
    s.add_argument("--out", required=True, help="results JSON file to write")
    s.add_argument("--overwrite", action="store_true", help="replace the --out file if it exists")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("release", help="protect at one knob value and export the release with manifest and report")
    add_data_arguments(r)
    r.add_argument(
        "--knob",
        action="append",
        help="knob value, e.g. the λ* a sweep printed (default: the method's default); for a plan, one "
        "NAME=VALUE per step (--knob level=2 --knob lambda=0.012; λ= too), a step not given keeps its default",
    )
    r.add_argument("--replicate", type=int, default=0, help="which replicate to export (default 0)")
    r.add_argument(
        "--with-frontier", action="store_true", help="also sweep the grid to draw the frontier in the report"
    )
    r.add_argument("--audit-log", help="SQLite audit log (default: in the textsdc cache folder)")
    r.add_argument(
        "--decision",
        metavar="FILE",
        help="a decision note (JSON: by, why, chosen, date, alternatives) for the manifest and report; "
        "`textsdc export` writes one from a session's pins",
    )
    r.add_argument("--out", required=True, help="folder to write the release into")
    add_key_arguments(r)
    add_annotations_argument(r)
    add_ledger_arguments(r)
    r.set_defaults(func=cmd_release)

    c = sub.add_parser("compare", help="sweep several methods on the same data and seed, and put them on one frontier")
    add_data_arguments(c, one_method=False)
    c.add_argument(
        "--risk",
        help="risk measure of the frontier (default: the whole-release identification probability when every "
        "method takes it, else the attack identification rate, else the first risk measure they share); "
        "worst_attack: how far the worst applicable attack goes beyond its baseline, whichever attack it is "
        "((value − chance) / (1 − chance), or a control-corrected risk as it is)",
    )
    c.add_argument("--utility", help="utility measure of the frontier (default: the first one the methods share)")
    c.add_argument("--out", required=True, help="folder to write compare.json and the figure compare.html into")
    c.set_defaults(func=cmd_compare)

    add_parsers(sub, add_data_arguments)
    add_annotate_parsers(sub)
    add_ledger_parser(sub)

    v = sub.add_parser(
        "verify",
        help="check an exported bundle: every checksum, its claims (k, ℓ, t of its tables; ε against the vocabulary; "
        "the background corpus's checksum), then the release made again",
    )
    v.add_argument("bundle", help="the folder `textsdc release` or the Export page wrote")
    v.add_argument("--data", help="where the confidential data is now, if not where the bundle's replay reads it")
    v.add_argument(
        "--replay",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="make the release again and compare (default yes; --no-replay checks the checksums only)",
    )
    v.add_argument(
        "--key",
        metavar="FILE",
        help="the pseudonym key file the steward exported (--key-out) with the bundle: without it, the files "
        "holding pseudonyms are not replayed (the cache folder's key is used when it is the bundle's)",
    )
    v.add_argument(
        "--background",
        metavar="FILE",
        help="the background corpus the release declared: its SHA-256 and rows are checked against the manifest's "
        "(without it, the file at the path the release recorded, if it is here)",
    )
    add_annotations_argument(v)
    v.set_defaults(func=cmd_verify)

    e = sub.add_parser(
        "evaluate-detection",
        help="score a method's identifier finding on a gold file: precision, recall and F2 per type",
    )
    e.add_argument("--gold", required=True, help="gold file: CoNLL BIO (token<TAB>tag) or span JSON (.json/.jsonl)")
    e.add_argument(
        "--method", default="redact", help="the method whose finding is scored (default redact, the one with a check)"
    )
    e.add_argument(
        "--knob",
        "--level",
        dest="knob",
        type=knob_argument,
        help="knob value to score per type (default: the method's default)",
    )
    add_parameter_flags(e, settings=False)
    e.add_argument(
        "--ner", action=argparse.BooleanOptionalAction, default=None, help="the same as --use-ner / --no-use-ner"
    )
    e.add_argument("--out", help="folder to write detection.json and the figure detection.html into")
    e.set_defaults(func=cmd_evaluate_detection)

    b = sub.add_parser("dashboard", help="start the dashboard on this machine")
    b.add_argument("--data", help="demo or file to open first")
    add_reading_arguments(b)
    b.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    b.add_argument("--port", type=int, default=8501, help="port to listen on (default 8501)")
    b.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow an --address other machines can reach (e.g. 0.0.0.0); the confidential data loaded in the "
        "dashboard is then readable from the network",
    )
    b.set_defaults(func=cmd_dashboard)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except TextsdcError as exc:
        close_bars()
        print(f"textsdc: error: {exc}{left_out_hint(getattr(args, 'loaded', None), str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine, not the input: a full disk, a folder that cannot be written
        close_bars()
        print(f"textsdc: error: {os_error_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        close_bars()
        print("textsdc: interrupted", file=sys.stderr)
        return 130
    finally:
        OPEN_BARS.clear()
