"""A plan beside its steps alone on a demo: the whole-release risk at each one's chosen point. Not part of the
tests.

    .venv/bin/python benchmarks/bench_plans.py [--data airline-tweets] [--plan redact+glm] [--levels 1,2,3]
        [--json benchmarks/results_plans.json]

Each single method is swept along its knob and read at its chosen point (`engine.plan_grid.PlanGrid.chosen`'s
rule: the pMSE ratio closest to 1 where it is measured, else the knob's default); the plan is swept over the
grid of both knobs and read at each line's chosen point. Printed and kept: the whole-release intruder's
identification probability (the same attack on the text and the fields as released), the classifier F1 ratio
and the pMSE ratio at each, with the seconds each sweep took.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from engine.data.load import load_dataset
from engine.plan_grid import PlanGrid, sweep_plan_grid
from engine.protect import get_protector
from engine.protect.plan import Plan
from engine.sweep import run_sweep

RISK = "release_identification_probability"
SHOWN = (RISK, "classifier_f1_ratio", "pmse_ratio")


def point(summary, value: float) -> dict[str, float | None]:
    rows = summary[summary["knob"] == value].set_index("metric")
    return {m: (float(rows.loc[m, "mean"]) if m in rows.index else None) for m in SHOWN}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="airline-tweets")
    ap.add_argument("--plan", default="redact+glm")
    ap.add_argument("--levels", default="1,2,3", help="values of the knob of the plan's step before the last")
    ap.add_argument("--json", default="benchmarks/results_plans.json")
    args = ap.parse_args()
    dataset = load_dataset(args.data)
    plan = get_protector(args.plan)
    assert isinstance(plan, Plan)
    out: dict = {"data": args.data, "plan": args.plan, "risk": RISK, "singles": {}, "plan_points": []}
    for step in plan.steps:
        started = time.perf_counter()
        sweep = run_sweep(dataset, get_protector(step))
        grid = PlanGrid(step, sweep.knob, {0.0: sweep})
        chosen = grid.chosen(0.0)
        out["singles"][step] = {"knob": sweep.knob.symbol, "chosen": chosen, **point(sweep.summary, chosen)}
        out["singles"][step]["seconds"] = round(time.perf_counter() - started, 1)
        print(step, out["singles"][step], flush=True)
    started = time.perf_counter()
    levels = [float(v) for v in args.levels.split(",")]
    plan_grid = sweep_plan_grid(dataset, plan, levels)
    out["plan_seconds"] = round(time.perf_counter() - started, 1)
    for upstream, sweep in plan_grid.sweeps.items():
        chosen = plan_grid.chosen(upstream)
        row = {plan_grid.upstream.symbol: upstream, sweep.knob.symbol: chosen, **point(sweep.summary, chosen)}
        out["plan_points"].append(row)
        print(args.plan, row, flush=True)
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
