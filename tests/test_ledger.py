"""The release ledger (issue 52): exports recorded per dataset, the checks a new export passes against the earlier
releases of the same records, the override and its reason, a corrupt ledger, and what never leaves the ledger."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from engine.cli import main
from engine.errors import DataError
from engine.ledger.averaging import AVERAGING_RATIO, averaging
from engine.ledger.checks import (
    LEDGER_CHECKS,
    EpsilonComposition,
    LedgerCheck,
    SyntheticAveraging,
    TextBesideFieldSynthesis,
    TextLessProtected,
    ledger_findings,
    register,
)
from engine.ledger.entry import Averaging, Entry, Step, records_digest
from engine.ledger.store import read_ledger
from engine.ledger.treatments import TREATMENTS, method_treatment
from engine.protect import METHODS


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def release(capsys, tiny_files, tmp_path, name, method, knob, *extra):
    """`textsdc release` of the tiny data into ``tmp_path / name`` with the test's own ledger file."""
    return run(
        capsys,
        "release",
        "--data",
        str(tiny_files.parent / "data.csv"),
        "--schema",
        str(tiny_files),
        "--method",
        method,
        "--knob",
        str(knob),
        "--seed",
        "3",
        "--replicates",
        "1",
        "--out",
        str(tmp_path / name),
        "--audit-log",
        str(tmp_path / "audit.sqlite"),
        "--ledger",
        str(tmp_path / "ledger.json"),
        *extra,
    )


def manifest(folder):
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def test_two_md_exports_of_the_same_data_sum_epsilon(capsys, tiny_files, tmp_path):
    code, out, err = release(capsys, tiny_files, tmp_path, "first", "md", 1)
    assert code == 0, err
    assert manifest(tmp_path / "first")["ledger"] == {
        "releases": 1,
        "epsilon_total": 1.0,
        "epsilon_releases": 1,
        "findings": [],
        "override": None,
    }
    code, _, err = release(capsys, tiny_files, tmp_path, "second", "md", 2)
    assert code == 2
    assert "spend ε = 3 (sequential composition, Dwork & Roth 2014, Theorem 3.16)" in err
    assert '--ledger-override "reason"' in err and "nothing was written" in err
    assert not (tmp_path / "second").exists()  # nothing half-written
    assert len(read_ledger(tmp_path / "ledger.json").entries) == 1
    code, out, err = release(
        capsys, tiny_files, tmp_path, "second", "md", 2, "--ledger-override", "the board allows ε = 3 in total"
    )
    assert code == 0, err
    note = manifest(tmp_path / "second")["ledger"]
    assert note["releases"] == 2 and note["epsilon_total"] == 3.0 and note["epsilon_releases"] == 2
    assert note["override"] == "the board allows ε = 3 in total"
    assert "ε spent on them 3 over 2 release(s)" in out
    report = (tmp_path / "second" / "report.html").read_text(encoding="utf-8")
    assert "<th>Release ledger</th><td>2 releases of these records with this one; ε spent on them 3 over 2" in report
    entries = read_ledger(tmp_path / "ledger.json").entries
    assert [e.epsilon for e in entries] == [1.0, 2.0]
    assert (tmp_path / "ledger.json").stat().st_mode & 0o077 == 0  # readable by its owner only
    assert entries[1].override == "the board allows ε = 3 in total"


def test_a_field_synthesis_after_text_in_clear_is_flagged_and_needs_the_override(capsys, tiny_files, tmp_path):
    code, _, err = release(capsys, tiny_files, tmp_path, "clear", "cart", 0.01)
    assert code == 0, err
    first = read_ledger(tmp_path / "ledger.json").entries[0]
    assert first.columns["text"] == "in clear" and first.columns["mood"] == "synthesized"
    code, _, err = release(capsys, tiny_files, tmp_path, "cart", "cart", 0.001)
    assert code == 2
    assert "this release synthesizes the field(s)" in err and "carried the text in clear" in err
    assert "and ledger release 1 of the same records" in err and "(ledger release 1: the bundle clear, written" in err
    assert not (tmp_path / "cart").exists()
    reason = "the recipients are the same team that holds release 1"
    code, _, err = release(capsys, tiny_files, tmp_path, "cart", "cart", 0.001, "--ledger-override", reason)
    assert code == 0, err
    entries = read_ledger(tmp_path / "ledger.json").entries
    assert len(entries) == 2 and entries[1].override == reason
    assert any("carried the text in clear" in f for f in entries[1].findings)
    written = manifest(tmp_path / "cart")
    assert written["ledger"]["override"] == reason and written["ledger"]["releases"] == 2
    assert any("the release ledger found" in w and reason in w for w in written["warnings"])
    assert reason in (tmp_path / "cart" / "report.html").read_text(encoding="utf-8")  # the reviewer reads it
    assert "bundle clear" not in json.dumps(written) and "(clear)" not in json.dumps(written)  # by number only


