"""The `textsdc` commands that measure and release: datasets, sweep, release, compare, verify and
evaluate-detection. Each takes the parsed arguments and returns the exit status; a user error is raised as a
`TextsdcError` for `engine.cli.main` to print."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from engine.atomic import atomic_write_text
from engine.cache import fit_cached
from engine.cli.args import (
    check_run,
    import_annotations,
    key_of,
    knob_values,
    ledger_of,
    load,
    measure_options,
    method_params,
    parse_grid,
    protector_of,
)
from engine.cli.progress import progress_bar
from engine.compare import applicable_methods, compare_methods
from engine.data.demos import list_demos
from engine.errors import ConfigError
from engine.export.bundle import ExportResult
from engine.export.chosen import Prepared, Run, export_chosen
from engine.export.claims import verify_claims
from engine.export.verify import ReplayCheck, verify_checksums, verify_replay
from engine.figures.detection import detection_figure
from engine.figures.text import comparison_figure
from engine.frontier import PmseChoice, select_by_pmse_ratio
from engine.knob_range import Onset, onset_text, utility_onset
from engine.ledger.explain import ledger_figures
from engine.measures.base import metric_info
from engine.measures.evaluate import check_options
from engine.protect import METHODS, get_protector, is_method
from engine.protect.base import Fitted, Protector
from engine.protect.plan import Plan
from engine.record.decision import Decision
from engine.record.manifest import read_record
from engine.record.replay import ReplaySpec
from engine.results import SweepResult
from engine.sweep import run_sweep


def cmd_datasets(args: argparse.Namespace) -> int:
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


def _onset(result: SweepResult, protector: Protector) -> Onset | None:
    """Where utility begins along the knob for the method's first risk and utility measures (`shown_first`,
    else the first of each kind the sweep measured)."""
    ids = result.metric_ids
    first = [m for m in protector.shown_first if m in ids]
    utility = next((m for m in [*first, *ids] if metric_info(m).kind == "utility"), None)
    risk = next((m for m in [*first, *ids] if metric_info(m).kind == "risk"), None)
    return None if utility is None else utility_onset(result.knob, result.summary, utility, risk)


def cmd_sweep(args: argparse.Namespace) -> int:
    check_run(args)
    dataset = load(args)
    protector = protector_of(args, dataset)
    if args.knob and knob_values(args, protector)[1] is not None:
        raise ConfigError(
            f"--knob: a sweep goes along the knob of {args.method}'s last step; give its values as --grid"
        )
    grid = parse_grid(args.grid)
    if isinstance(grid, list):
        grid = [protector.knob.validate(v) for v in grid]  # before the costly fit
    check_options(dataset, protector.check(dataset), measure_options(args))
    progress = progress_bar("sweep")
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
        refine=args.refine,
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
    steps = f" ({', '.join(upstream_words(protector))})" if isinstance(protector, Plan) else ""
    print(f"{protector.title}{steps} on {dataset.name}: mean over {result.replicates} replicate(s)")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    for k, v in result.baseline.items():
        print(f"{k}: {v.value:.4f}")
    said = onset_text(result.knob, _onset(result, protector))
    if said:
        print(said)
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


def _pmse_choice(result: SweepResult) -> PmseChoice | None:
    if "pmse_ratio" not in result.metric_ids:
        return None
    return select_by_pmse_ratio(result.summary, result.knob.symbol)


def cmd_release(args: argparse.Namespace) -> int:
    check_run(args)
    decision = Decision.load(args.decision) if args.decision else None
    key = key_of(args)
    dataset = load(args)
    import_annotations(args, dataset.fingerprint)
    protector = protector_of(args, dataset)
    upstream, last = knob_values(args, protector)  # each knob's general range, before the costly fit
    options = measure_options(args)
    check_options(dataset, protector.check(dataset), options)
    progress = progress_bar("release")
    fitted = fit_cached(protector, dataset, progress, use_cache=not args.no_cache)
    knob = fitted.snap(fitted.knob.default if last is None else last)
    spec = ReplaySpec(
        data=args.data,
        schema=args.schema,
        encoding=args.encoding,
        delimiter=args.delimiter,
        bad_rows=args.bad_rows,
        method=args.method,
        params={**method_params(args, schema=dataset.schema), **upstream},
        options=options,
        knob=knob,
        seed=args.seed,
        replicates=args.replicates,
        replicate=args.replicate,
        out=args.out,
        with_frontier=args.with_frontier,
    )
    run = Run(
        jobs=args.jobs,
        progress=progress,
        audit_log=args.audit_log,
        key=key,
        key_out=args.key_out,
        replace=args.replace,
        ledger=ledger_of(args),
    )
    result = export_chosen(args.out, spec, Prepared(dataset, protector, fitted), decision, run)
    print(f"{protector.title} at {knob_text(protector, fitted, knob)} on {dataset.name}")
    print_export(result)
    return 0


def knob_text(protector: Protector, fitted: Fitted, knob: float) -> str:
    """The knob as a person reads it: ``λ = 0.0121``; for a plan every step's (``level = 2, λ = 0.0121``)."""
    last = f"{fitted.knob.symbol} = {fitted.knob.format(knob)}"
    return ", ".join([*upstream_words(protector), last]) if isinstance(protector, Plan) else last


