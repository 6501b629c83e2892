"""The command line's shared arguments: the data, the method's parameters and the measures' settings as flags
(from their declarations, `Param`), the run's own checks, and what they turn into (`ReplaySpec`'s pieces)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine import MAX_SEED
from engine.backends import check_backend
from engine.data.dataset import Dataset
from engine.data.delimited import BAD_ROWS
from engine.data.load import dropped_note, load_dataset
from engine.data.schema import Schema
from engine.errors import ConfigError
from engine.export.keys import check_key_target, read_key_file
from engine.export.ledgered import OVERRIDE_FLAG, LedgerUse
from engine.export.staging import check_target
from engine.ledger.store import LEDGER_ENV
from engine.measures.registry import setting_parameters
from engine.measures.settings import MeasureSettings
from engine.protect import METHODS, get_protector, method_class, schema_parameters
from engine.protect.base import Protector, knob_number
from engine.protect.corrections import REPLAY_OPTION, import_corrections
from engine.protect.params import RUN_PARAMETERS, Param
from engine.protect.plan import KnobValues, Plan, is_plan
from engine.protect.plan.method import STEP_SEED
from engine.protect.plan.steps import step_ident, step_param
from engine.sweep import check_replicates


def parse_grid(text: str | None) -> list[float] | str | None:
    """--grid: knob values separated by commas, or "path" (every λ or α the method fits)."""
    if text is None:
        return None
    if text.strip() == "path":
        return "path"
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(
            f"--grid must be numbers separated by commas (e.g. 0,1,2) or 'path' (every λ or α fitted), got {text!r}"
        ) from None


def knob_argument(text: str) -> float:
    """--knob as the dashboard and the tables write it ("1,000,000", "6.21e-5")."""
    try:
        return knob_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def count_argument(text: str) -> int:
    """A whole number of 0 or more (--refine)."""
    try:
        value = int(text.replace(",", ""))
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number of 0 or more, got {text!r}")
    return value


def method_parameters() -> dict[str, tuple[Param, list[str]]]:
    """Every registered method's parameters by name, with the methods that declare each. A name means one
    thing everywhere: the same type, whichever method declares it (TypeError otherwise)."""
    out: dict[str, tuple[Param, list[str]]] = {}
    for method, cls in METHODS.items():
        for p in cls.parameters:
            if p.name in out:
                first = out[p.name][0]
                if (first.type, first.many) != (p.type, p.many):
                    raise TypeError(
                        f"parameter '{p.name}' of '{method}' differs in type from the one of "
                        f"'{out[p.name][1][0]}'; give it another name"
                    )
                out[p.name][1].append(method)
            else:
                out[p.name] = (p, [method])
    return out


def flag_help(p: Param, methods: list[str]) -> str:
    """The flag's help: the methods that take it, what it does for each, what it accepts and its default."""
    helps = {m: next(q.help for q in METHODS[m].parameters if q.name == p.name) for m in methods}
    if len(set(helps.values())) > 1:
        text = "; ".join(f"{m}: {h}" for m, h in helps.items())
    else:
        text = (", ".join(methods) + ": " if methods else "") + p.help
    if p.default is None or p.default == ():
        default = ""
    elif p.many:
        default = "; default " + ",".join(map(str, p.default))
    elif p.type is bool:
        default = "; default on" if p.default else "; default off"
    else:
        default = f"; default {p.default}"
    return f"{text} ({p.accepted}{default})".replace("%", "%%")


def add_parameter_flags(sp: argparse.ArgumentParser, settings: bool = True) -> None:
    """Every method's parameters and (with ``settings``) every measure setting as flags of ``sp``."""
    for name, (param, methods) in method_parameters().items():
        if param.type is bool:
            sp.add_argument(
                param.flag,
                dest=name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=flag_help(param, methods),
            )
        else:
            sp.add_argument(param.flag, dest=name, metavar=param.name.upper(), help=flag_help(param, methods))
    for param in setting_parameters() if settings else ():
        sp.add_argument(param.flag, dest=param.name, metavar=param.name.upper(), help=flag_help(param, []))
    add_step_flags(sp)


def step_flag_parameters() -> list[Param]:
    """The parameters of every method as a step of a plan (``--glm.fields``), and the plan's step seed: the
    flags `add_step_flags` adds."""
    out: list[Param] = [step_param(m, p) for m, cls in METHODS.items() for p in cls.parameters]
    return [p for p in out if p.name.split("__", 1)[1] not in RUN_PARAMETERS] + [STEP_SEED]