def test_the_override_is_recorded_and_textsdc_ledger_explains_it(capsys, tiny_files, tmp_path):
    assert release(capsys, tiny_files, tmp_path, "a", "md", 1)[0] == 0
    assert release(capsys, tiny_files, tmp_path, "b", "md", 2, "--ledger-override", "a second draw for QA")[0] == 0
    code, out, err = run(capsys, "ledger", "--path", str(tmp_path / "ledger.json"))
    assert code == 0, err
    assert "2 releases, ε spent 3 over 2 of them" in out
    assert (
        "md at epsilon = 2, ε = 2" in out and "2 finding(s), exported over them" in out
    )  # ε, and ε 2 protects less than 1
    code, out, err = run(capsys, "ledger", "--path", str(tmp_path / "ledger.json"), "--explain", "2")
    assert code == 0, err
    assert "exported over the findings for this reason: a second draw for QA" in out
    assert "text synthesized" in out and "user pseudonymised" in out
    code, _, err = run(capsys, "ledger", "--path", str(tmp_path / "ledger.json"), "--explain", "7")
    assert code == 2 and "has no entry 7; its entries are numbered 1 to 2" in err
    code, out, _ = run(capsys, "ledger", "--path", str(tmp_path / "ledger.json"), "--dataset", "other")
    assert code == 0 and out.startswith("no release recorded in") and out.rstrip().endswith("for other")
    code, out, _ = run(capsys, "ledger", "--path", str(tmp_path / "none.json"))
    assert code == 0 and "no release recorded in" in out


def test_the_same_release_made_again_is_a_repeat_with_the_same_manifest(capsys, tiny_files, tmp_path):
    assert release(capsys, tiny_files, tmp_path, "a", "md", 1)[0] == 0
    code, _, err = release(capsys, tiny_files, tmp_path, "again", "md", 1)
    assert code == 0, err  # it discloses nothing new: no finding, ε not counted twice
    assert manifest(tmp_path / "again")["ledger"] == manifest(tmp_path / "a")["ledger"]
    entries = read_ledger(tmp_path / "ledger.json").entries
    assert entries[1].repeat_of == 1


def test_the_text_released_less_protected_is_flagged(capsys, tiny_files, tmp_path):
    assert release(capsys, tiny_files, tmp_path, "strong", "redact", 3)[0] == 0
    code, _, err = release(capsys, tiny_files, tmp_path, "weak", "redact", 1)
    assert code == 2 and "which protects less than 3 in ledger release 1 of the same records" in err
    assert release(capsys, tiny_files, tmp_path, "md", "md", 1)[0] == 0  # synthesized after redacted: more
    code, _, err = release(capsys, tiny_files, tmp_path, "clear", "cart", 0.01)
    assert code == 2 and "the text is released in clear here but was released redacted in ledger release 1" in err


