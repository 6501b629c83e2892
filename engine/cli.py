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


def _progress_bar(desc: str):
    """A progress callback drawing a tqdm bar on stderr, one bar per stage."""
    from tqdm import tqdm

    state: dict = {"bar": None, "what": None}

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


def _parse_grid(text: str | None) -> list[float] | None:
    if text is None:
        return None
    from engine.errors import ConfigError

    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ConfigError(f"--grid must be numbers separated by commas (e.g. 0,1,2), got {text!r}") from None


def _load(args):
    from engine.datasets import load_dataset

    return load_dataset(args.data, args.schema, encoding=args.encoding)


def cmd_datasets(args) -> int:
    from engine.datasets import list_demos

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
    from engine.protect import get_protector
    from engine.sweep import run_sweep

    dataset = _load(args)
    protector = get_protector(args.method)
    result = run_sweep(
        dataset, protector, grid=_parse_grid(args.grid), replicates=args.replicates, seed=args.seed,
        jobs=args.jobs, progress=_progress_bar("sweep"), use_cache=not args.no_cache,
    )
    out = Path(args.out)
    from engine.atomic import atomic_write_text

    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, result.to_json())
    table = result.summary.pivot(index="knob", columns="metric", values="mean")
    print(f"{protector.title} on {dataset.name}: mean over {result.replicates} replicate(s)")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    for k, v in result.baseline.items():
        print(f"{k}: {v.value:.4f}")
    for k, why in result.skipped.items():
        print(f"not measured: {k} ({why})")
    print(f"wrote {out}")
    return 0


def replay_command(args, knob: float) -> str:
    parts = ["textsdc", "release", "--data", args.data]
    if args.schema:
        parts += ["--schema", args.schema]
    if args.encoding:
        parts += ["--encoding", args.encoding]
    parts += ["--method", args.method, "--knob", f"{knob:g}", "--replicates", str(args.replicates),
              "--replicate", str(args.replicate), "--seed", str(args.seed), "--out", args.out]
    return shlex.join(parts)


def cmd_release(args) -> int:
    from engine.export import export_release
    from engine.protect import get_protector
    from engine.sweep import make_release, metrics_with_intervals, run_sweep

    dataset = _load(args)
    protector = get_protector(args.method)
    knob = protector.knob.validate(protector.knob.default if args.knob is None else args.knob)
    progress = _progress_bar("release")
    from engine.cache import fit_cached

    fitted = fit_cached(protector, dataset, progress, use_cache=not args.no_cache)
    point = run_sweep(dataset, protector, grid=[knob], replicates=args.replicates, seed=args.seed,
                      jobs=args.jobs, progress=progress, fitted=fitted)
    sweep = None
    if args.with_frontier:
        sweep = run_sweep(dataset, protector, replicates=args.replicates, seed=args.seed, jobs=args.jobs,
                          progress=progress, fitted=fitted)
    release = make_release(fitted, knob, args.seed, point.replicates, min(args.replicate, point.replicates - 1))
    metrics = metrics_with_intervals(point, knob)
    result = export_release(
        args.out, dataset=dataset, release=release, metrics=metrics, method_params=protector.params(),
        replicates=point.replicates, sweep=sweep,
        risk_metric=_first(point, "risk"), utility_metric=_first(point, "utility"),
        replay_command=replay_command(args, knob), audit_log=args.audit_log,
        knob=protector.knob, method_title=protector.title,
    )
    print(f"{protector.title} at {protector.knob.symbol} = {protector.knob.format(knob)} on {dataset.name}")
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
        sp.add_argument("--method", required=True, help="protection method, e.g. redact")
        sp.add_argument("--replicates", type=int, default=1, help="M releases per knob value (default 1)")
        sp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
        sp.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1; -1 = all cores)")
        sp.add_argument("--no-cache", action="store_true", help="refit instead of using the on-disk fit cache")

    s = sub.add_parser("sweep", help="measure risk and utility along the knob grid")
    data_args(s)
    s.add_argument("--grid", help="knob values separated by commas (default: the method's grid)")
    s.add_argument("--out", required=True, help="results JSON file to write")
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("release", help="protect at one knob value and export the release with manifest and report")
    data_args(r)
    r.add_argument("--knob", type=float, help="knob value (default: the method's default)")
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
        print(f"textsdc: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("textsdc: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