def add_step_flags(sp: argparse.ArgumentParser) -> None:
    """The flags of a plan's steps: every method's parameters prefixed by its name (``--glm.fields``, help left
    out: the --method help says how), and the plan's step seed."""
    for q in step_flag_parameters():
        if q is STEP_SEED:
            sp.add_argument(q.flag, dest=q.name, metavar="SEED", help=flag_help(q, []))
        elif q.type is bool:
            sp.add_argument(
                q.flag, dest=q.name, action=argparse.BooleanOptionalAction, default=None, help=argparse.SUPPRESS
            )
        else:
            sp.add_argument(q.flag, dest=q.name, help=argparse.SUPPRESS)


def add_data_arguments(sp: argparse.ArgumentParser, one_method: bool = True) -> None:
    """The data, the method (or methods), their parameters, the measure settings and the run's seed and M."""
    sp.add_argument("--data", required=True, help="a demo name (see `textsdc datasets`) or a CSV/Parquet/JSONL file")
    sp.add_argument("--schema", help="a schema TOML file (default: the demo's, or inferred)")
    add_reading_arguments(sp)
    if one_method:
        sp.add_argument(
            "--method",
            required=True,
            help=f"protection method: {', '.join(METHODS)}; or a plan of them joined by '+' (e.g. redact+glm), "
            "each step applied to the data as the steps before it released it: a step's parameters are prefixed "
            "by its name (--glm.fields), its knob given as --knob NAME=VALUE (--knob level=2 --knob lambda=0.012)",
        )
    else:
        sp.add_argument(
            "--methods",
            required=True,
            help=f"protection methods separated by commas: {', '.join(METHODS)}; or all (every method that "
            "applies to the data)",
        )
    add_parameter_flags(sp)
    sp.add_argument("--replicates", type=int, default=1, help="M releases per knob value (default 1)")
    sp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sp.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1; -1 = all cores)")
    sp.add_argument("--no-cache", action="store_true", help="refit instead of using the on-disk fit cache")


def add_reading_arguments(sp: argparse.ArgumentParser) -> None:
    """How the data file is read: its encoding, delimiter and what to do with rows of the wrong length."""
    sp.add_argument("--encoding", help="text encoding of the file (default UTF-8), e.g. latin-1")
    sp.add_argument(
        "--delimiter",
        help="what separates the values of a CSV or TSV file: one character, or comma, semicolon, tab, pipe "
        "(default: the one the file's first records are written with)",
    )
    sp.add_argument(
        "--bad-rows",
        choices=BAD_ROWS,
        default="error",
        help="rows with more or fewer fields than the header: error (refuse the file, naming the rows; the "
        "default) or drop (leave them out and count them)",
    )


def method_params(
    args: argparse.Namespace, method: str | None = None, among: Sequence[str] = (), schema: Schema | None = None
) -> dict[str, Any]:
    """Keyword arguments of ``method`` (default: the chosen ``--method``): the settings the data's ``schema``
    gives it ([methods.METHOD]), then the command line's over them. An option that neither it nor any of
    ``among`` (the other methods of a comparison) takes is a ConfigError naming the methods that do; one that
    only another of ``among`` takes is left to that method."""
    method = method or args.method
    if is_plan(method):
        return plan_params(args, method, schema, among)
    stepped = sorted(f"--{m}.{n}" for m, n in _step_flags_given(args))
    if stepped and not any(is_plan(a) for a in among):
        raise ConfigError(f"{stepped[0]} sets a parameter of a plan's step; --method {method} is no plan")
    params = schema_parameters(schema, method) if schema is not None else {}
    for name, (p, methods) in method_parameters().items():
        value = getattr(args, name, None)
        if value is None:
            continue
        if method not in methods:
            if any(m in methods for a in among for m in a.split("+")):
                continue
            listed = f"methods {', '.join(among)}" if among else f"method '{method}'"
            raise ConfigError(f"{p.flag} does not apply to {listed}; it applies to: {', '.join(methods)}")
        params[name] = value if p.type is bool else p.parse(value)
    return params


