"""Each method's own intruder beside the worst outside attack, on the demo dataset its page opens with (issue 50).
Not part of the tests.

    .venv/bin/python benchmarks/bench_attacks.py [--cases swap md ...] [--json benchmarks/results_attacks.json]
    .venv/bin/python benchmarks/bench_attacks.py --docs   # rewrite docs/attacks.md's table from the JSON

For every registered method on its page's demo (the Protect page's text methods and the Synthesize page's field
synthesizers on airline-tweets, the swap on earnings-calls, the Counts page's methods on nyc-airbnb; as
`benchmarks/bench_dashboard.py` opens them), fitted with its default parameters, at the unprotected point (the
measures of the confidential data, `Evaluator.baseline`) and at the knob's default value (one release, seed 0):

- **its own intruder(s)**: the risk measures its page draws the frontier and its cards with by default (the risks
  of `Protector.shown_first`, else the page's default risk), and the attacks built for the method alone
  (`Measure.methods`), each with its interval and, for an attack, its chance level;
- **the worst outside attack**: `engine.measures.attacks.worst_attack` over the attacks the tool did not design
  beside the method: the background attacks (`engine.measures.risk.background_attack`, measured where a
  background corpus is declared) and the Anonymeter-style singling out, linkability and inference
  (`engine.measures.risk.anonymeter_style`), with the `WorstAttack` fields as they are (its ranking is the
  module's).

The background corpora: for earnings-calls the 225 calls of 2021 Q1 in ``../shared/data/earnings_calls`` when
present (labelled by ticker; skipped otherwise); for airline-tweets the demo's author split, ``external.csv``
(one tweet of each of 300 authors held out of ``data.csv`` by `engine.data.external.split_external`, seed 0):
the outside intruder holds what the tool's own intruder holds and attacks it her own way. nyc-airbnb has no
author or document, so no background attack applies to it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared" / "data" / "earnings_calls"
Q1 = SHARED / "ect_prepared_remarks_2021Q1.jsonl"
TWEETS_SPLIT = ROOT / "assets" / "demo" / "airline-tweets" / "external.csv"
SEED = 0
DIGITS = 4


class Case(NamedTuple):
    """One method on the demo its page opens with, and the background corpus declared for it (None: none)."""

    name: str
    method: str
    data: str
    background: Path | None
    background_note: str


def cases() -> dict[str, Case]:
    """Every registered method on its page's demo; the field synthesizer of counts and amounts on nyc-airbnb."""
    from engine.protect import METHODS

    tweets = (TWEETS_SPLIT, "the demo's author split: external.csv, one held-out tweet of each of 300 authors")
    calls = (Q1, "the 225 calls of 2021 Q1 (../shared/data/earnings_calls), labelled by ticker")
    out: dict[str, Case] = {}
    for method, cls in METHODS.items():
        if method == "swap":
            out[method] = Case(method, method, "earnings-calls", *calls)
        elif method == "count-bayes":
            out[method] = Case(method, method, "nyc-airbnb", None, "")
        elif cls.changes == "fields" and "count" in cls.field_kinds:
            out[method] = Case(method, method, "airline-tweets", *tweets)
            out[f"{method}:counts"] = Case(f"{method}:counts", method, "nyc-airbnb", None, "")
        else:
            out[method] = Case(method, method, "airline-tweets", *tweets)
    return out


def outside_ids(metric_ids: list[str]) -> list[str]:
    """The attacks of ``metric_ids`` that the tool did not design beside a method: the background attacks and the
    Anonymeter-style risks."""
    from engine.measures.registry import measure_class
    from engine.measures.risk.anonymeter_style.measure import AnonymeterRisk
    from engine.measures.risk.background_attack import BackgroundAttack

    return [m for m in metric_ids if issubclass(measure_class(m), (BackgroundAttack, AnonymeterRisk))]


def own_ids(method: str, metric_ids: list[str]) -> list[str]:
    """The method's own intruder(s) among ``metric_ids``: the risks its page shows first (`shown_first`, else the
    page's default risk) and the attacks built for it alone, in that order, outside attacks excluded."""
    from engine.measures.base import metric_info
    from engine.measures.registry import measure_class
    from engine.protect import METHODS

    outside = set(outside_ids(metric_ids))
    risks = [m for m in metric_ids if metric_info(m).kind == "risk" and m not in outside]
    first = [m for m in METHODS[method].shown_first if m in risks]
    if not first:
        first = [m for m in ("attack_identification_rate",) if m in risks]  # the Protect page's default risk
    own = [m for m in risks if method in measure_class(m).methods and metric_info(m).attack is not None]
    return first + [m for m in own if m not in first]


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), DIGITS)


def measured(mid: str, m: Any) -> dict[str, Any]:
    """A measure's value with its interval and chance level (None where it has none)."""
    from engine.measures.base import metric_info

    info = metric_info(mid)
    return {
        "id": mid,
        "label": info.label,
        "value": _round(m.value),
        "lo": _round(m.lo),
        "hi": _round(m.hi),
        "chance": _round(m.chance),
        "attack": info.attack is not None,
    }


def worst(metrics: dict[str, Any]) -> dict[str, Any] | None:
    """The worst outside attack of one point, its `WorstAttack` fields rounded; None: no outside attack measured."""
    from engine.measures.attacks import worst_attack

    found = worst_attack({m: metrics[m] for m in outside_ids(list(metrics))})
    if found is None:
        return None
    d = found.to_dict()
    return {k: _round(v) if isinstance(v, float) else v for k, v in d.items() if k not in ("holds", "assumptions")} | {
        "holds": list(found.holds)
    }


