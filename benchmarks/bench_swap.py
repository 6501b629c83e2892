"""The named-entity swap (`swap`) on the earnings-calls demo and on the 306 calls of 2021 Q3: the fit (chunking,
entities, embeddings, mixture), the measures, a sweep of the grid with M replicates, and one release — wall time
and peak memory of each case in a process of its own — with the numbers of docs/swap.md's tables beside the
paper's Tables 1–3 (θ, α and sample uniques of the swapped table; DR, DU and the intruder along r; McNemar).
Not part of the tests.

    .venv/bin/python benchmarks/bench_swap.py [--cases demo q3] [--replicates 6] [--q3-replicates 1]
        [--json benchmarks/results_swap.json]

The 2021 Q3 case reads ../shared/data/earnings_calls/ect_prepared_remarks_2021Q3.jsonl (skipped without it):
one row per call, its prepared remarks as "Speaker: speech" paragraphs, cut into semantic chunks by the method;
the identifiers file gives each ticker's company name (ect_ticker_company_names.csv) and its executives (the
participants who are not analysts), so the speaker labels are suppressed too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.tree_memory import TreeMemory, tree_rss_mb  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "earnings_calls"
Q3 = SHARED / "ect_prepared_remarks_2021Q3.jsonl"
NAMES = SHARED / "ect_ticker_company_names.csv"
SUFFIX = re.compile(r"\s+(Common Stock|Ordinary Shares?|Class [A-C].*|American Depositary Shares.*)$", re.IGNORECASE)


def q3_files(folder: Path, first: int | None = None) -> Path:
    """The 2021 Q3 calls (the ``first`` ones only, when given) as a CSV with a schema and an identifiers file
    beside it; returns the CSV."""
    import pandas as pd

    calls = [json.loads(line) for line in Q3.read_text(encoding="utf-8").splitlines() if line.strip()][:first]
    names = pd.read_csv(NAMES, dtype=str).set_index("ticker")["security_name"].to_dict()
    rows, ids = [], []
    for call in calls:
        text = "\n\n".join(f"{p['speaker']}: {p['speech'].strip()}" for p in call["prepared_remarks"])
        rows.append({"text": text, "call_id": call["call_id"], "ticker": call["ticker"]})
        name = names.get(call["ticker"])
        if isinstance(name, str):
            ids.append((call["ticker"], "Company Name", SUFFIX.sub("", name).strip()))
        for person in call["participants"]:
            who, _, title = person.partition("--")
            if "analyst" not in title.lower() and who.strip():
                ids.append((call["ticker"], "Executive", who.strip()))
    data = folder / "q3.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    pd.DataFrame(ids, columns=["ticker", "label", "value"]).drop_duplicates().to_csv(
        folder / "q3.identifiers.csv", index=False
    )
    (folder / "q3.schema.toml").write_text(
        'text = "text"\ndocument = "call_id"\n\n[fields.ticker]\nkind = "categorical"\nrole = "sensitive"\n',
        encoding="utf-8",
    )
    return data


def coherence(x, documents, k: int = 5) -> float:
    """Share of each chunk's k nearest chunks (cosine) that come from its own document."""
    import numpy as np

    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    nearest = np.argsort(-sims, axis=1)[:, :k]
    return float((documents[nearest] == documents[:, None]).mean())


def embeddings_compared(dataset, fitted) -> list[dict]:
    """The two embeddings on the same chunks: speed, cluster coherence and DU at the highest rate (3 seeds)."""
    import numpy as np

    from engine.measures.evaluate import Evaluator
    from engine.protect import get_protector
    from engine.sweep import make_release
    from engine.text import embeddings
    from engine.text.kept import KeptByText

    out = []
    for name in ("minilm", "tfidf-svd"):
        f = fitted if name == "minilm" else get_protector("swap", embedding=name).fit(dataset)
        p = f.prepared
        embeddings._kept = KeptByText(embeddings.CACHED_TEXTS)  # timed from scratch, not from what the fit kept
        t = time.perf_counter()
        p.embed(p.reference)
        speed = len(p.reference) / (time.perf_counter() - t)
        ev = Evaluator(dataset, ["swap_du"], fitted=f)
        top = f.knob.grid[-1]
        du = [ev.evaluate(make_release(f, top, seed=s))["swap_du"].value for s in range(3)]
        out.append(
            {
                "embedding": name,
                "dims": int(p.embeddings.shape[1]),
                "chunks_per_second": round(speed, 1),
                "same_document_share_of_5_nearest": round(coherence(p.embeddings, np.asarray(p.documents)), 3),
                "du_at_top_rate": round(float(np.mean(du)), 5),
                "top_rate": top,
            }
        )
    return out