def _step_flags_given(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The (method, parameter) of every ``--METHOD.PARAM`` flag given."""
    return [
        (m, p.name)
        for m, cls in METHODS.items()
        for p in cls.parameters
        if p.name not in RUN_PARAMETERS and getattr(args, step_param(m, p).name, None) is not None
    ]


def plan_params(
    args: argparse.Namespace, method: str, schema: Schema | None = None, among: Sequence[str] = ()
) -> dict[str, Any]:
    """Keyword arguments of the plan ``method``: each step's settings from the data's ``schema``, then a flag
    without a prefix for every step that takes it (the release guard's for the plan), then the flags prefixed by
    a step's name for that step. ConfigError for a flag no step (nor another method of ``among``, a comparison's)
    takes or a prefix naming no step."""
    cls = method_class(method)
    assert issubclass(cls, Plan)
    steps = tuple(c.name for c in cls.step_classes)
    params: dict[str, Any] = {}
    for step in steps:
        if schema is not None:
            params.update({f"{step_ident(step)}__{k}": v for k, v in schema_parameters(schema, step).items()})
    for name, (p, methods) in method_parameters().items():
        value = getattr(args, name, None)
        if value is None:
            continue
        parsed = value if p.type is bool else p.parse(value)
        takers = [s for s in steps if s in methods]
        if name in RUN_PARAMETERS:
            params[name] = parsed
        elif not takers and any(m in methods for a in among for m in a.split("+")):
            continue
        elif not takers:
            raise ConfigError(f"{p.flag} does not apply to plan '{method}'; it applies to: {', '.join(methods)}")
        for s in takers if name not in RUN_PARAMETERS else ():
            params[f"{step_ident(s)}__{name}"] = parsed
    for m, name in _step_flags_given(args):
        if m not in steps and any(m in a.split("+") for a in among if a != method):
            continue
        if m not in steps:
            raise ConfigError(f"--{m}.{name.replace('_', '-')}: {m} is no step of plan '{method}' ({', '.join(steps)})")
        q = step_param(m, next(p for p in METHODS[m].parameters if p.name == name))
        value = getattr(args, q.name)
        params[q.name] = value if q.type is bool else q.parse(value)
    if getattr(args, STEP_SEED.name, None) is not None:
        params[STEP_SEED.name] = STEP_SEED.parse(getattr(args, STEP_SEED.name))
    return params


def knob_values(args: argparse.Namespace, protector: Protector) -> tuple[dict[str, Any], float | None]:
    """The --knob values given (``VALUE``, or ``NAME=VALUE`` per step of a plan), checked against each knob's
    range before the fit: the plan's parameters they set (the knobs of its steps before the last) and the
    method's or the last step's knob value (None: its default)."""
    given = list(args.knob or [])
    if isinstance(protector, Plan):
        knobs = [c.knob for c in protector.step_classes]
        defaults = (*protector.upstream_values(), knobs[-1].default)
        steps: tuple[str, ...] = protector.steps
    else:
        knobs, defaults, steps = [protector.knob], (protector.knob.default,), (protector.name,)
    values = KnobValues.parse(given, steps, knobs, defaults)
    return values.as_params(knobs), values.values[-1] if values.given[-1] else None


def measure_options(args: argparse.Namespace) -> MeasureSettings:
    """The measure settings of the command line; vendor keywords are the method's, when it has them."""
    values = {p.name: p.parse(v) for p in setting_parameters() if (v := getattr(args, p.name, None)) is not None}
    vendor = [
        getattr(args, n, None) for n in ("vendor_keywords", *(f"{step_ident(m)}__vendor_keywords" for m in METHODS))
    ]
    return MeasureSettings.from_values(values, many(next((v for v in vendor if v is not None), None)))


def protector_of(args: argparse.Namespace, dataset: Dataset) -> Protector:
    """The chosen method (or plan) with its parameters: the data's schema's, then the command line's, then the
    knobs of a plan's steps before the last (--knob NAME=VALUE)."""
    protector = get_protector(args.method, **method_params(args, schema=dataset.schema))
    if isinstance(protector, Plan) and getattr(args, "knob", None):
        upstream, _ = knob_values(args, protector)
        protector = get_protector(args.method, **{**protector.params(), **upstream})
    return protector


def check_run(args: argparse.Namespace) -> None:
    """The run's own arguments checked before any work (ConfigError naming the flag and what is accepted): the
    seed, the number of replicates and workers, the replicate to export and where the output goes."""
    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"--seed must be a whole number from 0 to 2^63 − 1 ({MAX_SEED}), got {args.seed}")
    check_replicates(args.replicates)
    if args.jobs == 0 or args.jobs < -1:
        raise ConfigError(f"--jobs must be a number of parallel workers ≥ 1, or -1 for all cores; got {args.jobs}")
    out = Path(args.out).expanduser()
    if args.command == "sweep":
        check_backend(args.backend, args.scheduler)
        if out.is_dir():
            raise ConfigError(
                f"--out {out} is a folder; give the results JSON file to write, e.g. {out / 'results.json'}"
            )
        if out.exists() and not args.overwrite:
            raise ConfigError(f"--out {out} exists; give --overwrite to replace it, or another file name")
        return
    if args.command == "compare":
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out} is a file; give the folder to write compare.json and compare.html into")
        return
    check_target(out, args.replace)
    if args.key_out:
        check_key_target(args.key_out, out)
    cls = method_class(args.method)
    if cls.deterministic and args.replicate != 0:
        raise ConfigError(
            f"method '{args.method}' is deterministic: it makes one release per knob value, so --replicate must be 0"
        )
    if not 0 <= args.replicate < args.replicates:
        raise ConfigError(
            f"--replicate must be from 0 to {args.replicates - 1} (replicates are numbered from 0 up to "
            f"--replicates {args.replicates}), got {args.replicate}"
        )


