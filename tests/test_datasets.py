"""Loading, validation, schema inference, external records and the demo registry (engine/data/: load,
readers, validate, infer, external, demos).

Every fixture file is written to tmp_path; nothing here reads ../shared/data except the make_demos check, which
skips when that folder is absent.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json
import os
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import engine.data.readers as readers_mod
from engine.data.demos import DEMOS_DIR, DemoInfo, demo_names, is_demo, list_demos
from engine.data.external import split_external
from engine.data.infer import infer_schema, infer_with_reasons, left_out_columns
from engine.data.load import dropped_note, load_dataset, require_records
from engine.data.readers import read_table
from engine.data.schema import ExternalSpec, FieldSpec, Schema
from engine.data.validate import MISSING_CATEGORY, validate
from engine.errors import ConfigError, DataError
from tests.conftest import SHARED_DATA, needs_shared_files

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ["airline-tweets", "nyc-airbnb", "clothing-reviews", "earnings-calls", "twitter-profiles"]

GOOD_CSV = (
    "text,user,airline,stars,price\n"
    "the flight was late again,ann,Delta,3,10.5\n"
    "lost my bag at the gate,bob,United,1,20\n"
    "great crew and a smooth landing,ann,United,5,30.25\n"
    "wifi did not work the whole way,cat,Delta,2,5\n"
)
GOOD_SCHEMA = Schema(
    text="text",
    author="user",
    fields=(
        FieldSpec("airline", "categorical", "key"),
        FieldSpec("stars", "count", "sensitive"),
        FieldSpec("price", "continuous", "other"),
    ),
)


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def good_frame() -> pd.DataFrame:
    return pd.read_csv(io.StringIO(GOOD_CSV))


# ---------------------------------------------------------------------------------------------------------------
# Reading: files, formats, encodings


def test_loads_a_csv_with_its_schema_types_and_column_order(tmp_path):
    frame = good_frame()
    frame.insert(0, "note", ["n1", "n2", "n3", "n4"])  # a column the schema does not use
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    ds = load_dataset(path, GOOD_SCHEMA)
    assert list(ds.frame.columns) == ["text", "user", "airline", "stars", "price"]
    assert isinstance(ds.frame.index, pd.RangeIndex) and ds.n_records == 4
    assert ds.frame["stars"].dtype == np.int64 and ds.frame["price"].dtype == np.float64
    assert all(isinstance(v, str) for col in ("text", "user", "airline") for v in ds.frame[col])
    assert ds.name == "d" and ds.source == str(path.resolve()) and ds.external is None


@pytest.mark.parametrize("fmt", ["tsv", "jsonl", "ndjson", "parquet"])
def test_loads_every_accepted_format(tmp_path, fmt):
    frame = good_frame()
    path = tmp_path / f"d.{fmt}"
    if fmt == "tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif fmt == "parquet":
        frame.to_parquet(path)
    else:
        frame.to_json(path, orient="records", lines=True)
    ds = load_dataset(path, GOOD_SCHEMA)
    assert ds.frame["price"].tolist() == [10.5, 20.0, 30.25, 5.0]
    assert ds.frame["stars"].tolist() == [3, 1, 5, 2]


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match=r"nope\.csv does not exist"):
        load_dataset(tmp_path / "nope.csv")


def test_directory_instead_of_file(tmp_path):
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(DataError, match=r"folder\.csv is a folder, not a data file"):
        load_dataset(tmp_path / "folder.csv")


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path, "locked.csv", GOOD_CSV)
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):  # running as root: permissions do not bind, so simulate them
            monkeypatch.setattr(readers_mod, "_readable", lambda p: False)
        with pytest.raises(DataError, match=r"locked\.csv cannot be read: permission denied"):
            load_dataset(path)
    finally:
        path.chmod(0o644)


def test_empty_file(tmp_path):
    path = write(tmp_path, "empty.csv", b"")
    with pytest.raises(DataError, match=r"empty\.csv is empty \(0 bytes\)"):
        load_dataset(path)


def test_header_only(tmp_path):
    path = write(tmp_path, "header.csv", "text,user\n")
    with pytest.raises(DataError, match=r"header\.csv has a header but no data rows"):
        load_dataset(path)


def test_blank_jsonl(tmp_path):
    path = write(tmp_path, "blank.jsonl", "\n\n")
    with pytest.raises(DataError, match=r"blank\.jsonl has no records"):
        load_dataset(path)


def test_wrong_encoding_names_byte_and_line_and_latin1_loads(tmp_path):
    content = "text,kind\nplain words here,a\nun café très bon,b\n".encode("latin-1")
    path = write(tmp_path, "latin.csv", content)
    with pytest.raises(DataError) as err:
        load_dataset(path)
    msg = str(err.value)
    assert "latin.csv is not valid UTF-8" in msg
    assert "byte 0xE9 at line 3, column 7 (byte offset 35 from the start)" in msg
    assert "It reads as cp1252" in msg and "--encoding cp1252" in msg
    ds = load_dataset(path, encoding="latin-1")
    assert ds.frame["text"].tolist() == ["plain words here", "un café très bon"]


def test_the_encoding_suggested_is_the_one_that_reads_the_file(tmp_path):
    """Excel's curly quotes (bytes 0x93, 0x94) read as cp1252, which is suggested, and then load as quotes (latin-1
    would read them as invisible control characters); a byte cp1252 lacks (0x81) gets latin-1; a UTF-8 file with
    one damaged line is told so, not sent to another encoding."""
    quoted = write(tmp_path, "quoted.csv", "text,kind\n\x93fine\x94 service,a\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"It reads as cp1252 .*--encoding cp1252"):
        load_dataset(quoted)
    assert read_table(quoted, encoding="cp1252")["text"][0] == "\u201cfine\u201d service"
    odd = write(tmp_path, "odd.csv", b"text,kind\nab\x81c,a\n")
    with pytest.raises(DataError, match=r"It reads as latin-1 .*--encoding latin-1"):
        load_dataset(odd)
    damaged = write(tmp_path, "damaged.csv", "text,kind\ncafé crème,a\n".encode() + b"bad \xff here,b\n")
    with pytest.raises(DataError) as err:
        load_dataset(damaged)
    assert "likely UTF-8 with a damaged line: correct or remove that line" in str(err.value)
    assert "byte 0xFF at line 3" in str(err.value) and "--encoding" not in str(err.value)


def test_wrong_encoding_in_jsonl(tmp_path):
    path = write(tmp_path, "latin.jsonl", '{"text": "caf\xe9 au lait is nice"}\n'.encode("latin-1"))
    with pytest.raises(DataError, match=r"latin\.jsonl is not valid UTF-8 text: byte 0xE9 at line 1, column 14 "):
        load_dataset(path)
    assert load_dataset(path, encoding="cp1252").frame["text"][0] == "café au lait is nice"


def test_decode_error_position_does_not_depend_on_chunking(tmp_path):
    # valid multi-byte characters straddle chunk boundaries before the bad byte on line 3
    content = "ünïcode ok\nmore ✓ text\nab".encode() + b"\xff" + b"\nrest"
    path = write(tmp_path, "x.csv", content)
    expected = (content.index(b"\xff"), 3, 3, "0xFF")
    for size in range(1, len(content) + 2):
        assert readers_mod._locate_decode_error(path, "utf-8-sig", chunk_size=size) == expected, size
    truncated = write(tmp_path, "t.csv", "ok\nend é".encode()[:-1])
    assert readers_mod._locate_decode_error(truncated, "utf-8-sig", chunk_size=3)[:3] == (len(b"ok\nend "), 2, 5)


def test_utf8_bom_is_accepted(tmp_path):
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbf" + GOOD_CSV.encode())
    assert list(read_table(path).columns)[0] == "text"
    assert load_dataset(path, GOOD_SCHEMA, encoding="utf-8").n_records == 4


def test_unknown_encoding_name(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    with pytest.raises(ConfigError, match="unknown text encoding 'klingon'"):
        load_dataset(path, encoding="klingon")


def test_csv_row_with_too_many_fields(tmp_path):
    path = write(tmp_path, "ragged.csv", "text,user\nfine words,ann\nsurplus, field,bob\n")
    with pytest.raises(
        DataError, match=r"ragged\.csv is not well-formed CSV: row 2 \(line 3\) has 3 fields but the header has 2"
    ):
        load_dataset(path)


def test_csv_first_row_with_too_many_fields_is_not_read_as_an_index(tmp_path):
    path = write(tmp_path, "ragged.csv", "text,user\nsurplus, field,bob\nfine words,ann\n")
    with pytest.raises(DataError, match=r"row 1 \(line 2\) has 3 fields"):
        load_dataset(path)


def test_malformed_jsonl_names_the_line(tmp_path):
    path = write(tmp_path, "bad.jsonl", '{"text": "fine words here"}\n{"text": "broken\n')
    with pytest.raises(DataError, match=r"bad\.jsonl: line 2 is not valid JSON"):
        load_dataset(path)


def test_jsonl_line_that_is_not_an_object(tmp_path):
    path = write(tmp_path, "list.jsonl", '{"text": "fine words here"}\n[1, 2]\n')
    with pytest.raises(DataError, match=r"list\.jsonl: line 2 holds a JSON list, not an object"):
        load_dataset(path)


def test_documents_stored_as_lists_of_sentences_or_turns_become_text_that_can_be_protected(tmp_path):
    """A call kept as its list of sentences (MAEC) or of speakers' turns (the 2021 Q3 calls) is read as one
    text: items one per line, a turn as "speaker: speech"; deeper values as JSON. Inference then finds the
    text column, which it could not while the values were lists."""
    lines = [
        '{"call": "a", "sentences": ["Thank you all for joining", "Revenue rose 6%"], "meta": {"q": {"n": 1}}}',
        '{"call": "b", "sentences": ["We saw strong bookings", "Margins held"], "meta": null}',
        '{"call": "c", "turns": [{"speaker": "Operator", "speech": "Good morning"}, {"speaker": "CEO", '
        '"speech": "Thanks, and welcome to our call"}], "sentences": []}',
    ]
    path = write(tmp_path, "calls.jsonl", "\n".join(lines) + "\n")
    read = readers_mod.read_file(path)
    frame, nested = read.frame, read.nested
    assert nested == ["sentences", "meta", "turns"]
    assert frame["sentences"].tolist() == [
        "Thank you all for joining\nRevenue rose 6%",
        "We saw strong bookings\nMargins held",
        "",
    ]
    assert frame.loc[2, "turns"] == "Operator: Good morning\n\nCEO: Thanks, and welcome to our call"
    assert frame.loc[0, "meta"] == '{"q": {"n": 1}}'
    assert infer_schema(frame.iloc[:2]).text == "sentences"
    parquet = tmp_path / "calls.parquet"
    pd.DataFrame({"call": ["a", "b"], "sentences": [["s one", "s two"], ["s three"]]}).to_parquet(parquet)
    assert read_table(parquet)["sentences"].tolist() == ["s one\ns two", "s three"]
    flat = readers_mod.read_file(write(tmp_path, "flat.jsonl", '{"text": "plain words"}\n'))
    assert flat.nested == [] and not flat.frame.attrs  # nothing the export would carry into a Parquet file's metadata


def test_corrupt_parquet(tmp_path):
    path = write(tmp_path, "broken.parquet", b"PAR1 this is not really parquet PAR1")
    with pytest.raises(DataError, match=r"broken\.parquet is not a readable Parquet file"):
        load_dataset(path)


def test_unsupported_extension(tmp_path):
    path = write(tmp_path, "sheet.xlsx", b"not a csv")
    with pytest.raises(
        DataError, match=r"extension '\.xlsx' is not supported; accepted: \.csv, \.tsv, \.parquet, \.jsonl, \.ndjson"
    ):
        load_dataset(path)


def test_file_larger_than_the_limit(tmp_path, monkeypatch):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    monkeypatch.setattr(readers_mod, "MAX_FILE_BYTES", 100)
    with pytest.raises(DataError, match=r"d\.csv is 0\.0 MB, larger than the limit of 0\.0 MB.*TEXTSDC_MAX_FILE_MB"):
        load_dataset(path)


@pytest.mark.parametrize(
    "name, content, dup",
    [
        ("dup.csv", "text,a,a\nsome words,1,2\n", "a"),
        ("dup.tsv", "text\tb\tb\nsome words\t1\t2\n", "b"),
        ("dup.jsonl", '{"text": "some words", "c": 1, "c": 2}\n', "c"),
    ],
)
def test_duplicated_column_names(tmp_path, name, content, dup):
    path = write(tmp_path, name, content)
    with pytest.raises(DataError, match=rf"'{dup}' (appears|more than once)"):
        load_dataset(path)


def test_duplicated_column_names_in_a_frame():
    frame = pd.DataFrame([["words", 1, 2]], columns=["text", "a", "a"])
    with pytest.raises(DataError, match=r"mem: the column name 'a' appears more than once"):
        validate(frame, Schema(text="text"), "mem")


# ---------------------------------------------------------------------------------------------------------------
# Validation against the schema


def test_missing_schema_column_suggests_close_match(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    schema = Schema(text="txt", author="user")
    with pytest.raises(DataError) as err:
        load_dataset(path, schema)
    msg = str(err.value)
    assert "d.csv has no column 'txt' (the schema's text column); did you mean 'text'?" in msg
    assert "the file's columns are: text, user, airline, stars, price" in msg


def test_missing_field_column_names_its_role(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    schema = Schema(text="text", fields=(FieldSpec("Airline"),))
    with pytest.raises(
        DataError, match=r"no column 'Airline' \(the schema's structured field\); did you mean 'airline'"
    ):
        load_dataset(path, schema)


def test_text_column_of_numbers(tmp_path):
    path = write(tmp_path, "d.csv", "code,text\n12,a\n7,b\n")
    with pytest.raises(
        DataError,
        match=r"column 'code' was chosen as the text column but holds numbers \(first value '12'\); choose a column of free text",
    ):
        load_dataset(path, Schema(text="code"))


def test_text_column_of_numbers_in_a_typed_frame():
    frame = pd.DataFrame({"n": [1.5, 2.5], "t": ["a", "b"]})
    with pytest.raises(
        DataError, match=r"column 'n' was chosen as the text column but holds numbers \(first value 1\.5\)"
    ):
        validate(frame, Schema(text="n"), "frame")


def test_text_column_of_lists_is_read_as_lines_and_of_numbers_is_refused(tmp_path):
    path = write(tmp_path, "d.jsonl", '{"s": ["a", "b"], "t": "x"}\n{"s": ["c"], "t": "y"}\n')
    assert load_dataset(path, Schema(text="s")).frame["s"].tolist() == ["a\nb", "c"]
    numbers = write(tmp_path, "n.jsonl", '{"s": 5, "t": "x"}\n{"s": 6, "t": "y"}\n')
    with pytest.raises(
        DataError, match=r"column 's' was chosen as the text column but holds numbers \(first value 5\)"
    ):
        load_dataset(numbers, Schema(text="s"))


def test_some_empty_texts_become_empty_strings_but_all_empty_is_an_error(tmp_path):
    ok = write(tmp_path, "some.csv", 'text,k\n"",a\nwords,b\n')
    assert load_dataset(ok, Schema(text="text")).frame["text"].tolist() == ["", "words"]
    bad = write(tmp_path, "none.csv", "text,k\n,a\n ,b\n")
    with pytest.raises(DataError, match=r"none\.csv: the text column 'text' is empty in every row"):
        load_dataset(bad, Schema(text="text"))


def test_constant_field(tmp_path):
    path = write(tmp_path, "d.csv", "text,airline\nsome words,Delta\nmore words,Delta\n")
    with pytest.raises(
        DataError,
        match=r"d\.csv: constant column 'airline' \(every row holds 'Delta'\).*drop it or choose another field",
    ):
        load_dataset(path, Schema(text="text", fields=(FieldSpec("airline"),)))


def test_missing_categorical_values_become_a_category(tmp_path):
    path = write(tmp_path, "d.csv", "text,airline\nsome words,Delta\nmore words,\nNA,NA\n")
    ds = load_dataset(path, Schema(text="text", fields=(FieldSpec("airline"),)))
    assert ds.frame["airline"].tolist() == ["Delta", MISSING_CATEGORY, "NA"]
    assert ds.frame["text"].tolist()[2] == "NA"  # only empty cells are missing


def test_categorical_numbers_keep_their_written_form(tmp_path):
    path = write(tmp_path, "d.csv", "text,zip\na b,02134\nc d,10001\n")
    assert load_dataset(path, Schema(text="text", fields=(FieldSpec("zip"),))).frame["zip"].tolist() == [
        "02134",
        "10001",
    ]


@pytest.mark.parametrize(
    "value, problem",
    [
        ("-3", r"'-3' is negative"),
        ("1.5", r"'1\.5' is not a whole number"),
        ("many", r"'many' is not a number"),
        ("", r"the value is missing"),
    ],
)
def test_bad_count_values(tmp_path, value, problem):
    path = write(tmp_path, "d.csv", f"text,stars\nfirst text,1\nsecond text,2\nthird text,{value}\n")
    schema = Schema(text="text", fields=(FieldSpec("stars", "count"),))
    with pytest.raises(
        DataError,
        match=rf"d\.csv: column 'stars' \(a count field\), row 3: {problem}; accepted: a whole number ≥ 0 "
        r"\(rows are counted from 1 at the first record; a header line is not counted\)",
    ):
        load_dataset(path, schema)


def test_a_bad_value_in_many_rows_is_named_once_with_how_many_rows_share_it(tmp_path):
    rows = "".join(f"text {i},{-i if i % 2 else i}\n" for i in range(1, 42))
    path = write(tmp_path, "d.csv", "text,stars\n" + rows)
    with pytest.raises(DataError, match=r"column 'stars' \(a count field\), row 1 and 20 other rows: '-1' is negative"):
        load_dataset(path, Schema(text="text", fields=(FieldSpec("stars", "count"),)))


def test_whole_floats_are_accepted_as_counts(tmp_path):
    path = write(tmp_path, "d.csv", "text,stars\na,1.0\nb,2\n")
    assert load_dataset(path, Schema(text="text", fields=(FieldSpec("stars", "count"),))).frame["stars"].tolist() == [
        1,
        2,
    ]


@pytest.mark.parametrize(
    "value, problem",
    [("cheap", r"'cheap' is not a number"), ("", "the value is missing"), ("inf", "'inf' is not a finite number")],
)
def test_bad_continuous_values(tmp_path, value, problem):
    path = write(tmp_path, "d.csv", f"text,price\nfirst,1.5\nsecond,{value}\n")
    schema = Schema(text="text", fields=(FieldSpec("price", "continuous"),))
    with pytest.raises(
        DataError, match=rf"column 'price' \(a continuous field\), row 2: {problem}; accepted: a finite number"
    ):
        load_dataset(path, schema)


def test_missing_author_is_an_error(tmp_path):
    path = write(tmp_path, "d.csv", "text,user\nfirst,ann\nsecond,\n")
    with pytest.raises(DataError, match=r"column 'user' \(the author column\) has no value in row 2"):
        load_dataset(path, Schema(text="text", author="user"))


def test_one_row_table_loads_and_require_records(tmp_path):
    path = write(tmp_path, "one.csv", "text,airline,stars\njust one record,Delta,3\n")
    ds = load_dataset(path, Schema(text="text", fields=(FieldSpec("airline"), FieldSpec("stars", "count"))))
    assert ds.n_records == 1
    require_records(ds, 1, "anything")
    with pytest.raises(DataError, match=r"^the style attack needs at least 2 records, the dataset has 1$"):
        require_records(ds, 2, "the style attack")


# ---------------------------------------------------------------------------------------------------------------
# Schema files, inference, external records


def test_schema_beside_the_file_is_used(tmp_path):
    path = write(tmp_path, "reviews.csv", GOOD_CSV)
    write(tmp_path, "reviews.schema.toml", GOOD_SCHEMA.to_toml())
    assert load_dataset(path).schema == GOOD_SCHEMA


def test_schema_path_that_is_a_folder(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    with pytest.raises(ConfigError, match=r"schema file .* cannot be read"):
        load_dataset(path, tmp_path)


def test_toml_schema_round_trip_with_external_file(tmp_path):
    data_dir, schema_dir = tmp_path / "data", tmp_path / "config"
    data_dir.mkdir(), schema_dir.mkdir()
    path = write(data_dir, "d.csv", GOOD_CSV)
    write(schema_dir, "intruder.csv", "text,user,airline\nanother text by ann,ann,Delta\nzed writes,zed,United\n")
    schema = Schema(text="text", author="user", fields=GOOD_SCHEMA.fields, external=ExternalSpec(file="intruder.csv"))
    schema_path = write(schema_dir, "schema.toml", schema.to_toml())
    assert Schema.from_toml(schema_path) == schema
    ds = load_dataset(path, schema_path)  # the external file is relative to the schema file's folder
    assert ds.schema == schema
    assert list(ds.external.columns) == ["text", "user", "airline"]
    assert ds.external["user"].tolist() == ["ann", "zed"]
    assert isinstance(ds.external.index, pd.RangeIndex)


def test_external_file_relative_to_data_for_schema_objects(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    write(tmp_path, "ext.csv", "text,user\nanother text by bob,bob\n")
    schema = Schema(text="text", author="user", external=ExternalSpec(file="ext.csv"))
    assert load_dataset(path, schema).external["user"].tolist() == ["bob"]


def test_external_file_without_shared_authors(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    write(tmp_path, "ext.csv", "text,user\nsomeone else,zed\n")
    schema = Schema(text="text", author="user", external=ExternalSpec(file="ext.csv"))
    with pytest.raises(DataError, match=r"ext\.csv: none of the external authors \(for example 'zed'\) appears"):
        load_dataset(path, schema)


def test_external_file_without_author_column(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    write(tmp_path, "ext.csv", "text,who\nsomeone else,zed\n")
    schema = Schema(text="text", author="user", external=ExternalSpec(file="ext.csv"))
    with pytest.raises(DataError, match=r"ext\.csv has no column 'user' \(the schema's author column\)"):
        load_dataset(path, schema)


def holdout_frame() -> pd.DataFrame:
    rows = [
        {"text": f"text {a} {i}", "user": a, "city": "AB"[i % 2], "mood": "xyz"[i % 3]}
        for a, n in [("a", 5), ("b", 1), ("c", 3), ("d", 4), ("e", 2), ("f", 6)]
        for i in range(n)
    ]
    return pd.DataFrame(rows)


def test_holdout_rule_is_deterministic_and_moves_exactly_the_asked_records():
    frame = holdout_frame()
    schema = Schema(
        text="text",
        author="user",
        fields=(FieldSpec("city", role="key"), FieldSpec("mood", role="sensitive")),
        external=ExternalSpec(holdout_per_author=2, min_records=3, max_authors=3, seed=7),
    )
    release, external = split_external(frame, schema)
    release2, external2 = split_external(frame, schema)
    pd.testing.assert_frame_equal(release, release2)
    pd.testing.assert_frame_equal(external, external2)
    assert list(external.columns) == ["text", "user", "city"]  # the intruder knows key fields, not sensitive ones
    counts = external["user"].value_counts()
    assert len(counts) == 3 and set(counts.index) <= {"a", "c", "d", "f"} and (counts == 2).all()
    assert len(release) + len(external) == len(frame)
    assert set(external["text"]).isdisjoint(release["text"])
    assert isinstance(release.index, pd.RangeIndex) and isinstance(external.index, pd.RangeIndex)
    other_seed = split_external(frame, schema, ExternalSpec(holdout_per_author=2, min_records=3, max_authors=3, seed=8))
    assert len(other_seed[1]) == 6


def test_holdout_rule_applied_by_load_dataset(tmp_path):
    path = tmp_path / "d.csv"
    holdout_frame().to_csv(path, index=False)
    schema = Schema(
        text="text",
        author="user",
        fields=(FieldSpec("city", role="key"),),
        external=ExternalSpec(holdout_per_author=1, min_records=2, max_authors=300, seed=0),
    )
    ds = load_dataset(path, schema)
    assert len(ds.external) == 5 and ds.n_records == 21 - 5
    assert set(ds.external["user"]) == {"a", "c", "d", "e", "f"}


def test_holdout_rule_needs_an_author():
    schema = Schema(text="text", external=ExternalSpec())
    with pytest.raises(ConfigError, match="needs an author column"):
        split_external(holdout_frame(), schema)


def test_holdout_rule_with_no_eligible_author():
    schema = Schema(text="text", author="user", external=ExternalSpec(min_records=10))
    with pytest.raises(DataError, match="no author has at least 10 records"):
        split_external(holdout_frame(), schema)


def test_infer_schema_picks_text_author_and_kinds():
    n = 30
    frame = pd.DataFrame(
        {
            "id": [f"r{i}" for i in range(n)],
            "title": ["a somewhat longer title than the body has"] * (n - 1) + ["x"],
            "Review Text": [f"a short review, number {i}" + "!" * (i % 5) for i in range(n)],
            "User_ID": [f"u{i % 7}" for i in range(n)],
            "stars": [1 + i % 5 for i in range(n)],
            "helpful": list(range(0, 3 * n, 3)),
            "delta": list(range(-n, 0)),
            "price": [0.5 + i for i in range(n)],
            "verified": [i % 2 == 0 for i in range(n)],
            "source": ["web"] * n,
        }
    )
    schema = infer_schema(frame)
    assert schema.text == "Review Text"  # preferred name, mean length ≥ 20, though 'title' is longer
    assert schema.author == "User_ID"
    kinds = {f.name: f.kind for f in schema.fields}
    assert kinds == {
        "title": "categorical",
        "stars": "categorical",
        "helpful": "count",
        "delta": "continuous",
        "price": "continuous",
        "verified": "categorical",
    }
    roles = {f.name: f.role for f in schema.fields}
    assert roles.pop("stars") == "sensitive"  # a rating (named so, 1–5) is offered as sensitive
    assert set(roles.values()) == {"other"} and "source" not in kinds
    assert set(left_out_columns(frame)) == {"id", "source"}  # a record id would leave in clear


def test_a_columns_name_tells_a_price_from_a_count_and_a_few_counts_from_categories():
    """Whole-number prices (109, 172) are an amount, not a count; retweets 0–2 and nights 1–30 are counts,
    not categories; a rating of 1–5 stays categorical, and a count with gaps stays categorical as before."""
    n = 40
    frame = pd.DataFrame(
        {
            "text": [f"a listing in the city, number {i}" for i in range(n)],
            "nightly_rate": [100 + 7 * i for i in range(n)],
            "retweet_count": [i % 3 for i in range(n)],
            "minimum_nights": [1 + i % 30 for i in range(n)],
            "rating": [1 + i % 5 for i in range(n)],
            "reviews_total": [None if i == 3 else i % 4 for i in range(n)],
        }
    )
    kinds = {f.name: f.kind for f in infer_schema(frame).fields}
    assert kinds == {
        "nightly_rate": "continuous",
        "retweet_count": "count",
        "minimum_nights": "count",
        "rating": "categorical",
        "reviews_total": "categorical",
    }


def test_inference_leaves_out_direct_identifiers_and_a_second_free_text():
    """Columns a release would carry in clear are left out, each with its reason; look-alikes are kept."""
    n = 60
    words = ["soft", "fabric", "runs", "small", "lovely", "colour", "would", "buy", "again", "seams"]
    frame = pd.DataFrame(
        {
            "reviewText": [f"review {i}: " + " ".join(words[(i + j) % 10] for j in range(8)) for i in range(n)],
            "reviewerID": [f"A{i % 20}" for i in range(n)],
            "reviewerName": [f"Person {i % 25}" for i in range(n)],  # a person's name: a direct identifier
            "product_name": [f"Product {i}" for i in range(n)],  # names of many things
            "Class Name": ["Dresses", "Knits", "Blouses"] * (n // 3),  # a category of three levels: kept
            "contact": [f"p{i}@example.org" for i in range(n)],  # e-mail addresses under another name
            "summary": [f"{words[i % 10]} and {words[(i + 3) % 10]} with {words[(i + 5) % 10]} {i}" for i in range(n)],
            "reviewTime": [f"0{1 + i % 3} {1 + i % 5}, 2015" for i in range(n)],  # dates: kept
            "IPAddress": [f"10.0.0.{i}" for i in range(n)],
        }
    )
    schema = infer_schema(frame)
    assert (schema.text, schema.author) == ("reviewText", "reviewerID")
    assert {f.name for f in schema.fields} == {"Class Name", "reviewTime"}
    assert schema.direct_identifiers == ("reviewerName",)  # never released; its names are sought in the text
    assert schema.other_text == ("summary",)  # free text besides the text: no bundle holds it by default
    why = left_out_columns(frame)
    assert set(why) == {"product_name", "contact", "IPAddress"}
    assert "direct identifier ('name')" in why["product_name"] and "('ip')" in why["IPAddress"]
    assert "e-mail addresses or links" in why["contact"]


def test_a_hosts_name_is_a_direct_identifier_and_a_title_that_names_its_host_is_warned_of(tmp_path):
    """Listings whose title names their own host ("Hillside Hotel"): inference makes host_name a direct identifier
    (the bundle drops it), and a release that keeps the titles as they are is warned of at export."""
    from engine.export.checks import own_identifiers_in_text
    from engine.protect.base import Release

    hosts = ["Hillside Hotel", "Antonio", "Mishay", "Lucio", "Ana Li"] * 8
    titles = [f"{h}'s cozy room near the park, number {i}" if i % 5 < 2 else f"Sunny loft {i} by the river"
              for i, h in enumerate(hosts)]  # fmt: skip
    path = write(tmp_path, "listings.csv", pd.DataFrame({"name": titles, "host_name": hosts}).to_csv(index=False))
    ds = load_dataset(path)
    assert ds.schema.text == "name" and ds.schema.direct_identifiers == ("host_name",)
    assert ds.schema.identifiers == {"host_name": "drop"}
    release = Release(data=ds.frame, method="test", knob=0.0, protected_columns=())
    assert own_identifiers_in_text(ds, release) == {"host_name": 16}


def test_inference_leaves_out_file_paths_and_columns_with_a_value_per_record():
    """The 2021 Q3 calls' ticker (one per call) and source_path (which holds it) would each single a record out
    in clear; a date written 10/26/15, "and/or" and a repeated label stay fields."""
    n = 40
    frame = pd.DataFrame(
        {
            "text": [f"prepared remarks of call {i} about revenue, margins and the outlook" for i in range(n)],
            "ticker": [f"T{i:02d}X" for i in range(n)],
            "source_path": [f"dataset/T{i:02d}X_q3_2021.txt" for i in range(n)],
            "posted": [f"10/{1 + i % 28}/15" for i in range(n)],
            "kind": ["and/or", "either"] * (n // 2),
            "sector": ["Energy", "Retail", "Banks", "Tech"] * (n // 4),
        }
    )
    why = left_out_columns(frame)
    assert set(why) == {"ticker", "source_path"}
    assert "file paths" in why["source_path"] and "40 different" in why["ticker"]
    few = frame.iloc[:12]  # below twenty records a value per record is no sign of an identifier
    assert set(left_out_columns(few)) == {"source_path"}


def test_a_column_the_inference_left_out_is_explained_where_a_command_names_it(tmp_path, capsys):
    """`textsdc sweep --method swap --metadata ticker` on a file whose ticker the inference left out (one per
    call): the error says why, and the schema it prints, saved beside the file, keeps the column."""
    from engine.cli import main
    from engine.data.load import left_out_hint

    n = 24
    frame = pd.DataFrame(
        {
            "text": [
                f"Prepared remarks of call {i}. Revenue grew and margins held. We thank our teams." for i in range(n)
            ],
            "call_id": [f"c{i}" for i in range(n)],
            "ticker": [f"T{i:02d}X" for i in range(n)],
            "sector": ["Energy", "Retail", "Banks", "Tech"] * (n // 4),
        }
    )
    data = tmp_path / "calls.csv"
    frame.to_csv(data, index=False)
    loaded = load_dataset(data)
    assert "ticker" not in loaded.frame.columns
    assert [c.column for c in loaded.left_out] == ["ticker"]
    assert left_out_hint(loaded, "no field named 'sector'") == ""  # only a left-out column gets the hint

    out = tmp_path / "results.json"
    assert main(["sweep", "--data", str(data), "--method", "swap", "--metadata", "ticker", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "metadata field 'ticker' is not a column" in err
    assert "'ticker' is a column of the file that calls leaves out: one value per record (24 different)" in err
    assert f"save this schema as {tmp_path / 'calls.schema.toml'}" in err
    assert not out.exists()
    (tmp_path / "calls.schema.toml").write_text(err[err.index('text = "text"') :])
    kept = load_dataset(data)
    assert kept.schema.field("ticker").role == "sensitive" and kept.schema.field("ticker").kind == "categorical"
    assert kept.frame["ticker"].tolist() == frame["ticker"].tolist() and kept.left_out == ()
    # with a schema the steward gave, the hint does not send the column to a file that would not be read
    given = load_dataset(data, dataclasses.replace(kept.schema, fields=kept.schema.fields[:-1]))
    hint = left_out_hint(given, "metadata field 'ticker' is not a column")
    assert "the schema does not name it" in hint and "save this schema and give it with --schema" in hint


def test_a_participants_column_is_a_direct_identifier_column_read_as_names(tmp_path):
    """The 2021 Q3 calls keep their people as a list of "Name--title": inference makes the column a direct
    identifier (not a field, not left out), the schema writes and reads it, loading keeps it as text, a bundle
    drops it, and each line gives one name."""
    from engine.data.identifiers_file import column_identifiers, names_in

    n = 24
    calls = [
        {
            "call_id": f"C{i}_q3",
            "participants": ["Douglas A. Lindsay--Chief Executive Officer", "Kyle Joseph--Jefferies -- Analyst"],
            "remarks": f"Douglas Lindsay opens call {i} with revenue, margins and the outlook for the year",
        }
        for i in range(n)
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in calls), encoding="utf-8")
    ds = load_dataset(path)
    assert ds.schema.direct_identifiers == ("participants",) and ds.schema.field_names == []
    assert ds.schema.identifiers == {"call_id": "pseudonymize", "participants": "drop"}
    assert (
        ds.frame["participants"].iloc[0]
        == "Douglas A. Lindsay--Chief Executive Officer\nKyle Joseph--Jefferies -- Analyst"
    )
    assert Schema.from_dict(tomllib.loads(ds.schema.to_toml())) == ds.schema
    assert names_in(ds.frame["participants"].iloc[0]) == ["Douglas A. Lindsay", "Kyle Joseph"]
    assert names_in("Ann Lee; Bo Chen | CFO\n  \nX") == ["Ann Lee", "Bo Chen"]
    by_call = column_identifiers(ds.frame, ("participants",), ds.frame["call_id"])
    assert by_call["C3_q3"] == {"participants": ["Douglas A. Lindsay", "Kyle Joseph"]} and len(by_call) == n
    with pytest.raises(ConfigError, match="cannot be both a direct-identifier column and a role column"):
        Schema(text="remarks", document="call_id", direct_identifiers=("call_id",))
    with pytest.raises(DataError, match="no column 'people' \\(the schema's direct-identifier column\\)"):
        load_dataset(path, Schema(text="remarks", direct_identifiers=("people",)))


def test_the_text_column_is_chosen_by_the_order_of_preferred_names_not_the_files():
    """Tweets with their author's profile: the profile "description" comes first in the file and is longer, but
    "text" is the tweet (the Kaggle gender-classification file)."""
    n = 30
    frame = pd.DataFrame(
        {
            "description": [
                f"Writer, runner and coffee lover from the city number {i}, views my own" for i in range(n)
            ],
            "text": [f"@united my flight {i} was late again today" for i in range(n)],
        }
    )
    assert infer_schema(frame).text == "text"


def test_infer_schema_without_preferred_names_takes_the_longest_strings():
    frame = pd.DataFrame(
        {
            "k": ["a", "b", "a"],
            "body_of_work": ["long words here", "more long words", "x y z"],
            "document": ["d1", "d1", "d2"],
        }
    )
    schema = infer_schema(frame)
    assert (schema.text, schema.author, schema.document) == ("body_of_work", None, "document")


def test_inferred_schema_loads_a_csv_whose_numbers_are_strings(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    ds = load_dataset(path)
    assert (ds.schema.text, ds.schema.author) == ("text", "user")
    assert {f.name: f.kind for f in ds.schema.fields} == {
        "airline": "categorical",
        "stars": "categorical",
        "price": "continuous",
    }


def test_infer_schema_without_any_text():
    with pytest.raises(DataError, match="no column reads like free text"):
        infer_schema(pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]}))


def test_fingerprint_is_stable_and_sensitive_to_values(tmp_path):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    a, b = load_dataset(path, GOOD_SCHEMA), load_dataset(path, GOOD_SCHEMA)
    assert a.fingerprint == b.fingerprint
    changed = write(tmp_path, "e.csv", GOOD_CSV.replace("20\n", "21\n"))
    assert load_dataset(changed, GOOD_SCHEMA).fingerprint != a.fingerprint


# ---------------------------------------------------------------------------------------------------------------
# Demos


def test_demo_registry():
    assert demo_names() == sorted(DEMOS)
    infos = list_demos()
    assert [d.name for d in infos] == sorted(DEMOS)
    for d in infos:
        assert isinstance(d, DemoInfo) and d.title and d.description and d.licence != "unknown"
        assert d.path == DEMOS_DIR / d.name and d.n_records > 0
        assert (d.path / "README.md").is_file()
        assert sum(p.stat().st_size for p in d.path.iterdir()) <= 2 * 1024 * 1024
    assert is_demo("airline-tweets") and not is_demo("no-such-demo")


def test_unknown_demo_name_lists_the_demos():
    with pytest.raises(
        DataError, match=r"'airline-tweet' is neither a file nor a demo dataset; demo datasets are: airline-tweets, "
    ):
        load_dataset("airline-tweet")


@pytest.mark.parametrize("name", DEMOS)
def test_every_demo_loads_with_its_schema(name):
    ds = load_dataset(name)
    assert ds.name == name and ds.source == name and ds.n_records > 0
    assert list(ds.frame.columns) == ds.schema.columns
    assert isinstance(ds.frame.index, pd.RangeIndex)
    for col in [ds.schema.text, ds.schema.author, ds.schema.document]:
        if col is not None:
            assert pd.api.types.is_string_dtype(ds.frame[col]) and isinstance(ds.frame[col].iloc[0], str)
    expected = {
        "categorical": pd.api.types.is_string_dtype,
        "count": lambda s: s.dtype == np.int64,
        "continuous": lambda s: s.dtype == np.float64,
    }
    for f in ds.schema.fields:
        assert expected[f.kind](ds.frame[f.name]), (name, f.name, ds.frame[f.name].dtype)
    info = next(d for d in list_demos() if d.name == name)
    assert info.n_records == ds.n_records
    assert info.n_external == (0 if ds.external is None else len(ds.external))


def test_airline_demo_has_external_records_by_released_authors():
    ds = load_dataset("airline-tweets")
    assert ds.schema.external == ExternalSpec(file="external.csv")
    assert len(ds.external) == 300 and ds.external["name"].nunique() == 300
    assert set(ds.external["name"]) <= set(ds.frame["name"])
    assert list(ds.external.columns) == ["text", "name", "airline", "user_timezone"]
    assert ds.frame["user_timezone"].nunique() == 9


def _load_make_demos():
    spec = importlib.util.spec_from_file_location("make_demos", ROOT / "scripts" / "make_demos.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is created
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


def test_make_demos_reproduces_the_shipped_assets(tmp_path, capsys):
    make_demos = _load_make_demos()
    needs_shared_files(*make_demos.RAW_FILES.values())
    assert make_demos.main(["--data", str(SHARED_DATA), "--out", str(tmp_path)]) == 0
    built = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    shipped = sorted(p.relative_to(DEMOS_DIR) for p in DEMOS_DIR.rglob("*") if p.is_file())
    assert built == shipped
    for rel in built:
        assert (tmp_path / rel).read_bytes() == (DEMOS_DIR / rel).read_bytes(), rel
    assert "total" in capsys.readouterr().out


def test_inference_reads_camel_case_names_and_takes_no_dates_for_prose():
    frame = pd.DataFrame(
        {
            "reviewTime": [f"0{1 + i % 4} {1 + i % 3}, 2015" for i in range(20)],  # three "words", no prose
            "reviewText": [f"the sleeves are long and the colour is lovely {i}" for i in range(20)],
            "reviewerID": [f"A{i % 5}" for i in range(20)],
        }
    )
    schema = infer_schema(frame)
    assert (schema.text, schema.author) == ("reviewText", "reviewerID")
    assert [f.name for f in schema.fields] == ["reviewTime"]


def test_inference_of_one_record_keeps_its_fields_but_not_an_authors_name():
    """One record: no value repeats, so nothing is "constant"; a column named like the author whose values do
    not repeat is a person's identifier, left out."""
    frame = pd.DataFrame(
        {"auteur": ["Hélène Dubois"], "texte": ["Très déçu du service, le café était froid"], "note": [2]}
    )
    schema = infer_schema(frame)
    assert (schema.text, schema.author, [f.name for f in schema.fields]) == ("texte", None, ["note"])
    assert "named like the author column" in left_out_columns(frame)["auteur"]