def table1(fitted) -> list[dict]:
    """The paper's Table 1 on these chunks: for each pair of the categories organization, person, product and
    location, the Ewens–Pitman (θ, α) of the two-way table of their entities and its sample-unique ratio."""
    from itertools import combinations

    from engine.protect.swap.disclosure import fit_pitman, frequencies_of_frequencies

    values = fitted.prepared.entities.values
    out = []
    for a, b in combinations(("organization", "person", "product", "location"), 2):
        cells = list(values[[a, b]].itertuples(index=False, name=None))
        fit = fit_pitman(frequencies_of_frequencies(cells))
        out.append(
            {
                "categories": f"{a}, {b}",
                "theta": round(fit.theta, 3),
                "alpha": round(fit.alpha, 3),
                "s1_over_n": round(fit.s1 / fit.n, 3),
            }
        )
    return out


def run_case(source: str, replicates: int) -> dict:
    """One case, in this process (the parent starts one process per case to measure its peak memory)."""
    import numpy as np
    import pandas as pd

    from engine.data.load import load_dataset
    from engine.frontier import frontier, select_by_tradeoff
    from engine.measures.evaluate import Evaluator
    from engine.protect import get_protector
    from engine.protect.swap.method import SwapDetail
    from engine.sweep import make_release, run_sweep

    dataset = load_dataset(source)
    protector = get_protector("swap")
    t = time.perf_counter()
    with TreeMemory() as fit_tree:  # the fit embeds in worker processes: counted here, not in ru_maxrss
        fitted = protector.fit(dataset)
    t_fit = time.perf_counter() - t
    rss_fit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # In `textsdc sweep`'s order: the fit, the measures prepared, the sweep; then one release and its measures.
    t = time.perf_counter()
    evaluator = Evaluator(dataset, ["swap_dr", "swap_du", "swap_attack_accuracy", "swap_mcnemar_p"], fitted=fitted)
    t_prepare = time.perf_counter() - t
    rss_before_sweep = tree_rss_mb(os.getpid())
    t = time.perf_counter()
    with TreeMemory() as tree:
        sweep = run_sweep(dataset, protector, None, replicates, 0, jobs=2, fitted=fitted, evaluator=evaluator)
    t_sweep = time.perf_counter() - t
    # This process took a share of the sweep's releases (`map_reporting`'s here) and kept their chunks'
    # embeddings and the embedding model: forgotten, so the release and its measures are timed as `textsdc
    # release` would run them.
    from engine.text import embeddings

    embeddings._kept.clear()
    embeddings._session.cache_clear()
    t = time.perf_counter()
    release = make_release(fitted, fitted.knob.default, seed=0)
    t_release = time.perf_counter() - t
    t = time.perf_counter()
    evaluator.evaluate(release)
    t_evaluate = time.perf_counter() - t
    means = sweep.summary.pivot(index="knob", columns="metric", values="mean").sort_index()
    chosen = select_by_tradeoff(frontier(sweep.summary, "swap_dr", "swap_du"), a=1.0).knob
    attack = sweep.detail(chosen, "swap_attack_accuracy")
    swapped = attack[attack["chunks"] == "swapped targets"]
    risk0 = sweep.detail(sweep.grid[0], "swap_dr", replicate=0).iloc[0]
    p = fitted.prepared
    along = []
    for r in sweep.grid:
        a = sweep.detail(r, "swap_attack_accuracy")
        s = a[a["chunks"] == "swapped targets"]
        along.append(
            {
                "r": r,
                "pairs_mean": float(
                    np.mean([len(rel.detail(SwapDetail).pairs) for rel in [make_release(fitted, r, 0)]])
                ),
                "dr": round(float(means.loc[r, "swap_dr"]), 4),
                "du": round(float(means.loc[r, "swap_du"]), 5),
                "attack_accuracy": round(float(means.loc[r, "swap_attack_accuracy"]), 4),
                "swapped_accuracy_pre": None if s["n"].sum() == 0 else round(float(s["accuracy_pre"].mean()), 3),
                "swapped_accuracy_post": None if s["n"].sum() == 0 else round(float(s["accuracy_post"].mean()), 3),
                "mcnemar_p_mean": round(float(s["p_value"].mean()), 6) if len(s) else None,
            }
        )
    from scipy.stats import spearmanr

    return {
        "case": source if not source.endswith(".csv") else "2021Q3 prepared remarks (306 calls)",
        "records": dataset.n_records,
        "chunks": len(p.reference),
        "documents": int(pd.Series(p.documents).nunique()),
        "embedding_dims": int(p.embeddings.shape[1]),
        "clusters": np.bincount(p.clusters).tolist(),
        "rate_limit": round(fitted.rate_limit, 4),
        "fit_seconds": round(t_fit, 1),
        "peak_rss_mb_after_fit": round(rss_fit),
        "fit_peak_rss_mb_all_processes": round(fit_tree.peak_mb),
        "fit_peak_pss_mb_all_processes": round(fit_tree.peak_pss_mb),
        "release_seconds": round(t_release, 2),
        "measures_prepare_seconds": round(t_prepare, 1),
        "measures_one_release_seconds": round(t_evaluate, 1),
        "sweep_seconds": round(t_sweep, 1),
        "rss_mb_before_sweep": round(rss_before_sweep),
        "sweep_peak_rss_mb_all_processes": round(tree.peak_mb),
        "sweep_peak_pss_mb_all_processes": round(tree.peak_pss_mb),
        "replicates": replicates,
        "table": {
            "sample_uniques": int(risk0["sample_uniques"]),
            "cells": None if pd.isna(risk0["cells"]) else int(risk0["cells"]),
            "theta": None if pd.isna(risk0["theta"]) else round(float(risk0["theta"]), 4),
            "alpha": None if pd.isna(risk0["alpha"]) else round(float(risk0["alpha"]), 4),
            "unique_share_p_hat": round(float(risk0["unique_share"]), 5),
            "population_N": fitted.population,
        },
        "spearman": {
            m: round(float(spearmanr(means.index, means[m]).statistic), 3)
            for m in ("swap_dr", "swap_du", "swap_attack_accuracy")
        },
        "chosen_r_tradeoff_a1": chosen,
        "at_chosen": {
            "swapped_chunks_attacked_mean": round(float(swapped["n"].mean()), 1),
            "accuracy_pre_mean": round(float(swapped["accuracy_pre"].mean()), 3),
            "accuracy_post_mean": round(float(swapped["accuracy_post"].mean()), 3),
            "mcnemar_p_max": float(swapped["p_value"].max()),
        },
        "along_r": along,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "table1": table1(fitted),
        "embeddings": embeddings_compared(dataset, fitted) if source == "earnings-calls" else None,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", nargs="+", default=["demo", "q3"], choices=["demo", "q3"])
    p.add_argument("--replicates", type=int, default=6, help="M per rate on the demo")
    p.add_argument("--q3-replicates", type=int, default=1, help="M per rate on the 306 calls")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--one", help=argparse.SUPPRESS)  # a child process: run this source and print its JSON
    args = p.parse_args()
    if args.one:
        print(json.dumps(run_case(args.one, args.replicates)))
        return
    os.environ.setdefault("TEXTSDC_CACHE_DIR", tempfile.mkdtemp(prefix="textsdc-bench-"))
    work = Path(tempfile.mkdtemp(prefix="textsdc-swap-"))
    results = []
    for case in args.cases:
        if case == "q3" and not Q3.is_file():
            print(f"skipped {case}: {Q3} is absent")
            continue
        source = "earnings-calls" if case == "demo" else str(q3_files(work))
        reps = args.replicates if case == "demo" else args.q3_replicates
        t = time.perf_counter()
        out = subprocess.run(
            [sys.executable, __file__, "--one", source, "--replicates", str(reps)],
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode:
            print(out.stderr[-3000:])
            raise SystemExit(f"case {case} failed")
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
        row = {"commit": commit.stdout.strip(), **json.loads(out.stdout.strip().splitlines()[-1])}
        row["wall_seconds"] = round(time.perf_counter() - t, 1)
        print(json.dumps(row))
        results.append(row)
    if args.json:
        import engine

        doc = {
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
            "textsdc": engine.__version__,
            "rows": results,
        }
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
