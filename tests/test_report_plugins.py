"""Measures, report sections and export checks are plug-ins: each toy of tests/toy_measure.py, toy_section.py and
toy_check.py is one module, registered in one line, and reaches the CLI's flags, the dashboard's widgets, the
cache key, the replay command, the manifest and the report without another file edited. Every method family's
figures are in its report and on its page, from one figure function."""

from __future__ import annotations

import html
import json
import shutil
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.export import registry as check_registry
from engine.export.chosen import Prepared, Run, export_chosen
from engine.measures import registry as measure_registry
from engine.measures.evaluate import Evaluator
from engine.measures.settings import MeasureSettings
from engine.protect import get_protector
from engine.protect.base import ReleaseDetail
from engine.record.replay import ReplaySpec
from engine.report import registry as section_registry
from engine.sweep import run_sweep
from tests.toy_check import ShoutingTexts
from tests.toy_measure import LongTextShare
from tests.toy_section import WordsKeptSection

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


@pytest.fixture
def toy_measure(monkeypatch):
    monkeypatch.setattr(measure_registry, "MEASURES", measure_registry.MEASURES)  # put back after the test
    measure_registry.register(LongTextShare)  # the one registration line a new measure needs
    return LongTextShare


@pytest.fixture
def toy_section(monkeypatch):
    monkeypatch.setattr(section_registry, "SECTIONS", section_registry.SECTIONS)
    section_registry.register(WordsKeptSection)  # the one registration line a new report section needs
    return WordsKeptSection


@pytest.fixture
def toy_check(monkeypatch):
    monkeypatch.setattr(check_registry, "CHECKS", check_registry.CHECKS)
    check_registry.register(ShoutingTexts)  # the one registration line a new export check needs
    return ShoutingTexts


