"""Detection quality: gold files in both formats, scores on hand-counted examples, the command."""

import json

import pytest

from engine.cli import main
from engine.errors import DataError
from engine.progress import no_progress
from engine.protect import get_protector
from engine.text.detection_quality import GoldDocument, read_gold, score_detection, word_tokens

CONLL = "Ann\tB-person\nSmith\tI-person\nflew\tO\nto\tO\nParis\tB-location\n.\tO\n\n  \nhi\tO\n"


def test_conll_gives_text_spans_and_tokens(tmp_path):
    path = tmp_path / "gold.conll"
    path.write_text(CONLL, encoding="utf-8")
    first, second = read_gold(path)
    assert first.text == "Ann Smith flew to Paris ."
    assert first.spans == ((0, 9, "person"), (18, 23, "location"))
    assert [first.text[s:e] for s, e in first.tokens] == ["Ann", "Smith", "flew", "to", "Paris", "."]
    assert second.text == "hi" and second.spans == ()


def test_span_json_in_its_three_shapes(tmp_path):
    path = tmp_path / "gold.jsonl"
    rows = [
        {"text": "call 555-1234 now", "spans": [[5, 13, "PHONE"]]},
        {"text": "Bob here", "spans": [{"start": 0, "end": 3, "label": "PERSON"}]},
        {"text": "in Oslo", "annotations": [[[3, 7], "LOC"]]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert [d.spans for d in read_gold(path)] == [((5, 13, "PHONE"),), ((0, 3, "PERSON"),), ((3, 7, "LOC"),)]
    as_list = tmp_path / "gold.json"
    as_list.write_text(json.dumps(rows), encoding="utf-8")
    assert read_gold(as_list) == read_gold(path)


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("g.conll", "Ann\tperson\n", r"line 1: 'Ann\\tperson' is not a token and a BIO tag; accepted: CoNLL BIO"),
        ("g.jsonl", '{"text": "ab", "spans": [[0, 5, "X"]]}', r"span \[0, 5, X\] lies outside its text of 2"),
        ("g.jsonl", '{"spans": []}', r"record 1 has no 'text'"),
        ("g.json", "[{", "not valid JSON"),
        ("g.jsonl", '{"text": "ab", "spans": [[0]]}', r"span \[0\] is not \[start, end, label\]"),
        ("g.conll", "\n\n", "holds no document"),
    ],
)
def test_malformed_gold_files_are_named(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        read_gold(path)


def test_a_gold_file_in_another_encoding_is_named(tmp_path):
    path = tmp_path / "g.conll"
    path.write_bytes("Zoë\tB-person\n".encode("latin-1"))
    with pytest.raises(DataError, match="not UTF-8 text"):
        read_gold(path)


def doc(text, spans):
    return GoldDocument(text, tuple(spans), word_tokens(text))


def test_scores_on_a_hand_counted_example():
    # gold: "Ann Smith" (2 tokens, person), "Paris" (location), "555-1234" (3 tokens: 555, -, 1234)
    text = "Ann Smith flew to Paris , call 555-1234 today"
    gold = doc(text, [(0, 9, "PERSON"), (18, 23, "LOC"), (31, 39, "PHONE")])
    # found: "Smith" as PERSON (half the name), "Paris" as GPE, "today" as DATE (false), the phone in full
    found = [(4, 9, "PERSON"), (18, 23, "GPE"), (31, 39, "PHONE"), (40, 45, "DATE")]
    q = score_detection([gold], [found]).table.set_index("type")
    # tokens: gold 6 (Ann, Smith, Paris, 555, -, 1234); found 6 (Smith, Paris, 555, -, 1234, today), 5 correct
    assert q.loc["ALL", "gold_tokens"] == 6 and q.loc["ALL", "found_tokens"] == 6
    assert q.loc["ALL", "token_recall"] == pytest.approx(5 / 6)
    assert q.loc["ALL", "token_precision"] == pytest.approx(5 / 6)
    assert q.loc["ALL", "token_f2"] == pytest.approx(5 / 6)
    assert q.loc["PERSON", "token_recall"] == pytest.approx(1 / 2)
    assert q.loc["LOCATION", "token_recall"] == 1.0  # GPE and LOC are both locations
    # spans: "Ann Smith" is not found whole; 2 of 3 gold spans; 3 of 4 found spans overlap gold
    assert q.loc["ALL", "span_recall"] == pytest.approx(2 / 3)
    assert q.loc["ALL", "span_precision"] == pytest.approx(3 / 4)
    assert q.loc["ALL", "span_f2"] == pytest.approx(5 * 0.75 * (2 / 3) / (4 * 0.75 + 2 / 3))
    assert q.loc["DATE", "token_precision"] == 0.0


def test_recall_counts_tokens_found_under_any_label():
    text = "Kim Lee said hi"
    q = score_detection([doc(text, [(0, 7, "PERSON")])], [[(0, 7, "ORG")]]).table.set_index("type")
    assert q.loc["PERSON", "token_recall"] == 1.0
    assert q.loc["ORGANIZATION", "token_precision"] == 1.0  # replaced tokens that are in a gold span


def test_gold_aliases_of_our_labels_are_one_type_listed_once():
    text = "card 4111 1111 1111 1111 from 10.0.0.1 ssn 123-45-6789"
    gold = doc(text, [(5, 24, "CARD"), (30, 38, "IP"), (43, 54, "SSN")])
    found = [[(5, 24, "CREDIT_CARD"), (30, 38, "IP_ADDRESS"), (43, 54, "US_SSN")]]
    q = score_detection([gold], found).table
    assert list(q["type"]) == ["ALL", "CREDIT_CARD", "IP_ADDRESS", "US_SSN"]
    assert (q["token_recall"] == 1.0).all() and (q["token_precision"] == 1.0).all()


def test_the_command_writes_scores_and_figure(tmp_path, capsys):
    gold = tmp_path / "gold.jsonl"
    rows = [
        {"text": "mail jo@example.org or call (555) 123-4567", "spans": [[5, 19, "EMAIL"], [28, 42, "PHONE"]]},
        {"text": "card 4111 1111 1111 1111 and #15 in line", "spans": [[5, 24, "CREDIT_CARD"]]},
    ]
    gold.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert main(["evaluate-detection", "--gold", str(gold), "--level", "1", "--no-ner", "--out", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "detection.json").read_text())
    every = out["scores"][0]
    assert every["type"] == "ALL" and every["token_recall"] == 1.0 and every["token_precision"] == 1.0
    assert out["settings"] == {"level": 1, "thresholds": {}, "use_ner": False}
    assert (tmp_path / "detection.html").read_text().count("Detection quality per type") >= 1
    assert "2 documents of gold.jsonl, redaction level 1" in capsys.readouterr().out
    # a threshold above the phone's confidence leaves it out, and recall says so
    strict = tmp_path / "strict"
    args = ["evaluate-detection", "--gold", str(gold), "--no-ner", "--thresholds", "PHONE=0.99", "--out", str(strict)]
    assert main(args) == 0
    by_type = {r["type"]: r for r in json.loads((strict / "detection.json").read_text())["scores"]}
    assert by_type["PHONE"]["token_recall"] == 0.0 and by_type["EMAIL"]["token_recall"] == 1.0


def test_the_command_names_a_bad_threshold(tmp_path, capsys):
    gold = tmp_path / "gold.conll"
    gold.write_text(CONLL, encoding="utf-8")
    assert main(["evaluate-detection", "--gold", str(gold), "--thresholds", "PHONE"]) == 2
    assert "write TYPE=VALUE" in capsys.readouterr().err


def test_redactions_gold_check_scores_every_level_and_recall_grows_with_it(tmp_path):
    gold = tmp_path / "gold.jsonl"
    rows = [
        {
            "text": "Anna Berg called 555-123-4567 from Oslo on July 4th",
            "spans": [[0, 9, "PERSON"], [17, 29, "PHONE"], [35, 39, "LOC"], [43, 51, "DATE"]],
        },
        {
            "text": "@jo see https://x.org and ask Peter Smith at Acme Corp",
            "spans": [[0, 3, "HANDLE"], [30, 41, "PERSON"], [45, 54, "ORG"]],
        },
    ]
    gold.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    redaction = get_protector("redact")
    report = redaction.gold_check.run(gold, redaction, no_progress)
    assert list(report.table["Level"]) == [0, 1, 2, 3, 4] and report.default == "level 4"
    recall = report.table["Recall"].tolist()
    assert recall[0] == 0.0 and recall == sorted(recall) and recall[4] > recall[1]  # levels are cumulative
    assert set(report.scores) == {f"level {k}" for k in range(5)}
    with pytest.raises(DataError, match="not a token and a BIO tag"):
        bad = tmp_path / "bad.conll"
        bad.write_text("x\tperson\n", encoding="utf-8")
        redaction.gold_check.run(bad, redaction, no_progress)