def upstream_words(plan: Plan) -> list[str]:
    """The knobs of a plan's steps before the last as a person reads them (``level = 2``)."""
    return [f"{c.knob.symbol} = {c.knob.format(v)}" for c, v in zip(plan.step_classes, plan.upstream_values())]


def print_export(result: ExportResult) -> None:
    """What an export wrote, the measures it recorded and its warnings (on stderr)."""
    for mid, m in sorted(result.record.metrics.items()):
        text = "not a number" if m.value is None else f"{m.value:.4f}"
        if m.value is not None and m.chance is not None:  # an attack: its interval and chance level
            text += "" if m.lo is None or m.hi is None else f" [{m.lo:.4f}, {m.hi:.4f}]"
            text += f", chance {m.chance:.4f}"
        print(f"  {mid}: {text}")
    worst = result.record.worst_attack
    if worst is not None:
        print(f"{worst.card()} (of the attacks measured, the one furthest beyond its baseline)")
        print(f"  {worst.scale_sentence()}.")
    if result.record.ledger is not None:
        print(f"release ledger: {ledger_figures(result.record.ledger)}")
    for path in result.files.values():
        print(f"wrote {path}")
    if result.internal_report is not None:
        print(
            f"wrote {result.internal_report} (internal review report with confidential excerpts: keep it, never share it)"
        )
    if result.key_file is not None:
        print(
            f"wrote {result.key_file} (the pseudonym key: give it only to the people allowed to replay the release, "
            "never with the bundle)"
        )
    for warning in result.warnings:
        print(f"textsdc: warning: {warning}", file=sys.stderr)


