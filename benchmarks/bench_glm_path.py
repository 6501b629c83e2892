"""Time the 100-λ path of the shrinkage GLM synthesizer against glmnet, on the same data, λ grid and
standardized columns. Not part of the tests; glmnet (GPL) is used here only, never at run time.

    .venv/bin/python benchmarks/bench_glm_path.py [--sizes 821 5000 50000] [--fields 5-level 8-level]
        [--python-glmnet /tmp/pyglmnet/bin/python] [--json out.json]

The last run's rows are in benchmarks/results_glm_path.json.

For each size n and for a 5-level and an 8-level field it fits, on text word counts (the 6,000 most frequent
words after the Section 5.1 normalization):

- ours: `engine.protect.field_synthesis.lasso.fit_lasso_path` (default tolerance);
- R's glmnet (Debian package r-cran-glmnet; the fit is timed inside R with ``system.time``) with its
  defaults, ``thresh = 1e-7`` and ``maxit = 1e5`` (where it stops short of the whole path it says so, and
  only the λ it reached are compared);
- python-glmnet with its defaults (``tol = 1e-7``), run by the interpreter given with ``--python-glmnet``:
  it needs a Fortran build and numpy < 2, so it lives in a virtual environment of its own, e.g.
  ``apt-get install gfortran; python3 -m venv /tmp/pyglmnet; /tmp/pyglmnet/bin/pip install "numpy<2" scipy
  scikit-learn wheel "setuptools<65"; /tmp/pyglmnet/bin/pip install --no-build-isolation glmnet``;
- a tight reference: our solver at ``tol = 1e-7`` (a thousand times tighter than its default), with its
  largest KKT violation reported so that its accuracy is checked rather than assumed (glmnet with a tight
  ``thresh`` did not finish the path in 20 minutes at n = 5,000).

It reports the time ratio ours / R glmnet, the objective difference ours − glmnet-default (mean and largest
over the path; glmnet's objective, −loglik/n + λ·Σ|β| on the standardized scale, so negative is better) and
the largest difference in predicted probabilities against the tight reference, for ours and for glmnet's
default (and the same three for python-glmnet when it ran). Targets: no slower than R glmnet at any size, and an objective no worse than glmnet's default.

Data: the texts of ../shared/data (women's clothing reviews, the US airline tweets and the Twitter profiles
file, about 58,000 documents); the 5-level field is the review rating for reviews, the tweet's sentiment
(negative/neutral/positive → 1/3/5) and the profile's gender (male, female, brand, unknown → 1, 2, 4, 5);
the 8-level field is the clothing department, the airline or the gender, the 7 most frequent kept and the
rest pooled. Sizes are the first n documents after a seeded shuffle. Without ../shared/data, the airline-tweets
demo alone is used (sizes above its 6,555 records are skipped).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import io as scipy_io
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.protect.field_synthesis.lasso import (  # noqa: E402
    LassoPath,
    fit_lasso_path,
    kkt_violation,
    lambda_max,
    objective,
    softmax,
)
from engine.text.features import normalize_for_synthesis  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"

R_SCRIPT = r"""
suppressMessages({library(glmnet); library(Matrix)})
args <- commandArgs(trailingOnly = TRUE)
X <- as(readMM(args[1]), "CsparseMatrix")
y <- factor(scan(args[2], quiet = TRUE))
lambda <- scan(args[3], quiet = TRUE)
thresh <- as.numeric(args[4])
t <- system.time(fit <- glmnet(X, y, family = "multinomial", lambda = lambda, standardize = TRUE,
                               thresh = thresh))[["elapsed"]]