# ---------------------------------------------------------------------------------------------------------------
# Issue 49: delimiters, rows of the wrong length, files cut short, encodings that are not text encodings

NAMES_SEMICOLON = (
    "name;text;mood\n"
    "Ann Smith;Hello, the flight was late, said Ann Smith;bad\n"
    "Bob Jones;Great crew, would fly again;good\n"
    "Cy Lee;ok then, fine;good\n"
    "Dee Park;Lost my bag, again;bad\n"
)


@pytest.mark.parametrize(
    ("name", "content", "delimiter"),
    [
        ("semicolon.csv", NAMES_SEMICOLON, ";"),
        ("comma-saved-as.tsv", NAMES_SEMICOLON.replace(",", "").replace(";", ","), ","),
        ("pipe.csv", NAMES_SEMICOLON.replace(";", "|"), "|"),
        ("tab.csv", NAMES_SEMICOLON.replace(";", "\t"), "\t"),
        ("semicolon-in-text.csv", GOOD_CSV.replace("late again", "late; again"), ","),
    ],
)
def test_the_delimiter_is_found_from_the_file(tmp_path, name, content, delimiter):
    """A semicolon CSV (as spreadsheets in many locales save it), CSV content saved as .tsv, pipes and tabs load
    as the steward meant: the columns of the header, not one column holding every name in clear."""
    read = readers_mod.read_file(write(tmp_path, name, content))
    assert read.delimiter == delimiter and read.dropped == ()
    if name.startswith("semicolon-in"):
        assert read.frame["text"][0] == "the flight was late; again"
        return
    assert list(read.frame.columns) == ["name", "text", "mood"]
    assert "Ann Smith" not in "".join(read.frame["text"].str.replace("said Ann Smith", ""))
    dataset = load_dataset(write(tmp_path, "again" + Path(name).suffix, content))
    assert dataset.schema.text == "text" and "name" not in dataset.frame.columns