def cmd_compare(args: argparse.Namespace) -> int:
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    everything = methods == ["all"]
    if everything:
        methods = list(METHODS)
    unknown = [m for m in methods if not is_method(m)]
    if unknown:
        raise ConfigError(
            f"--methods: no method {', '.join(map(repr, unknown))}; the methods are {', '.join(METHODS)}, plans of "
            "them joined by '+' (e.g. redact+glm), or all alone"
        )
    check_run(args)
    for flag, metric in (("--risk", args.risk), ("--utility", args.utility)):
        if metric is not None:
            try:
                metric_info(metric)  # named before any sweep runs
            except ConfigError as exc:
                raise ConfigError(f"{flag}: {exc}") from None
    dataset = load(args)
    settings = [(m, method_params(args, m, methods, dataset.schema)) for m in methods]
    if everything:
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
        progress=progress_bar("comparing"),
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
    print(comparison.task_line(risk, utility))
    for why in comparison.apart(risk, utility).values():
        print(why)
    for row in front.itertuples(index=False):
        knob = comparison.sweeps[row.method].knob
        mark = "  ← frontier across methods" if row.pareto else ("  (another task)" if row.apart else "")
        print(
            f"  {row.method:<12} {knob.symbol} {knob.format(row.knob):>8}  risk {row.risk:.3f}  "
            f"utility {row.utility:.3f}{mark}"
        )
    detection = comparison.detection_lines()
    if detection:
        print("Residual detection risk: the share of what the protection depends on that its detector finds on gold:")
        for line in detection:
            print(line)
    print(f"wrote {out / 'compare.json'} and {out / 'compare.html'}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    folder = Path(args.bundle)
    key = key_of(args)
    differences = verify_checksums(folder)
    claims = verify_claims(folder, None if args.background is None else Path(args.background))
    for claim in claims:
        print(claim.line())
    check = ReplayCheck()
    if not differences and args.replay:
        import_annotations(args, read_record(folder).dataset.fingerprint)
        check = verify_replay(folder, args.data, progress_bar("making the release again"), key)
        differences = list(check.differences)
    for line in differences:
        print(line)
    if check.not_replayed:
        print(f"{', '.join(check.not_replayed)}: not replayed: the pseudonym key is not here (give --key FILE)")
    unmet = sum(not claim.holds for claim in claims)
    if differences or unmet:
        said = [f"{len(differences)} difference(s)"] if differences else []
        said += [f"{unmet} claim(s) the bundle does not bear out"] if unmet else []
        print(f"{folder}: {', '.join(said)}")
        return 1
    what = "every file matches its checksum"
    if any(claim.checked for claim in claims):
        what += ", every claim of the manifest checked here holds"
    if args.replay and check.not_replayed:
        what += f"; the replay makes the same {', '.join(check.compared)}"
    elif args.replay:
        what += "; the replay makes the same files"
    print(f"{folder}: {what}")
    return 0


def cmd_evaluate_detection(args: argparse.Namespace) -> int:
    """A method's check against a gold file (`GoldCheck`: the hook the dashboard's "Check what it finds" runs),
    scored with the method's parameters; the per-type table at one knob value, and its figure with --out."""
    cls = METHODS.get(args.method)
    check = None if cls is None else cls.gold_check
    if check is None:
        checked = [m for m, c in METHODS.items() if c.gold_check is not None]
        raise ConfigError(f"--method {args.method}: no gold check; the methods with one: {', '.join(checked)}")
    params = method_params(args)
    if args.ner is not None:
        params["use_ner"] = args.ner
    protector = get_protector(args.method, **params)
    value = protector.knob.validate(protector.knob.default if args.knob is None else args.knob)
    report = check.run(Path(args.gold), protector, progress_bar("finding identifiers"))
    key = check.knob_key(value)
    if key not in report.scores:
        raise ConfigError(f"--knob {protector.knob.format(value)}: the check scored {', '.join(report.scores)}")
    quality = report.scores[key]
    columns = ["type", "gold_tokens", "token_precision", "token_recall", "token_f2", "span_precision", "span_recall"]
    setting = f"{protector.knob.label.lower()} {protector.knob.format(value)}"
    print(f"{quality.documents:,} documents of {Path(args.gold).name}, {setting}")
    print(quality.table[columns].to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–"))
    print("most missed tokens: " + ", ".join(f"{t!r} ({c})" for t, c in quality.missed))
    print("most needlessly replaced tokens: " + ", ".join(f"{t!r} ({c})" for t, c in quality.false))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "detection.json", json.dumps(quality.to_json(), indent=2))
        atomic_write_text(out / "detection.html", detection_figure(quality).to_html(include_plotlyjs=True))
        print(f"wrote {out / 'detection.json'} and {out / 'detection.html'}")
    return 0
