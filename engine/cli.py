"""The `textsdc` command: datasets, sweep, release, compare, verify, evaluate-detection, dashboard.

A user error prints one line (``textsdc: error: ...``) and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine import MAX_SEED
from engine.backends import BACKENDS
from engine.errors import TextsdcError, os_error_message
from engine.measures.options import MeasureOptions
from engine.protect.params import Param

if TYPE_CHECKING:
    from engine.data.dataset import Dataset
    from engine.data.schema import Schema

_OPEN_BARS: list[dict] = []  # the states of the progress callbacks, so an error can clear their bars first


def _progress_bar(desc: str):
    """A progress callback drawing a tqdm bar on stderr, one bar per stage."""
    from tqdm import tqdm

    state: dict = {"bar": None, "what": None}
    _OPEN_BARS.append(state)

    def update(done: int, total: int, what: str = "") -> None:
        stage = what.partition(" (")[0]  # a detail in parentheses (a loss) belongs to the stage's bar
        if state["what"] != stage or state["bar"] is None or state["bar"].total != total:
            if state["bar"] is not None:
                state["bar"].close()
            state["bar"] = tqdm(total=total, desc=what or desc, file=sys.stderr, leave=False, dynamic_ncols=True)
            state["what"] = stage
        bar = state["bar"]
        if what != bar.desc:
            bar.set_description_str(what, refresh=False)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()
            state["bar"] = None

    return update


def _close_bars() -> None:
    """Clear any bar left open by work that stopped early, so a message starts on a clean line."""
    while _OPEN_BARS:
        state = _OPEN_BARS.pop()
        if state["bar"] is not None:
            state["bar"].close()
            state["bar"] = None


def _parse_grid(text: str | None) -> list[float] | str | None:
    if text is None:
        return None
    from engine.errors import ConfigError

    if text.strip() == "path":
        return "path"
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(
            f"--grid must be numbers separated by commas (e.g. 0,1,2) or 'path' (every λ or α fitted), got {text!r}"
        ) from None


def _knob_number(text: str) -> float:
    """--knob as the dashboard and the tables write it ("1,000,000", "6.21e-5")."""
    from engine.protect.base import knob_number

    try:
        return knob_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def method_parameters() -> dict[str, tuple[Param, list[str]]]:
    """Every registered method's parameters by name, with the methods that declare each. A name means one
    thing everywhere: the same type, whichever method declares it (TypeError otherwise)."""
    from engine.protect import METHODS

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


def _flag_help(p: Param, methods: list[str]) -> str:
    """The flag's help: the methods that take it, what it does for each, what it accepts and its default."""
    from engine.protect import METHODS

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


def method_params(args, method: str | None = None, among: Sequence[str] = (), schema: Schema | None = None) -> dict:
    """Keyword arguments of ``method`` (default: the chosen ``--method``): the settings the data's ``schema``
    gives it ([methods.METHOD]), then the command line's over them. An option that neither it nor any of
    ``among`` (the other methods of a comparison) takes is a ConfigError naming the methods that do; one that
    only another of ``among`` takes is left to that method."""
    from engine.errors import ConfigError
    from engine.protect import schema_parameters

    method = method or args.method
    params = schema_parameters(schema, method) if schema is not None else {}
    for name, (p, methods) in method_parameters().items():
        value = getattr(args, name, None)
        if value is None:
            continue
        if method not in methods:
            if any(m in methods for m in among):
                continue
            listed = f"methods {', '.join(among)}" if among else f"method '{method}'"
            raise ConfigError(f"{p.flag} does not apply to {listed}; it applies to: {', '.join(methods)}")
        params[name] = value if p.type is bool else p.parse(value)
    return params


def measure_options(args) -> MeasureOptions:
    """The measure settings of the command line; vendor keywords are the method's, when it has them."""
    from engine.measures.options import OPTION_PARAMETERS

    values = {p.name: p.parse(v) for p in OPTION_PARAMETERS if (v := getattr(args, p.name, None)) is not None}
    keywords = getattr(args, "vendor_keywords", None)
    return MeasureOptions.from_values(values, tuple(v.strip() for v in (keywords or "").split(",") if v.strip()))


