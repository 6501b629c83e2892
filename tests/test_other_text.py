"""Free-text columns besides the text (issue 54): inference marks every one (`Schema.other_text`), the schema
writes and reads them, and a release leaves each out with the reason (or, asked to, protects it with the text);
a rating is offered as sensitive."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from engine.cli import main
from engine.data.infer import infer_schema
from engine.data.load import load_dataset
from engine.data.schema import Schema
from engine.errors import ConfigError, DataError
from engine.export.identifiers import OTHER_TEXT_DROPPED, OTHER_TEXT_GUARDED, PROTECTED
from tests.leakage import bundle_texts

N = 60
_TEXT_WORDS = ["soft", "fabric", "runs", "small", "lovely", "colour", "would", "buy", "again", "seams", "the", "is"]
# the summaries' own words, none of them in the review texts, so that any of them in a bundle comes from a summary
_SUMMARY_FIRST = ["Bravo", "Dismal", "Quirky", "Sturdy", "Flimsy", "Gorgeous", "Tepid"]
_SUMMARY_SECOND = ["gizmo", "lotion", "mascara", "pomade", "shampoo", "serum", "balm", "toner", "primer", "gloss"]


def reviews_frame(n: int = N) -> pd.DataFrame:
    """The shape of the Amazon beauty reviews: an author, a product, the reviewer's name, helpful votes, the
    review, the rating, a summary (two words, 25 different for 60 reviews, as the beauty reviews' 1,011 summaries
    of mostly two or three words for 5,269 reviews) and two times."""
    return pd.DataFrame(
        {
            "reviewerID": [f"A{i % 15:03d}XZ" for i in range(n)],
            "asin": [f"B00{i % 6}K2PJ" for i in range(n)],
            "reviewerName": [f"Person {i % 17}" for i in range(n)],
            "helpful": [f"[{i % 3}, {i % 4}]" for i in range(n)],
            "reviewText": [
                f"review {i}: " + " ".join(_TEXT_WORDS[(i + j) % len(_TEXT_WORDS)] for j in range(9)) for i in range(n)
            ],
            "overall": [1 + (i * 7) % 5 for i in range(n)],
            "summary": [f"{_SUMMARY_FIRST[i % 25 % 7]} {_SUMMARY_SECOND[i % 25 % 10]}" for i in range(n)],
            "unixReviewTime": [1_400_000_000 + 86_400 * (i % 40) for i in range(n)],
            "reviewTime": [f"0{1 + i % 9} {1 + i % 3}, 2014" for i in range(n)],
        }
    )


def summary_words() -> set[str]:
    return {w.lower() for w in _SUMMARY_FIRST + _SUMMARY_SECOND}


def test_inference_marks_both_text_columns_and_offers_the_rating_as_sensitive():
    frame = reviews_frame()
    schema = infer_schema(frame)
    assert (schema.text, schema.author) == ("reviewText", "reviewerID")
    assert schema.other_text == ("summary",)  # marked, not a categorical field released as is
    assert "summary" not in schema.field_names
    roles = {f.name: f.role for f in schema.fields}
    assert roles["overall"] == "sensitive"  # a 1–5 rating
    assert roles["asin"] == roles["helpful"] == roles["reviewTime"] == "other"
    assert roles["unixReviewTime"] == "other"  # large whole numbers are no rating
    # a rating scale with no rating's name is offered as sensitive too; a count of the same values is not
    frame["satisfaction"] = [(i * 3) % 7 for i in range(N)]  # 0–6: a scale
    frame["nights"] = [(i * 3) % 7 for i in range(N)]  # named as a count
    roles = {f.name: f.role for f in infer_schema(frame).fields}
    assert (roles["satisfaction"], roles["nights"]) == ("sensitive", "other")


def test_a_label_column_with_few_values_is_no_free_text():
    """Time zones and neighbourhoods are written in words but repeat: few values for many texts."""
    frame = reviews_frame(200)
    zones = ["Eastern Time (US & Canada)", "Pacific Time (US & Canada)", "Central Time (US & Canada)", "London"]
    frame["user_timezone"] = [zones[i % 4] for i in range(200)]
    frame["summary"] = [f"the same two {i % 15}" for i in range(200)]  # 15 values: too few to be free text
    schema = infer_schema(frame)
    assert schema.other_text == () and {"user_timezone", "summary"} <= set(schema.field_names)


def test_the_schema_writes_and_reads_other_text_and_refuses_bad_entries(tmp_path):
    schema = Schema(text="reviewText", other_text=("summary",), other_text_release="protect")
    toml = schema.to_toml()
    assert 'other_text = ["summary"]' in toml and 'other_text = "protect"' in toml
    path = tmp_path / "s.toml"
    path.write_text(toml)
    assert Schema.from_toml(path) == schema
    assert "other_text" not in Schema(text="t").to_toml()  # a schema without one reads as before
    with pytest.raises(ConfigError, match=r"\[release\] other_text = 'keep' is not accepted; accepted: drop, protect"):
        Schema(text="t", other_text=("s",), other_text_release="keep")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="'reviewText' is the text column; 'other_text' lists the free-text"):
        Schema(text="reviewText", other_text=("reviewText",))
    with pytest.raises(ConfigError, match="'other_text' must be a list of column names, got 'summary'"):
        Schema.from_dict({"text": "t", "other_text": "summary"})
    with pytest.raises(ConfigError, match="'other_text' lists a column more than once"):
        Schema(text="t", other_text=("s", "s"))


def test_a_schema_naming_an_unknown_other_text_column_is_refused_with_the_columns(tmp_path):
    data = tmp_path / "reviews.csv"
    reviews_frame().to_csv(data, index=False)
    schema = tmp_path / "reviews.schema.toml"
    schema.write_text('text = "reviewText"\nother_text = ["sumary"]\n')
    with pytest.raises(DataError) as err:
        load_dataset(data, schema)
    message = str(err.value)
    assert "has no column 'sumary' (the schema's other free-text column, listed in other_text)" in message
    assert "did you mean 'summary'?" in message and "the file's columns are: reviewerID, asin" in message


def _release(tmp_path, capsys, *extra: str) -> tuple[dict, dict[str, str]]:
    data = tmp_path / "reviews.csv"
    if not data.exists():
        reviews_frame().to_csv(data, index=False)
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(data), "--method", "redact", "--knob", "1", "--out", str(out), "--replace"]
    code = main([*argv, "--audit-log", str(tmp_path / "audit.sqlite"), *extra])
    _, err = capsys.readouterr()
    assert code == 0, err
    return json.loads((out / "manifest.json").read_text()), bundle_texts(out)


def test_a_release_of_the_reviews_holds_no_value_of_the_second_text_column(tmp_path, capsys):
    """`textsdc release` on the reviews with the inferred schema: the summary is in no file of the bundle (not
    one of its words), the manifest and the report say it was dropped and why, and the rating is sensitive."""
    manifest, files = _release(tmp_path, capsys, "--no-cache")
    assert manifest["schema"]["other_text"] == ["summary"]
    assert manifest["schema"]["fields"]["overall"]["role"] == "sensitive"
    assert manifest["columns"]["summary"] == OTHER_TEXT_DROPPED
    assert manifest["columns"]["reviewText"] == PROTECTED
    assert "summary" not in pd.read_csv(tmp_path / "bundle" / "release.csv").columns
    words = summary_words()
    for name, content in files.items():
        found = sorted(w for w in words if w in content.lower())
        assert not found, f"{name} holds words of the summaries: {found}"
    report = files["report.html"]
    assert "free text besides the text column (other_text)" in report
    assert "dropped: free text besides the text column, which the methods do not protect" in report


def test_a_schema_that_asks_for_the_summary_protected_releases_it_redacted_and_guarded(tmp_path, capsys):
    frame = reviews_frame()
    frame.loc[3, "summary"] = "Call 212-555-0187 or mail jo.bloggs@example.org"
    frame.loc[3, "reviewText"] += " write to jo.bloggs@example.org"  # the same address in the text: one placeholder
    frame.loc[4, "summary"] = "Person 9 sent it back"  # a reviewer's name, from the direct-identifier column
    data = tmp_path / "reviews.csv"
    frame.to_csv(data, index=False)
    inferred = load_dataset(data).schema
    assert inferred.other_text == ("summary",)
    schema = tmp_path / "reviews.schema.toml"
    schema.write_text(inferred.to_toml().replace("\n[fields.", '\n[release]\nother_text = "protect"\n\n[fields.', 1))
    manifest, files = _release(tmp_path, capsys, "--no-cache")
    assert manifest["schema"]["release"] == {"other_text": "protect"}
    assert manifest["columns"]["summary"] == PROTECTED
    released = pd.read_csv(tmp_path / "bundle" / "release.csv", keep_default_na=False)
    assert released.loc[3, "summary"] == "Call [PHONE_1] or mail [EMAIL_1]"
    assert released.loc[3, "reviewText"].endswith(" write to [EMAIL_1]")
    assert released.loc[4, "summary"] == "[NAME] sent it back"  # level 1 keeps names: the release guard took it
    assert released.loc[10, "summary"] == frame.loc[10, "summary"]  # nothing to redact: kept
    changes = pd.read_csv(tmp_path / "bundle" / "changes.csv")
    assert set(changes["column"]) == {"reviewText", "summary"}
    assert "212-555-0187" not in "".join(files.values()) and "jo.bloggs" not in "".join(files.values())


def test_a_method_that_protects_the_text_alone_releases_a_protected_summary_guarded(tmp_path, capsys):
    """A field synthesis asked to protect the summary: the guard replaces its formats and names, the manifest
    says the method protects the text column only, and the bundle warns of it."""
    frame = reviews_frame()
    frame.loc[3, "summary"] = "Call 212-555-0187 for it"
    data = tmp_path / "reviews.csv"
    frame.to_csv(data, index=False)
    schema = tmp_path / "reviews.schema.toml"
    schema.write_text(
        load_dataset(data).schema.to_toml().replace("\n[fields.", '\n[release]\nother_text = "protect"\n\n[fields.', 1)
    )
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(data), "--method", "cart", "--out", str(out), "--no-cache"]
    assert main([*argv, "--audit-log", str(tmp_path / "audit.sqlite")]) == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["columns"]["summary"] == OTHER_TEXT_GUARDED
    assert any("summary" in w and "release guard alone" in w for w in manifest["warnings"])
    released = pd.read_csv(out / "release.csv", keep_default_na=False)
    assert "212-555-0187" not in released.loc[3, "summary"] and "[PHONE]" in released.loc[3, "summary"]


def test_the_data_page_shows_the_summary_as_other_free_text_with_the_reason_and_keeps_it_so():
    """The Data page's field table: the summary has the role "other free text" and its note says why no release
    holds it; the mapping it makes back into a schema keeps it an other free-text column."""
    from dashboard import loading

    frame = reviews_frame()
    schema, unclear = loading.default_schema_for(frame, None)
    assert unclear is None
    table = loading.field_table(frame, schema, {"reviewText", "reviewerID"})
    rows = table.set_index("column")
    assert rows.loc["summary", "role"] == loading.OTHER_TEXT == "other free text"
    assert "left out of every release" in rows.loc["summary", "note"]
    assert rows.loc["overall", "role"] == "sensitive"
    built = loading.build_schema("reviewText", "reviewerID", None, table, None)
    assert built.other_text == ("summary",) and "summary" not in built.field_names
    table.loc[table["column"] == "summary", "role"] = "key"  # the steward's choice: a field after all
    assert loading.build_schema("reviewText", "reviewerID", None, table, None).other_text == ()


def test_a_command_naming_the_summary_as_a_field_is_told_why_it_is_none_and_given_the_schema(tmp_path, capsys):
    """`textsdc release --method swap --metadata summary`: the error says the summary is free text besides the text,
    which no release holds, and prints the schema that makes it a field instead."""
    data = tmp_path / "reviews.csv"
    reviews_frame().to_csv(data, index=False)
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(data), "--method", "swap", "--metadata", "summary", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'summary' is a column of the file that reviews leaves out of every release: free text besides" in err
    schema = err[err.index('text = "reviewText"') :]
    (tmp_path / "reviews.schema.toml").write_text(schema)
    kept = load_dataset(data).schema
    assert kept.other_text == () and kept.field("summary").role == "sensitive" and not out.exists()


def test_the_amazon_reviews_summary_is_other_free_text_and_their_style_a_field():
    """On the Amazon fashion reviews (when the raw data is here): the summary (274 different for 438 different
    reviews, mostly two words) is other free text; the style, put together from a few labels ("Big Boys:
    Blue/Orange", 285 different), stays a field; the rating is sensitive."""
    from engine.data.readers import read_file
    from tests.conftest import SHARED_DATA

    path = SHARED_DATA / "reviews" / "amazon2018_AMAZON_FASHION_5.jsonl"
    if not path.is_file():
        pytest.skip(f"the raw data file {path} is absent (it is not part of the repository)")
    schema = infer_schema(read_file(path).frame)
    assert (schema.text, schema.other_text) == ("reviewText", ("summary",))
    assert schema.field("style").role == "other" and schema.field("overall").role == "sensitive"