def _release(capsys, tiny_files: Path, out: Path, *extra: str) -> dict:
    argv = ["release", "--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    argv += ["--method", "redact", "--no-use-ner", "--knob", "1", *extra, "--out", str(out)]
    assert main([*argv, "--audit-log", str(out.parent / "audit.sqlite")]) == 0, capsys.readouterr().err
    capsys.readouterr()
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


def test_a_measures_setting_is_a_flag_of_every_command_that_measures(toy_measure, capsys):
    for command in ("sweep", "release", "compare", "pin"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "--min-words MIN_WORDS toy measure: the words a released text needs to count as long" in out


def test_a_measures_setting_keys_the_cache_and_the_replay(toy_measure):
    from dashboard.caching import options_key

    chosen = MeasureSettings(min_words=5)
    assert chosen["min_words"] == 5 and MeasureSettings()["min_words"] == 3
    assert options_key(chosen) != options_key(MeasureSettings()) == options_key(MeasureSettings(min_words=3))
    spec = ReplaySpec("tiny", "redact", 1.0, 0, 1, "out", options=chosen)
    assert "--min-words 5" in spec.command() and ReplaySpec.parse(spec.command()) == spec
    with pytest.raises(Exception, match=r"\(min_words\) must be a whole number from 1 to 50"):
        MeasureSettings(min_words=99)


def test_a_registered_measure_is_measured_recorded_and_reported_with_its_setting(
    toy_measure, capsys, tiny_files, tmp_path
):
    out = tmp_path / "bundle"
    manifest = _release(capsys, tiny_files, out, "--min-words", "5")
    assert "toy_long_texts" in manifest["metrics"] and manifest["measure_settings"]["min_words"] == 5
    assert "--min-words 5" in manifest["replay"]
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "Long texts (toy)" in report and "Long: 5 words or more." in report


def test_a_measures_setting_has_a_widget_on_the_page_of_the_methods_it_measures(toy_measure, tiny_files, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from dashboard import session

    shutil.copy(tiny_files, tiny_files.parent / "data.schema.toml")
    monkeypatch.setattr(sys, "argv", ["app.py", "--data", str(tiny_files.parent / "data.csv")])
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.session_state[session.METHOD_KEY] = "redact"
    at.session_state["param::redact::use_ner"] = False
    at.switch_page("views/protect.py").run()
    assert not at.exception, [e.value for e in at.exception]
    widget = next(w for w in at.number_input if w.label == "Words of a long text")
    widget.set_value(6).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "toy_long_texts" in at.session_state[session.CHOICE].sweep.metric_ids


def test_a_registered_section_is_in_the_report_and_its_figures_on_the_page(toy_section, capsys, tiny_files, tmp_path):
    out = tmp_path / "bundle"
    _release(capsys, tiny_files, out, "--with-frontier")
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Words kept (toy)</h2>" in report and 'id="fig-toy-words-kept"' in report
    assert "The toy section of a release of 24 records." in report
    dataset_sweep = _tiny_sweep(tiny_files)
    assert [key for key, _ in section_registry.page_figures(dataset_sweep, 1.0)] == ["toy-words-kept"]


def test_a_registered_export_check_warns_in_the_manifest_and_the_report(toy_check, capsys, tiny_files, tmp_path):
    import pandas as pd

    data = tiny_files.parent / "data.csv"
    frame = pd.read_csv(data)
    frame.loc[:4, "text"] += " ugh!"
    frame.to_csv(data, index=False)
    out = tmp_path / "bundle"
    manifest = _release(capsys, tiny_files, out)
    [warning] = [w for w in manifest["warnings"] if "toy check" in w]
    assert warning.startswith("5 released texts end with an exclamation mark")
    assert f"Warning: {warning}." in (out / "report.html").read_text(encoding="utf-8")


def _tiny_sweep(tiny_files: Path):
    from engine.data.load import load_dataset

    dataset = load_dataset(str(tiny_files.parent / "data.csv"), str(tiny_files))
    protector = get_protector("redact", use_ner=False)
    return run_sweep(dataset, protector, [0.0, 1.0], 1, 0)


def test_every_detail_names_a_registered_section_and_every_section_says_what_it_is():
    ids = [s.id for s in section_registry.SECTIONS]
    assert len(set(ids)) == len(ids)
    for section in section_registry.SECTIONS:
        assert section.title and section.id.replace("-", "").isalnum(), section
    named = {cls.section for cls in _subclasses(ReleaseDetail) if cls.section and cls.section != "facts"}
    assert named <= set(ids), named - set(ids)


def _subclasses(cls: type) -> set[type]:
    import engine.protect  # noqa: F401 - every method's details

    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def _export(dataset, protector, fitted, sweep, folder: Path):
    spec = ReplaySpec(
        "a dataset made in the test",
        protector.name,
        sweep.grid[-1],
        0,
        sweep.replicates,
        str(folder),
        with_frontier=True,
    )
    prepared = Prepared(dataset, protector, fitted, sweep=sweep)
    export_chosen(folder, spec, prepared, run=Run(audit_log=folder.parent / "audit.sqlite", pdf=False))
    public = (folder / "report.html").read_text(encoding="utf-8")
    internal = (folder.parent / f"{folder.name}.internal-review.html").read_text(encoding="utf-8")
    return public, internal


def test_the_text_familys_report_draws_the_frontier_and_for_the_steward_the_attack(tiny_dataset, tmp_path):
    protector = get_protector("redact", use_ner=False)
    fitted = protector.fit(tiny_dataset)
    sweep = run_sweep(tiny_dataset, protector, [0.0, 1.0], 1, 0, fitted=fitted)
    public, internal = _export(tiny_dataset, protector, fitted, sweep, tmp_path / "bundle")
    for div in ("fig-frontier", "fig-risk-along-knob", "fig-utility-along-knob"):
        assert f'id="{div}"' in public and f'id="{div}"' in internal
    assert 'id="fig-attack-attack_identification_rate"' in internal
    assert "fig-attack-" not in public


def test_the_field_synthesis_familys_report_draws_the_synthesizer_along_lambda(tmp_path):
    from tests.test_synthesis import colour_dataset

    dataset = colour_dataset()
    protector = get_protector("glm", fields=("colour",), n_lambda=10)
    fitted = protector.fit(dataset)
    evaluator = Evaluator(dataset, None, fields=["colour"], fitted=fitted)
    sweep = run_sweep(dataset, protector, fitted.knob.default_grid()[::4], 2, 0, fitted=fitted, evaluator=evaluator)
    public, internal = _export(dataset, protector, fitted, sweep, tmp_path / "bundle")
    assert 'id="fig-complexity"' in public and "The synthesizer along λ" in public
    assert "probability of confidential" in internal and "probability of confidential" not in public


def test_the_counts_familys_report_draws_the_synthetic_distribution(tiny_dataset, tmp_path):
    from dataclasses import replace

    from engine.data.schema import FieldSpec

    frame = tiny_dataset.frame.assign(bags=[i % 4 for i in range(len(tiny_dataset.frame))])
    schema = replace(tiny_dataset.schema, fields=(*tiny_dataset.schema.fields, FieldSpec("bags", "count", "sensitive")))
    dataset = replace(tiny_dataset, frame=frame, schema=schema)
    protector = get_protector("cart", fields=("bags",), min_split=2, min_leaf=1)
    fitted = protector.fit(dataset)
    sweep = run_sweep(dataset, protector, fitted.knob.default_grid()[::4], 1, 0, fitted=fitted)
    public, _ = _export(dataset, protector, fitted, sweep, tmp_path / "bundle")
    assert "<h2>Synthetic distributions</h2>" in public and 'id="fig-histogram-bags"' in public


def test_both_reports_list_each_released_column_with_what_it_is_and_how_it_leaves(capsys, tiny_files, tmp_path):
    out = tmp_path / "bundle"
    manifest = _release(capsys, tiny_files, out)
    roles = {
        "text": "the text",
        "user": "the author",
        "airline": "categorical field (key: an intruder may know it)",
        "mood": "categorical field (sensitive: what an intruder must not learn)",
    }
    assert sorted(manifest["columns"]) == sorted(roles)
    assert manifest["columns"]["user"].startswith("pseudonymized") and manifest["columns"]["text"].startswith(
        "protected"
    )
    for page in (out / "report.html", tmp_path / "bundle.internal-review.html"):
        report = html.unescape(page.read_text(encoding="utf-8"))
        assert "<h2>Columns and their treatment</h2>" in report
        for column, role in roles.items():
            assert f"<tr><td>{column}</td><td>{role}</td><td>{manifest['columns'][column]}</td></tr>" in report
        assert "dotted line" not in report and "risk–utility figure" not in report  # made without --with-frontier