def _protector(args, dataset: Dataset):
    from engine.protect import get_protector

    return get_protector(args.method, **method_params(args, schema=dataset.schema))


def check_arguments(args) -> None:
    """The run's own arguments checked before any work (ConfigError naming the flag and what is accepted):
    the seed, the number of replicates and workers, the replicate to export and where the output goes."""
    from engine.backends import check_backend
    from engine.errors import ConfigError
    from engine.protect import METHODS
    from engine.sweep import check_replicates

    if not 0 <= args.seed <= MAX_SEED:
        raise ConfigError(f"--seed must be a whole number from 0 to 2^63 − 1 ({MAX_SEED}), got {args.seed}")
    check_replicates(args.replicates)
    if args.jobs == 0 or args.jobs < -1:
        raise ConfigError(f"--jobs must be a number of parallel workers ≥ 1, or -1 for all cores; got {args.jobs}")
    out = Path(args.out).expanduser()
    if args.func is cmd_sweep:
        check_backend(args.backend, args.scheduler)
        if out.is_dir():
            raise ConfigError(
                f"--out {out} is a folder; give the results JSON file to write, e.g. {out / 'results.json'}"
            )
        if out.exists() and not args.overwrite:
            raise ConfigError(f"--out {out} exists; give --overwrite to replace it, or another file name")
        return
    if args.func is cmd_compare:
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out} is a file; give the folder to write compare.json and compare.html into")
        return
    from engine.export.staging import check_target

    check_target(out)
    cls = METHODS.get(args.method)
    if cls is not None and cls.deterministic and args.replicate != 0:
        raise ConfigError(
            f"method '{args.method}' is deterministic: it makes one release per knob value, so --replicate must be 0"
        )
    if not 0 <= args.replicate < args.replicates:
        raise ConfigError(
            f"--replicate must be from 0 to {args.replicates - 1} (replicates are numbered from 0 up to "
            f"--replicates {args.replicates}), got {args.replicate}"
        )


def _load(args):
    """The command's dataset; kept on ``args`` so that an error naming a column it left out can say why (`main`)."""
    from engine.data.load import load_dataset

    args.loaded = load_dataset(args.data, args.schema, encoding=args.encoding)
    return args.loaded


def cmd_datasets(args) -> int:
    from engine.data.demos import list_demos

    demos = list_demos()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": d.name,
                        "title": d.title,
                        "description": d.description,
                        "records": d.n_records,
                        "external_records": d.n_external,
                        "licence": d.licence,
                    }
                    for d in demos
                ],
                indent=2,
            )
        )
        return 0
    if not demos:
        print("no demo datasets are installed (the assets/demo folder is missing)")
        return 0
    width = max(len(d.name) for d in demos)
    for d in demos:
        print(f"{d.name:<{width}}  {d.n_records:>6} records  {d.title}  [{d.licence}]")
    return 0


