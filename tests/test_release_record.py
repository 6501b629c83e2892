"""The release record: one typed object a bundle's manifest is written from and read back into; the replay
command it names, written and read from the declarations; export, report and verify functions that take the
record instead of lists of keywords."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil

import pytest

import engine.export
import engine.record
import engine.report
from engine.errors import DataError
from engine.measures.settings import MeasureSettings
from engine.protect import METHODS
from engine.record.decision import Alternative, Decision
from engine.record.manifest import MANIFEST_VERSION, ReleaseRecord, read_record
from engine.record.replay import ReplaySpec, replay_folder


def _modules(*packages):
    for package in packages:
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            yield importlib.import_module(info.name)


def test_no_export_report_or_verify_function_takes_more_than_eight_parameters():
    found = {}
    for module in _modules(engine.export, engine.report, engine.record):
        for name, obj in vars(module).items():
            members = [(name, obj)]
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                members = [(f"{name}.{n}", m) for n, m in vars(obj).items() if n != "__init__"]
            for label, f in members:
                f = inspect.unwrap(getattr(f, "__func__", f))  # the function tests/conftest.py wraps
                if inspect.isfunction(f) and f.__module__ == module.__name__:
                    params = [p for p in inspect.signature(f).parameters if p not in ("self", "cls")]
                    found[f"{module.__name__}.{label}"] = len(params)
    assert "engine.export.bundle.export_release" in found and "engine.report.html.render_report" in found
    assert "engine.export.verify.verify_replay" in found and "engine.export.chosen.export_chosen" in found
    too_many = {name: n for name, n in found.items() if n > 8}
    assert not too_many, too_many


def _bundle(capsys, tiny_files, tmp_path, *extra):
    from engine.cli import main

    out = tmp_path / "bundle"
    argv = ["release", "--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--method"]
    argv += ["redact", "--no-use-ner", "--knob", "1", "--replicates", "2", *extra, "--out", str(out)]
    assert main([*argv, "--audit-log", str(tmp_path / "audit.sqlite")]) == 0, capsys.readouterr().err
    return out


def test_a_manifest_is_read_back_into_the_record_it_was_written_from(capsys, tiny_files, tmp_path):
    note = tmp_path / "decision.json"
    decision = Decision(
        "A. Steward",
        "the lowest risk",
        "level 1",
        (Alternative("level 0", "redact at 0", {"x": {"value": 0.5}}, ("w",), "textsdc release …"),),
    )
    note.write_text(json.dumps(decision.to_dict()), encoding="utf-8")
    out = _bundle(capsys, tiny_files, tmp_path, "--decision", str(note), "--intruder", "posts")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["manifest_version"] == MANIFEST_VERSION
    record = read_record(out)
    assert record.to_manifest() == manifest
    assert record.manifest_text() == (out / "manifest.json").read_text(encoding="utf-8")
    assert ReleaseRecord.from_manifest(record.to_manifest()) == record
    assert record.decision == Decision.from_dict(decision.to_dict()) and record.method.name == "redact"
    assert record.metrics["attack_identification_rate"].kind == "risk" and record.replicates == 1
    assert record.csv_escaped == {"changes.csv": 0, "release.csv": 0}  # its handles redacted, no text is a formula
    spec = record.replay_spec
    assert (spec.method, spec.knob, spec.seed, spec.options["intruder"]) == ("redact", 1.0, 0, "posts")
    assert spec.params == {"use_ner": False} and spec.schema == str(tiny_files)
    assert spec.out == f"{out}-replay" and record.pseudonym_key is not None  # the author column is pseudonymized
    assert record.pseudonym_key.files == ("release.csv", "release.parquet")


def test_a_manifest_without_a_version_reads_and_one_of_a_newer_layout_is_refused(capsys, tiny_files, tmp_path):
    out = _bundle(capsys, tiny_files, tmp_path)
    manifest = read_record(out).to_manifest()
    older = {k: v for k, v in manifest.items() if k != "manifest_version"}  # as bundles before the record wrote it
    assert ReleaseRecord.from_manifest(older).to_manifest() == manifest
    unstated = {k: v for k, v in older.items() if k != "csv_escaped"}  # written before the CSV files were escaped
    assert ReleaseRecord.from_manifest(unstated).csv_escaped == {}
    with pytest.raises(DataError, match="layout version 99; this textsdc reads up to 1"):
        ReleaseRecord.from_manifest({**manifest, "manifest_version": 99})
    with pytest.raises(DataError, match="is not a textsdc manifest"):
        ReleaseRecord.from_manifest({"files": {}})


def test_a_records_claims_are_written_and_read_back(capsys, tiny_files, tmp_path):
    """What a release claims of its tables (k, ℓ, t; the kanon method's) goes into the manifest and comes back
    the same; a claim that is not one is a user error."""
    from dataclasses import replace

    from engine.protect.claims import AnonymityClaim

    record = read_record(_bundle(capsys, tiny_files, tmp_path))
    assert record.claims == () and record.to_manifest()["claims"] == []  # redaction claims nothing
    claim = AnonymityClaim(
        "quasi_identifiers.csv",
        ("class", "QIAGE"),
        5,
        "suppressed",
        "SA",
        2,
        0.25,
        (("QIAGE", "age: 10-year bands"), ("QIJOB", "occupation: whether stated")),
        ("swapped_values.csv",),
        "class",
    )
    claimed = replace(record, claims=(claim,))
    manifest = json.loads(claimed.manifest_text())
    assert manifest["claims"][0]["attributes"] == {"QIAGE": "age: 10-year bands", "QIJOB": "occupation: whether stated"}
    assert ReleaseRecord.from_manifest(manifest) == claimed
    manifest["claims"][0]["k"] = "five"
    with pytest.raises(DataError, match="is not a textsdc manifest"):
        ReleaseRecord.from_manifest(manifest)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_methods_replay_command_reads_back_into_the_same_spec(method):
    """Each method's parameters given other values than the defaults, and measure settings besides, make a
    command that `ReplaySpec.parse` reads back whole (what `textsdc verify` does with a bundle's command)."""
    params = {}
    for p in METHODS[method].parameters:
        if p.example is not None:
            params[p.name] = p.example
        elif p.type is bool:
            params[p.name] = not p.default
        elif p.choices:
            other = next(c for c in p.choices if c not in (p.default if p.many else (p.default,)))
            params[p.name] = (other,) if p.many else other
        elif not p.many and p.type in (int, float) and p.default not in (None, p.high) and p.high is not None:
            params[p.name] = p.type(p.high)
    options = MeasureSettings(intruder="posts", topics=7, classifier_target="#tag")
    spec = ReplaySpec("data file.csv", method, 0.25, 3, 4, "out dir", params, options, 2, "s.toml", "latin-1", True)
    read = ReplaySpec.parse(spec.command())
    assert read == spec, (read, spec)


def test_the_replay_command_writes_a_new_folder_beside_the_bundle_and_a_replays_record_names_the_same():
    assert replay_folder("exports/airline-redact-2") == "exports/airline-redact-2-replay"
    assert replay_folder("exports/airline-redact-2/") == "exports/airline-redact-2-replay"
    assert replay_folder("exports/airline-redact-2-replay") == "exports/airline-redact-2-replay"
    spec = ReplaySpec("airline-tweets", "redact", 2.0, 0, 1, "/data/bundle")
    assert spec.out == "/data/bundle-replay" and spec.command().endswith("--out /data/bundle-replay")
    assert ReplaySpec.parse(spec.command()).command() == spec.command()


def test_a_command_textsdc_does_not_write_is_refused_with_what_is_wrong():
    with pytest.raises(DataError, match="not a `textsdc release` command"):
        ReplaySpec.parse("rm -rf /")
    with pytest.raises(DataError, match="names no method"):
        ReplaySpec.parse("textsdc release --data x --method nope --knob 1 --out o")
    with pytest.raises(DataError, match="--lambdas, which neither method 'redact' nor the measures take"):
        ReplaySpec.parse("textsdc release --data x --method redact --lambdas 1 --knob 1 --out o")
