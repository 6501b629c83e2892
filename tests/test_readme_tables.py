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
