"""The README's method tables say what the registered methods declare."""

from pathlib import Path

from engine.docs import with_table
from engine.protect import METHODS

README = Path(__file__).resolve().parents[1] / "README.md"


def test_method_parameter_table_is_the_generated_one():
    text = README.read_text(encoding="utf-8")
    assert with_table(text) == text, "run `python -m engine.docs` to rewrite the README's method parameters"


def test_every_registered_method_is_described_in_the_methods_table():
    text = README.read_text(encoding="utf-8")
    methods = text[text.index("### Methods") : text.index("#### Method parameters")]
    for name in METHODS:
        assert f"| `{name}` |" in methods, name


def test_detection_tables_are_the_benchmarks_last_run():
    import importlib.util
    import json

    folder = README.parent / "benchmarks"
    spec = importlib.util.spec_from_file_location("bench_detection", folder / "bench_detection.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    results = json.loads((folder / "results_detection.json").read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8")
    assert bench.with_tables(text, results) == text, "run `benchmarks/bench_detection.py --readme`"
