"""Singling out, linkability and inference as textsdc measures them beside the `anonymeter` package (Giomi et al.
2023) on the same tables and the same control split: the demos' released tables (fields and the text's declared
features) for three releases — the data itself, every column drawn again independently, and the key fields of a
random half of the records exchanged among them. Not part of the tests.

The package pins numpy < 1.27, so it runs in a separate environment, never the project's:

    python3.11 -m venv /tmp/anon-venv && /tmp/anon-venv/bin/pip install anonymeter
    .venv/bin/python benchmarks/anonymeter_crosscheck.py [--venv /tmp/anon-venv] [--json FILE]

Without that environment the script says so and stops (exit 0). The script runs itself in it with ``--side`` to
measure the exported tables with the package (that half imports nothing of textsdc).

What differs by design, and so may move the numbers apart (each stated in the module that measures it): the
package drops duplicate rows before singling out and tries up to ``max_attempts`` random predicates, textsdc keeps
every record and draws among all the predicates that single one out; the package breaks ties between equally near
records by the order of the rows, textsdc at random; its random generators are not all seeded.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES: dict[str, tuple[str, dict]] = {
    "airline-tweets": ("airline-tweets", {}),
    "nyc-airbnb": ("nyc-airbnb", {}),
    # The default tables link on two categories against one count: every target ties with hundreds of records.
    # Linking on numbers shows the two implementations where there is something to link.
    "nyc-airbnb, linking reviews and room type with availability and price": (
        "nyc-airbnb",
        {"linkability_first": ("number_of_reviews", "room_type"), "linkability_second": ("availability_365", "price")},
    ),
}
N_ATTACKS = 500
MAX_ATTEMPTS = 200_000
"""The package's cap on the random predicates it tries (its default, 10 million, takes hours on these tables)."""


DIFFERENCES = (
    "Singling out: the package drops duplicate rows of each table before counting and tries at most "
    f"{MAX_ATTEMPTS:,} random predicates; textsdc keeps every record and draws among all the predicates that "
    "single one out (so it finds them all where the package may stop short). "
    "Ties between equally near records: the package takes the first in its sort order, textsdc draws one at random. "
    "Inference baseline: the package aligns its random guesses to the targets by row label (reindex_like in "
    "_run_attack of anonymeter 1.1.0), so only targets whose label it also drew get a guess, and with the "
    "attacked rows in the same order in both tables those guesses are the targets' own records: its baseline rate "
    "moves with the overlap of labels; textsdc guesses for every target from a released record drawn at random. "
    "Not every random draw of the package is seeded, so its numbers move a little between runs."
)


def side(folder: Path) -> None:
    """Measure the exported tables of ``folder`` with the `anonymeter` package (run in its environment)."""
    import warnings

    import numpy as np
    import pandas as pd
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    warnings.simplefilter("ignore")
    spec = json.loads((folder / "spec.json").read_text())
    ori = pd.read_parquet(folder / "ori.parquet")
    control = pd.read_parquet(folder / "control.parquet")
    out = {}
    for release in spec["releases"]:
        syn = pd.read_parquet(folder / f"{release}.parquet")
        np.random.seed(0)  # the package samples targets with pandas' global generator
        results = {}
        start = time.perf_counter()
        so = SinglingOutEvaluator(
            ori, syn, n_attacks=N_ATTACKS, n_cols=3, control=control, max_attempts=MAX_ATTEMPTS, seed=0
        ).evaluate(mode="multivariate")
        results["singling_out_risk"] = _package_result(so.results(), so.risk())
        if spec["link"]:
            link = LinkabilityEvaluator(
                ori, syn, aux_cols=tuple(spec["link"]), n_attacks=N_ATTACKS, n_neighbors=1, control=control
            ).evaluate(n_jobs=1)
            results["linkability_risk"] = _package_result(link.results(), link.risk())
        if spec["secret"]:
            infer = InferenceEvaluator(
                ori,
                syn,
                aux_cols=spec["known"],
                secret=spec["secret"],
                regression=spec["secret_numeric"],
                n_attacks=N_ATTACKS,
                control=control,
            ).evaluate(n_jobs=1)
            results["inference_risk"] = _package_result(infer.results(), infer.risk())
        results["seconds"] = round(time.perf_counter() - start, 2)
        out[release] = results
    (folder / "package.json").write_text(json.dumps(out))


def _package_result(results, risk) -> dict:  # type: ignore[no-untyped-def]
    control = results.control_rate
    return {
        "risk": round(float(risk.value), 4),
        "lo": round(float(risk.ci[0]), 4),
        "hi": round(float(risk.ci[1]), 4),
        "attack_rate": round(float(results.attack_rate.value), 4),
        "control_rate": None if control is None else round(float(control.value), 4),
        "baseline_rate": round(float(results.baseline_rate.value), 4),
    }


