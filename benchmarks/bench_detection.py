"""Identifier detection beside Microsoft Presidio's analyzer, on user posts and on a synthetic PII set.

    .venv/bin/python benchmarks/bench_detection.py [--json benchmarks/results_detection.json]
    .venv/bin/python benchmarks/bench_detection.py --docs   # rewrite the tables of docs/redaction.md from the JSON

Both tools see the same texts and are scored by the same code (`engine.text.detection_quality`: token level,
type-agnostic — a gold token counts as found when it is replaced — and per type). Corpora: WNUT-17 dev
(``../shared/data/text_anonymization/wnut17_dev.conll``, 1,009 sentences of user posts; skipped when absent)
and ``benchmarks/detection/pii_synthetic.jsonl`` (500 texts, `detection/pii_synthetic.py`, seed 0, generated
when missing). textsdc runs redaction's detection at level 4 (everything it finds); Presidio every default
recognizer at score ≥ 0.35 with the same spaCy model. Speed is documents per CPU-second of the detection
alone, every process counted, after one warm-up pass (models loaded).

Presidio and Faker live in the benchmark's own environment, ``benchmarks/.venv-detection``, created here from
``detection/requirements.txt`` on the first run (PyPI needed once); nothing is installed into textsdc's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.figures.detection import type_name  # noqa: E402
from engine.text.detection_quality import DetectionQuality, read_gold, redaction_spans, score_detection  # noqa: E402

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-detection"
SYNTHETIC = HERE / "detection" / "pii_synthetic.jsonl"
WNUT = HERE.parent.parent / "shared" / "data" / "text_anonymization" / "wnut17_dev.conll"
LEVEL = 4


def bench_python() -> Path:
    """The benchmark environment's Python, created on first use."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV} (Presidio, Faker)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-r", str(HERE / "detection" / "requirements.txt")], check=True
        )
    return python


def cpu_seconds() -> float:
    """CPU time of this process and every process under it (the spaCy workers)."""
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return total


def run_textsdc(texts: list[str]) -> tuple[list, dict]:
    # warm-up: spaCy and the workers loaded, on the texts in reverse order, another corpus to the entities
    # redaction keeps per corpus (`engine.text.entities.named_entities`), so the timed pass finds them all again
    redaction_spans(texts[::-1], LEVEL)
    cpu, wall = cpu_seconds(), time.perf_counter()
    found = redaction_spans(texts, LEVEL)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    return found, {"cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2)}


def run_presidio(python: Path, texts: list[str]) -> tuple[list, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        source.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(texts)))
        done = subprocess.run(
            [str(python), str(HERE / "detection" / "presidio_spans.py"), str(source), str(target)],
            capture_output=True,
            text=True,
            check=True,
        )
        timing = json.loads(done.stderr.strip().splitlines()[-1])
        rows = [json.loads(line) for line in target.read_text().splitlines()]
    found = [[(s, e, label) for s, e, label, _score in r["spans"]] for r in sorted(rows, key=lambda r: r["id"])]
    return found, timing


def summary(quality: DetectionQuality, timing: dict) -> dict:
    table = quality.table.astype(object).where(quality.table.notna(), None)
    return {
        **timing,
        "documents_per_cpu_second": round(quality.documents / timing["cpu_seconds"], 1),
        "scores": table.to_dict(orient="records"),
        "most_missed_tokens": quality.missed,
        "most_false_tokens": quality.false,
    }


TABLE_TYPES = (
    "ALL",
    "PERSON",
    "LOCATION",
    "ORGANIZATION",
    "PRODUCT",
    "CREATIVE_WORK",
    "DATE",
    "PHONE",
    "EMAIL",
    "URL",
    "CREDIT_CARD",
    "IBAN",
    "US_SSN",
    "IP_ADDRESS",
    "STREET_ADDRESS",
)


def markdown(results: dict) -> str:
    """The detection tables of docs/redaction.md from a results JSON: per corpus, for each gold type the token-level recall
    of both tools and the precision of what each labels as that type, and their speed."""

    def cell(value: float | None) -> str:
        return "—" if value is None else f"{value:.2f}"

    out = []
    for name, corpus in results["corpora"].items():
        ours = {r["type"]: r for r in corpus["textsdc"]["scores"]}
        theirs = {r["type"]: r for r in corpus["presidio"]["scores"]}
        out += [
            f"**{name}**, {corpus['documents']:,} texts: textsdc "
            f"{corpus['textsdc']['documents_per_cpu_second']:,.0f} texts per CPU-second, Presidio "
            f"{corpus['presidio']['documents_per_cpu_second']:,.0f}.",
            "",
            "| gold type | gold tokens | recall textsdc | recall Presidio | precision textsdc | precision Presidio |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for kind in TABLE_TYPES:
            if kind not in ours or not ours[kind]["gold_tokens"]:
                continue
            a, b = ours[kind], theirs.get(kind, {})
            name = type_name(kind)
            label = "**all, type-agnostic**" if kind == "ALL" else name if name[:2].isupper() else name.lower()
            out.append(
                f"| {label} | {a['gold_tokens']:,} | {cell(a['token_recall'])} | {cell(b.get('token_recall'))} "
                f"| {cell(a['token_precision'])} | {cell(b.get('token_precision'))} |"
            )
        out.append("")
    return "\n".join(out)


BEGIN, END = "<!-- detection-table:begin -->", "<!-- detection-table:end -->"
PAGE = HERE.parent / "docs" / "redaction.md"
"""The page holding the detection tables, between the markers."""


def with_tables(page: str, results: dict) -> str:
    """``page`` with the tables of ``results`` between its detection-table markers."""
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\nMeasured at {results['commit']}.\n\n{markdown(results)}{END}{tail}"


def commit_label() -> str:
    """The commit measured: its short hash, and whether tracked files had changes."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout:
        commit += " with uncommitted changes"
    return commit


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default=str(HERE / "results_detection.json"))
    parser.add_argument(
        "--docs", action="store_true", help="write the detection tables of docs/redaction.md from --json and stop"
    )
    args = parser.parse_args()
    if args.docs:
        PAGE.write_text(
            with_tables(PAGE.read_text(encoding="utf-8"), json.loads(Path(args.json).read_text())), encoding="utf-8"
        )
        return
    python = bench_python()
    if not SYNTHETIC.exists():
        subprocess.run(
            [str(python), str(HERE / "detection" / "pii_synthetic.py"), "500", "0", str(SYNTHETIC)], check=True
        )
    corpora = {"synthetic PII (Faker, 500 texts)": SYNTHETIC}
    if WNUT.exists():
        corpora = {"WNUT-17 dev (user posts)": WNUT, **corpora}
    out: dict = {"commit": commit_label(), "level": LEVEL, "presidio_score_threshold": 0.35, "corpora": {}}
    for name, path in corpora.items():
        docs = read_gold(path)
        texts = [d.text for d in docs]
        row = {}
        for tool, run in (("textsdc", run_textsdc), ("presidio", lambda t: run_presidio(python, t))):
            found, timing = run(texts)
            row[tool] = summary(score_detection(docs, found), timing)
            every = row[tool]["scores"][0]
            print(
                f"{name:<34} {tool:<9} P {every['token_precision']:.3f} R {every['token_recall']:.3f} "
                f"F2 {every['token_f2']:.3f}  {row[tool]['documents_per_cpu_second']:>7.1f} docs/CPU-s",
                file=sys.stderr,
            )
        out["corpora"][name] = {"documents": len(docs), **row}
    out["presidio_analyzer"] = timing.get("presidio_analyzer")
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