def test_a_delimiter_given_is_used_and_one_column_with_another_delimiter_in_its_header_is_refused(tmp_path):
    path = write(tmp_path, "names.csv", NAMES_SEMICOLON)
    assert readers_mod.read_file(path, delimiter="semicolon").frame.shape == (4, 3)
    with pytest.raises(DataError) as err:
        load_dataset(path, delimiter=",")
    assert str(err.value) == (
        f"{path} reads as one column with commas as the delimiter, but its header holds semicolons: the values "
        "are likely separated by semicolons; give --delimiter ';' (in Python, load_dataset(..., delimiter=';'))"
    )
    tabs = write(tmp_path, "tabs.tsv", NAMES_SEMICOLON.replace(";", "\t"))
    with pytest.raises(DataError, match="its header holds tabs: .* give --delimiter tab"):
        read_table(tabs, delimiter="|")


@pytest.mark.parametrize("bad", ["ab", "x", "7", '"', "", "\n"])
def test_a_delimiter_that_is_not_one_separating_character_is_a_config_error(tmp_path, bad):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    if bad == "":  # the same as not giving one
        assert read_table(path, delimiter=bad).shape == (4, 5)
        return
    with pytest.raises(ConfigError, match=r"the delimiter must be one character .* such as , ; \| or tab"):
        read_table(path, delimiter=bad)