def key_of(args: argparse.Namespace) -> bytes | None:
    """The pseudonym key in the --key file, if one is given (read before any work)."""
    return read_key_file(args.key) if getattr(args, "key", None) else None


def add_key_arguments(sp: argparse.ArgumentParser, key: bool = True) -> None:
    """--replace and --key-out of a command that writes a bundle, and (with ``key``) --key."""
    sp.add_argument(
        "--replace", action="store_true", help="replace the bundle already in the --out folder (refused otherwise)"
    )
    sp.add_argument(
        "--key-out",
        metavar="FILE",
        help="also write the pseudonym key of the identifier columns to FILE, outside the bundle folder, for the "
        "people allowed to replay or verify the release (`textsdc verify --key FILE`); keep it from everyone else",
    )
    if key:
        sp.add_argument(
            "--key",
            metavar="FILE",
            help="make the pseudonyms with the key in FILE (one --key-out wrote) instead of the cache folder's",
        )


def add_annotations_argument(sp: argparse.ArgumentParser) -> None:
    """``--annotations``: the steward's kept corrections files, for a replay with ``corrections = kept`` away from
    the steward's cache folder (`engine.protect.corrections.import_corrections`)."""
    sp.add_argument(
        REPLAY_OPTION,
        dest="annotations",
        metavar="FILE",
        action="append",
        default=[],
        help="a kept corrections file of the steward (…-corrections.json in the cache folder's annotations/), or "
        "the folder holding them: kept on this machine before the release is made, for corrections = kept "
        "(may be given more than once)",
    )


def import_annotations(args: argparse.Namespace, fingerprint: str) -> None:
    """Keep the corrections files ``--annotations`` gives for the dataset with ``fingerprint``, saying which."""
    if not getattr(args, "annotations", None):
        return
    for lists in import_corrections(args.annotations, fingerprint):
        counts = lists.counts()
        print(f"kept corrections of {lists.detector}: {counts['allow']} never, {counts['deny']} always replaced")


def add_ledger_arguments(sp: argparse.ArgumentParser) -> None:
    """--ledger and --ledger-override of a command that writes a bundle (`engine.export.ledgered`)."""
    sp.add_argument(
        "--ledger",
        metavar="FILE",
        help=f"the release ledger to check this export against and record it in (default: ${LEDGER_ENV}, else "
        "ledger.json in the textsdc cache folder)",
    )
    sp.add_argument(
        OVERRIDE_FLAG,
        metavar="REASON",
        help="export even though the release ledger finds this release adds to earlier ones of the same records "
        "(ε summed, the text less protected, the text in clear beside a field synthesis, synthetic releases "
        "averaging towards the confidential values), for the reason given, which the ledger and the manifest keep",
    )


def ledger_of(args: argparse.Namespace) -> LedgerUse:
    """The ledger a command's export uses, and the steward's reason to export over its findings."""
    return LedgerUse(args.ledger, args.ledger_override)


def load(args: argparse.Namespace) -> Dataset:
    """The command's dataset; kept on ``args`` so that an error naming a column it left out can say why (`main`).
    The rows left out of the file (``--bad-rows drop``) are counted on stderr."""
    args.loaded = load_dataset(
        args.data, args.schema, encoding=args.encoding, delimiter=args.delimiter, bad_rows=args.bad_rows
    )
    if note := dropped_note(args.loaded):
        print(f"textsdc: {note}", file=sys.stderr)
    return args.loaded


def many(text: str | None) -> tuple[str, ...]:
    """Names separated by commas, each stripped."""
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())