def point(method: str, metrics: dict[str, Any]) -> dict[str, Any]:
    """One point (unprotected or released): the own intruders, the outside attacks and the worst of them."""
    ids = list(metrics)
    return {
        "own": [measured(m, metrics[m]) for m in own_ids(method, ids)],
        "outside": [measured(m, metrics[m]) for m in outside_ids(ids)],
        "worst_outside": worst(metrics),
    }


def run_case(case: Case) -> dict[str, Any]:
    from engine.data.load import load_dataset
    from engine.measures.base import CONFIDENTIAL_SUFFIX
    from engine.measures.evaluate import Evaluator
    from engine.measures.settings import MeasureSettings
    from engine.protect import get_protector
    from engine.sweep import make_release

    started = time.perf_counter()
    dataset = load_dataset(case.data)
    background = case.background if case.background is not None and case.background.is_file() else None
    options = MeasureSettings(background=None if background is None else str(background))
    protector = get_protector(case.method)
    protector.check(dataset)
    t = time.perf_counter()
    fitted = protector.fit(dataset)
    fit_s = time.perf_counter() - t
    evaluator = Evaluator(dataset, fields=fitted.synthesized_fields, options=options, fitted=fitted)
    t = time.perf_counter()
    baseline = {k.removesuffix(CONFIDENTIAL_SUFFIX): v for k, v in evaluator.baseline().items()}
    knob = float(fitted.knob.default)
    released = evaluator.evaluate(make_release(fitted, knob, seed=SEED))
    measure_s = time.perf_counter() - t
    skipped = {m: r for m, r in evaluator.skipped.items() if m in outside_ids(list(evaluator.skipped))}
    return {
        "case": case.name,
        "method": case.method,
        "title": protector.title,
        "data": case.data,
        "records": int(dataset.n_records),
        "background": None
        if background is None
        else {"file": background.name, "what": case.background_note, "declared": True},
        "knob": {"symbol": fitted.knob.symbol, "default": knob, "shown": fitted.knob.format(knob)},
        "unprotected": point(case.method, baseline),
        "released": point(case.method, released),
        "outside_not_measured": skipped,
        "fit_s": round(fit_s, 1),
        "measure_s": round(measure_s, 1),
        "total_s": round(time.perf_counter() - started, 1),
    }


def run(names: list[str], out: Path) -> dict[str, Any]:
    import platform
    import subprocess

    known = cases()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown case(s) {', '.join(unknown)}; the cases: {', '.join(known)}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    rows = []
    for name in names or list(known):
        row = run_case(known[name])
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("case", "released", "total_s")})[:2000], flush=True)
    result = {
        "machine": {"python": platform.python_version()},
        "commit": commit.stdout.strip(),
        "seed": SEED,
        "settings": "each method's default parameters and knob value, one release; the measures' default settings",
        "rows": rows,
    }
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


BEGIN, END = "<!-- attacks-table:begin -->", "<!-- attacks-table:end -->"
PAGE = ROOT / "docs" / "attacks.md"
"""The page holding the benchmark's table, between the markers."""


def _shown(m: dict[str, Any]) -> str:
    """ "value [lo–hi], chance c" of a measured attack or measure, each number as the measure shows it
    (`MetricInfo.format`)."""
    from engine.measures.base import metric_info

    info = metric_info(m["id"])
    text = "not finite" if m["value"] is None else info.format(m["value"])
    if m.get("lo") is not None and m.get("hi") is not None:
        text += f" [{info.format(m['lo'])}–{info.format(m['hi'])}]"
    if m.get("chance") is not None:
        text += f", chance {info.format(m['chance'])}"
    return text


def _own_cell(point: dict[str, Any]) -> str:
    return "<br>".join(f"{m['label']}: {_shown(m)}" for m in point["own"]) or "—"


def _worst_cell(point: dict[str, Any]) -> str:
    w = point["worst_outside"]
    return "none measured" if w is None else f"{w['label']}: {_shown(w)}"


def markdown(results: dict[str, Any]) -> str:
    """The table of docs/attacks.md from a results JSON: per method, at the unprotected point and at its default
    knob, its own intruder(s) beside the worst outside attack."""
    out = [
        "| method | demo | background | point | own intruder(s) | worst outside attack |",
        "|---|---|---|---|---|---|",
    ]
    for row in results["rows"]:
        background = "—" if row["background"] is None else row["background"]["file"]
        for name, point in (
            ("unprotected", row["unprotected"]),
            (f"{row['knob']['symbol']} = {row['knob']['shown']}", row["released"]),
        ):
            out.append(
                f"| `{row['case']}` | {row['data']} | {background} | {name} | {_own_cell(point)} "
                f"| {_worst_cell(point)} |"
            )
    out.append("")
    out.append(f"Measured at commit {results['commit']} with seed {results['seed']}: {results['settings']}.")
    out.append("")
    return "\n".join(out)


def with_table(page: str, results: dict[str, Any]) -> str:
    """``page`` with the table of ``results`` between its attacks-table markers."""
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{markdown(results)}{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=[], help="the cases to run (default: every method's)")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results_attacks.json"))
    ap.add_argument("--docs", action="store_true", help="write the table of docs/attacks.md from --json and stop")
    args = ap.parse_args()
    if args.docs:
        results = json.loads(Path(args.json).read_text(encoding="utf-8"))
        PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8"), results), encoding="utf-8")
        return 0
    run(args.cases, Path(args.json))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