def test_two_delimiters_that_read_the_file_equally_well_are_named_for_the_steward_to_choose(tmp_path):
    path = write(tmp_path, "both.csv", "a;b|c\n1;2|3\n4;5|6\n")
    with pytest.raises(
        DataError,
        match=r"reads as 2 columns separated by semicolons and as 2 columns separated by pipes: say which; give --delimiter ';' \(.*\) or give --delimiter '\|'",
    ):
        read_table(path)
    assert list(read_table(path, delimiter="|").columns) == ["a;b", "c"]


def ragged(n_bad: int) -> str:
    rows = [f"text number {i},u{i},{['good', 'bad'][i % 2]}" for i in range(20)]
    for k in range(n_bad):
        rows[2 * k + 1] = f"short row {k},u{k}" if k % 2 == 0 else f"long row {k},u{k},good,extra"
    return "text,user,mood\n" + "\n".join(rows) + "\n"


def test_rows_of_the_wrong_length_are_named_with_a_count(tmp_path):
    path = write(tmp_path, "ragged.csv", ragged(7))
    with pytest.raises(DataError) as err:
        read_table(path)
    message = str(err.value)
    assert message.startswith(
        f"{path} is not well-formed CSV: 7 rows have another number of fields than the header's 3: row 2 (line 3) "
        "has 2, row 4 (line 5) has 4, row 6 (line 7) has 2, row 8 (line 9) has 4, row 10 (line 11) has 2 and 2 more"
    )
    assert message.endswith(
        "or give --bad-rows drop to leave such rows out (in Python, load_dataset(..., bad_rows='drop'))"
    )
    assert "a value that holds a comma needs double quotes" in message


