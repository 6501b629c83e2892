"""Benchmark: Bayesian synthesis of counts and amounts (Guo & Hu) on 10,000 listings.

Target (issue 4): m = 20 synthetic datasets, posterior sampling included, and the full set of measures within
2 minutes on 2 cores. Records the time per MCMC iteration of each model, per release and per measure. Where
JAGS is installed (Debian package ``jags``; the paper's own tool), the same two models with the same priors are
run by JAGS on the same data in the same run, and its time per iteration is recorded beside ours.

    .venv/bin/python benchmarks/bench_count_bayes.py [--data nyc-airbnb] [--m 20] [--jags-iterations 200]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.data.load import load_dataset
from engine.measures.bayes_counts import ATTRIBUTE_RISK_METRICS, IDENTIFICATION_METRICS
from engine.measures.evaluate import Evaluator
from engine.protect.bayes_counts.count_bayes import CountBayesSynthesizer, design_matrix
from engine.sweep import make_release

MEASURE_GROUPS = {
    "attribute_risk (4 radius pairs)": ATTRIBUTE_RISK_METRICS,
    "identification + S curve (16 levels)": IDENTIFICATION_METRICS,
    "propensity_up": ["propensity_up"],
    "cluster_uc": ["cluster_uc"],
    "ecdf": ["ecdf_max", "ecdf_avg"],
    "ci_overlap (bootstrap quantiles, regression)": ["ci_overlap"],
}

JAGS_MODEL = """
model {
  for (i in 1:n) {
    z[i] ~ dbern(p[i])
    logit(p[i]) <- inprod(X[i, ], beta[])
    eps[i] ~ dnorm(0, tau)
    log(lam[i]) <- inprod(X[i, ], alpha[]) + eps[i]
    y[i] ~ dpois(lam[i] * (1 - z[i]) + 1.0E-10) T(, UPPER)
    logprice[i] ~ dnorm(inprod(W[i, ], gamma[]), prec)
  }
  alpha[1] ~ dnorm(0, 1.0E-4)
  beta[1] ~ dnorm(0, 1.0E-4)
  gamma[1] ~ dnorm(0, 1.0E-4)
  for (k in 2:d) {
    alpha[k] ~ dnorm(0, 1)
    beta[k] ~ dnorm(0, 1)
  }
  for (k in 2:dw) {
    gamma[k] ~ dnorm(0, 2)
  }
  tau ~ dgamma(0.001, 0.001)
  sigma ~ dt(0, 1, 1) T(0, )
  prec <- pow(sigma, -2)
}
"""


def _r_array(name: str, a: np.ndarray) -> str:
    flat = ", ".join(repr(float(v)) for v in np.asarray(a, dtype=float).ravel(order="F"))
    if a.ndim == 1:
        return f"`{name}` <- c({flat})\n"
    return f"`{name}` <- structure(c({flat}), .Dim = c({a.shape[0]}L, {a.shape[1]}L))\n"


def run_jags(X: np.ndarray, y: np.ndarray, W: np.ndarray, log_price: np.ndarray, upper: int, iterations: int) -> dict:
    """Seconds per iteration of JAGS on the paper's model (one chain): a run with ``iterations`` updates less a
    run with none, divided by ``iterations`` (so compiling and initializing are not counted)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "model.bug").write_text(JAGS_MODEL.replace("UPPER", str(upper)))
        data = (
            f"`n` <- {len(y)}L\n`d` <- {X.shape[1]}L\n`dw` <- {W.shape[1]}L\n"
            + _r_array("X", X)
            + _r_array("W", W)
            + _r_array("y", y.astype(float))
            + _r_array("logprice", log_price)
        )
        (folder / "data.R").write_text(data)
        times = {}
        for updates in (0, iterations):
            script = (
                f'model in "{folder / "model.bug"}"\ndata in "{folder / "data.R"}"\ncompile, nchains(1)\n'
                f"initialize\n" + (f"update {updates}\n" if updates else "") + "exit\n"
            )
            (folder / "run.cmd").write_text(script)
            start = time.perf_counter()
            done = subprocess.run(["jags", str(folder / "run.cmd")], capture_output=True, text=True, cwd=folder)
            times[updates] = time.perf_counter() - start
            if done.returncode != 0 or "error" in done.stdout.lower():
                return {"error": (done.stdout + done.stderr)[-500:]}
    return {
        "iterations": iterations,
        "seconds_setup": times[0],
        "seconds_per_iteration": (times[iterations] - times[0]) / iterations,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="nyc-airbnb")
    ap.add_argument("--m", type=int, default=20)
    ap.add_argument("--jags-iterations", type=int, default=200)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results_count_bayes.json")))
    args = ap.parse_args()

    dataset = load_dataset(args.data)
    start = time.perf_counter()
    protector = CountBayesSynthesizer(lambdas=[1.0])
    t = time.perf_counter()
    fitted = protector.fit(dataset)
    fit_seconds = time.perf_counter() - t
    post = fitted.posterior(1.0)
    iterations = protector.chains * (protector.warmup + protector.draws)
    t = time.perf_counter()
    evaluator = Evaluator(dataset, fields=fitted.synthesized_fields)
    prepare_seconds = time.perf_counter() - t
    t = time.perf_counter()
    baseline = evaluator.baseline()
    baseline_seconds = time.perf_counter() - t
    release_seconds, measure_seconds = [], {k: [] for k in MEASURE_GROUPS}
    values: dict[str, list[float]] = {}
    for m in range(args.m):
        t = time.perf_counter()
        release = make_release(fitted, 1.0, seed=0, replicates=args.m, replicate=m)
        release_seconds.append(time.perf_counter() - t)
        for group, ids in MEASURE_GROUPS.items():
            t = time.perf_counter()
            out = evaluator.numeric.evaluate(release.data, ids)
            measure_seconds[group].append(time.perf_counter() - t)
            for k, v in out.items():
                values.setdefault(k, []).append(v.value)
    total = time.perf_counter() - start
    result = {
        "machine": {"python": platform.python_version(), "cores": __import__("os").cpu_count()},
        "dataset": args.data,
        "records": dataset.n_records,
        "m": args.m,
        "chains": protector.chains,
        "warmup": protector.warmup,
        "draws": protector.draws,
        "seconds_total": total,
        "within_target": total < 120,
        "seconds_posterior_sampling": fit_seconds,
        "seconds_per_iteration_both_models": post.seconds / iterations,
        "seconds_prepare_measures": prepare_seconds,
        "seconds_confidential_baseline": baseline_seconds,
        "seconds_per_release": float(np.mean(release_seconds)),
        "seconds_per_measure_per_release": {k: float(np.mean(v)) for k, v in measure_seconds.items()},
        "largest_rhat": float(post.diagnostics["rhat"].max()),
        "smallest_ess": float(post.diagnostics["ess"].min()),
        "metrics_mean": {k: float(np.mean(v)) for k, v in values.items()},
        "metrics_confidential": {k: v.value for k, v in baseline.items()},
    }
    if shutil.which("jags"):
        frame = dataset.frame
        cols = {c: frame[c].to_numpy() for c in frame.columns}
        X = design_matrix(fitted.count_columns, cols, len(frame))
        W = design_matrix(fitted.continuous_columns, cols, len(frame))
        y = frame[fitted.count_field].to_numpy(dtype=float)
        log_price = np.log(frame[fitted.continuous_field].to_numpy(dtype=float))
        jags = run_jags(X, y, W, log_price, fitted.upper, args.jags_iterations)
        result["jags"] = jags
        if "seconds_per_iteration" in jags:
            result["jags"]["seconds_for_our_iterations"] = jags["seconds_per_iteration"] * iterations
    else:
        result["jags"] = None
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