def cmd_sweep(args) -> int:
    from engine.atomic import atomic_write_text
    from engine.cache import fit_cached
    from engine.measures.evaluate import check_options
    from engine.sweep import run_sweep

    check_arguments(args)
    dataset = _load(args)
    protector = _protector(args, dataset)
    grid = _parse_grid(args.grid)
    if isinstance(grid, list):
        grid = [protector.knob.validate(v) for v in grid]  # before the costly fit
    check_options(dataset, protector.check(dataset), measure_options(args))
    progress = _progress_bar("sweep")
    fitted = fit_cached(protector, dataset, progress, use_cache=not args.no_cache)
    result = run_sweep(
        dataset,
        protector,
        grid=grid,
        replicates=args.replicates,
        seed=args.seed,
        jobs=args.jobs,
        progress=progress,
        fitted=fitted,
        options=measure_options(args),
        backend=args.backend,
        scheduler=args.scheduler,
    )
    out = Path(args.out)
    payload = result.to_json_dict()
    choice = _pmse_choice(result)
    if choice is not None:
        payload["choice"] = {
            "rule": "pmse_ratio_closest_to_1",
            "best": choice.best,
            "high": choice.high,
            "low": choice.low,
            "pmse_ratio": choice.ratio,
            "why": choice.why,
        }
    curves = result.uncertainty_curves()
    if curves is not None:
        payload["intruder_uncertainty"] = curves.to_dict(orient="records")
    diagnostics = fitted.diagnostics(result.grid)
    if diagnostics is not None:
        payload["mcmc_diagnostics"] = diagnostics.to_dict(orient="records")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(payload, indent=2, allow_nan=True))
    table = result.summary.pivot(index="knob", columns="metric", values="mean")
    table.index = [result.knob.format(k) for k in table.index]
    table.index.name = result.knob.symbol
    print(f"{protector.title} on {dataset.name}: mean over {result.replicates} replicate(s)")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    for k, v in result.baseline.items():
        print(f"{k}: {v.value:.4f}")
    for k, why in result.skipped.items():
        print(f"not measured: {k} ({why})")
    for k, how in result.notes.items():
        print(f"how measured: {k}: {how}")
    if choice is not None:
        sym = result.knob.symbol
        print(
            f"{sym}* = {result.knob.format(choice.best)} (mean pMSE ratio {choice.ratio:.3f}, closest to 1); "
            f"comparison points {sym}h = {result.knob.format(choice.high)}, {sym}l = {result.knob.format(choice.low)}"
        )
    if curves is not None:
        at = result.knob.default if result.knob.default in result.grid else result.grid[0]
        table = curves[curves["knob"] == at].groupby(["data", "S"])[["emr", "tmr", "fmr", "unique_matches"]].mean()
        print(
            f"Intruder uncertainty S (Guo & Hu, Eq. 11) at {result.knob.symbol} = {result.knob.format(at)}, mean over "
            "replicates:"
        )
        print(table.unstack("data").to_string(float_format=lambda v: f"{v:.4f}"))
    if diagnostics is not None:
        poor = diagnostics[diagnostics["poor"]]
        worst = diagnostics["rhat"].max()
        print(
            f"MCMC: largest split R-hat {worst:.3f}, smallest effective sample size {diagnostics['ess'].min():.0f}"
            + (
                ""
                if poor.empty
                else f"; {len(poor)} parameter(s) poorly mixed: "
                + ", ".join(
                    f"{r.parameter} at {result.knob.symbol}={result.knob.format(r.knob)}"
                    for r in poor.head(5).itertuples()
                )
            )
        )
    print(f"wrote {out}")
    return 0


def _pmse_choice(result):
    from engine.frontier import select_by_pmse_ratio

    if "pmse_ratio" not in result.metric_ids:
        return None
    return select_by_pmse_ratio(result.summary, result.knob.symbol)


def _replay(args, knob: float, schema: Schema) -> str:
    from engine.replay import replay_command

    return replay_command(
        data=args.data,
        schema=args.schema,
        encoding=args.encoding,
        method=args.method,
        params=method_params(args, schema=schema),
        options=measure_options(args),
        knob=knob,
        seed=args.seed,
        replicates=args.replicates,
        replicate=args.replicate,
        out=getattr(args, "recorded_out", None) or args.out,
        with_frontier=args.with_frontier,
    )