def test_a_short_last_row_is_refused_not_padded(tmp_path):
    path = write(tmp_path, "short.csv", "text,user,mood\nfine words,ann,good\nmore words,bob\n")
    with pytest.raises(DataError, match=r"row 2 \(line 3\) has 2 fields but the header has 3"):
        load_dataset(path)


def test_rows_of_the_wrong_length_are_dropped_and_counted_when_asked(tmp_path):
    folder = tmp_path
    write(folder, "data.csv", ragged(3))
    rows = [f"external text {i},u{i}" for i in range(3)]
    write(folder, "external.csv", "text,user\n" + "\n".join(rows) + "\nstray,u1,extra\n")
    schema = Schema(
        text="text",
        author="user",
        fields=(FieldSpec("mood", "categorical", "sensitive"),),
        external=ExternalSpec(file="external.csv"),
    )
    dataset = load_dataset(folder / "data.csv", schema, bad_rows="drop")
    assert dataset.n_records == 17 and "short row 0" not in set(dataset.texts)
    assert [(d.file, d.rows) for d in dataset.dropped] == [("data.csv", (2, 4, 6)), ("external.csv", (4,))]
    assert dropped_note(dataset) == (
        "left out 3 rows of data.csv (rows 2, 4, 6) and 1 row of external.csv (row 4): their number of fields is "
        "not the header's (rows are counted from 1 at the first record; a header line is not counted)"
    )
    assert dropped_note(load_dataset(write(folder, "good.csv", GOOD_CSV), bad_rows="drop")) == ""  # none to drop
    with pytest.raises(ConfigError, match="bad rows must be 'error' .* or 'drop'"):
        load_dataset(folder / "data.csv", bad_rows="skip")