def releases(frame, keys: list[str]):  # type: ignore[no-untyped-def]
    """The three releases of ``frame`` (see the module)."""
    import numpy as np

    rng = np.random.default_rng(7)
    independent = frame.assign(**{c: rng.permutation(frame[c].to_numpy()) for c in frame.columns})
    half = np.sort(rng.choice(len(frame), len(frame) // 2, replace=False))
    exchanged = frame.copy()
    for key in keys:
        values = exchanged[key].to_numpy().copy()
        values[half] = values[rng.permutation(half)]
        exchanged[key] = values
    return {"identical": frame, "independent": independent, "half_keys_exchanged": exchanged}


def decoded(side_table, encoded, positions):  # type: ignore[no-untyped-def]
    """Rows ``positions`` of an encoded table as the values a person reads (categories as text)."""
    import numpy as np
    import pandas as pd

    out = {}
    for c in side_table.columns:
        values = encoded.values[c.name][positions]
        if c.numeric:
            out[c.name] = values.astype(float)
        else:
            known = np.asarray(side_table.categories[c.name], dtype=object)
            out[c.name] = np.where(values < len(known), known[np.minimum(values, len(known) - 1)], "other")
    return pd.DataFrame(out)


def ours(measures, tables, rate) -> dict:  # type: ignore[no-untyped-def]
    """textsdc's three measures on the release's table."""
    out = {}
    for measure in measures:
        r = measure.attack_result(*tables)
        d = r.detail
        out[measure.id] = {
            "risk": round(r.value, 4),
            "lo": round(r.lo, 4),
            "hi": round(r.hi, 4),
            "attack_rate": round(float(rate(d, "attack")), 4),
            "control_rate": round(float(rate(d, "control")), 4),
            "baseline_rate": round(float(rate(d, "baseline")), 4),
        }
    return out


def run(venv: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from engine.data.load import load_dataset
    from engine.measures.base import PrepareContext
    from engine.measures.risk.anonymeter_style.inference import InferenceRisk
    from engine.measures.risk.anonymeter_style.linkability import LinkabilityRisk
    from engine.measures.risk.anonymeter_style.measure import rate
    from engine.measures.risk.anonymeter_style.singling_out import SinglingOutRisk
    from engine.measures.risk.anonymeter_style.table import rows
    from engine.measures.settings import MeasureSettings
    from engine.progress import no_progress

    report: dict = {
        "n_attacks": N_ATTACKS,
        "package_max_attempts": MAX_ATTEMPTS,
        "differences": DIFFERENCES,
        "cases": {},
    }
    for name, (demo, settings) in CASES.items():
        dataset = load_dataset(demo)
        context = PrepareContext(dataset, [], MeasureSettings(settings), no_progress)
        measures = []
        for cls in (SinglingOutRisk, LinkabilityRisk, InferenceRisk):
            m = cls()
            m.prepare(context)
            measures.append(m)
        table = measures[0].side
        keys = [f.name for f in dataset.schema.fields_with_role("key")]
        made = releases(dataset.frame, keys)
        link, infer = measures[1], measures[2]
        spec = {
            "releases": list(made),
            "link": [[c.name for c in link.first], [c.name for c in link.second]],
            "secret": infer.secret.name,
            "secret_numeric": infer.secret.numeric,
            "known": [c.name for c in infer.known],
        }
        entry: dict = {
            "demo": demo,
            "records": len(dataset.frame),
            "attacked_records": len(table.attacked),
            "control_records": len(table.control),
            "columns": table.names(),
            **spec,
            "textsdc": {},
        }
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            decoded(table, table.original, table.attacked).to_parquet(folder / "ori.parquet")
            decoded(table, table.original, table.control).to_parquet(folder / "control.parquet")
            for release, frame in made.items():
                encoded = table.release(frame, dataset.schema.text)
                decoded(table, encoded, table.attacked).to_parquet(folder / f"{release}.parquet")
                start = time.perf_counter()
                tables = (
                    rows(encoded, table.attacked),
                    rows(table.original, table.attacked),
                    rows(table.original, table.control),
                )
                entry["textsdc"][release] = {
                    **ours(measures, tables, rate),
                    "seconds": round(time.perf_counter() - start, 2),
                }
            (folder / "spec.json").write_text(json.dumps(spec))
            subprocess.run([str(venv / "bin" / "python"), __file__, "--side", str(folder)], check=True)
            entry["anonymeter"] = json.loads((folder / "package.json").read_text())
        report["cases"][name] = entry
        print(json.dumps({name: {k: entry[k] for k in ("textsdc", "anonymeter")}}, indent=1))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, default=Path("/tmp/anon-venv"))
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "results_anonymeter_crosscheck.json")
    parser.add_argument("--side", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side is not None:
        side(args.side)
        return
    python = args.venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import anonymeter"], capture_output=True) if python.exists() else None
    if probe is None or probe.returncode != 0:
        print(f"skipped: no environment with the anonymeter package at {args.venv} (see this script's docstring)")
        return
    report = run(args.venv)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
