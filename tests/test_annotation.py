"""A steward's annotations (issue 51): the stratified sample, the span model, span JSON and CoNLL written and read
back exactly, clear errors on malformed files, recall and precision with Wilson intervals computed by hand, the
annotations kept in the cache folder, measured into the release's residual detection risk and never in a
bundle."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from engine.annotation.detectors import GUARD, detector, detector_names
from engine.annotation.formats import read_annotations, to_conll, to_span_json
from engine.annotation.residual import AnnotatedDetection, with_annotations
from engine.annotation.sample import draw_sample, strata, stratifying_field
from engine.annotation.scores import ALL, Share, score
from engine.annotation.spans import Annotations, RecordAnnotation, checked_spans
from engine.annotation.store import annotations_path, delete_annotations, load_annotations, save_annotations
from engine.annotation.thresholds import kept_thresholds, type_curves
from engine.cli import main
from engine.data.dataset import Dataset
from engine.data.load import load_dataset
from engine.data.schema import Schema
from engine.errors import ConfigError, DataError
from engine.figures.detection import precision_recall_figure
from engine.intervals import wilson
from engine.protect import get_protector
from engine.protect.detection import DetectionShare
from tests.leakage import bundle_texts, scan_bundle

TEXT = "Call Ann Lee at 555-1234 today #help"
GOLD = RecordAnnotation(0, TEXT, ((5, 12, "PERSON"), (16, 24, "PHONE")))
FOUND = [(5, 8, "PERSON"), (16, 24, "PHONE"), (31, 36, "HASHTAG")]


def test_the_sample_is_stratified_seeded_and_grows_by_keeping_what_it_had(tiny_dataset):
    assert stratifying_field(tiny_dataset) == "airline"
    labels = strata(tiny_dataset)
    assert len(set(labels)) == 8  # two airlines × four length quartiles
    first = draw_sample(tiny_dataset, 8, seed=3)
    assert first == draw_sample(tiny_dataset, 8, seed=3) and len(set(first)) == 8
    assert draw_sample(tiny_dataset, 16, seed=3)[:8] == first  # 50 more keep the 50 annotated
    assert draw_sample(tiny_dataset, 8, seed=4) != first
    for size in (5, 8, 13):
        drawn = draw_sample(tiny_dataset, size, seed=3)
        for h in set(labels):  # within one record of its proportional share
            share = size * np.mean(labels == h)
            assert abs(sum(labels[r] == h for r in drawn) - share) < 1
    assert sorted(draw_sample(tiny_dataset, 500)) == list(range(tiny_dataset.n_records))
    with pytest.raises(Exception, match="a sample of 0 records is not accepted"):
        draw_sample(tiny_dataset, 0)


def test_recall_and_precision_by_hand():
    scores = score([GOLD], [FOUND])
    every, person = scores.get(ALL, "token"), scores.get("PERSON", "token")
    # gold tokens Ann Lee | 555 - 1234: four of five found; found tokens Ann, 555 - 1234, # help: four of six right
    assert (every.recall.hit, every.recall.total, every.precision.hit, every.precision.total) == (4, 5, 4, 6)
    assert (person.recall.hit, person.recall.total) == (1, 2)
    assert scores.get("HASHTAG", "token").precision == Share(0, 2)
    spans = scores.get(ALL, "span")  # "Ann Lee" found in part is missed; "#help" lies in no gold span
    assert (spans.recall.hit, spans.recall.total, spans.precision.hit, spans.precision.total) == (1, 2, 2, 3)
    assert every.recall.interval() == wilson(4, 5)
    assert every.recall.text() == "80% [38–96%]"
    # where labels matter, a phone number found as a hashtag is not found
    strict = score([GOLD], [[(5, 8, "PERSON"), (16, 24, "HASHTAG")]], by_label=True)
    assert strict.get(ALL, "token").recall == Share(1, 5)
    assert score([GOLD], [[(5, 8, "PERSON"), (16, 24, "HASHTAG")]]).get(ALL, "token").recall == Share(4, 5)
    table = scores.table("token")
    assert list(table["label"]) == [ALL, "HASHTAG", "PERSON", "PHONE"]
    with pytest.raises(ValueError, match="one list of detected spans per annotated record"):
        score([GOLD], [])


def test_both_formats_read_back_exactly():
    texts = {
        3: "#WTF @united, Johnson's bag\tlost in New York",
        7: "Ann Ann Lee\nsecond line",
        9: "nothing here",
    }
    records = [
        RecordAnnotation(3, texts[3], ((0, 4, "HASHTAG"), (5, 12, "HANDLE"), (14, 18, "PERSON"), (36, 44, "GPE"))),
        RecordAnnotation(7, texts[7], ((0, 3, "PERSON"), (4, 11, "PERSON"))),  # two names side by side
        RecordAnnotation(9, texts[9], ()),
    ]
    conll = to_conll(records)
    assert "#\tB-HASHTAG\nWTF\tI-HASHTAG" in conll and "John\tB-PERSON\nson\tO" in conll
    assert "Ann\tB-PERSON\nAnn\tB-PERSON\nLee\tI-PERSON" in conll
    assert read_annotations(conll, "a.conll", texts) == records
    assert read_annotations(to_span_json(records), "a.json", texts) == records
    # a CoNLL block without its text line takes the data's
    bare = "\n".join(line for line in conll.splitlines() if not line.startswith("# text"))
    assert read_annotations(bare, "a.conll", texts) == records


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("a.conll", "# record = 9\nnothing\tO\nhere\tX-ORG\n", "a.conll line 3: 'here\\tX-ORG' is not a token"),
        ("a.conll", "nothing\tO\nhere\tO\n", "a.conll line 1: the record's block has no '# record = N' line"),
        ("a.conll", "# record = 9\nnothing\tO\nthere\tO\n", "line 3: token 'there' is not the next word of record 9"),
        ("a.conll", "# record = 4\nnothing\tO\n", "record 4 is not one of the records that may be annotated"),
        ("a.conll", '# record = 9\n# text = "other"\nother\tO\n', "the text of record 9 is not the data's"),
        ("a.json", '[{"record": 9, "spans": [[0, 99, "ORG"]]}]', "a.json record 1: span [0, 99, ORG] does not lie"),
        ("a.json", '[{"record": 9, "spans": [[0, 7, "ORG"], [3, 9, "ORG"]]}]', "record 1: spans [0, 7, ORG] and"),
        ("a.json", '[{"record": 9}, {"text": "x"}]', "a.json record 2 has no whole-number 'record'"),
        ("a.json", '[{"record": 9, "spans": [[0, 7, "CAT"]]}]', "label 'CAT' is not accepted; accepted: ORG, PERSON"),
        ("a.json", '[{"record": 9}, {"record": 9}]', "record 9 is annotated twice"),
        ("a.json", '[{"record": 9,', "a.json: not valid JSON (line 1"),
        ("a.json", "[]", "a.json holds no annotated record"),
    ],
)
def test_a_malformed_file_is_refused_naming_its_line_or_record(name, content, message):
    with pytest.raises(DataError, match=re.escape(message)):
        read_annotations(content, name, {9: "nothing here"}, labels=("ORG", "PERSON"))


def test_spans_are_trimmed_and_whitespace_alone_is_refused():
    assert checked_spans("a  Bob  b", [(2, 7, "PERSON")], "x") == ((3, 6, "PERSON"),)
    with pytest.raises(DataError, match="holds only whitespace"):
        checked_spans("a    b", [(1, 4, "PERSON")], "x")
    with pytest.raises(DataError, match="a label is one word"):
        checked_spans("a Bob b", [(2, 5, "A PERSON")], "x")


def test_annotations_are_kept_in_the_cache_folder_and_a_damaged_file_is_named(tiny_dataset):
    kept = Annotations(tiny_dataset.fingerprint, "redact", (3, 1, 2)).with_record(GOLD)
    path = save_annotations(kept)
    assert path == annotations_path(tiny_dataset.fingerprint, "redact") and path.stat().st_mode & 0o077 == 0
    assert load_annotations(tiny_dataset.fingerprint, "redact") == kept
    assert load_annotations(tiny_dataset.fingerprint, GUARD) is None
    path.write_text("{", encoding="utf-8")
    with pytest.raises(DataError, match="is damaged; delete it"):
        load_annotations(tiny_dataset.fingerprint, "redact")
    path.unlink()


def _annotate(dataset, records=(0, 5)) -> Annotations:
    """The handle and the hashtag of each record marked, and "flight" as a product redaction never finds."""
    out = Annotations(dataset.fingerprint, "redact", tuple(records))
    for r in records:
        text = dataset.texts[r]
        handle = (0, text.index(" "), "HANDLE")
        tag = (text.index("#"), len(text), "HASHTAG")
        flight = [(text.index("flight"), text.index("flight") + 6, "PRODUCT")] if "flight" in text else []
        out = out.with_record(RecordAnnotation(r, text, checked_spans(text, [handle, tag, *flight], "test")))
    return out


def test_the_guard_and_redaction_detectors_find_what_their_releases_replace(tiny_dataset):
    protector = get_protector("redact", use_ner=False)
    records = [5, 0]
    guard = detector(protector, GUARD).find(tiny_dataset, records)
    texts = [tiny_dataset.texts[r] for r in records]
    assert guard.at(None) == {r: [(0, 8, "HANDLE")] for r in records}  # "@friend1", "@friend0"; no hashtag
    found = detector(protector).find(tiny_dataset, records)
    assert found.at(0) == {5: [], 0: []}
    for r, text in zip(records, texts):
        assert [text[s:e] for s, e, _ in found.at(1)[r]] == [text.split()[0], text.split()[-1]]
    with pytest.raises(Exception, match="record 99 is not in the data; accepted: 0 to 23"):
        detector(protector).find(tiny_dataset, [99])
    with pytest.raises(Exception, match="has no detector 'kanon'; accepted: redact, guard"):
        detector(protector, "kanon")


def test_the_residual_detection_risk_is_measured_on_the_stewards_records(tiny_dataset):
    protector = get_protector("redact", use_ner=False)
    assert detector_names(protector) == ["redact", GUARD]
    assert detector(protector).labels[:1] == ("URL",)
    fitted = protector.fit(tiny_dataset)
    shipped = fitted.release(1)
    assert all(not d.annotated for d in shipped.details if isinstance(d, DetectionShare))
    assert with_annotations(shipped, tiny_dataset, protector) is shipped  # nothing annotated: as it was
    kept = save_annotations(_annotate(tiny_dataset))  # record 0 says "flight", record 5 does not
    try:
        at_1 = with_annotations(shipped, tiny_dataset, protector)
        shares = {d.what: (d.found, d.total) for d in at_1.details if isinstance(d, DetectionShare)}
        assert shares == {"@handles": (2, 2), "#hashtags": (2, 2), "products": (0, 1)}
        share = at_1.detail(DetectionShare)
        assert share is not None and share.annotated and share.gold == "your 2 annotated records"
        last = [d for d in at_1.details if isinstance(d, DetectionShare)][-1]
        assert "URLs" in last.unmeasured and "#hashtags" not in last.unmeasured  # at level 1, none marked
        assert "person names" not in last.unmeasured  # level 2's
        assert "not measured: your 2 annotated records hold none of URLs, e-mail addresses" in last.describe()
        assert (
            "finds an estimated 100% [34–100%] of @handles in this data: 2 of 2 in your 2 annotated" in share.describe()
        )
        scores = at_1.detail(AnnotatedDetection)
        assert scores is not None and scores.detector == "redaction at level 1"
        # "@", "friendN", "#", "tagN" in each record, found; "flight" in record 0, missed
        assert scores.scores.get(ALL, "token").recall == Share(8, 9)
        at_0 = with_annotations(fitted.release(0), tiny_dataset, protector)
        assert {d.what: d.found for d in at_0.details if isinstance(d, DetectionShare)} == dict.fromkeys(
            ("@handles", "#hashtags", "products"), 0
        )
    finally:
        kept.unlink()


def test_a_bundle_exported_after_annotating_holds_the_measure_but_no_annotation(tiny_files, tmp_path):
    dataset = load_dataset(tiny_files.parent / "data.csv", tiny_files)
    annotations = _annotate(dataset)
    kept = save_annotations(annotations)
    out = tmp_path / "bundle"
    try:
        argv = ["release", "--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
        argv += ["--method", "redact", "--no-use-ner", "--knob", "1", "--out", str(out)]
        assert main(argv) == 0
    finally:
        kept.unlink()
    manifest = json.loads((out / "manifest.json").read_text())
    measured = {d["what"]: (d["found"], d["total"], d["annotated"]) for d in manifest["detection"]}
    assert measured == {"@handles": (2, 2, True), "#hashtags": (2, 2, True), "products": (0, 1, True)}
    report = (out / "report.html").read_text()
    assert "Detection measured on your data" in report and "on 2 annotated records" in report
    files = bundle_texts(out)
    assert scan_bundle(out, dataset) == []
    for name, text in files.items():
        assert kept.name not in text and kept.stem not in text, name
        for a in annotations.reviewed():
            for s, e, label in a.spans:  # no span as the annotations file or an export writes it
                assert f'[{s}, {e}, "{label}"]' not in text and f'[{s},{e},"{label}"]' not in text, name
        assert '"spans"' not in text and "# record =" not in text, name
    # the annotations are gone (a reviewer's machine): the replay takes the scores the record kept, byte for byte
    assert manifest["annotated_detection"][0]["scores"]["records"] == 2
    assert main(["verify", str(out), "--data", str(tiny_files.parent / "data.csv")]) == 0


PHONES = [
    "call me at 555-123-4567 today",
    "order 2125551234 shipped",
    "ticket 0123 4567 89 lost",
    "my ref is (212) 555-1234 ok",
]


def _phone_data() -> tuple[Dataset, Annotations]:
    """Four records whose numbers the recognizer scores 0.9 (a phone after "call"), 0.7, 0.7 and 0.7; the steward
    marked the first and the last as phones and removed the order and ticket numbers."""
    dataset = Dataset("phones", pd.DataFrame({"text": PHONES}), Schema(text="text"), source="tests")
    annotations = Annotations(dataset.fingerprint, "redact", (0, 1, 2, 3))
    for r, spans in ((0, [(11, 23, "PHONE")]), (1, []), (2, []), (3, [(10, 24, "PHONE")])):
        annotations = annotations.with_record(RecordAnnotation(r, PHONES[r], tuple(spans)))
    return dataset, annotations


def test_a_scored_type_has_a_precision_recall_point_per_confidence_computed_by_hand():
    dataset, annotations = _phone_data()
    det = detector(get_protector("redact", use_ner=False))
    curves = {c.label: c for c in type_curves(det, dataset, annotations, knob=1)}
    assert set(curves) == {"PHONE"}  # no other type found or marked; spaCy off
    phone = curves["PHONE"]
    assert phone.scored and phone.current == 0.5 and "scored 0.2–1" in phone.why
    # marked tokens: 555 - 123 - 4567 and ( 212 ) 555 - 1234, 11; the order number 1 token, the ticket's 3
    got = [(p.threshold, p.recall.hit, p.recall.total, p.precision.hit, p.precision.total) for p in phone.points]
    assert got == [(0.7, 11, 11, 11, 15), (0.9, 5, 11, 5, 5), (1.0, 0, 11, 0, 0)]
    recalls = [p.recall.value for p in phone.points]
    assert recalls == sorted(recalls, reverse=True)  # a higher threshold never finds more
    assert phone.at(0.5) == phone.points[0] and phone.at(0.8) == phone.points[1] and phone.at(0.95).threshold == 1.0
    assert phone.points[1].recall.text() == Share(5, 11).text()  # the panel's "45% [..–..%]" with Wilson's bounds
    fig = precision_recall_figure([phone], {"PHONE": 0.9})
    line, curve, ring = fig.data
    assert list(line.x) == [1.0, 5 / 11]  # the line stops where nothing is found
    assert list(curve.x) == [1.0, 5 / 11, 0.0] and list(curve.text) == ["0.7", "0.9", "1"]
    assert (ring.x[0], ring.y[0]) == (5 / 11, 1.0)  # the chosen threshold's point
    assert list(curve.marker.symbol) == ["circle", "circle", "circle-open"]  # none found at 1: no precision
    assert curve.error_y.arrayminus[1] == pytest.approx(1.0 - wilson(5, 5)[0])
    # the kept threshold is redaction's parameter: a release at it keeps the order and the ticket numbers
    kept = kept_thresholds((), {"PHONE": 0.9})
    assert kept == ("PHONE=0.9",)
    released = get_protector("redact", use_ner=False, thresholds=kept).fit(dataset).release(1).data["text"].tolist()
    assert "555-123-4567" not in released[0] and released[1:3] == PHONES[1:3] and "555-1234" in released[3]
    assert kept_thresholds(kept, {"PHONE": 0.5}) == ()  # back to the default: no entry
    with pytest.raises(ConfigError, match="no identifier type 'PHON'; the types are"):
        kept_thresholds((), {"PHON": 0.9})
    with pytest.raises(ConfigError, match="the threshold of PHONE is 1.5; a threshold is between 0 and 1"):
        kept_thresholds((), {"PHONE": 1.5})


def test_a_detector_without_scores_has_one_point_per_type(tiny_dataset):
    annotations = Annotations(tiny_dataset.fingerprint, GUARD, (0,))
    text = tiny_dataset.texts[0]
    annotations = annotations.with_record(RecordAnnotation(0, text, ((0, len("@friend0"), "HANDLE"),)))
    det = detector(get_protector("redact", use_ner=False), GUARD)
    [handle] = type_curves(det, tiny_dataset, annotations, knob=0)
    assert handle.label == "HANDLE" and not handle.scored and handle.current is None and len(handle.points) == 1
    assert "no score per span" in handle.why and handle.points[0].recall == Share(2, 2)
    with pytest.raises(ValueError, match="need 1 reviewed record or more; none reviewed"):
        type_curves(det, tiny_dataset, Annotations(tiny_dataset.fingerprint, GUARD, (0,)), knob=0)


def test_the_annotate_command_samples_imports_scores_and_exports(tiny_files, tmp_path, capsys):
    data = tiny_files.parent / "data.csv"
    dataset = load_dataset(data, tiny_files)
    where = ["--data", str(data), "--schema", str(tiny_files), "--method", "redact", "--no-use-ner"]
    sample = tmp_path / "sample.json"
    try:
        assert main(["annotate", "score", *where]) == 2
        assert "no annotated record of" in capsys.readouterr().err
        assert main(["annotate", "sample", *where, "--n", "6", "--out", str(sample)]) == 0
        assert "6 records of" in capsys.readouterr().out
        rows = json.loads(sample.read_text())
        assert [r["record"] for r in rows] == draw_sample(dataset, 6) and all(r["spans"] for r in rows)
        assert {s[2] for r in rows for s in r["spans"]} == {"HANDLE", "HASHTAG"}  # the detector's, filled in
        for r in rows:  # the steward removes every hashtag: none is an identifier here
            r["spans"] = [s for s in r["spans"] if s[2] != "HASHTAG"]
        sample.write_text(json.dumps(rows))
        assert main(["annotate", "import", str(sample), *where]) == 0
        assert "imported 6 annotated records (6 spans)" in capsys.readouterr().out
        assert main(["annotate", "score", *where, "--knob", "1", "--curves"]) == 0
        lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
        # every handle found (@ friend0: 2 tokens a record); the hashtags' 2 tokens a record found, not marked
        assert f"all types 12 {Share(12, 12).text()} {Share(12, 24).text()} {Share(6, 6).text()}" in lines, lines
        assert "HANDLE: format matches scored 0.2–1 by their validator and context words" in lines
        assert f"* threshold 0.9 recall {Share(12, 12).text()} precision {Share(12, 12).text()}" in lines
        assert "threshold 1 recall 0% [0–24%] precision –" in lines  # above every handle's confidence
        assert main(["annotate", "export", *where, "--format", "conll"]) == 0
        conll = capsys.readouterr().out
        assert conll.count("# record = ") == 6 and "B-HANDLE" in conll and "HASHTAG" not in conll
        assert (
            read_annotations(conll, "a.conll", dict(enumerate(dataset.texts)), ())
            == load_annotations(dataset.fingerprint, "redact").reviewed()
        )
        # malformed files: what is wrong and what is accepted
        text = dataset.texts[rows[0]["record"]]
        for spans, said in (
            ([[0, 999, "HANDLE"]], f"does not lie within its text of {len(text)} characters"),
            ([[0, 3, "HANDEL"]], "label 'HANDEL' is not accepted; accepted: URL, EMAIL, PHONE, HANDLE,"),
        ):
            bad = tmp_path / "bad.json"
            bad.write_text(json.dumps([{"record": rows[0]["record"], "text": text, "spans": spans}]))
            assert main(["annotate", "import", str(bad), *where]) == 2
            assert said in capsys.readouterr().err
        bad.write_text(json.dumps([{"record": 999, "spans": []}]))  # another dataset's ids
        assert main(["annotate", "import", str(bad), *where]) == 2
        assert "record 999 is not one of the records that may be annotated in this data" in capsys.readouterr().err
        bad.write_text(json.dumps([{"record": 0, "text": "another text", "spans": []}]))
        assert main(["annotate", "import", str(bad), *where]) == 2
        assert "is not the data's (a file made from other data?)" in capsys.readouterr().err
        bad.write_text("@friend0 B-HANDLE\n")
        assert main(["annotate", "import", str(tmp_path / "bad.conll"), *where]) == 2
        assert "no such file" in capsys.readouterr().err
    finally:
        delete_annotations(dataset.fingerprint, "redact")