cat(t, length(fit$lambda), "\n", file = args[5])
b <- coef(fit)
out <- do.call(cbind, lapply(b, function(m) as.matrix(m)))
write.table(out, args[6], row.names = FALSE, col.names = FALSE)
"""

PY_GLMNET_SCRIPT = r"""
import sys, time
import numpy as np
from scipy import sparse
from glmnet import LogitNet
X = sparse.load_npz(sys.argv[1]).tocsr()
y = np.load(sys.argv[2])
lambdas = np.load(sys.argv[3])
t = time.perf_counter()
fit = LogitNet(alpha=1, lambda_path=lambdas, standardize=True, n_splits=0, tol=1e-7, max_iter=100000).fit(X, y)
elapsed = time.perf_counter() - t
np.savez(sys.argv[4], seconds=elapsed, coef=fit.coef_path_, intercept=fit.intercept_path_, lambdas=fit.lambda_path_)
"""


def corpus(seed: int = 0) -> tuple[list[str], np.ndarray, np.ndarray, str]:
    """Texts with a 5-level and an 8-level field (see the module docstring)."""
    parts = []
    clothing = SHARED / "reviews" / "womens_clothing_ecommerce_reviews.csv"
    airline = SHARED / "tweets" / "twitter_us_airline_sentiment.csv"
    profiles = SHARED / "tweets" / "twitter_user_gender_classification.csv"
    if clothing.is_file() and airline.is_file() and profiles.is_file():
        c = pd.read_csv(clothing).dropna(subset=["Review Text", "Department Name"])
        parts.append(
            pd.DataFrame(
                {"text": c["Review Text"], "five": c["Rating"].astype(int), "eight": "dept:" + c["Department Name"]}
            )
        )
        a = pd.read_csv(airline)
        parts.append(
            pd.DataFrame(
                {
                    "text": a["text"],
                    "five": a["airline_sentiment"].map({"negative": 1, "neutral": 3, "positive": 5}),
                    "eight": "airline:" + a["airline"],
                }
            )
        )
        g = pd.read_csv(profiles, encoding="latin-1").dropna(subset=["gender"])
        g = g[g["gender"].isin(["male", "female", "brand", "unknown"])]
        parts.append(
            pd.DataFrame(
                {
                    "text": g["text"],
                    "five": g["gender"].map({"male": 1, "female": 2, "brand": 4, "unknown": 5}),
                    "eight": "gender:" + g["gender"],
                }
            )
        )
        source = "../shared/data: clothing reviews + airline tweets + Twitter profiles"
    else:
        from engine.data.load import load_dataset

        d = load_dataset("airline-tweets").frame
        parts.append(
            pd.DataFrame(
                {
                    "text": d["text"],
                    "five": d["airline_sentiment"].map({"negative": 1, "neutral": 3, "positive": 5}),
                    "eight": d["airline"].astype(str) + "/" + d["user_timezone"].astype(str),
                }
            )
        )
        source = "assets/demo/airline-tweets (../shared/data absent)"
    frame = pd.concat(parts, ignore_index=True).dropna(subset=["text"])
    frame = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    top = frame["eight"].value_counts().index[:7]
    eight = np.where(frame["eight"].isin(top), frame["eight"], "other")
    five = pd.factorize(frame["five"], sort=True)[0]
    return frame["text"].astype(str).tolist(), five, pd.factorize(eight, sort=True)[0], source


def word_counts(texts: list[str], n_words: int = 6000) -> sparse.csr_matrix:
    vec = CountVectorizer(analyzer=normalize_for_synthesis, max_features=n_words)
    X = vec.fit_transform(texts).astype(np.float64).tocsr()
    keep = np.asarray((X != 0).sum(axis=0)).ravel() > 0
    return X[:, keep]


def run_glmnet(
    X: sparse.csr_matrix, y: np.ndarray, lambdas: np.ndarray, thresh: float, work: Path
) -> tuple[float, np.ndarray]:
    """(elapsed seconds inside R, coefficients as (L, p + 1, K) on the raw scale, intercept first)."""
    scipy_io.mmwrite(str(work / "X.mtx"), X)
    np.savetxt(work / "y.txt", y, fmt="%d")
    np.savetxt(work / "lambda.txt", lambdas)
    (work / "fit.R").write_text(R_SCRIPT)
    subprocess.run(
        [
            "Rscript",
            str(work / "fit.R"),
            str(work / "X.mtx"),
            str(work / "y.txt"),
            str(work / "lambda.txt"),
            repr(thresh),
            str(work / "time.txt"),
            str(work / "coef.txt"),
        ],
        check=True,
    )
    elapsed, reached = (work / "time.txt").read_text().split()[:2]
    raw = np.loadtxt(work / "coef.txt", ndmin=2)  # (p + 1) × (K · L): for each class its L columns
    K = len(np.unique(y))
    L = int(reached)
    coef = raw.reshape(raw.shape[0], K, L).transpose(2, 0, 1)
    return float(elapsed), coef


def as_path(raw: np.ndarray, lambdas: np.ndarray, center: np.ndarray, scale: np.ndarray) -> LassoPath:
    """glmnet's raw-scale coefficients as a `LassoPath` on the standardized scale (β_std = β_raw · sd)."""
    L, _, K = raw.shape
    B = raw[:, 1:, :] * scale[None, :, None]
    b = raw[:, 0, :] + np.einsum("lpk,p->lk", raw[:, 1:, :], center)
    return LassoPath(lambdas, sparse.csr_matrix(B.reshape(L, -1)), b, center, scale, K)


def run_python_glmnet(
    python: str, X: sparse.csr_matrix, y: np.ndarray, lambdas: np.ndarray, work: Path
) -> tuple[float, np.ndarray]:
    """(seconds of python-glmnet's fit in the interpreter ``python``, coefficients as (L, p + 1, K) on the raw
    scale, intercept first, like `run_glmnet`)."""
    sparse.save_npz(work / "X.npz", X)
    np.save(work / "y.npy", y)
    np.save(work / "lambda.npy", lambdas)
    (work / "fit_py.py").write_text(PY_GLMNET_SCRIPT)
    subprocess.run(
        [
            python,
            str(work / "fit_py.py"),
            str(work / "X.npz"),
            str(work / "y.npy"),
            str(work / "lambda.npy"),
            str(work / "py_fit.npz"),
        ],
        check=True,
    )
    out = np.load(work / "py_fit.npz")
    coef, intercept = out["coef"], out["intercept"]  # (K, p, L) and (K, L)
    raw = np.concatenate([intercept[:, None, :], coef], axis=1).transpose(2, 1, 0)
    return float(out["seconds"]), raw