def test_blank_lines_are_not_records_and_a_missing_final_line_break_is_fine(tmp_path):
    path = write(tmp_path, "blank.csv", "\ntext,user\n\nfine words,ann\n   \nmore words,bob")
    frame = read_table(path)
    assert frame["text"].tolist() == ["fine words", "more words"] and frame["user"].tolist() == ["ann", "bob"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            'text,user,mood\nfine words,ann,good\n"a review cut in the mid',
            r"ends inside a quoted value: a double quote opens a value in row 2 \(line 3\) and nothing closes it "
            r"before the end of the file\. The file looks cut short",
        ),
        (
            'text,user,mood\nfine,ann,good\n"a stray quote, then\nmany lines,bob,bad\nmore,cy,bad\n',
            r"ends inside a quoted value: a double quote opens a value in row 2 \(line 3\)",
        ),
        (
            "text,user,mood\nfine words,ann,good\nmore words,bo",
            r"ends in the middle of a record: its last row, row 2 \(line 3\), has 2 of the header's 3 fields and "
            r"no line break after it\. The file looks cut short",
        ),
    ],
)
def test_a_file_cut_short_is_reported_as_such(tmp_path, content, message):
    path = write(tmp_path, "cut.csv", content)
    with pytest.raises(DataError, match=message):
        load_dataset(path)
    with pytest.raises(DataError, match=message):
        load_dataset(path, bad_rows="drop")  # a file cut short is never "repaired" by leaving rows out


