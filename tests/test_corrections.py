"""Allow and deny lists from a steward's corrections (issue 51): the lists learnt by hand, applied as exact
whole-word strings, the gain measured by cross-validation by hand, redaction and the release guard running
with the kept lists (a removed false positive no longer replaced, an added name replaced), the method
parameter in the cache key and the release record (digest and counts, no string), never in a bundle."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from engine.annotation.corrections import cross_validated, learn, learnt
from engine.annotation.detectors import GUARD, Found, detector
from engine.annotation.scores import ALL, Share
from engine.annotation.spans import Annotations, RecordAnnotation
from engine.cache import fit_key, sweep_name
from engine.cli import main
from engine.data.load import load_dataset
from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.corrections import (
    Corrections,
    KeptCorrections,
    corrections_path,
    drop_corrections,
    keep_corrections,
    kept_corrections,
)
from engine.protect.guard import Guard, guarded
from engine.protect.swap.entities import chunk_entities
from tests.leakage import bundle_texts, scan_bundle


def record(i: int, text: str, *marks: tuple[str, str]) -> RecordAnnotation:
    """Record ``i`` with each (string, label) of ``marks`` marked at its first occurrence."""
    return RecordAnnotation(i, text, tuple(sorted((text.index(s), text.index(s) + len(s), lab) for s, lab in marks)))


def spans_of(text: str, *marks: tuple[str, str]) -> list[tuple[int, int, str]]:
    return [(text.index(s), text.index(s) + len(s), lab) for s, lab in marks]


RECORDS = [
    record(0, "Ann met Bob at Acme", ("Ann", "PERSON"), ("Bob", "PERSON")),
    record(1, "Acme hired Bob and Ann", ("Bob", "PERSON")),
    record(2, "Cal said hi", ("Cal", "PERSON")),
    record(3, "Cal and Dee", ("Cal", "ORG"), ("Dee", "ORG")),
    record(4, "Cal wrote to Dee", ("Cal", "PERSON")),
    record(5, "Eve left", ("Eve", "PERSON")),
    record(6, "Eve ran"),
]
FOUND = {
    0: spans_of(RECORDS[0].text, ("Ann", "PERSON"), ("Acme", "ORG")),
    1: spans_of(RECORDS[1].text, ("Acme", "ORG"), ("Bob", "PERSON"), ("Ann", "PERSON")),
    3: spans_of(RECORDS[3].text, ("Dee", "PERSON")),
    4: spans_of(RECORDS[4].text, ("Dee", "PERSON")),
    6: spans_of(RECORDS[6].text, ("Eve", "PERSON")),
}


def test_the_lists_by_hand():
    lists = learn("fp", "redact", RECORDS, FOUND)
    # Acme found twice, never marked: allowed. Ann found and removed in record 1 but marked in record 0: neither.
    # Dee removed in record 4 but marked in record 3: neither. Eve marked in 5 and removed in 6: neither.
    assert lists.allow == ("Acme",)
    # Bob missed in record 0 (found in 1: no contradiction); Cal missed thrice, twice as a person
    assert lists.deny == (("Bob", "PERSON"), ("Cal", "PERSON"))
    assert lists.counts() == {"allow": 1, "deny": 2}
    assert learn("fp", "redact", RECORDS[::-1], FOUND) == lists  # the order of review does not matter
    assert learn("fp", "redact", RECORDS, FOUND).digest() == lists.digest()


def test_the_lists_apply_as_exact_whole_words():
    lists = Corrections("fp", "redact", allow=("Acme",), deny=(("Bob", "PERSON"), ("Bob Lee", "PERSON")))
    text = "Bob, Bobby, bob, BOB and Acme Corp met Acme; Bob Lee too"
    found = [(*s, 3.0) for s in spans_of(text, ("Acme Corp", "ORG"))] + [
        (text.rindex("Acme"), text.rindex("Acme") + 4, "ORG", 3.0)
    ]
    out = lists.apply(text, found, lambda label: 2.0)
    assert [(text[s:e], lab, t) for s, e, lab, t in out] == [
        ("Bob", "PERSON", 2.0),  # Bobby, bob and BOB are other words
        ("Acme Corp", "ORG", 3.0),  # only the exact string "Acme" is allowed
        ("Bob Lee", "PERSON", 2.0),  # the longest denied string at a place
    ]
    covered = lists.apply("Dr Bob Lee", [(0, 10, "PERSON", 2.0)])
    assert covered == [(0, 10, "PERSON", 2.0)]  # a kept span already covers it
    overlapped = lists.apply("Mr Bob Lee", [(0, 6, "PERSON", 2.0)])
    assert overlapped == [(3, 10, "PERSON", 0.0)]  # the steward's mark replaces a span it overlaps


def test_the_cross_validated_gain_by_hand():
    texts = ["Zed likes Acme", "Zed hates Acme", "Yan uses Acme", "Acme sued Yan"]
    names = ["Zed", "Zed", "Yan", "Yan"]
    records = [record(i, t, (n, "PERSON")) for i, (t, n) in enumerate(zip(texts, names))]
    annotations = Annotations("fp", "redact", (0, 1, 2, 3), {r.record: r for r in records})
    found = [spans_of(t, ("Acme", "ORG")) for t in texts]
    found[3] += spans_of(texts[3], ("Yan", "PERSON"))
    found_ = Found("redact", (0, 1, 2, 3), tuple(tuple((s, e, lab, 0.0) for s, e, lab in sorted(f)) for f in found))
    gain = cross_validated(annotations, found_, folds=2)
    assert gain.folds == 2
    before, after = gain.before.get(ALL, "token"), gain.after.get(ALL, "token")
    # before: of the gold Zed, Zed, Yan, Yan only record 3's Yan is found; Acme four times and that Yan found
    assert (before.recall, before.precision) == (Share(1, 4), Share(1, 5))
    # folds {0, 2} and {1, 3}: record 0 and 2 held out, lists from 1 and 3 (allow Acme, deny Zed): Zed found, Yan
    # missed; records 1 and 3 held out, lists from 0 and 2 (allow Acme, deny Zed and Yan): both found
    assert (after.recall, after.precision) == (Share(3, 4), Share(3, 3))
    # learnt on all four records the lists would find all four: the cross-validation does not say so
    lists = learnt(annotations, found_)
    assert lists.deny == (("Yan", "PERSON"), ("Zed", "PERSON"))
    assert cross_validated(annotations, found_, folds=2) == gain  # deterministic
    with pytest.raises(ValueError, match="needs 2 reviewed records or more; 1 reviewed"):
        cross_validated(Annotations("fp", "redact", (0,), {0: records[0]}), found_)


def _steward_corrections(dataset) -> Corrections:
    """The steward reviewed records 0 and 4: the handles kept, the hashtags removed, "flight" marked a product."""
    annotations = Annotations(dataset.fingerprint, "redact", (0, 4))
    for r in (0, 4):
        text = dataset.texts[r]
        handle = text.split()[0]
        annotations = annotations.with_record(record(r, text, (handle, "HANDLE"), ("flight", "PRODUCT")))
    found = detector(get_protector("redact", use_ner=False)).find(dataset, [0, 4])
    lists = learnt(annotations, found)
    assert lists.allow == ("#tag0", "#tag1") and lists.deny == (("flight", "PRODUCT"),)
    return lists


def test_redaction_runs_with_the_kept_lists(tiny_dataset):
    plain = get_protector("redact", use_ner=False)
    corrected = get_protector("redact", use_ner=False, corrections="kept")
    with pytest.raises(ConfigError, match="corrections = kept, but no corrections of redact or guard are kept"):
        corrected.fit(tiny_dataset)
    before_key = fit_key(plain, tiny_dataset)
    path = keep_corrections(_steward_corrections(tiny_dataset))
    try:
        assert path == corrections_path(tiny_dataset.fingerprint, "redact") and path.stat().st_mode & 0o077 == 0
        assert kept_corrections(tiny_dataset.fingerprint, "redact") == _steward_corrections(tiny_dataset)
        assert fit_key(plain, tiny_dataset) == before_key and fit_key(corrected, tiny_dataset) != before_key
        texts = tiny_dataset.texts.tolist()
        was = plain.fit(tiny_dataset).release(4).data["text"].tolist()
        now = corrected.fit(tiny_dataset).release(4)
        released = now.data["text"].tolist()
        for text, a, b in zip(texts, was, released):
            assert "#tag" not in a and ("flight" in a) == ("flight" in text)  # before: every hashtag, no flight
            if "#tag0" in text or "#tag1" in text:
                assert "#tag0" in b or "#tag1" in b  # the removed false positive is no longer replaced
            elif "#tag" in text:
                assert "#tag" not in b  # a hashtag the steward did not remove still is
            assert ("flight" in text) == ("[PRODUCT_1]" in b) and "flight" not in b
        level_3 = corrected.fit(tiny_dataset).release(3).data["text"].tolist()
        assert not any("PRODUCT" in t for t in level_3)  # a product is replaced from level 4
        kept = now.detail(KeptCorrections)
        assert kept == KeptCorrections("redact", _steward_corrections(tiny_dataset).digest(), 2, 1)
        [(label, said)] = kept.facts()
        assert label == "Redaction's corrections" and "2 strings never replaced, 1 always replaced" in said
        assert kept.digest[:12] in said and "flight" not in said and "#tag" not in said
    finally:
        drop_corrections(tiny_dataset.fingerprint, "redact")


def test_the_guard_runs_with_its_kept_lists(tiny_dataset):
    lists = Corrections(tiny_dataset.fingerprint, GUARD, allow=("@friend0",), deny=(("gate", "NAME"),))
    guard = Guard.prepare(tiny_dataset, corrections=lists)
    text = "@friend0 and @friend1 at the gate, not the gates"
    assert [text[s:e] for s, e, _ in guard.spans(text)] == ["@friend1", "gate"]
    assert Guard.prepare(tiny_dataset, off=("NAME",), corrections=lists).spans(text) == [(13, 21, "HANDLE")]
    protector = get_protector("redact", use_ner=False, corrections="kept")
    fitted = get_protector("redact", use_ner=False).fit(tiny_dataset)
    keep_corrections(lists)
    try:
        assert guarded(fitted, protector, tiny_dataset).guard.corrections == lists
        assert guarded(fitted, get_protector("redact", use_ner=False), tiny_dataset).guard.corrections is None
        released = guarded(fitted, protector, tiny_dataset).guard.apply(fitted.release(0))
        assert any(t.startswith("@friend0 ") for t in released.data["text"])
        assert released.detail(KeptCorrections) == KeptCorrections(GUARD, lists.digest(), 1, 1)
        kept = sweep_name(protector, tiny_dataset, {})
        keep_corrections(Corrections(tiny_dataset.fingerprint, GUARD, allow=("@friend1",)))
        assert sweep_name(protector, tiny_dataset, {}) != kept  # other kept lists, other releases
    finally:
        drop_corrections(tiny_dataset.fingerprint, GUARD)


def test_a_bundle_with_kept_corrections_records_counts_and_replays_only_where_they_are_kept(
    tiny_files, tmp_path, capsys
):
    data = tiny_files.parent / "data.csv"
    dataset = load_dataset(data, tiny_files)
    lists = _steward_corrections(dataset)
    keep_corrections(lists)
    out = tmp_path / "bundle"
    try:
        argv = ["release", "--data", str(data), "--schema", str(tiny_files), "--method", "redact"]
        argv += ["--no-use-ner", "--corrections", "kept", "--knob", "4", "--out", str(out)]
        assert main(argv) == 0
        manifest = json.loads((out / "manifest.json").read_text())
        assert "--corrections kept" in manifest["replay"]
        assert manifest["corrections"] == [{"detector": "redact", "digest": lists.digest(), "allow": 2, "deny": 1}]
        assert "2 strings never replaced, 1 always replaced" in (out / "report.html").read_text()
        assert scan_bundle(out, dataset) == []
        for name, text in bundle_texts(out).items():
            assert '"allow": [' not in text and '"deny": [' not in text and "corrections.json" not in text, name
            assert '["flight", "PRODUCT"]' not in text and '"#tag0"' not in text, name
        assert main(["verify", str(out), "--data", str(data)]) == 0
    finally:
        drop_corrections(dataset.fingerprint, "redact")
    capsys.readouterr()
    assert main(["verify", str(out), "--data", str(data)]) != 0  # a reviewer's machine: the lists are not here
    said = capsys.readouterr().err
    assert "no corrections of redact or guard are kept for this dataset on this machine" in said
    assert str(corrections_path(dataset.fingerprint, "redact")) in said and "--annotations FILE" in said
    copy = tmp_path / "from-the-steward"
    copy.mkdir()
    (copy / "other-corrections.json").write_text("{}")
    assert main(["verify", str(out), "--data", str(data), "--annotations", str(copy / "other-corrections.json")]) == 2
    assert "not a kept corrections file; accepted:" in capsys.readouterr().err
    keep_corrections(Corrections("another dataset", "redact", allow=("x",)))
    (copy / "other-corrections.json").write_bytes(corrections_path("another dataset", "redact").read_bytes())
    drop_corrections("another dataset", "redact")
    assert main(["verify", str(out), "--data", str(data), "--annotations", str(copy)]) == 2
    assert "no corrections of this dataset" in capsys.readouterr().err
    keep_corrections(lists)
    (copy / "lists-corrections.json").write_bytes(corrections_path(dataset.fingerprint, "redact").read_bytes())
    drop_corrections(dataset.fingerprint, "redact")
    try:
        assert main(["verify", str(out), "--data", str(data), "--annotations", str(copy)]) == 0
        assert "kept corrections of redact: 2 never, 1 always replaced" in capsys.readouterr().out
    finally:
        drop_corrections(dataset.fingerprint, "redact")


CALLS = [
    "Our partner Globex signed in Springfield, and Globex shipped the order.",
    "Analysts at Initech asked about Springfield and the Zorblat plant.",
    "The Zorblat line opened in Shelbyville with Initech.",
]


def test_the_swaps_entity_recognizer_takes_the_kept_lists():
    """Deny: "Zorblat" (no name spaCy knows) an organization wherever it stands; allow: "Springfield" is no
    place; the rest as spaCy finds it."""
    categories = {"organization": ("ORG",), "location": ("GPE", "LOC")}
    plain = chunk_entities(CALLS, categories)
    assert "Springfield" in plain.values["location"][0] and "Zorblat" not in plain.values["organization"][1]
    lists = Corrections("fp", "swap", allow=("Springfield",), deny=(("Zorblat", "organization"), ("x", "money")))
    found = chunk_entities(CALLS, categories, corrections=lists)
    assert found.values["organization"][1][-1] == "Zorblat" and found.values["organization"][2][0] == "Zorblat"
    assert not any("Springfield" in v for v in found.values["location"])
    assert "Shelbyville" in found.values["location"][2]  # a place not on the allow list stays a place
    zorblat = found.mentions[found.mentions["text"] == "Zorblat"]
    assert list(zorblat["chunk"]) == [1, 2] and set(zorblat["category"]) == {"organization"}
    assert chunk_entities(CALLS, categories, corrections=Corrections("fp", "swap")).values.equals(plain.values)


@pytest.fixture(scope="module")
def posts():
    from engine.data.dataset import Dataset
    from engine.data.schema import Schema
    from engine.protect.kanon.gold import read_posts

    frame = pd.DataFrame({"text": [p.text for p in list(read_posts().values())[:80]]})
    return Dataset("gold-posts", frame, Schema(text="text"), source="tests")


def test_the_k_anonymity_tagger_takes_the_kept_lists(posts):
    """An identifier the tagger found and the steward allowed stays in the release as written; a word it did not
    tag and she denied as a direct identifier is replaced wherever it stands."""
    plain = get_protector("kanon").fit(posts)
    texts = posts.texts.tolist()
    tagged = [(r, texts[r][s:e]) for r, spans in enumerate(plain.spans) for s, e, lab in spans if lab == "DI"]
    allowed = next(value for _, value in tagged if len(value) > 3)
    untagged = {texts[r][s:e] for r, spans in enumerate(plain.spans) for s, e, _ in spans}
    denied = next(w for w in ("morning", "today", "people", "work") if w not in untagged and w in " ".join(texts))
    lists = Corrections(posts.fingerprint, "kanon", allow=(allowed,), deny=((denied, "DI"),))
    keep_corrections(lists)
    try:
        corrected_fit = get_protector("kanon", corrections="kept").fit(posts)
        assert fit_key(get_protector("kanon", corrections="kept"), posts) != fit_key(get_protector("kanon"), posts)
        before = plain.release(5, np.random.default_rng(0)).data["text"].tolist()
        after = corrected_fit.release(5, np.random.default_rng(0))
        released = after.data["text"].tolist()
        word = re.compile(rf"(?<!\w){re.escape(denied)}(?!\w)")
        holds = [r for r, t in enumerate(texts) if word.search(t)]
        assert holds and all(word.search(before[r]) for r in holds)  # the tagger alone leaves it
        assert not any(word.search(released[r]) for r in holds)  # denied: replaced in every record
        named = re.compile(rf"(?<!\w){re.escape(allowed)}(?!\w)")
        assert not any(named.search(before[r]) for r, v in tagged if v == allowed)  # the tagger's: replaced
        assert all(named.search(released[r]) for r, v in tagged if v == allowed)  # allowed: kept as written
        assert after.detail(KeptCorrections) == KeptCorrections("kanon", lists.digest(), 1, 1)
    finally:
        drop_corrections(posts.fingerprint, "kanon")