def against_reference(
    X: sparse.csr_matrix, y: np.ndarray, ours: LassoPath, other: LassoPath, ref: LassoPath, reached: int
) -> dict:
    """Objective differences ours − other over the first ``reached`` λ, and each one's largest difference in
    predicted probabilities from the tight reference."""
    obj_ours = np.array([objective(X, y, ours, l) for l in range(reached)])
    obj_other = np.array([objective(X, y, other, l) for l in range(reached)])
    diff_ours = diff_other = 0.0
    for lam in ours.lambdas[:reached]:
        p_ref = softmax(ref.linear_predictor(X, lam))
        diff_ours = max(diff_ours, float(np.abs(softmax(ours.linear_predictor(X, lam)) - p_ref).max()))
        diff_other = max(diff_other, float(np.abs(softmax(other.linear_predictor(X, lam)) - p_ref).max()))
    return {
        "objective_diff_mean": float(np.mean(obj_ours - obj_other)),
        "objective_diff_max": float(np.max(obj_ours - obj_other)),
        "objective_rel_diff_max": float(np.max((obj_ours - obj_other) / np.abs(obj_other))),
        "max_prob_diff_ours": diff_ours,
        "max_prob_diff_other": diff_other,
    }


def compare(X: sparse.csr_matrix, y: np.ndarray, work: Path, python_glmnet: str | None = None) -> dict:
    K = int(y.max()) + 1
    t = time.perf_counter()
    ours = fit_lasso_path(X, y, K)
    t_ours = time.perf_counter() - t
    row = {
        "n": X.shape[0],
        "levels": K,
        "words": X.shape[1],
        "lambda_max": float(lambda_max(X, y, K)),
        "seconds_ours": round(t_ours, 2),
    }
    if shutil.which("Rscript") is None:
        row["note"] = "Rscript not found: apt-get install r-cran-glmnet to compare with R's glmnet"
        return row
    t_r, raw = run_glmnet(X, y, ours.lambdas, 1e-7, work)
    reached = raw.shape[0]
    ref = fit_lasso_path(X, y, K, lambdas=ours.lambdas, tol=1e-7, max_iter=100_000)
    r = against_reference(X, y, ours, as_path(raw, ours.lambdas[:reached], ours.center, ours.scale), ref, reached)
    row.update(
        {
            "seconds_r_glmnet": round(t_r, 2),
            "time_ratio": round(t_ours / t_r, 2),
            "glmnet_lambdas_reached": reached,
            "objective_diff_mean": r["objective_diff_mean"],
            "objective_diff_max": r["objective_diff_max"],
            "objective_rel_diff_max": r["objective_rel_diff_max"],
            "max_prob_diff_ours_vs_reference": r["max_prob_diff_ours"],
            "max_prob_diff_glmnet_vs_reference": r["max_prob_diff_other"],
            "reference_max_kkt_violation": max(kkt_violation(X, y, ref, l) for l in range(0, len(ref.lambdas), 9)),
            "seconds_python_glmnet": None,
        }
    )
    if python_glmnet is not None:
        t_py, raw_py = run_python_glmnet(python_glmnet, X, y, ours.lambdas, work)
        reached_py = raw_py.shape[0]
        p = against_reference(
            X, y, ours, as_path(raw_py, ours.lambdas[:reached_py], ours.center, ours.scale), ref, reached_py
        )
        row.update(
            {
                "seconds_python_glmnet": round(t_py, 2),
                "time_ratio_python_glmnet": round(t_ours / t_py, 2),
                "python_glmnet_lambdas_reached": reached_py,
                "objective_diff_mean_python_glmnet": p["objective_diff_mean"],
                "objective_diff_max_python_glmnet": p["objective_diff_max"],
                "max_prob_diff_python_glmnet_vs_reference": p["max_prob_diff_other"],
            }
        )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[821, 5000, 50000])
    ap.add_argument(
        "--fields",
        nargs="+",
        choices=["5-level", "8-level"],
        default=["5-level", "8-level"],
        help="run only these fields (one case: one size and one field)",
    )
    ap.add_argument(
        "--python-glmnet",
        metavar="PYTHON",
        help="an interpreter that can import python-glmnet (see the module docstring)",
    )
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    texts, five, eight, source = corpus()
    print(f"data: {source}; {len(texts):,} documents available")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            if n > len(texts):
                print(f"n = {n:,}: skipped, only {len(texts):,} documents")
                continue
            X = word_counts(texts[:n])
            for name, y in (("5-level", five[:n]), ("8-level", eight[:n])):
                if name not in args.fields:
                    continue
                y = pd.factorize(y, sort=True)[0]
                row = {"field": name, **compare(X, y, Path(tmp), args.python_glmnet)}
                rows.append(row)
                print(json.dumps(row))
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.to_string(index=False))
    if args.python_glmnet is None:
        print("python-glmnet not run: give --python-glmnet PYTHON (see the module docstring)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
