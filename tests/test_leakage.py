"""The leakage scan (tests/leakage.py) finds what it must, and bundles of every method on the demos are clean:
no original of a replaced span, no identifier column in clear (issue 10). Every other exporting test is
scanned too, by the autouse fixture in conftest.py."""

from __future__ import annotations

import csv
import html
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from engine.cli import main
from engine.data.dataset import Dataset
from engine.data.load import load_dataset
from tests.conftest import tiny_frames
from tests.leakage import FORMULA_START, formula_cells, scan_bundle
from tests.test_export import do_export, make_dataset, make_release


def test_the_scan_finds_an_author_in_clear_an_original_and_a_stray_file(tmp_path):
    out = tmp_path / "B"
    do_export(out, tmp_path / "audit.sqlite")
    d, changes = make_dataset(), make_release().changes
    assert scan_bundle(out, d, changes) == []
    clean = (out / "report.html").read_text()
    (out / "report.html").write_text(clean.replace("</body>", "<p>Ann Smith</p></body>"))
    assert any("'Ann Smith'" in f for f in scan_bundle(out, d, changes))
    (out / "report.html").write_text(clean)
    named = Dataset(d.name, d.frame.assign(user=["ann_w", "bob_k", "ann_w", "cy_z"]), d.schema, source="inline")
    released = pd.read_csv(out / "release.csv")
    released.assign(user=named.frame["user"]).to_csv(out / "release.csv", index=False)
    assert any("identifier column 'user' in clear" in f for f in scan_bundle(out, named, changes))
    shutil.copy(tmp_path / "B.internal-review.html", out / "internal.html")
    with pytest.raises(AssertionError, match="unexpected file"):
        scan_bundle(out, d, changes)


@pytest.mark.slow
@pytest.mark.parametrize(
    "data, method, knob, extra",
    [
        ("airline-tweets", "redact", "4", []),
        ("airline-tweets", "md", "10000", ["--vocabulary", "data"]),
        ("airline-tweets", "rnn", "0.1", ["--epochs", "1", "--hidden", "8", "--min-count", "1"]),
    ],
)
def test_demo_bundles_leak_nothing(tmp_path, capsys, data, method, knob, extra):
    """`textsdc release` on the demo where the issue found the leaks (82 screen names in clear, 17 replaced
    spans readable in their own record). The conftest fixture scans the bundle, and here the numbers: the
    author column is pseudonymized, no replaced original is readable; and the text synthesizer `md` at its
    least private ε with the data's vocabulary, and `rnn` at its least private τ with every word a symbol
    (one short epoch: the bundle's layout, not the generator's quality, is under test). Field synthesis
    methods' bundles are scanned in their CLI and dashboard tests on small data (their demo fits take
    minutes)."""
    out = tmp_path / method
    argv = ["release", "--data", data, "--method", method, "--out", str(out), *extra]
    if knob is not None:
        argv += ["--knob", knob]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    dataset = load_dataset(data)
    manifest = json.loads((out / "manifest.json").read_text())
    author = dataset.schema.author
    if author is not None:
        released = pd.read_csv(out / "release.csv", dtype=str)
        assert manifest["columns"][author].startswith("pseudonymized")
        assert not set(released[author]) & set(dataset.frame[author].astype(str))
    assert scan_bundle(out, dataset) == []


FORMULA_PREFIXES = ('=HYPERLINK("http://evil.example","click") ', "+1+1 ", "-2+3 ", "@ 7pm ", "\t", "\r")


@pytest.fixture
def formula_files(tmp_path) -> Path:
    """The tiny dataset crafted against a reviewer's spreadsheet: its texts begin with each formula character in
    turn, its key and sensitive fields' values begin with one too, and a number field holds negative numbers;
    returns the schema's path."""
    frame, ext = tiny_frames()
    frame["text"] = [FORMULA_PREFIXES[k % len(FORMULA_PREFIXES)] + t for k, t in enumerate(frame["text"])]
    frame["airline"] = frame["airline"].map({"Delta": "+Delta", "United": "\tUnited"})
    frame["mood"] = frame["mood"].map({"good": "=1+good", "bad": "@-bad", "meh": "-meh"})  # "@bad" is a handle
    frame["temp"] = [(-1) ** k * (k + 0.5) for k in range(len(frame))]
    frame.to_csv(tmp_path / "data.csv", index=False, quoting=csv.QUOTE_NONNUMERIC)  # a lone \r stays in its cell
    ext.to_csv(tmp_path / "external.csv", index=False)
    (tmp_path / "schema.toml").write_text(
        'text = "text"\nauthor = "user"\n\n[fields.airline]\nkind = "categorical"\nrole = "key"\n\n'
        '[fields.mood]\nkind = "categorical"\nrole = "sensitive"\n\n[fields.temp]\nkind = "continuous"\n'
        'role = "other"\n\n[external]\nfile = "external.csv"\n'
    )
    return tmp_path / "schema.toml"


@pytest.mark.parametrize("method", [["redact", "--no-use-ner", "--knob", "1"], ["cart", "--fields", "mood"]])
def test_no_cell_of_a_crafted_release_runs_as_a_formula_when_a_spreadsheet_opens_it(
    formula_files, tmp_path, capsys, method
):
    """`textsdc release` of a file crafted against a reviewer's spreadsheet (issue 49): read as a spreadsheet reads
    them, no cell of the bundle's CSV files begins with a formula character; each text cell that would is the
    released value with an apostrophe in front, a negative number is written as it is, the Parquet file holds
    the released values, and the manifest and the report give the count."""
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(tmp_path / "data.csv"), "--schema", str(formula_files), "--method", *method]
    assert main([*argv, "--out", str(out), "--audit-log", str(tmp_path / "audit.sqlite")]) == 0, capsys.readouterr()
    csvs = sorted(out.glob("*.csv"))
    assert "release.csv" in {p.name for p in csvs}
    for path in csvs:
        assert formula_cells(path) == [], path.name
    released = pq.read_table(out / "release.parquet").to_pandas()
    with (out / "release.csv").open(encoding="utf-8", newline="") as f:
        header, *rows = list(csv.reader(f))
    assert header == list(released.columns) and len(rows) == len(released) == 24
    assert all(text.startswith(FORMULA_START) for text in released["text"])  # the Parquet file keeps them
    escaped = 0
    for row, values in zip(rows, released.itertuples(index=False)):
        for cell, value in zip(row, values):
            if isinstance(value, str) and value.startswith(FORMULA_START):
                assert cell == "'" + value
                escaped += 1
            elif isinstance(value, str):
                assert cell == value
    assert escaped >= 24 + 24  # every text and every mood
    temps = [row[header.index("temp")] for row in rows]
    assert temps == [f"{t:g}" for t in released["temp"]] and temps[1] == "-1.5"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["csv_escaped"]["release.csv"] == escaped
    assert set(manifest["csv_escaped"]) == {p.name for p in csvs}
    report = html.unescape((out / "report.html").read_text(encoding="utf-8"))
    assert f"written with an apostrophe (') in front, which a spreadsheet shows as text: {escaped} cells in" in report