@pytest.mark.parametrize("codec", ["rot13", "base64", "zlib_codec", "hex", "bz2"])
def test_a_codec_that_is_not_a_text_encoding_is_a_config_error_naming_text_encodings(tmp_path, codec):
    path = write(tmp_path, "d.csv", GOOD_CSV)
    with pytest.raises(ConfigError) as err:
        load_dataset(path, encoding=codec)
    assert str(err.value) == (
        f"'{codec}' is not a text encoding: it transforms bytes or text rather than reading a file's bytes as "
        "characters; give the encoding the file was saved in, for example: utf-8, cp1252, latin-1, utf-16"
    )
    with pytest.raises(ConfigError, match="unknown text encoding 'utf-8\\\\x00'"):
        load_dataset(path, encoding="utf-8\x00")


def test_json_nested_beyond_reading_or_with_numbers_of_thousands_of_digits_names_the_line(tmp_path):
    first = '{"text": "a fine day out with friends", "user": "u1"}\n'
    deep = write(tmp_path, "deep.jsonl", first + '{"text": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}\n")
    with pytest.raises(DataError, match=r"deep\.jsonl: line 2 nests arrays or objects more than 64 levels deep"):
        load_dataset(deep)
    long = write(tmp_path, "long.jsonl", first + '{"text": "x", "n": ' + "7" * 5000 + "}\n")
    with pytest.raises(DataError, match=r"long\.jsonl: line 2 holds a whole number of more than 4,300 digits"):
        load_dataset(long)
    # Readable JSON, but deeper than a value of a column: refused at a depth that does not depend on the stack.
    nested = write(tmp_path, "nested.jsonl", first + '{"text": "y", "meta": ' + "[" * 65 + "1" + "]" * 65 + "}\n")
    with pytest.raises(DataError, match=r"nested\.jsonl: line 2 nests arrays or objects more than 64 levels deep"):
        read_table(nested)
    within = write(tmp_path, "within.jsonl", first + '{"text": "y", "meta": ' + "[" * 63 + "1" + "]" * 63 + "}\n")
    assert read_table(within)["meta"][1].startswith("[[[")
    # A whole number beyond any float (but within what JSON reads) is a value like any other.
    rows = [json.dumps({"text": f"a fine day out number {i}", "user": f"u{i % 3}", "n": 10**4000}) for i in range(9)]
    assert load_dataset(write(tmp_path, "big.jsonl", "\n".join(rows))).n_records == 9


def test_one_column_whose_quoted_name_holds_a_line_break_and_a_delimiter_is_read(tmp_path):
    """Found by the fuzz suite: the header's one name, quoted, holds a carriage return and a semicolon."""
    path = write(tmp_path, "one.csv", '"a\rb;c"\nsome words\r\nmore words\n')
    assert read_table(path).to_dict("list") == {"a\rb;c": ["some words", "more words"]}
    assert read_table(write(tmp_path, "cr.csv", "text,user\rfine words,ann\rmore,bob")).shape == (2, 2)


def test_a_column_plainly_named_name_or_handle_holding_names_is_a_direct_identifier():
    """Issue 48: "name" of many values and "handle" were left out of the data, so the guard did not know their
    names and a text naming them left them in clear; they are direct identifiers now (never released, their names
    sought in the text), while a "Name" of a few levels stays a category and a product_name is still left out."""
    n = 60
    people = [f"{f} {s}" for f in ("Marisol", "Tobias", "Ines", "Dario", "Keiko", "Anouk") for s in "ABCDEFGHIJ"]
    frame = pd.DataFrame(
        {
            "text": [f"Spoke with {p.split()[0]} about the delayed parcel, number {i} of the week" for i, p in
                     enumerate(people)],
            "name": people,
            "handle": [f"@{p.replace(' ', '_').lower()}" for p in people],
            "product_name": [f"Product {i}" for i in range(n)],
        }
    )  # fmt: skip
    schema, why = infer_with_reasons(frame)
    assert schema.direct_identifiers == ("name", "handle") and schema.author is None
    assert set(why) == {"product_name"}
    categories = frame.drop(columns=["name", "handle"]).assign(names=["Dresses", "Knits", "Blouses"] * (n // 3))
    schema, why = infer_with_reasons(categories)
    assert schema.direct_identifiers == () and [f.name for f in schema.fields] == ["names"]
