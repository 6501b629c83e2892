"""Issue 10: the inputs that used to end in a traceback or in a silently unprotected release now give one line
naming what is wrong and what is accepted (exit 2 from the CLI), or are handled."""

from __future__ import annotations

import errno
import json
import re
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from dashboard import display
from engine.cli import main
from engine.data import infer
from engine.data.load import load_dataset
from engine.data.readers import read_table
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError, DataError, one_line
from engine.text import entities


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err.split("\r")[-1]  # what a terminal shows once a progress bar is cleared
    return code, err


def one_line_error(code: int, err: str) -> bool:
    return code == 2 and err.startswith("textsdc: error: ") and err.count("\n") == 1


# ---------------------------------------------------------------------------------------------------------------
# Readers


def test_a_binary_file_named_csv_is_refused_as_not_text(tmp_path, capsys):
    path = tmp_path / "data.csv"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" * 64)  # a program renamed
    code, err = run(capsys, "sweep", "--data", str(path), "--method", "redact", "--out", str(tmp_path / "x"))
    assert one_line_error(code, err) and "is not a text file" in err and "latin-1" not in err


def test_utf16_with_its_byte_order_mark_is_read_without_naming_the_encoding(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes('text,user\n"café crème, so good",a\n'.encode("utf-16"))  # Excel's "Unicode text"
    assert read_table(path)["text"].tolist() == ["café crème, so good"]


def test_an_upload_error_names_the_file_uploaded_and_the_pages_encoding_box():
    """The dashboard reads an upload from a private temporary copy: its errors name the file as uploaded, and
    point to the Text encoding box rather than to a command-line flag."""
    from dashboard import loading

    with pytest.raises(DataError) as err:
        loading.upload_table("ventes été.csv", "text,user\ncafé crème brûlée,a\n".encode("latin-1"), None)
    message = str(err.value)
    assert message.startswith("'ventes été.csv' is not valid UTF-8 text") and "Text encoding box" in message
    assert "--encoding" not in message and "load_dataset" not in message and "uploads" not in message
    assert loading.upload_table("ventes été.csv", "text,user\ncafé,a\n".encode("latin-1"), "latin-1").frame.shape == (
        1,
        2,
    )


def test_utf16_without_a_byte_order_mark_names_the_encodings_that_read_it(tmp_path, capsys):
    path = tmp_path / "u16.csv"
    path.write_bytes("text,user\nhello there friend,a\n".encode("utf-16-le"))
    code, err = run(capsys, "sweep", "--data", str(path), "--encoding", "utf-16", "--method", "redact", "--out", "x")
    assert one_line_error(code, err) and "does not start with BOM" in err and "utf-16-le" in err
    assert read_table(path, encoding="utf-16-le")["text"].tolist() == ["hello there friend"]


def test_a_csv_field_longer_than_pythons_csv_limit_is_read_and_reported(tmp_path):
    long = "x" * 140_000
    ok = tmp_path / "ok.csv"
    ok.write_text(f"text,user\n{long} y,a\n")
    assert read_table(ok)["text"].str.len().tolist() == [140_002]
    # A malformed row after a long field: the message that locates it reads past the csv module's limit.
    bad = tmp_path / "bad.csv"
    bad.write_text(f"text,user\n{long},a\nb,c,d\n")
    with pytest.raises(DataError, match="row 2 .* has 3 fields but the header has 2"):
        read_table(bad)
    header = tmp_path / "header.csv"
    header.write_text(f'"{long}",user\nsome words here,a\n')
    assert read_table(header).columns.tolist() == [long, "user"]


def test_error_messages_stay_on_one_line_whatever_the_data_holds(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('"a\nb",c\n1,2\n')
    with pytest.raises(DataError) as caught:
        load_dataset(path)
    assert "\n" not in str(caught.value) and "a\\nb" in str(caught.value)
    assert one_line("x\r\ny\tz\x00") == "x\\r\\ny\\tz\\x00"


# ---------------------------------------------------------------------------------------------------------------
# Schema TOML


@pytest.mark.parametrize(
    "toml, message",
    [
        ('author = "user"\n[external]\nseed = -1\n', "[external] seed must be a whole number from 0 to 2^63 − 1"),
        ('author = "user"\n[external]\nseed = "a"\n', "[external] seed must be a whole number, got 'a'"),
        ('author = "user"\n[external]\nmax_authors = true\n', "[external] max_authors must be a whole number"),
        ("[external]\nfile = 42\n", "[external] file must be a file name in quotes, got 42"),
        ("author = true\n", "'author' must be a column name in quotes, got True"),
        ('author = "text"\n', "the author column cannot be the text column 'text'"),
        ('document = "text"\n', "the document column cannot be the text column 'text'"),
        ('author = "user"\ndocument = "user"\n', "'user' is named both as the author and the document column"),
        ("[fields.mood]\nkind = 3\n", "[fields.mood] kind must be a word in quotes, got 3"),
        ('author = "user"\n[release]\nauthor = 1\n', "[release] author must be one of pseudonymize, drop, keep"),
    ],
)
def test_schema_values_of_the_wrong_type_or_role_are_one_line(tiny_files, capsys, toml, message):
    schema = tiny_files.parent / "bad.toml"
    schema.write_text('text = "text"\n' + toml)
    data = str(tiny_files.parent / "data.csv")
    code, err = run(capsys, "sweep", "--data", data, "--schema", str(schema), "--method", "redact", "--out", "o.json")
    assert one_line_error(code, err), err
    assert message in err


def test_a_schema_with_line_breaks_and_quotes_in_names_reads_back_as_written():
    schema = Schema(text='the "text"', author="by\nwhom", fields=(FieldSpec("a\tb\\c", "count", "key"),))
    written = schema.to_toml()
    assert Schema.from_dict(tomllib.loads(written)) == schema


# ---------------------------------------------------------------------------------------------------------------
# Which column is the text


def test_a_path_column_is_never_taken_as_the_text(tmp_path):
    frame = pd.DataFrame(
        {
            "call_id": ["c1", "c2", "c3"],
            "source_path": ["MAEC_Dataset/20170201_ADP/text.txt", "MAEC_Dataset/x/text.txt", "d/y/text.txt"],
            "sentences": [["Thank you", "Good morning"], ["Hello"], ["Hi all"]],
        }
    )
    with pytest.raises(DataError, match=r"no column reads like free text .* give a schema .* source_path"):
        infer.infer_schema(frame)


def test_an_empty_text_column_asks_for_a_schema_instead_of_taking_the_author(tmp_path):
    frame = pd.DataFrame({"text": [None, None, None], "name": ["@a", "@b", "@a"], "stars": ["1", "2", "3"]})
    with pytest.raises(DataError, match="the column 'text' is named like the text but it is empty; give a schema"):
        infer.infer_schema(frame)


def test_names_and_labels_are_not_prose_but_titles_are():
    frame = pd.DataFrame(
        {
            "host_name": ["John Smith", "Ana Li", "Bo Chen", "Mia Park"],
            "room_type": ["Entire home/apt", "Private room", "Entire home/apt", "Shared room"],
            "name": ["Clean quiet apt by the park", "Sunny room in Harlem", "Loft near the river", "Cozy studio"],
            "url": ["https://a.b/1 x y", "https://a.b/2 x y", "https://a.b/3 x y", "https://a.b/4 x y"],
        }
    )
    assert infer.infer_schema(frame).text == "name"


# ---------------------------------------------------------------------------------------------------------------
# Texts longer than spaCy accepts at once


def test_text_pieces_cover_the_text_and_cut_at_breaks():
    text = "First sentence here. " * 30 + "\n\n" + "Second part goes on. " * 30
    pieces = entities.text_pieces(text, limit=200)
    assert "".join(p for _, p in pieces) == text
    assert all(len(p) <= 200 for _, p in pieces)
    assert [o for o, _ in pieces] == [sum(len(p) for _, p in pieces[:i]) for i in range(len(pieces))]
    assert all(p.endswith((". ", "\n")) for _, p in pieces[:-1])
    assert entities.text_pieces("short") == [(0, "short")]
    unbroken = "x" * 450
    assert [len(p) for _, p in entities.text_pieces(unbroken, limit=200)] == [200, 200, 50]


@pytest.mark.slow
def test_a_text_longer_than_the_models_limit_is_processed_in_pieces(monkeypatch):
    nlp = entities.load_spacy()
    sentence = "Barack Obama met Angela Merkel in Berlin on Monday. "
    text = sentence * 40  # 2,080 characters
    whole = next(entities.entity_spans([text], 1))
    monkeypatch.setattr(nlp, "max_length", 500)  # spaCy now refuses the whole text (E088) ...
    with pytest.raises(ValueError, match="E088"):
        nlp(text)
    monkeypatch.setattr(entities, "MAX_PIECE_CHARS", 400)  # ... and the pieces carry it through
    pieced = list(entities.entity_spans(["short one", text, ""], 3))
    assert len(pieced) == 3 and pieced[2] == []
    assert pieced[1] == whole
    assert {text[s:e] for s, e, _ in pieced[1]} >= {"Barack Obama", "Angela Merkel", "Berlin"}


# ---------------------------------------------------------------------------------------------------------------
# The machine: a cache that cannot be written, a full disk


def test_a_cache_folder_that_cannot_be_created_is_one_line(tiny_files, tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(blocker / "cache"))
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    code, err = run(capsys, "sweep", *data, "--method", "redact", "--grid", "0,1", "--out", str(tmp_path / "r.json"))
    assert one_line_error(code, err) and "cache folder" in err and "TEXTSDC_CACHE_DIR" in err


def test_a_read_only_cache_folder_is_one_line(tiny_files, tmp_path, capsys, monkeypatch):
    import engine.paths

    cache = tmp_path / "cache"
    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(cache))
    real = engine.paths.os.access  # as root every folder is writable: say this one is not, as for a user
    monkeypatch.setattr(engine.paths.os, "access", lambda p, mode: False if p == cache else real(p, mode))
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    code, err = run(capsys, "sweep", *data, "--method", "redact", "--grid", "0,1", "--out", str(tmp_path / "r.json"))
    assert one_line_error(code, err) and "cannot be written (permission denied)" in err


def test_a_full_disk_during_a_release_is_one_line_and_keeps_the_old_bundle(tiny_files, tmp_path, capsys, monkeypatch):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--method", "redact"]
    out = tmp_path / "B"
    code, err = run(capsys, "release", *data, "--knob", "4", "--out", str(out))
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    import engine.export.bundle

    def full(_table, path, *_a, **_k):
        Path(path).write_bytes(b"PAR1")  # the disk fills part-way through the file
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(engine.export.bundle.pq, "write_table", full)
    override = ["--ledger-override", "level 0 for a test of a full disk"]  # less protected than level 4
    code, err = run(capsys, "release", *data, "--knob", "0", "--out", str(out), "--replace", *override)
    assert one_line_error(code, err) and "nothing was replaced" in err and "the disk is full" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert json.loads((out / "manifest.json").read_text())["knob"]["value"] == 4.0


def test_the_fit_cache_failing_to_write_does_not_stop_the_work(tiny_dataset, tmp_path, monkeypatch):
    from engine import cache, store
    from engine.protect import get_protector

    def refuse(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setenv("TEXTSDC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(store.joblib, "dump", refuse)
    fitted = cache.fit_cached(get_protector("redact", use_ner=False), tiny_dataset)
    assert fitted.knob.symbol
    assert not list((tmp_path / "c" / "fits").glob("*"))  # nothing half-written left behind


def test_config_errors_from_parallel_workers_survive_pickling():
    import pickle

    err = pickle.loads(pickle.dumps(ConfigError("a\nb")))
    assert isinstance(err, ConfigError) and str(err) == "a\\nb"


def test_batches_for_spacy_are_bounded_in_items_and_characters():
    items = [("a" * n, i) for i, n in enumerate([5, 5, 5, 20, 1, 1, 1, 1])]
    batches = list(entities.bounded_batches(items, max_items=3, max_chars=12))
    assert [[k for _, k in b] for b in batches] == [[0, 1], [2], [3], [4, 5, 6], [7]]
    assert [it for b in batches for it in b] == items  # order kept, nothing lost
    assert list(entities.bounded_batches([], 3, 12)) == []


def test_an_unprotected_export_warns_in_the_cli_and_says_so_in_the_manifest(tiny_files, tmp_path, capsys):
    """Redaction at level 0 with every type of the release guard switched off protects nothing: said so."""
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files), "--method", "redact"]
    off = ["--guard-off", "URL,EMAIL,PHONE,HANDLE,CREDIT_CARD,IBAN,US_SSN,IP_ADDRESS,NAME"]
    code = main(["release", *data, *off, "--knob", "0", "--out", str(tmp_path / "B")])
    err = capsys.readouterr().err
    assert code == 0
    assert "textsdc: warning: " in err and "carry the confidential values unchanged in every record" in err
    assert "the risk equals that of the unprotected data" in err
    manifest = json.loads((tmp_path / "B" / "manifest.json").read_text())
    assert any("unprotected data" in w for w in manifest["warnings"])
    assert "not protected" in (tmp_path / "B" / "report.html").read_text()


@pytest.mark.slow
def test_entities_found_in_two_processes_are_the_ones_found_in_one(monkeypatch):
    """A large corpus goes through spaCy in worker processes, chunk by chunk; the spans must not change."""
    monkeypatch.setattr(entities, "CHUNK_PIECES", 7)  # 40 texts: six chunks over two workers
    texts = [
        f"Barack Obama met Angela Merkel in Berlin on day {i}." if i % 3 else f"@user{i} flying to Paris with Delta"
        for i in range(40)
    ]
    seen: list[tuple[int, int]] = []
    one = list(entities.entity_spans(texts, len(texts), processes=1))
    two = list(entities.entity_spans(texts, len(texts), lambda d, n, w: seen.append((d, n)), processes=2))
    assert two == one and len(two) == 40 and all(two[i] for i in range(1, 40, 3))
    assert seen[-1] == (40, 40) and len(seen) >= 6  # one report per chunk, then the end


# ---------------------------------------------------------------------------------------------------------------
# Issue 49: the dashboard shows an error's text as it is, and reads uploads with the delimiter they are written with

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


@pytest.fixture
def upload_page(monkeypatch):
    """The dashboard's Data page on "Upload a file" (the app reads --data from sys.argv: pytest's own here)."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(sys, "argv", ["app.py"])
    at = AppTest.from_file(str(APP), default_timeout=240)
    at.run()
    at.radio(key="data_source").set_value("Upload a file").run()
    assert not at.exception
    return at


def rendered(markdown: str) -> tuple[str, str]:
    """``markdown`` rendered as CommonMark: the HTML, and the text a reader sees."""
    from html import unescape

    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").render(markdown)
    return html, unescape(re.sub(r"<[^>]+>", "", html)).strip()


def test_markdown_in_a_column_name_is_shown_literally_in_the_dashboards_error(upload_page):
    """A column named like a Markdown link used to become a live link in the error alert that names it."""
    name = "[click](http://evil.example)"
    csv = f"text,{name},{name}\nhello there,a,b\n"
    upload_page.file_uploader(key="data_upload").set_value(("links.csv", csv.encode(), "text/csv")).run()
    assert not upload_page.exception
    (body,) = [e.value for e in upload_page.error]
    html, shown = rendered(body)
    assert shown == (
        f"'links.csv': the column name '{name}' appears more than once in the header; every column needs a unique name."
    )
    assert "<a " not in html and "http://" not in body  # neither a link nor a bare address that GFM would link
    for markup in ("**bold**", "<b>tag</b>", ":red[colour]", "www.evil.example", "&amp;"):
        assert rendered(display.error_text(markup))[1] == display.as_sentence(markup)


def test_an_upload_is_read_with_its_delimiter_and_the_page_says_how_to_choose_another(upload_page):
    at = upload_page
    names = "name;text;mood\n" + "".join(
        f"Person {i};a fine review number {i}, with a comma;{['good', 'bad'][i % 2]}\n" for i in range(12)
    )
    at.file_uploader(key="data_upload").set_value(("semi.csv", names.encode(), "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Values separated by semicolons." in [c.value for c in at.caption]
    assert [s.value for s in at.selectbox if s.label == "Text column"] == ["text"]
    assert [s.value for s in at.selectbox if s.label == "Author column"] == ["(none)"]
    at.selectbox(key="data_delimiter").set_value(",").run()
    (body,) = [e.value for e in at.error]
    shown = rendered(body)[1]
    assert "reads as one column with commas as the delimiter, but its header holds semicolons" in shown
    assert shown.endswith("choose semicolon in the Delimiter box.") and "--delimiter" not in shown
    # Two delimiters read the file equally well: the page names both choices of its box.
    at.selectbox(key="data_delimiter").set_value("").run()
    at.file_uploader(key="data_upload").set_value(("both.csv", b"a;b|c\n1;2|3\n4;5|6\n", "text/csv")).run()
    (body,) = [e.value for e in at.error]
    assert rendered(body)[1].endswith(
        "say which; choose semicolon in the Delimiter box or choose pipe in the Delimiter box."
    )


def test_rows_of_the_wrong_length_in_an_upload_are_named_or_left_out_and_counted(upload_page):
    at = upload_page
    rows = [f"a fine review number {i},u{i % 4},{['good', 'bad'][i % 2]}" for i in range(12)]
    rows[4] += ",surplus"
    csv = "text,user,mood\n" + "\n".join(rows) + "\n"
    at.file_uploader(key="data_upload").set_value(("ragged.csv", csv.encode(), "text/csv")).run()
    (body,) = [e.value for e in at.error]
    shown = rendered(body)[1]
    assert "row 5 (line 6) has 4 fields but the header has 3" in shown
    assert shown.endswith("or choose “leave them out” under Rows of the wrong length to read the file without them.")
    at.radio(key="data_bad_rows").set_value("drop").run()
    assert not at.error and not at.exception
    assert [w.value for w in at.warning] == [
        "1 row left out for another number of fields than the header (row 5, counted from 1 at the first record)."
    ]
