"""A method added as a plug-in reaches the CLI, the replay command, the bundle and the dashboard without a
line of CLI, dashboard or report code: the toy of tests/toy_method.py, registered in one line."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.protect import METHODS, register
from tests.toy_method import WordShuffle

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


@pytest.fixture
def toy():
    register(WordShuffle)  # the one registration line a new method needs
    yield WordShuffle
    METHODS.pop(WordShuffle.name)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_toy_method_flag_is_in_the_help(toy, capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--keep-first" in out and "toy-shuffle: words at the start of each text left in place" in out


def test_toy_method_flag_is_refused_for_another_method(toy, capsys, tiny_files):
    code, _, err = run(
        capsys,
        "sweep",
        "--data",
        tiny_files.parent / "data.csv",
        "--schema",
        tiny_files,
        "--method",
        "redact",
        "--keep-first",
        "2",
        "--out",
        tiny_files.parent / "r.json",
    )
    assert code == 2 and "--keep-first does not apply to method 'redact'; it applies to: toy-shuffle" in err


def test_toy_method_sweeps_exports_and_replays_byte_for_byte(toy, capsys, tiny_files, tmp_path):
    data = tiny_files.parent / "data.csv"
    results = tmp_path / "results.json"
    code, out, err = run(
        capsys,
        "sweep",
        "--data",
        data,
        "--schema",
        tiny_files,
        "--method",
        "toy-shuffle",
        "--keep-first",
        "2",
        "--replicates",
        "2",
        "--out",
        results,
    )
    assert code == 0, err
    payload = json.loads(results.read_text())
    assert payload["method"] == "toy-shuffle" and payload["grid"] == [0.0, 0.5, 1.0]
    assert {"attack_identification_rate", "unigram_cosine"} <= {r["metric"] for r in payload["rows"]}

    bundle = tmp_path / "bundle"
    audit = tmp_path / "audit.sqlite"
    code, out, err = run(
        capsys,
        "release",
        "--data",
        data,
        "--schema",
        tiny_files,
        "--method",
        "toy-shuffle",
        "--keep-first",
        "2",
        "--knob",
        "1",
        "--seed",
        "7",
        "--replicates",
        "2",
        "--out",
        bundle,
        "--audit-log",
        audit,
    )
    assert code == 0, err
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["method"]["params"] == {"keep_first": 2, "guard_off": [], "corrections": "none"}
    replay = shlex.split(manifest["replay"])
    assert replay[:2] == ["textsdc", "release"] and "--keep-first" in replay
    assert replay[replay.index("--keep-first") + 1] == "2"

    first = digests(bundle)
    code, _, err = run(capsys, *replay[1:], "--audit-log", audit)  # into the bundle's -replay folder, beside it
    assert code == 0, err
    assert digests(tmp_path / "bundle-replay") == first == digests(bundle)


def toy_protect_page(schema: Path, monkeypatch):
    """The dashboard opened on the tiny data (its schema beside it), on the Protect page with the toy chosen."""
    from streamlit.testing.v1 import AppTest

    from dashboard import session

    data = schema.parent / "data.csv"
    shutil.copy(schema, schema.parent / "data.schema.toml")
    monkeypatch.setattr(sys, "argv", ["app.py", "--data", str(data)])
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.session_state[session.METHOD_KEY] = "toy-shuffle"
    at.switch_page("views/protect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_toy_method_shows_on_the_protect_page_with_a_widget_for_its_parameter(toy, tiny_files, monkeypatch):
    from dashboard import session

    at = toy_protect_page(tiny_files, monkeypatch)
    widget = next(w for w in at.number_input if w.label == "Keep first")
    widget.set_value(3).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    chosen = at.session_state[session.CHOICE]
    assert chosen.method == "toy-shuffle" and chosen.params == {"keep_first": 3}
    assert chosen.sweep.method == "toy-shuffle" and chosen.sweep.grid == [0.0, 0.5, 1.0]


def test_a_parameter_named_like_a_command_setting_is_refused_when_declared():
    from engine.protect.base import Protector
    from engine.protect.params import Param

    with pytest.raises(TypeError, match="names a parameter seed, which the commands use"):

        class Clash(Protector):  # noqa: F841 - declaring it is the test
            parameters = (Param("seed", int, 0, "a seed"),)


def test_the_commands_own_flags_are_all_reserved():
    """Every flag of the CLI that no method or measure declares is in RESERVED_NAMES, so a new command flag
    cannot silently collide with a method parameter declared later."""
    import argparse

    from engine.cli import build_parser
    from engine.cli.args import method_parameters, step_flag_parameters
    from engine.measures.registry import setting_parameters
    from engine.protect.params import RESERVED_NAMES

    declared = set(method_parameters()) | {p.name for p in [*setting_parameters(), *step_flag_parameters()]}
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own = {
        action.dest
        for sub in subparsers.choices.values()
        for action in sub._actions
        if action.option_strings and action.dest not in declared and action.dest != "help"
    }
    assert own <= RESERVED_NAMES, own - RESERVED_NAMES


def with_settings(schema: Path, settings: str) -> Path:
    """The tiny schema with a [methods.…] table appended."""
    schema.write_text(schema.read_text() + "\n" + settings)
    return schema


def test_the_schema_gives_a_method_its_settings_and_a_flag_overrides_them(toy, capsys, tiny_files, tmp_path):
    schema = with_settings(tiny_files, "[methods.toy-shuffle]\nkeep_first = 3\n")
    data = tiny_files.parent / "data.csv"
    common = ["--data", data, "--schema", schema, "--method", "toy-shuffle", "--knob", "1", "--replicates", "1"]
    code, _, err = run(capsys, "release", *common, "--out", tmp_path / "from_schema")
    assert code == 0, err
    manifest = json.loads((tmp_path / "from_schema" / "manifest.json").read_text())
    assert manifest["method"]["params"] == {"keep_first": 3, "guard_off": [], "corrections": "none"}
    replay = shlex.split(manifest["replay"])
    assert replay[replay.index("--keep-first") + 1] == "3"  # the replay names it, whatever schema it finds
    code, _, err = run(capsys, "release", *common, "--keep-first", "1", "--out", tmp_path / "flag")
    assert code == 0, err
    assert json.loads((tmp_path / "flag" / "manifest.json").read_text())["method"]["params"] == {
        "keep_first": 1,
        "guard_off": [],
        "corrections": "none",
    }


@pytest.mark.parametrize(
    "settings, message",
    [
        ("[methods.toy-shufle]\nkeep_first = 3\n", "[methods.toy-shufle] names no method; the methods are"),
        ("[methods.toy-shuffle]\nkeep_last = 3\n", "[methods.toy-shuffle] has no parameter 'keep_last'; its param"),
        ("[methods.toy-shuffle]\nkeep_first = -1\n", "[methods.toy-shuffle] keep_first must be a whole number"),
        ('[methods.toy-shuffle]\nkeep_first = "two"\n', "[methods.toy-shuffle] keep_first must be a whole number"),
        ("methods = 3\n", "'methods' must be tables of settings, e.g. [methods.redact]"),
        ("[methods.toy-shuffle]\nkeep_first = [[1]]\n", "keep_first must be a value, a list of values or a table"),
    ],
)
def test_bad_method_settings_in_the_schema_are_named(toy, capsys, tiny_files, tmp_path, settings, message):
    text = tiny_files.read_text()
    tiny_files.write_text(settings + text if settings.startswith("methods =") else text + "\n" + settings)
    args = ["--data", tiny_files.parent / "data.csv", "--schema", tiny_files, "--method", "toy-shuffle"]
    code, _, err = run(capsys, "sweep", *args, "--out", tmp_path / "r.json")
    assert code == 2 and message in " ".join(err.split()), err
    assert not (tmp_path / "r.json").exists()


def test_method_settings_round_trip_through_the_schema_file():
    import tomllib

    from engine.data.schema import Schema
    from engine.protect import schema_parameters

    schema = Schema.from_dict(
        {"text": "t", "methods": {"redact": {"thresholds": {"PHONE": 0.3, "IBAN": 0.9}, "use_ner": False}}}
    )
    assert schema.method_settings("redact") == {"thresholds": ("PHONE=0.3", "IBAN=0.9"), "use_ner": False}
    assert Schema.from_dict(tomllib.loads(schema.to_toml())) == schema
    assert schema_parameters(schema, "redact") == {"thresholds": ("PHONE=0.3", "IBAN=0.9"), "use_ner": False}
    assert schema_parameters(schema, "glm") == {}


def test_method_settings_are_not_part_of_the_datas_identity(tiny_dataset):
    from dataclasses import replace

    from engine.data.schema import Schema

    settings = Schema.from_dict({**tiny_dataset.schema.to_dict(), "methods": {"redact": {"use_ner": False}}})
    assert settings.methods and settings != tiny_dataset.schema
    assert replace(tiny_dataset, schema=settings).fingerprint == tiny_dataset.fingerprint
    moved = replace(tiny_dataset.schema, text=tiny_dataset.schema.author, author=tiny_dataset.schema.text)
    assert replace(tiny_dataset, schema=moved).fingerprint != tiny_dataset.fingerprint


def test_the_protect_page_starts_from_the_schemas_settings(toy, tiny_files, monkeypatch):
    from dashboard import session

    at = toy_protect_page(with_settings(tiny_files, "[methods.toy-shuffle]\nkeep_first = 3\n"), monkeypatch)
    assert next(w for w in at.number_input if w.label == "Keep first").value == 3
    assert at.session_state[session.CHOICE].params == {"keep_first": 3}