def cmd_release(args) -> int:
    from engine.cache import fit_cached
    from engine.export.chosen import export_chosen
    from engine.measures.evaluate import check_options

    check_arguments(args)
    decision = None
    if args.decision:
        from engine.export.decision import Decision

        decision = Decision.load(args.decision)
    dataset = _load(args)
    protector = _protector(args, dataset)
    if args.knob is not None:
        protector.knob.validate(args.knob)  # the method's general range, before the costly fit
    check_options(dataset, protector.check(dataset), measure_options(args))
    progress = _progress_bar("release")
    fitted = fit_cached(protector, dataset, progress, use_cache=not args.no_cache)
    knob = fitted.snap(fitted.knob.default if args.knob is None else args.knob)
    result = export_chosen(
        args.out,
        dataset=dataset,
        protector=protector,
        fitted=fitted,
        knob=knob,
        seed=args.seed,
        replicates=args.replicates,
        replicate=args.replicate,
        options=measure_options(args),
        with_frontier=args.with_frontier,
        replay_command=_replay(args, knob, dataset.schema),
        audit_log=args.audit_log,
        jobs=args.jobs,
        progress=progress,
        decision=decision,
    )
    print(f"{protector.title} at {fitted.knob.symbol} = {fitted.knob.format(knob)} on {dataset.name}")
    for mid, m in sorted(result.manifest["metrics"].items()):
        print(f"  {mid}: " + ("not a number" if m["value"] is None else f"{m['value']:.4f}"))
    for path in result.files.values():
        print(f"wrote {path}")
    if result.internal_report is not None:
        print(
            f"wrote {result.internal_report} (internal review report with confidential excerpts: keep it, never share it)"
        )
    for warning in result.warnings:
        print(f"textsdc: warning: {warning}", file=sys.stderr)
    return 0


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(address: str) -> bool:
    """Whether ``address`` reaches this machine only: ``localhost`` or a loopback IP (127.0.0.0/8, ::1)."""
    import ipaddress

    if address.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def streamlit_flags(address: str, port: int) -> list[str]:
    """Every Streamlit setting that matters for privacy, on the command line so that no config.toml (of the
    folder it is started from, or of the user) and no STREAMLIT_* variable changes them: the address, no usage
    statistics, headless, no file watcher or development mode, CORS and XSRF protection on, no static files
    or agent API, no "magic" (bare expressions written to the page); on loopback also the Host names accepted
    (against DNS rebinding). Also one for speed: no forced garbage collection after each run."""
    local = is_loopback(address)
    wildcard = address in ("0.0.0.0", "::", "")
    flags = {
        "server.address": address,
        "server.port": str(port),
        "server.headless": "true",
        "server.fileWatcherType": "none",
        "server.runOnSave": "false",
        "server.enableCORS": "true",
        "server.enableXsrfProtection": "true",
        "server.enableStaticServing": "false",
        "server.enableAgentApi": "false",
        "server.showEmailPrompt": "false",
        "server.maxUploadSize": "200",
        "browser.gatherUsageStats": "false",
        "browser.serverPort": str(port),
        "global.developmentMode": "false",
        "client.toolbarMode": "minimal",
        # Streamlit collects garbage after every run; with a fitted model in memory a full collection takes a
        # few hundred milliseconds, which a slider move would wait for. Python's own collector still runs.
        "runner.postScriptGC": "false",
        # The pages write only what they call Streamlit to write: a bare string in a page's module (an
        # attribute's docstring) is not shown to the steward.
        "runner.magicEnabled": "false",
    }
    if not wildcard:  # the address the browser uses; with a wildcard Streamlit prints this machine's addresses
        flags["browser.serverAddress"] = address.strip("[]")
    out = [item for key, value in flags.items() for item in (f"--{key}", value)]
    if local:
        for host in dict.fromkeys((*LOOPBACK_NAMES, address.strip("[]").lower())):
            out += ["--server.allowedHosts", host]
    return out


def _no_outside_lookups() -> None:
    """Streamlit looks up this machine's public address at checkip.amazonaws.com to print an "External URL"
    and to judge a WebSocket from an unknown origin; the dashboard never asks an outside host anything."""
    from streamlit import net_util

    net_util.get_external_ip = lambda: None