def test_a_corrupt_ledger_is_a_clear_error_and_is_never_written_over(capsys, tiny_files, tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text('{"ledger_version": 1, "entries": [', encoding="utf-8")
    code, _, err = release(capsys, tiny_files, tmp_path, "out", "redact", 1)
    assert code == 2
    assert f"the release ledger {path} cannot be read (not JSON" in err and "move it aside" in err
    assert path.read_text(encoding="utf-8") == '{"ledger_version": 1, "entries": ['
    assert not (tmp_path / "out").exists()
    code, _, err = run(capsys, "ledger", "--path", str(path))
    assert code == 2 and "cannot be read" in err


def test_an_edited_entry_breaks_the_chain(capsys, tiny_files, tmp_path):
    assert release(capsys, tiny_files, tmp_path, "a", "md", 1)[0] == 0
    assert release(capsys, tiny_files, tmp_path, "b", "md", 1, "--ledger-override", "x")[0] == 0
    path = tmp_path / "ledger.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    body["entries"][0]["steps"][0]["epsilon"] = 0.5  # someone lowers the ε spent
    path.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(DataError, match="entry 2 does not follow the one before it"):
        read_ledger(path)


def test_a_ledger_entry_holds_no_confidential_value_and_no_bundle_holds_the_ledger(capsys, tiny_files, tmp_path):
    from tests.leakage import ledger_leaks

    assert release(capsys, tiny_files, tmp_path, "a", "cart", 0.01)[0] == 0
    assert release(capsys, tiny_files, tmp_path, "b", "cart", 0.001, "--ledger-override", "x")[0] == 0
    ledger = read_ledger(tmp_path / "ledger.json")
    text = (tmp_path / "ledger.json").read_text(encoding="utf-8")
    data = pd.read_csv(tiny_files.parent / "data.csv")
    values = {str(v) for c in data.columns for v in data[c].dropna().unique() if len(str(v)) >= 5}
    assert values and not [v for v in values if v in text]  # texts, user ids, airlines: none of them
    assert ledger.entries[1].averaging  # the averaging figures are distances, not values
    for folder in (tmp_path / "a", tmp_path / "b"):
        assert ledger_leaks(folder, ledger) == []


def entry(number, text_treatment, *, method="redact", knob=1.0, epsilon=None, fields="in clear", more="higher"):
    step = Step(
        method, {}, "level", knob, more, epsilon, {"text": text_treatment, "mood": fields, "user": "pseudonymised"}
    )
    return Entry("f" * 64, "tiny", "text", 24, "d" * 64, (step,), 3, 0, 1, number=number, bundle=f"b{number}")


def test_the_checks_are_pure_functions_of_the_entries():
    md1 = entry(1, "synthesized", method="md", epsilon=0.5, more="lower")
    md2 = entry(2, "synthesized", method="md", epsilon=0.25, more="lower", knob=0.25)
    assert EpsilonComposition.findings([], md1) == []
    assert "together they spend ε = 0.75" in EpsilonComposition.findings([md1], md2)[0]
    assert TextLessProtected.findings([md1], entry(2, "redacted")) != []
    assert TextLessProtected.findings([entry(1, "redacted")], md1) == []  # more protected: nothing to say
    assert TextLessProtected.findings([entry(1, "redacted", knob=3)], entry(2, "redacted", knob=2)) != []
    assert TextLessProtected.findings([entry(1, "redacted", knob=2)], entry(2, "redacted", knob=3)) == []
    glm = entry(1, "in clear", method="glm", fields="synthesized")
    assert TextBesideFieldSynthesis.findings([glm], entry(2, "in clear"))  # text in clear after a field synthesis
    assert TextBesideFieldSynthesis.findings([entry(1, "in clear")], glm)  # and the reverse order
    assert not TextBesideFieldSynthesis.findings([entry(1, "redacted")], md1)
    glm2 = entry(3, "in clear", method="glm", fields="synthesized", knob=2.0)
    assert len(TextBesideFieldSynthesis.findings([glm, entry(2, "in clear")], glm2)) == 1  # one finding, both named
    assert (
        "ledger release 1, ledger release 2 of the same records"
        in TextBesideFieldSynthesis.findings([glm, entry(2, "in clear")], glm2)[0]
    )
    assert ledger_findings([], md1) == []


def test_the_records_digest_is_the_records_whatever_their_order():
    frame = pd.DataFrame({"text": ["a b", "c d", "e f"], "n": [1, 2, 3]})
    assert records_digest(frame) == records_digest(frame.iloc[[2, 0, 1]])
    assert records_digest(frame) != records_digest(frame.iloc[:2])
    assert records_digest(frame) != records_digest(frame.assign(n=[1, 2, 4]))


def test_averaging_measures_hand_computed_distances():
    truth = pd.Series([1.0, 2.0, 3.0, 4.0])  # standard deviation sqrt(1.25)
    up, down = truth + [1, -1, 1, -1], truth + [-1, 1, -1, 1]
    one = averaging("age", "numeric", truth, [up])
    assert one.single == pytest.approx(1 / 1.25**0.5) and one.average == pytest.approx(one.single)
    two = averaging("age", "numeric", truth, [up, down])
    assert two.single == pytest.approx(1 / 1.25**0.5) and two.average == pytest.approx(0.0)  # the noise cancels
    cats = pd.Series(["a", "b", "a", "b"])
    draws = [pd.Series(["a", "a", "b", "b"]), pd.Series(["a", "b", "b", "a"]), pd.Series(["a", "b", "a", "b"])]
    three = averaging("mood", "categorical", cats, draws)
    assert three.single == pytest.approx((0.5 + 0.5 + 0.0) / 3)  # each release's share of records missed
    assert three.average == pytest.approx(0.25)  # the majority is a, b, b, b: wrong for the third record only
    finding = SyntheticAveraging.findings([], replace(entry(3, "in clear"), averaging=(two,)))
    assert "synthesized 2 times" in finding[0] and "100% closer" in finding[0]
    near = Averaging("age", "numeric", 2, 1.0, AVERAGING_RATIO + 0.01)
    assert SyntheticAveraging.findings([], replace(entry(3, "in clear"), averaging=(near,))) == []
    with pytest.raises(ValueError, match="other records"):
        averaging("age", "numeric", truth, [truth.iloc[:2]])


def test_every_method_declares_a_treatment_and_checks_register_once():
    assert all(method_treatment(m) in TREATMENTS for m in METHODS)
    assert [method_treatment(m) for m in ("redact", "swap", "kanon", "md", "glm", "count-bayes")] == [
        "redacted",
        "redacted",
        "generalised",
        "synthesized",
        "synthesized",
        "synthesized",
    ]
    with pytest.raises(DataError, match="'nope' does to the columns it protects: it is not registered"):
        method_treatment("nope")
    assert len({c.id for c in LEDGER_CHECKS}) == len(LEDGER_CHECKS)
    with pytest.raises(TypeError, match="registered already"):
        register(EpsilonComposition)


def test_a_registered_ledger_check_is_run(monkeypatch):
    import engine.ledger.checks as checks

    class Always(LedgerCheck):
        id = "always"

        @classmethod
        def findings(cls, earlier, new):
            return [f"{len(earlier)} earlier"]

    monkeypatch.setattr(checks, "LEDGER_CHECKS", checks.LEDGER_CHECKS)
    register(Always)
    assert ledger_findings([entry(1, "redacted")], entry(2, "redacted")) == ["1 earlier"]


def test_the_averaging_reads_the_earlier_bundles_still_in_place(tmp_path):
    """The export step's averaging: the synthetic amounts of the earlier bundle (read back from its Parquet file,
    its manifest's checksum checked) averaged with this release's; a bundle moved or changed is left out."""
    import hashlib

    from engine.data.dataset import Dataset
    from engine.data.schema import FieldSpec, Schema
    from engine.export.ledgered import draft
    from engine.ledger.store import Ledger
    from engine.protect.base import Release

    truth = [1.0, 2.0, 3.0, 4.0]
    frame = pd.DataFrame({"text": ["a", "b", "c", "d"], "amount": truth})
    dataset = Dataset("amounts", frame, Schema(text="text", fields=(FieldSpec("amount", "continuous"),)))
    step = Step("glm", {}, "lambda", 1.0, "higher", None, {"text": "in clear", "amount": "synthesized"})
    folder = tmp_path / "earlier"
    folder.mkdir()
    pd.DataFrame({"text": ["a", "b", "c", "d"], "amount": [2.0, 1.0, 4.0, 3.0]}).to_parquet(folder / "release.parquet")
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    sha = hashlib.sha256(b"{}").hexdigest()
    base = Entry(dataset.fingerprint, "amounts", "text", 4, records_digest(frame), (step,), 1, 0, 1)
    earlier = base.written(1, "2026-01-01T00:00:00Z", "earlier", str(folder), sha)
    ledger = Ledger(tmp_path / "ledger.json", (replace(earlier, number=1),))
    now = Release(frame.assign(amount=[0.0, 3.0, 2.0, 5.0]), "glm", 1.0, ("amount",))
    gate = draft(ledger, dataset, now, step, 2, 0, 1)
    (a,) = gate.entry.averaging
    assert (a.column, a.kind, a.releases) == ("amount", "numeric", 2)
    assert a.single == pytest.approx(1 / 1.25**0.5) and a.average == pytest.approx(0.0)  # each misses by 1
    assert any("averaging the releases brings a recipient 100% closer" in f for f in gate.findings)
    (folder / "manifest.json").write_text('{"changed": 1}', encoding="utf-8")  # not the bundle recorded
    (a,) = draft(ledger, dataset, now, step, 2, 0, 1).entry.averaging
    assert a.releases == 1


def test_a_plan_is_recorded_by_what_each_step_does_to_its_columns(capsys, tiny_files, tmp_path):
    """A `redact+cart` release redacts the text and synthesizes the fields: the ledger reads each column by the
    step that changes its kind; a redaction that leaves the text unchanged (level 0, the guard off) is the text
    in clear, and exported after the plan it is flagged beside the plan's field synthesis."""
    assert method_treatment("redact+glm", text=True) == "redacted"
    assert method_treatment("redact+glm", text=False) == "synthesized"
    assert method_treatment("glm+kanon", text=True) == "generalised"
    code, _, err = release(capsys, tiny_files, tmp_path, "plan", "redact+cart", "level=2", "--knob", "alpha=0.01")
    assert code == 0, err
    first = read_ledger(tmp_path / "ledger.json").entries[0]
    assert first.steps[0].method == "redact+cart"
    assert first.columns["text"] == "redacted" and first.columns["mood"] == "synthesized"
    everything = "URL,EMAIL,PHONE,HANDLE,CREDIT_CARD,IBAN,US_SSN,IP_ADDRESS,NAME"
    code, _, err = release(capsys, tiny_files, tmp_path, "clear", "redact", 0, "--guard-off", everything)
    assert code == 2 and not (tmp_path / "clear").exists()
    assert "the text is released in clear here but was released redacted in ledger release 1" in err
    assert "this release carries the text in clear, and ledger release 1 of the same records synthesized" in err
