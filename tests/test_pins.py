"""Pins, sessions, diffs and decisions: `engine.candidates`, `engine.project`, `engine.record.decision` and the
CLI's pin / session / diff / export commands; the reviewer PDF rendered to images."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from engine.candidates import Candidate, diff_releases, measure_candidate, metrics_table, release_of
from engine.cli import main
from engine.errors import ConfigError, DataError
from engine.project import Project, differences, session_path
from engine.record.decision import Decision
from engine.report.pdf import fixed_dates, stable_node_ids
from tests.conftest import make_tiny_dataset


def _pin(capsys, tiny_files, session, name, *extra):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    code = main(["pin", "--session", str(session), "--name", name, *data, *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.fixture
def pinned(capsys, tiny_files, tmp_path):
    """A session of three pins on the tiny data: two redaction levels and the ε-DP text synthesizer."""
    session = tmp_path / "work"
    _pin(capsys, tiny_files, session, "redact 2", "--method", "redact", "--no-use-ner", "--knob", "2")
    _pin(capsys, tiny_files, session, "redact 4", "--method", "redact", "--no-use-ner", "--knob", "4")
    _pin(capsys, tiny_files, session, "md", "--method", "md", "--knob", "1", "--intruder", "posts")
    return session_path(session)


def test_pins_keep_their_settings_and_numbers(pinned):
    project = Project.load(pinned)
    assert [p.candidate.name for p in project.pins] == ["redact 2", "redact 4", "md"]
    md = project.get("md")
    assert md.candidate.options["intruder"] == "posts" and md.candidate.method == "md"
    assert set(md.metrics) >= {"release_identification_probability", "unigram_cosine"}
    assert [c.name for c in project.history] == ["redact 2", "redact 4", "md"]
    table = project.table()
    assert list(table["pin"]) == ["redact 2", "redact 4", "md"]
    assert "Whole-release identification probability" in table.columns
    with pytest.raises(ConfigError, match="no pinned candidate is called 'nope'; the pins: redact 2, redact 4, md"):
        project.get("nope")


def test_a_session_reopened_in_a_fresh_process_reproduces_every_number(pinned):
    run = subprocess.run(
        [sys.executable, "-m", "engine.cli", "session", str(pinned), "--check"],
        capture_output=True,
        text=True,
        cwd=pinned.parent,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "every pin's numbers are reproduced" in run.stdout
    assert "redact 4" in run.stdout and "md" in run.stdout


def test_a_changed_number_is_reported(pinned, capsys):
    d = json.loads(pinned.read_text())
    d["pins"][0]["metrics"]["unigram_cosine"]["value"] += 0.01
    pinned.write_text(json.dumps(d))
    assert main(["session", str(pinned), "--check"]) == 1
    assert "redact 2: unigram_cosine value" in capsys.readouterr().out


def test_the_diff_counts_what_differs(pinned, capsys, tmp_path):
    out = tmp_path / "diff.csv"
    assert main(["diff", "--session", str(pinned), "redact 2", "md", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "24 of 24 records differ between 'redact 2' and 'md'" in printed
    cells = out.read_text().splitlines()
    assert cells[0] == "record,column,redact 2,md" and len(cells) == 25


def test_diff_of_two_releases_by_hand():
    d = make_tiny_dataset()
    c = Candidate("x", "redact", 0.0, params={"use_ner": False})
    a = release_of(c.protector().fit(d), c)
    b_frame = a.data.copy()
    b_frame.loc[[1, 5], "text"] = "changed"
    b_frame.loc[5, "mood"] = "other"
    b = type(a)(b_frame, "redact", 0.0, ("text",))
    diff = diff_releases(a, b, "text", names=("a", "b"))
    assert diff.differing_records == 2
    counts = diff.counts.set_index("column")["records differing"].to_dict()
    assert counts["text"] == 2 and counts["mood"] == 1 and counts["airline"] == 0
    assert list(diff.records["record"]) == [2, 6, 6]  # rows 1 and 5 counted from 0: numbered from 1 as the samples
    with pytest.raises(ConfigError, match="same data"):
        diff_releases(a, type(a)(b_frame.head(3), "redact", 0.0, ("text",)), "text")


def test_the_diff_csv_is_formula_escaped():
    d = make_tiny_dataset()
    c = Candidate("x", "redact", 0.0, params={"use_ner": False})
    a = release_of(c.protector().fit(d), c)
    b_frame = a.data.copy()
    b_frame.loc[2, "text"] = '=HYPERLINK("http://evil.example","click")'
    b_frame.loc[3, "text"] = "-3.5"  # a number, not a formula
    diff = diff_releases(a, type(a)(b_frame, "redact", 0.0, ("text",)), "text", names=("a", "@b"))
    rows = list(csv.reader(io.StringIO(diff.csv().decode("utf-8"))))
    assert rows[0] == ["record", "column", "a", "'@b"]
    assert rows[1][:2] == ["3", "text"] and rows[1][3] == "'" + b_frame.loc[2, "text"]
    assert rows[2][:2] == ["4", "text"] and rows[2][3] == "-3.5"


def test_measuring_a_candidate_snaps_the_knob_and_is_deterministic():
    d = make_tiny_dataset()
    c = Candidate("r", "redact", 3, params={"use_ner": False})
    one, two = measure_candidate(d, c, use_cache=False), measure_candidate(d, c, use_cache=False)
    assert differences(metrics_table(one.metrics), metrics_table(two.metrics)) == []
    with pytest.raises(ConfigError, match="level"):
        measure_candidate(d, Candidate("r", "redact", 9, params={"use_ner": False}))


def test_bad_candidates_and_session_files_are_named(tmp_path):
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        Candidate("x", "nope", 1)
    with pytest.raises(ConfigError, match="name must be 1 to 60 characters"):
        Candidate(" ", "redact", 1)
    bad = tmp_path / "bad.textsdc.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match="is not a session file"):
        Project.load(bad)
    bad.write_text(json.dumps([1, 2]))
    with pytest.raises(DataError, match="not a textsdc session file"):
        Project.load(bad)
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(DataError, match="not a textsdc session file"):
        Project.load(bad)
    with pytest.raises(ConfigError, match="no session file"):
        Project.load(tmp_path / "missing")


def test_a_session_refuses_other_data(pinned, tmp_path):
    d = json.loads(pinned.read_text())
    d["fingerprint"] = "0" * 64
    pinned.write_text(json.dumps(d))
    assert main(["session", str(pinned)]) == 2


def test_a_decision_needs_who_and_why():
    with pytest.raises(ConfigError, match="who decided"):
        Decision(by=" ", why="because", chosen="a")
    with pytest.raises(ConfigError, match="why this release"):
        Decision(by="me", why="", chosen="a")
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        Decision(by="me", why="because", chosen="a", date="26/11/2026")
    assert Decision.from_dict(Decision("me", "because", "a", date="2026-11-26").to_dict()).date == "2026-11-26"


def test_export_carries_the_decision_and_verify_replays_it(pinned, capsys, tmp_path):
    out = tmp_path / "bundle"
    why = "the lowest whole-release risk among the pins that keep the text readable"
    code = main(
        ["export", "--session", str(pinned), "--pin", "redact 4", "--by", "A. Steward", "--why", why]
        + ["--date", "2026-11-26", "--out", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    decision = manifest["decision"]
    assert decision["by"] == "A. Steward" and decision["why"] == why and decision["date"] == "2026-11-26"
    assert [a["name"] for a in decision["alternatives"]] == ["redact 2", "md"]
    md = next(a for a in decision["alternatives"] if a["name"] == "md")
    assert md["replay"].startswith("textsdc release") and "--intruder posts" in md["replay"]
    assert "release_identification_probability" in md["metrics"]
    assert manifest["measure_settings"]["intruder"] == "posts_and_fields"
    report = (out / "report.html").read_text()
    assert "Decided by" in report and "A. Steward" in report and "Candidates weighed" in report
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "the replay makes the same files" in capsys.readouterr().out


def test_export_refuses_a_pin_whose_numbers_moved(pinned, tmp_path):
    d = json.loads(pinned.read_text())
    d["pins"][1]["metrics"]["unigram_cosine"]["value"] = 0.5
    pinned.write_text(json.dumps(d))
    args = ["export", "--session", str(pinned), "--pin", "redact 4", "--by", "me", "--why", "x"]
    assert main([*args, "--out", str(tmp_path / "b")]) == 2
    assert not (tmp_path / "b").exists()


def test_pdf_structure_ids_are_ranked_in_order_without_moving_offsets():
    """Chromium numbers the tagged structure by the page's elements; one more element made before a table shifted
    every later id, and the same report printed other bytes."""
    one = b"/ID (node00000018)>> /Headers [(node00000018)] /Names [(node00000018) 36 0 R (node00000895) 37 0 R]"
    other = one.replace(b"00000018", b"00000019").replace(b"00000895", b"00000896")
    assert one != other and stable_node_ids(one) == stable_node_ids(other)
    ranked = stable_node_ids(one)
    assert len(ranked) == len(one) and ranked.count(b"(node00000001)") == 3 and b"(node00000002) 37 0 R" in ranked


def test_pdf_timestamps_are_fixed_without_moving_offsets():
    pdf = b"<< /CreationDate (D:20261126053710+00'00')\n/ModDate (D:20261126053711+00'00') >> rest"
    fixed = fixed_dates(pdf)
    assert len(fixed) == len(pdf) and b"20261126" not in fixed and fixed.endswith(b">> rest")


def test_the_reviewer_pdf_prints_every_page_with_its_figures(pinned, capsys, tmp_path, with_pdf):
    pdfium = pytest.importorskip("pypdfium2")
    out = tmp_path / "bundle"
    args = ["export", "--session", str(pinned), "--pin", "redact 2", "--by", "me", "--why", "readable"]
    assert main([*args, "--with-frontier", "--out", str(out)]) == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "report.pdf" in manifest["files"]
    pdf = pdfium.PdfDocument(str(out / "report.pdf"))
    assert len(pdf) >= 2
    text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    assert "Decided by" in text and "Risk and utility across the knob" in text
    # The figures are drawn: some page has the frontier's blue markers and lines (Plotly's default colour).
    blue = 0
    for i in range(len(pdf)):
        image = np.asarray(pdf[i].render(scale=1).to_pil().convert("RGB")).astype(int)
        r, g, b = image[..., 0], image[..., 1], image[..., 2]
        blue += int(((b > 150) & (r < 80) & (g > 90) & (g < 150)).sum())
    assert blue > 500
    # The same report prints to the same bytes.
    copy = tmp_path / "again.pdf"
    from engine.report.pdf import print_pdf

    print_pdf(out / "report.html", copy, with_pdf)
    assert copy.read_bytes() == (out / "report.pdf").read_bytes()
    shutil.rmtree(out)


def test_the_attack_section_shows_the_identified_and_the_closest_misses():
    from engine.report.samples import attack_targets

    rows = [
        # target, candidate, score, is_true, credit: "ann" identified; "bob" missed by 0.1; "cat" missed by 0.6;
        # "dan" no evidence at all; "abe" missed by 0.5 (alphabetically first, not the closest)
        ("ann", "ann", 0.9, True, 1.0),
        ("bob", "zed", 0.5, False, 0.0),
        ("bob", "bob", 0.4, True, 0.0),
        ("cat", "yan", 0.8, False, 0.0),
        ("cat", "cat", 0.2, True, 0.0),
        ("dan", "dan", 0.0, True, 0.0),
        ("abe", "xia", 0.5, False, 0.0),
        ("abe", "abe", 0.0, True, 0.0),
    ]
    import pandas as pd

    detail = pd.DataFrame(rows, columns=["target", "candidate", "score", "is_true", "credit"])
    assert attack_targets(detail, 4) == ["ann", "bob", "abe", "cat"]
    assert attack_targets(detail, 6)[-1] == "dan"


def test_a_session_keeps_its_schema_and_reopens_with_only_the_data_file_beside_it(pinned, capsys, tmp_path):
    saved = Project.load(pinned)
    assert saved.schema_toml is not None and "[fields.mood]" in saved.schema_toml
    # The session moves to another folder with its data file only: the schema it was read with travels inside.
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    for name in ("data.csv", "external.csv"):
        shutil.copy(pinned.parent / name, moved / name)
    project = Project.from_dict(json.loads(pinned.read_text()))
    project.data, project.schema = "data.csv", "schema.toml"
    target = project.save(moved / "work")
    assert main(["session", str(target), "--check"]) == 0, capsys.readouterr().err
    assert "reproduced" in capsys.readouterr().out
    # A different file under the session's name is refused, naming the fingerprints.
    header, first, *rest = (moved / "data.csv").read_text().splitlines(keepends=True)
    (moved / "data.csv").write_text("".join([header, "x" + first, *rest]))
    with pytest.raises(DataError, match="not the data this session was made on"):
        Project.load(target).load_data()