def cmd_compare(args) -> int:
    from engine.atomic import atomic_write_text
    from engine.compare import compare_methods
    from engine.errors import ConfigError
    from engine.figures.text import comparison_figure
    from engine.measures.base import metric_info
    from engine.protect import METHODS

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    everything = methods == ["all"]
    if everything:
        methods = list(METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ConfigError(
            f"--methods: no method {', '.join(map(repr, unknown))}; the methods are {', '.join(METHODS)}, or all alone"
        )
    check_arguments(args)
    for flag, metric in (("--risk", args.risk), ("--utility", args.utility)):
        if metric is not None:
            try:
                metric_info(metric)  # named before any sweep runs
            except ConfigError as exc:
                raise ConfigError(f"{flag}: {exc}") from None
    dataset = _load(args)
    settings = [(m, method_params(args, m, methods, dataset.schema)) for m in methods]
    if everything:
        from engine.compare import applicable_methods

        refused = {m: why for m, why in applicable_methods(dataset, dict(settings)).items() if why}
        for m, why in refused.items():
            print(f"textsdc: {m} left out: {why}", file=sys.stderr)
        settings = [(m, p) for m, p in settings if m not in refused]
        methods = [m for m, _ in settings]
    comparison = compare_methods(
        dataset,
        settings,
        replicates=args.replicates,
        seed=args.seed,
        jobs=args.jobs,
        options=measure_options(args),
        progress=_progress_bar("comparing"),
    )
    risk, utility = comparison.default_pair()
    risk, utility = args.risk or risk, args.utility or utility
    payload = comparison.to_json(risk, utility)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "compare.json", json.dumps(payload, indent=2, allow_nan=True))
    figure = comparison_figure(comparison, risk, utility)
    atomic_write_text(out / "compare.html", figure.to_html(include_plotlyjs=True))
    front = comparison.frontier(risk, utility)
    print(
        f"{len(methods)} methods on {dataset.name}, seed {args.seed}, {args.replicates} replicate(s); risk {risk}, "
        f"utility {utility}"
    )
    for row in front.itertuples(index=False):
        knob = comparison.sweeps[row.method].knob
        mark = "  ← frontier across methods" if row.pareto else ""
        print(
            f"  {row.method:<12} {knob.symbol} {knob.format(row.knob):>8}  risk {row.risk:.3f}  "
            f"utility {row.utility:.3f}{mark}"
        )
    print(f"wrote {out / 'compare.json'} and {out / 'compare.html'}")
    return 0


def cmd_verify(args) -> int:
    from engine.export.verify import verify_checksums, verify_replay

    folder = Path(args.bundle)
    differences = verify_checksums(folder)
    if not differences and args.replay:
        differences = verify_replay(folder, args.data)
    for line in differences:
        print(line)
    if differences:
        print(f"{folder}: {len(differences)} difference(s)")
        return 1
    what = "every file matches its checksum" + ("; the replay makes the same files" if args.replay else "")
    print(f"{folder}: {what}")
    return 0


def cmd_evaluate_detection(args) -> int:
    from engine.atomic import atomic_write_text
    from engine.protect.redact import Redaction
    from engine.text.detection_quality import evaluate_detection, read_gold

    redaction = Redaction(thresholds=_many(args.thresholds))
    docs = read_gold(args.gold)
    (quality,) = evaluate_detection(
        docs,
        levels=(args.level,),
        thresholds=redaction.threshold_overrides(),
        use_ner=args.ner,
        progress=_progress_bar("finding identifiers"),
    ).values()
    columns = ["type", "gold_tokens", "token_precision", "token_recall", "token_f2", "span_precision", "span_recall"]
    print(f"{len(docs):,} documents of {Path(args.gold).name}, redaction level {args.level}")
    print(quality.table[columns].to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–"))
    print("most missed tokens: " + ", ".join(f"{t!r} ({c})" for t, c in quality.missed))
    print("most needlessly replaced tokens: " + ", ".join(f"{t!r} ({c})" for t, c in quality.false))
    if args.out:
        from engine.figures.detection import detection_figure

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "detection.json", json.dumps(quality.to_json(), indent=2))
        atomic_write_text(out / "detection.html", detection_figure(quality).to_html(include_plotlyjs=True))
        print(f"wrote {out / 'detection.json'} and {out / 'detection.html'}")
    return 0


def _many(text: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())


