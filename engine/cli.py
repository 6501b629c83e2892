"""The `textsdc` command: datasets, sweep, release, dashboard.

A user error prints one line (``textsdc: error: ...``) and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

from engine.errors import TextsdcError
from engine.measures.options import MeasureOptions


_OPEN_BARS: list[dict] = []  # the states of the progress callbacks, so an error can clear their bars first


def _progress_bar(desc: str):
    """A progress callback drawing a tqdm bar on stderr, one bar per stage."""
    from tqdm import tqdm

    state: dict = {"bar": None, "what": None}
    _OPEN_BARS.append(state)

    def update(done: int, total: int, what: str = "") -> None:
        if state["what"] != what or state["bar"] is None or state["bar"].total != total:
            if state["bar"] is not None:
                state["bar"].close()
            state["bar"] = tqdm(total=total, desc=what or desc, file=sys.stderr, leave=False, dynamic_ncols=True)
            state["what"] = what
        bar = state["bar"]
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


def _names(text: str | None) -> list[str]:
    return [v.strip() for v in (text or "").split(",") if v.strip()]


def _methods_taking(parameter: str) -> list[str]:
    """Registered methods whose constructor takes ``parameter``."""
    import inspect

    from engine.protect import METHODS

    return [m for m, cls in METHODS.items() if parameter in inspect.signature(cls.__init__).parameters]


def method_params(args) -> dict:
    """Keyword arguments of the chosen method from the command line; an option the method does not take is
    a ConfigError naming the methods that do."""
    from engine.errors import ConfigError

    given = {
        "fields": _names(args.fields) or None,
        "vendor_keywords": _names(args.vendor_keywords) or None,
        "posterior": args.posterior,
        "posterior_draws": args.posterior_draws,
        "count_field": args.count_field,
        "continuous_field": args.continuous_field,
        "predictors": _names(args.predictors) or None,
        "lower": args.lower,
        "upper": args.upper,
        "chains": args.chains,
        "draws": args.draws,
        "rate_error": args.rate_error,
    }
    params = {}
    for key, value in given.items():
        if value is None:
            continue
        flag, methods = "--" + key.replace("_", "-"), _methods_taking(key)
        if args.method not in methods:
            raise ConfigError(f"{flag} does not apply to method '{args.method}'; it applies to: {', '.join(methods)}")
        params[key] = value
    return params


def measure_options(args) -> MeasureOptions:
    return MeasureOptions(
        projections=args.projections, topics=args.topics, prevalence_level=args.level,
        vendor_keywords=tuple(_names(args.vendor_keywords)), clusters=args.clusters,
        uncertainty_field=args.uncertainty_field,
    )


def _protector(args):
    from engine.protect import get_protector

    return get_protector(args.method, **method_params(args))


def _load(args):
    from engine.data.load import load_dataset

    return load_dataset(args.data, args.schema, encoding=args.encoding)


def cmd_datasets(args) -> int:
    from engine.data.load import list_demos

    demos = list_demos()
    if args.json:
        print(json.dumps([
            {"name": d.name, "title": d.title, "description": d.description, "records": d.n_records,
             "external_records": d.n_external, "licence": d.licence}
            for d in demos
        ], indent=2))
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

    dataset = _load(args)
    protector = _protector(args)
    grid = _parse_grid(args.grid)
    if isinstance(grid, list):
        grid = [protector.knob.validate(v) for v in grid]  # before the costly fit
    check_options(dataset, protector.check(dataset), measure_options(args))
    progress = _progress_bar("sweep")
    fitted = fit_cached(protector, dataset, progress, use_cache=not args.no_cache)
    result = run_sweep(
        dataset, protector, grid=grid, replicates=args.replicates, seed=args.seed,
        jobs=args.jobs, progress=progress, fitted=fitted, options=measure_options(args),
    )
    out = Path(args.out)
    payload = result.to_json_dict()
    choice = _pmse_choice(result)
    if choice is not None:
        payload["choice"] = {"rule": "pmse_ratio_closest_to_1", "best": choice.best, "high": choice.high,
                             "low": choice.low, "pmse_ratio": choice.ratio, "why": choice.why}
    curves = uncertainty_curves(result)
    if curves is not None:
        payload["intruder_uncertainty"] = curves.to_dict(orient="records")
    diagnostics = _diagnostics(fitted, result)
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
    if choice is not None:
        sym = result.knob.symbol
        print(f"{sym}* = {result.knob.format(choice.best)} (mean pMSE ratio {choice.ratio:.3f}, closest to 1); "
              f"comparison points {sym}h = {result.knob.format(choice.high)}, {sym}l = {result.knob.format(choice.low)}")
    if curves is not None:
        at = result.knob.default if result.knob.default in result.grid else result.grid[0]
        table = curves[curves["knob"] == at].groupby(["data", "S"])[["emr", "tmr", "fmr", "unique_matches"]].mean()
        print(f"Intruder uncertainty S (Guo & Hu, Eq. 11) at {result.knob.symbol} = {result.knob.format(at)}, mean over "
              "replicates:")
        print(table.unstack("data").to_string(float_format=lambda v: f"{v:.4f}"))
    if diagnostics is not None:
        poor = diagnostics[diagnostics["poor"]]
        worst = diagnostics["rhat"].max()
        print(f"MCMC: largest split R-hat {worst:.3f}, smallest effective sample size {diagnostics['ess'].min():.0f}"
              + ("" if poor.empty else f"; {len(poor)} parameter(s) poorly mixed: "
                 + ", ".join(f"{r.parameter} at {result.knob.symbol}={result.knob.format(r.knob)}"
                             for r in poor.head(5).itertuples())))
    print(f"wrote {out}")
    return 0


def uncertainty_curves(result):
    """EMR, TMR, FMR and unique matches against the intruder's uncertainty S (Guo & Hu, Section 4.3), for
    every knob value and replicate, and on the confidential data (``data`` column)."""
    import pandas as pd

    parts = []
    for knob, details in result.details.items():
        d = details.get("emr")
        if d is not None and "S" in d.columns:
            parts.append(d.assign(knob=knob, data="synthetic"))
    base = result.baseline.get("emr_confidential")
    if not parts:
        return None
    if base is not None and base.detail is not None and "S" in base.detail.columns:
        parts += [base.detail.assign(knob=k, data="confidential", replicate=0) for k in result.grid]
    cols = ["data", "knob", "replicate", "S", "emr", "tmr", "fmr", "unique_matches"]
    return pd.concat(parts, ignore_index=True)[cols]


def _diagnostics(fitted, result):
    """Split R-hat and effective sample sizes of a posterior-sampling method along its grid (None otherwise)."""
    import pandas as pd

    if not hasattr(fitted, "posterior"):
        return None
    return pd.concat([fitted.posterior(v).diagnostics.assign(knob=v) for v in result.grid], ignore_index=True)


def _pmse_choice(result):
    from engine.frontier import select_by_pmse_ratio

    if "pmse_ratio" not in result.metric_ids:
        return None
    return select_by_pmse_ratio(result.summary, result.knob.symbol)


def replay_command(args, knob: float) -> str:
    parts = ["textsdc", "release", "--data", args.data]
    if args.schema:
        parts += ["--schema", args.schema]
    if args.encoding:
        parts += ["--encoding", args.encoding]
    parts += ["--method", args.method]
    for flag, value in (("--fields", getattr(args, "fields", None)),
                        ("--vendor-keywords", getattr(args, "vendor_keywords", None)),
                        ("--posterior", getattr(args, "posterior", None)),
                        ("--posterior-draws", getattr(args, "posterior_draws", None)),
                        ("--count-field", getattr(args, "count_field", None)),
                        ("--continuous-field", getattr(args, "continuous_field", None)),
                        ("--predictors", getattr(args, "predictors", None)),
                        ("--lower", getattr(args, "lower", None)),
                        ("--upper", getattr(args, "upper", None)),
                        ("--chains", getattr(args, "chains", None)),
                        ("--draws", getattr(args, "draws", None)),
                        ("--rate-error", getattr(args, "rate_error", None)),
                        ("--clusters", _non_default(args, "clusters", MeasureOptions.clusters)),
                        ("--uncertainty-field", getattr(args, "uncertainty_field", None)),
                        ("--projections", _non_default(args, "projections", MeasureOptions.projections)),
                        ("--topics", _non_default(args, "topics", MeasureOptions.topics)),
                        ("--level", getattr(args, "level", None))):
        if value is not None:
            parts += [flag, str(value)]
    parts += ["--knob", f"{knob:.10g}", "--replicates", str(args.replicates),
              "--replicate", str(args.replicate), "--seed", str(args.seed), "--out", args.out]
    return shlex.join(parts)


def _non_default(args, name: str, default):
    value = getattr(args, name, None)
    return None if value is None or value == default else value


def cmd_release(args) -> int:
    from engine.cache import fit_cached
    from engine.measures.evaluate import Evaluator
    from engine.export.bundle import export_release
    from engine.sweep import make_release, metrics_with_intervals, run_sweep

    dataset = _load(args)
    protector = _protector(args)
    if args.knob is not None:
        protector.knob.validate(args.knob)  # the method's general range, before the costly fit
    from engine.measures.evaluate import check_options

    check_options(dataset, protector.check(dataset), measure_options(args))
    progress = _progress_bar("release")
    fitted = fit_cached(protector, dataset, progress, use_cache=not args.no_cache)
    knob = fitted.snap(fitted.knob.default if args.knob is None else args.knob)
    evaluator = Evaluator(dataset, None, progress, fields=fitted.synthesized_fields, options=measure_options(args))
    point = run_sweep(dataset, protector, grid=[knob], replicates=args.replicates, seed=args.seed,
                      jobs=args.jobs, progress=progress, fitted=fitted, evaluator=evaluator)
    sweep = None
    if args.with_frontier:
        sweep = run_sweep(dataset, protector, replicates=args.replicates, seed=args.seed, jobs=args.jobs,
                          progress=progress, fitted=fitted, evaluator=evaluator)
    release = make_release(fitted, knob, args.seed, point.replicates, min(args.replicate, point.replicates - 1))
    metrics = metrics_with_intervals(point, knob)
    result = export_release(
        args.out, dataset=dataset, release=release, metrics=metrics, method_params=protector.params(),
        replicates=point.replicates, sweep=sweep, point=point,
        risk_metric=_first(point, "risk"), utility_metric=_first(point, "utility"),
        replay_command=replay_command(args, knob), audit_log=args.audit_log,
        knob=fitted.knob, method_title=protector.title,
    )
    print(f"{protector.title} at {fitted.knob.symbol} = {fitted.knob.format(knob)} on {dataset.name}")
    for mid, m in sorted(metrics.items()):
        print(f"  {mid}: {m.value:.4f}")
    for name, path in result.files.items():
        print(f"wrote {path}")
    return 0


def _first(sweep, kind: str) -> str | None:
    ids = [m for m in sweep.metric_ids if sweep.rows[sweep.rows.metric == m]["kind"].iloc[0] == kind]
    return ids[0] if ids else None


def cmd_dashboard(args) -> int:
    app = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.address", args.address, "--server.port", str(args.port),
        "--browser.gatherUsageStats", "false", "--server.headless", "true",
        "--", *(["--data", args.data] if args.data else []),
    ]
    print(f"textsdc dashboard on http://{args.address}:{args.port}  (Ctrl+C stops it)")
    return subprocess.call(cmd)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="textsdc", description="Disclosure control for text and the fields beside it.")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("datasets", help="list the demo datasets")
    d.add_argument("--json", action="store_true", help="print as JSON")
    d.set_defaults(func=cmd_datasets)

    def data_args(sp):
        sp.add_argument("--data", required=True, help="a demo name (see `textsdc datasets`) or a CSV/Parquet/JSONL file")
        sp.add_argument("--schema", help="a schema TOML file (default: the demo's, or inferred)")
        sp.add_argument("--encoding", help="text encoding of the file (default UTF-8), e.g. latin-1")
        sp.add_argument("--method", required=True, help="protection method: redact, glm, cart or count-bayes")
        sp.add_argument("--fields", help="glm, cart: the fields to synthesize, in order, separated by commas "
                                         "(glm: categorical; cart: categorical, count or continuous; default: the "
                                         "sensitive categorical fields, else the sensitive count/continuous ones)")
        sp.add_argument("--count-field", help="count-bayes: the count field to synthesize (default: the first "
                                              "sensitive count field)")
        sp.add_argument("--continuous-field", help="count-bayes: the amount to synthesize after the count, by a "
                                                   "log-linear model (default: the first sensitive continuous field)")
        sp.add_argument("--predictors", help="count-bayes, cart: structured fields that predict the synthesized "
                                             "ones, separated by commas (default: the key fields)")
        sp.add_argument("--lower", type=int, help="count-bayes: lower bound of the count (default 0)")
        sp.add_argument("--upper", type=int, help="count-bayes: upper bound of the count (default: its largest value)")
        sp.add_argument("--chains", type=int, help="count-bayes: MCMC chains per λ (default 2)")
        sp.add_argument("--draws", type=int, help="count-bayes: MCMC draws per chain after warm-up (default 500)")
        sp.add_argument("--rate-error", choices=["fresh", "record"],
                        help="count-bayes: a synthetic count's log-rate error is drawn fresh (default) or is the "
                             "record's own posterior error (more utility, more risk)")
        sp.add_argument("--clusters", type=int, default=MeasureOptions.clusters,
                        help="count and amount measures: clusters of the cluster utility Uc (default 20)")
        sp.add_argument("--uncertainty-field", help="count and amount measures: the key count the intruder knows "
                                                    "with noise of level S (default: the first un-synthesized key count)")
        sp.add_argument("--vendor-keywords", help="glm, cart: words left out of the text features, separated by "
                                                  "commas (e.g. the vendor's name)")
        sp.add_argument("--posterior", choices=["mode", "bootstrap"],
                        help="glm: the posterior mode (default) or Bayesian-bootstrap draws of the coefficients")
        sp.add_argument("--posterior-draws", type=int, help="glm: number of bootstrap refits (default 20)")
        sp.add_argument("--projections", type=int, default=MeasureOptions.projections,
                        help="synthesis measures: random projections of the text for the pMSE (default 20)")
        sp.add_argument("--topics", type=int, default=MeasureOptions.topics, help="synthesis measures: topics of the topic model (default 5)")
        sp.add_argument("--level", help="synthesis measures: FIELD=LEVEL whose topic-prevalence coefficient is "
                                        "followed (default: the least frequent level of the first field)")
        sp.add_argument("--replicates", type=int, default=1, help="M releases per knob value (default 1)")
        sp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        sp.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1; -1 = all cores)")
        sp.add_argument("--no-cache", action="store_true", help="refit instead of using the on-disk fit cache")

    s = sub.add_parser("sweep", help="measure risk and utility along the knob grid")
    data_args(s)
    s.add_argument("--grid", help="knob values separated by commas, or 'path' for every λ or α the method fits "
                                  "(default: the method's grid)")
    s.add_argument("--out", required=True, help="results JSON file to write")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("release", help="protect at one knob value and export the release with manifest and report")
    data_args(r)
    r.add_argument("--knob", type=float, help="knob value, e.g. the λ* a sweep printed (default: the method's default)")
    r.add_argument("--replicate", type=int, default=0, help="which replicate to export (default 0)")
    r.add_argument("--with-frontier", action="store_true", help="also sweep the grid to draw the frontier in the report")
    r.add_argument("--audit-log", help="SQLite audit log (default: in the textsdc cache folder)")
    r.add_argument("--out", required=True, help="folder to write the release into")
    r.set_defaults(func=cmd_release)

    b = sub.add_parser("dashboard", help="start the dashboard on this machine")
    b.add_argument("--data", help="demo or file to open first")
    b.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    b.add_argument("--port", type=int, default=8501)
    b.set_defaults(func=cmd_dashboard)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except TextsdcError as exc:
        _close_bars()
        print(f"textsdc: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _close_bars()
        print("textsdc: interrupted", file=sys.stderr)
        return 130
    finally:
        _OPEN_BARS.clear()


if __name__ == "__main__":
    sys.exit(main())
