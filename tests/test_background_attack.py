"""The attacks of an intruder holding a declared background corpus: high before protection on a corpus whose
companies have words of their own, near chance once those words are redacted; the Wilson interval and the
chance level; not measured, with a reason, where they cannot apply; the background refused as data files are."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from engine.data.background import read_background
from engine.errors import ConfigError, DataError
from engine.intervals import wilson
from engine.measures.base import metric_info
from engine.measures.evaluate import Evaluator
from engine.measures.settings import MeasureSettings
from tests.background_data import background_dataset, background_file, redacted

ATTACKS = ["background_document_attack", "background_document_level", "background_author_attack"]


def test_wilson_interval_matches_hand_computed_values():
    # p = 1 of 40: the lower bound is n / (n + z²)
    lo, hi = wilson(40, 40)
    assert math.isclose(lo, 40 / (40 + 1.959963984540054**2)) and hi == 1.0
    lo, hi = wilson(13, 40)  # 0.325: 0.2008 – 0.4798 by the score formula
    assert round(lo, 4) == 0.2008 and round(hi, 4) == 0.4798
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_background_intruder_names_passages_and_documents_until_their_words_are_redacted(tmp_path):
    data = background_dataset()
    options = MeasureSettings(background=str(background_file(tmp_path)))
    ev = Evaluator(data, ATTACKS, options=options)
    assert ev.skipped == {"background_author_attack": "the data has no author column"}
    before, after = ev.evaluate(data.frame), ev.evaluate(redacted(data.frame))
    for mid in ("background_document_attack", "background_document_level"):
        assert before[mid].chance == after[mid].chance == 0.25
        assert before[mid].value >= 0.9 and before[mid].lo > 0.6
        assert after[mid].value <= 0.45 and after[mid].lo <= 0.25 <= after[mid].hi
        assert before[mid].lo <= before[mid].value <= before[mid].hi
    passages, documents = before["background_document_attack"].detail, before["background_document_level"].detail
    assert passages["attacked"].iloc[0] == 40 and documents["attacked"].iloc[0] == 8
    # the unprotected data's baseline is the attack before protection
    assert ev.baseline()["background_document_attack_confidential"].value == before["background_document_attack"].value
    assert metric_info("background_document_level").attack.names == "document"


def test_a_document_label_the_background_lacks_is_not_attacked(tmp_path):
    data = background_dataset()
    path = background_file(tmp_path)
    bg = pd.read_csv(path)
    bg[bg["ticker"] != "DDD"].to_csv(path, index=False)
    ev = Evaluator(data, ["background_document_attack"], options=MeasureSettings(background=str(path)))
    r = ev.evaluate(data.frame)
    assert r["background_document_attack"].chance == pytest.approx(1 / 3)
    assert r["background_document_attack"].detail[["attacked", "not_attackable"]].iloc[0].tolist() == [30, 10]


def test_not_measured_without_a_background_or_a_shared_label(tmp_path):
    data = background_dataset()
    ev = Evaluator(data, ATTACKS)
    assert all("no background corpus declared" in ev.skipped[m] for m in ATTACKS)
    other = tmp_path / "other.csv"
    pd.DataFrame({"text": ["a long enough text about nothing"] * 4, "ticker": ["ZZZ", "YYY"] * 2}).to_csv(
        other, index=False
    )
    ev = Evaluator(data, ["background_document_attack"], options=MeasureSettings(background=str(other)))
    assert "no field of the data constant within each document" in ev.skipped["background_document_attack"]


def test_a_background_file_is_refused_as_a_data_file_is(tmp_path):
    with pytest.raises(DataError, match="is not a file"):
        read_background(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("text,ticker\n", encoding="utf-8")
    with pytest.raises(DataError, match="no data rows"):
        read_background(empty)
    with pytest.raises(ConfigError, match="--background"):
        Evaluator(background_dataset(), ATTACKS, options=MeasureSettings(background=str(empty)))
    bg = read_background(background_file(tmp_path))
    assert (bg.rows, bg.name, len(bg.sha256), bg.text) == (40, "background.csv", 64, "text")


def test_the_command_line_takes_a_background_and_the_bundle_records_its_checksum_not_its_content(capsys, tmp_path):
    from engine.cli import main
    from engine.record.manifest import read_record

    data = background_dataset()
    data.frame.to_csv(tmp_path / "calls.csv", index=False)
    (tmp_path / "calls.schema.toml").write_text(
        'text = "text"\ndocument = "call_id"\n\n[fields.chunk]\nkind = "count"\nrole = "other"\n\n'
        '[fields.ticker]\nkind = "categorical"\nrole = "sensitive"\n',
        encoding="utf-8",
    )
    bg = background_file(tmp_path)
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(tmp_path / "calls.csv"), "--method", "redact", "--no-use-ner", "--knob", "1"]
    argv += ["--background", str(bg), "--out", str(out), "--audit-log", str(tmp_path / "audit.sqlite")]
    assert main(argv) == 0, capsys.readouterr().err
    record = read_record(out)
    assert record.background is not None
    assert (record.background.file, record.background.rows) == ("background.csv", 40)
    assert record.background.sha256 == read_background(bg).sha256
    measured = record.metrics["background_document_attack"]
    assert measured.chance == 0.25 and measured.lo is not None and measured.lo < measured.value <= measured.hi
    assert record.replay_spec.options["background"] == str(bg)
    manifest = (out / "manifest.json").read_text(encoding="utf-8")
    assert "turbine" not in manifest and "freight" not in manifest  # the background's texts are not in it


def test_compare_takes_the_worst_attack_as_its_risk_axis(tmp_path):
    from engine.compare import compare_methods
    from engine.measures.attacks import WORST_ATTACK

    data = background_dataset()
    options = MeasureSettings(background=str(background_file(tmp_path)))
    comparison = compare_methods(data, [("redact", {"use_ner": False}), ("kanon", {})], options=options)
    assert WORST_ATTACK in comparison.common("risk")
    front = comparison.frontier(WORST_ATTACK, comparison.default_pair()[1])
    # the worst attack beyond its baseline: the passages' attack at 1 against a chance of 1/4 on the unprotected
    # text, (1 − 1/4) / (1 − 1/4) = 1: all the room above guessing (not 1 − 1/4 = 0.75)
    redact = front[front["method"] == "redact"]
    assert redact["risk"].max() == pytest.approx(1.0)
    assert comparison.to_json(WORST_ATTACK, comparison.default_pair()[1])["frontier"]["risk"] == WORST_ATTACK


@pytest.mark.parametrize(
    ("own_words", "seed", "along", "reached"),
    [(False, 0, None, True), (True, 1, (), False), (True, 1, None, True)],
)
def test_the_swap_says_where_it_misses_its_target_against_the_background_attacker(
    tmp_path, own_words, seed, along, reached
):
    # a company is told by its partner (an organization the swap exchanges) and, with own words, by words the
    # paper's roles do not touch: swapping the partners alone misleads the intruder on every swapped chunk only
    # without the own words; the company terms exchanged along (the default) mislead her with them too
    from engine.export.registry import release_warnings
    from engine.measures.risk.background_attack import SwapTarget
    from engine.protect import get_protector
    from engine.sweep import make_release
    from tests.background_data import partner_background, partner_dataset

    data = partner_dataset(own_words, seed)
    fitted = get_protector("swap", **({} if along is None else {"along": along})).fit(data)
    options = MeasureSettings(background=str(partner_background(tmp_path, own_words)))
    ev = Evaluator(data, ["background_document_attack"], options=options, fitted=fitted)
    release = make_release(fitted, 1.0, seed=0)
    metrics = ev.evaluate(release)
    target = SwapTarget.of(metrics["background_document_attack"].detail)
    assert target is not None and target.chunks >= 8 and target.before == target.chunks  # all named, nothing swapped
    assert target.reached is reached
    assert (target.after == 0) if reached else (target.after == target.chunks)
    said = [w for w in release_warnings(data, release, metrics) if "does not reach its target" in w]
    statement = target.statement(metric_info("background_document_attack").format)
    assert statement.startswith("The swap reaches its target" if reached else "The swap does not reach its target")
    if reached:
        assert not said
    else:
        assert len(said) == 1
        assert (
            f"she names 1.000 of the {target.chunks} swapped chunks" in said[0]
            and "against 1.000 of the same" in said[0]
        )
        assert "Siemens" not in said[0] and "AAA" not in said[0]
    # with nothing swapped there is nothing to compare, and no warning
    still = make_release(fitted, 0.0, seed=0)
    nothing = ev.evaluate(still)
    assert SwapTarget.of(nothing["background_document_attack"].detail) is None
    assert not [w for w in release_warnings(data, still, nothing) if "does not reach its target" in w]


def test_the_protect_pages_cards_of_a_swap_carry_the_document_level_risk(tmp_path):
    from dashboard.views.protect import _metric_cards
    from engine.protect import get_protector
    from engine.sweep import run_sweep
    from tests.background_data import partner_background, partner_dataset

    data = partner_dataset(False, 0)
    options = MeasureSettings(background=str(partner_background(tmp_path, False)))
    metrics = ["background_document_attack", "background_document_level", "swap_dr"]
    sweep = run_sweep(data, get_protector("swap"), [0.0, 1.0], 1, 0, metrics=metrics, use_cache=False, options=options)
    at = sweep.metrics_at(1.0)
    cards = {c["label"]: c for block in _metric_cards(sweep, at) for c in block["cards"]}
    level = at["background_document_level"]
    card = cards["Background attack: documents named (passages pooled)"]
    info = metric_info("background_document_level")
    assert card["value"] == info.format(level.value)
    assert card["note"] == f"[{info.format(level.lo)}–{info.format(level.hi)}], chance 0.250"


def test_a_swap_release_of_passages_is_attacked_passage_by_passage_and_not_as_documents(tmp_path, capsys):
    import json

    from engine.cli import main
    from engine.measures.risk.background_attack import SwapTarget
    from engine.protect import get_protector
    from engine.sweep import make_release
    from tests.background_data import partner_background, partner_dataset

    data = partner_dataset(False, 0)
    options = MeasureSettings(background=str(partner_background(tmp_path, False)))
    fitted = get_protector("swap", unit="passages").fit(data)
    ev = Evaluator(data, ["background_document_attack", "background_document_level"], options=options, fitted=fitted)
    metrics = ev.evaluate(make_release(fitted, 1.0, seed=0))
    assert "background_document_level" not in metrics
    assert "no whole document is released" in ev.skipped["background_document_level"]
    target = SwapTarget.of(metrics["background_document_attack"].detail)
    assert target is not None and target.reached
    # the bundle: passages.csv, no column in release.csv, and the manifest says the target is reached
    data.frame.to_csv(tmp_path / "calls.csv", index=False)
    (tmp_path / "calls.schema.toml").write_text(
        'text = "text"\ndocument = "call_id"\n\n[fields.ticker]\nkind = "categorical"\nrole = "sensitive"\n',
        encoding="utf-8",
    )
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(tmp_path / "calls.csv"), "--method", "swap", "--unit", "passages", "--knob", "1"]
    argv += ["--background", options["background"], "--out", str(out), "--audit-log", str(tmp_path / "a.sqlite")]
    assert main(argv) == 0, capsys.readouterr().err
    passages = pd.read_csv(out / "passages.csv")
    assert list(passages.columns) == ["text"] and len(passages) > len(data.frame)
    assert (out / "release.csv").read_text(encoding="utf-8").strip() == ""  # every column withheld
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["background"]["swap_target"].startswith("The swap reaches its target")
    assert "AAA" not in (out / "passages.csv").read_text(encoding="utf-8")