WARM_MODULES = (
    "engine.measures.evaluate",
    "engine.protect",
    "engine.sweep",
    "engine.cache",
    "engine.compare",
    "engine.candidates",
    "engine.figures.text",
    "engine.figures.field_synthesis",
    "engine.figures.bayes_counts",
    "engine.report.samples",
    "engine.export.bundle",
    "engine.data.load",
    "plotly.graph_objects",
    "streamlit.elements.plotly_chart",
    "streamlit.emojis",
)
"""What every page imports, imported before the dashboard's server listens (some seconds on 2 cores): the first
page a steward opens, and the first after a restart, then does not wait for them. Engine and plotting modules
only; the dashboard's own modules bind Streamlit's caches when imported, so they wait for its runtime."""


def _import_engine() -> None:
    import importlib

    for name in WARM_MODULES:
        importlib.import_module(name)
    # Streamlit checks once per process, at a page's first element, whether it runs in an interactive shell (to
    # warn that apps are started with `streamlit run`): `inspect.stack()` over every loaded module, 0.3 s that
    # the first page after a start would wait for. This process is started by `streamlit run`'s own command.
    from streamlit import delta_generator

    delta_generator._use_warning_has_been_displayed = True


def cmd_dashboard(args) -> int:
    from engine.errors import ConfigError

    if not 1 <= args.port <= 65535:
        raise ConfigError(f"--port must be a port number from 1 to 65535, got {args.port}")
    if not is_loopback(args.address):
        if not args.allow_remote:
            raise ConfigError(
                f"--address {args.address} can be reached from other machines, and the dashboard shows the "
                "confidential data it loads to whoever opens it; give --allow-remote to do so anyway, or an "
                "address of this machine only (127.0.0.1, ::1, localhost)"
            )
        print(
            f"textsdc: warning: the dashboard listens on {args.address}: the confidential data loaded in it can "
            f"be read by anyone who reaches this machine on port {args.port} (no password, no encryption)",
            file=sys.stderr,
        )
    from streamlit.web import cli as streamlit_cli

    app = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
    argv = [
        "run",
        str(app),
        *streamlit_flags(args.address, args.port),
        "--",
        *(["--data", args.data] if args.data else []),
        *(["--encoding", args.encoding] if args.encoding else []),
    ]
    host = f"[{args.address}]" if ":" in args.address else args.address
    print(f"textsdc dashboard on http://{host}:{args.port}  (Ctrl+C stops it)", flush=True)
    _no_outside_lookups()
    _import_engine()
    # Streamlit runs in this process: SIGTERM and SIGINT reach its own handlers, which stop the server, and no
    # child process is left listening when `textsdc dashboard` is stopped. It installs them only once its port
    # listens; a Ctrl+C before then ends the process as SIGTERM would (Python's KeyboardInterrupt could be lost
    # in the server's start and leave the port answering).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    streamlit_cli.main.main(args=argv, prog_name="streamlit", standalone_mode=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The `textsdc` parser; the method and measure flags come from their declarations (`Param`)."""
    from engine.measures.options import OPTION_PARAMETERS
    from engine.protect import METHODS

    p = argparse.ArgumentParser(prog="textsdc", description="Disclosure control for text and the fields beside it.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("datasets", help="list the demo datasets")
    d.add_argument("--json", action="store_true", help="print as JSON")
    d.set_defaults(func=cmd_datasets)

    def data_args(sp, one_method: bool = True):
        sp.add_argument(
            "--data", required=True, help="a demo name (see `textsdc datasets`) or a CSV/Parquet/JSONL file"
        )
        sp.add_argument("--schema", help="a schema TOML file (default: the demo's, or inferred)")
        sp.add_argument("--encoding", help="text encoding of the file (default UTF-8), e.g. latin-1")
        if one_method:
            sp.add_argument("--method", required=True, help=f"protection method: {', '.join(METHODS)}")
        else:
            sp.add_argument(
                "--methods",
                required=True,
                help=f"protection methods separated by commas: {', '.join(METHODS)}; or all (every method that "
                "applies to the data)",
            )
        for name, (param, methods) in method_parameters().items():
            if param.type is bool:
                sp.add_argument(
                    param.flag,
                    dest=name,
                    action=argparse.BooleanOptionalAction,
                    default=None,
                    help=_flag_help(param, methods),
                )
            else:
                sp.add_argument(param.flag, dest=name, metavar=param.name.upper(), help=_flag_help(param, methods))
        for param in OPTION_PARAMETERS:
            sp.add_argument(param.flag, dest=param.name, metavar=param.name.upper(), help=_flag_help(param, []))
        sp.add_argument("--replicates", type=int, default=1, help="M releases per knob value (default 1)")
        sp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        sp.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1; -1 = all cores)")
        sp.add_argument("--no-cache", action="store_true", help="refit instead of using the on-disk fit cache")

    s = sub.add_parser("sweep", help="measure risk and utility along the knob grid")
    data_args(s)
    s.add_argument(
        "--grid",
        help="knob values separated by commas, or 'path' for every λ or α the method fits (default: the method's grid)",
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
    data_args(r)
    r.add_argument(
        "--knob", type=_knob_number, help="knob value, e.g. the λ* a sweep printed (default: the method's default)"
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
    # `textsdc verify` makes the release again in a folder of its own; the files name the folder the bundle
    # recorded, so that they are the same bytes (the PDF report too, whose text cannot be rewritten after).
    r.add_argument("--recorded-out", help=argparse.SUPPRESS)
    r.set_defaults(func=cmd_release)

    c = sub.add_parser("compare", help="sweep several methods on the same data and seed, and put them on one frontier")
    data_args(c, one_method=False)
    c.add_argument(
        "--risk",
        help="risk measure of the frontier (default: the whole-release identification probability when every "
        "method takes it, else the attack identification rate, else the first risk measure they share)",
    )
    c.add_argument("--utility", help="utility measure of the frontier (default: the first one the methods share)")
    c.add_argument("--out", required=True, help="folder to write compare.json and the figure compare.html into")
    c.set_defaults(func=cmd_compare)

    from engine.cli_pins import add_parsers

    add_parsers(sub, data_args)

    v = sub.add_parser("verify", help="check an exported bundle: every checksum, then the release made again")
    v.add_argument("bundle", help="the folder `textsdc release` or the Export page wrote")
    v.add_argument("--data", help="where the confidential data is now, if not where the bundle's replay reads it")
    v.add_argument(
        "--replay",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="make the release again and compare (default yes; --no-replay checks the checksums only)",
    )
    v.set_defaults(func=cmd_verify)

    e = sub.add_parser(
        "evaluate-detection",
        help="score redaction's identifier finding on a gold file: precision, recall and F2 per type",
    )
    e.add_argument("--gold", required=True, help="gold file: CoNLL BIO (token<TAB>tag) or span JSON (.json/.jsonl)")
    e.add_argument("--level", type=int, default=4, choices=range(5), help="redaction level to score (default 4)")
    e.add_argument("--thresholds", help="per-type confidence thresholds, e.g. PHONE=0.3,STREET_ADDRESS=0.8")
    e.add_argument(
        "--ner",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="use spaCy's entity recognizer (default yes)",
    )
    e.add_argument("--out", help="folder to write detection.json and the figure detection.html into")
    e.set_defaults(func=cmd_evaluate_detection)

    b = sub.add_parser("dashboard", help="start the dashboard on this machine")
    b.add_argument("--data", help="demo or file to open first")
    b.add_argument("--encoding", help="text encoding of that file (default UTF-8), e.g. latin-1")
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
        from engine.data.load import left_out_hint

        _close_bars()
        print(f"textsdc: error: {exc}{left_out_hint(getattr(args, 'loaded', None), str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # the machine, not the input: a full disk, a folder that cannot be written
        _close_bars()
        print(f"textsdc: error: {os_error_message(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _close_bars()
        print("textsdc: interrupted", file=sys.stderr)
        return 130
    finally:
        _OPEN_BARS.clear()


if __name__ == "__main__":
    sys.exit(main())
