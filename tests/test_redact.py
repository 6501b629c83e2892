import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.redact import apply_spans
from engine.text.entities import TIERS, find_identifiers, pattern_spans, resolve_overlaps


def labels(text):
    return [(text[s:e], lb) for s, e, lb in resolve_overlaps(pattern_spans(text))]


def test_patterns_find_each_kind_of_identifier():
    text = "@united lost my bag #fail see http://t.co/x1 mail a.b@mail.co.uk call (555) 123-4567"
    assert labels(text) == [
        ("@united", "HANDLE"),
        ("#fail", "HASHTAG"),
        ("http://t.co/x1", "URL"),
        ("a.b@mail.co.uk", "EMAIL"),
        ("(555) 123-4567", "PHONE"),
    ]


def test_email_is_not_also_a_handle_and_html_entity_is_not_a_hashtag():
    assert labels("write to jo@x.org &#39;ok&#39;") == [("jo@x.org", "EMAIL")]


def test_apply_spans_replaces_by_typed_placeholders():
    assert (
        apply_spans("hi @bob and #x", [(3, 7, "[HANDLE_1]"), (12, 14, "[HASHTAG_1]")])
        == "hi [HANDLE_1] and [HASHTAG_1]"
    )


def test_spacy_entities_get_their_tiers():
    spans = find_identifiers(["John Smith flew from Boston to Paris on Monday."])
    got = dict(zip(spans["original"], spans["tier"]))
    assert got["John Smith"] == 2 and got["Boston"] == 3 and got["Paris"] == 3 and got["Monday"] == 4


def replaced_chars(release) -> set[tuple[int, int]]:
    return {
        (r, i)
        for r, s, e in zip(release.changes["record"], release.changes["start"], release.changes["end"])
        for i in range(s, e)
    }


def test_levels_are_cumulative_and_level_zero_is_the_original(tiny_dataset):
    frame = tiny_dataset.frame.copy()
    frame.loc[0, "text"] = "John Smith from Boston emailed me@x.com on Monday #tag0"
    tiny_dataset = dataclasses.replace(tiny_dataset, frame=frame)
    fitted = get_protector("redact").fit(tiny_dataset)
    r0 = fitted.release(0, np.random.default_rng(0))
    pd.testing.assert_frame_equal(r0.data, tiny_dataset.frame)
    assert r0.changes.empty
    previous = set()
    for level in range(1, 5):
        r = fitted.release(level, np.random.default_rng(0))
        chars = replaced_chars(r)
        assert previous <= chars, f"level {level} un-redacted something"
        previous = chars
    text4 = fitted.release(4, None).data.loc[0, "text"]
    assert text4 == "[PERSON_1] from [GPE_1] emailed [EMAIL_1] on [DATE_1] [HASHTAG_1]"


def test_changes_point_at_the_original_spans(tiny_dataset):
    fitted = get_protector("redact").fit(tiny_dataset)
    r = fitted.release(1, None)
    texts = tiny_dataset.texts
    for row in r.changes.itertuples():
        assert texts[row.record][row.start : row.end] == row.original
        assert re.fullmatch(rf"\[{row.label}_\d+\]", row.replacement)
    assert set(r.changes["label"]) == {"HANDLE", "HASHTAG"}
    assert r.protected_columns == ("text",)
    assert (r.data["mood"] == tiny_dataset.frame["mood"]).all()


@pytest.mark.parametrize("bad", [-1, 5, 2.5, "x", float("nan")])
def test_knob_out_of_range_is_refused_with_the_accepted_range(tiny_dataset, bad):
    fitted = get_protector("redact", use_ner=False).fit(tiny_dataset)
    with pytest.raises(ConfigError, match=r"Redaction level|whole number"):
        fitted.release(bad, None)


def test_unknown_method_names_the_available_ones():
    with pytest.raises(ConfigError, match="available methods: cart, count-bayes, glm, kanon, md, redact"):
        get_protector("nope")


# --- consistent redaction (engine/text/recurrence.py) ----------------------------------------------


def _spans(rows):
    from engine.text.recurrence import _table

    return _table([(r, s, e, lb, TIERS[lb], o) for r, s, e, lb, o in rows])


def test_an_original_found_once_is_replaced_at_every_whole_word_occurrence():
    from engine.text.recurrence import propagate

    texts = ["Your Terry is our hero!", "Terry again, not Terryville", "thanks TERRY"]
    out = propagate(texts, _spans([(0, 5, 10, "PERSON", "Terry")]))
    assert list(zip(out["record"], out["start"], out["end"])) == [(0, 5, 10), (1, 0, 5)]
    assert set(out["label"]) == {"PERSON"} and set(out["tier"]) == {2}


def test_an_original_with_two_labels_keeps_its_lowest_tier_everywhere():
    from engine.text.recurrence import propagate

    texts = ["Paris is lovely", "I met Paris yesterday"]
    out = propagate(texts, _spans([(0, 0, 5, "GPE", "Paris"), (1, 6, 11, "PERSON", "Paris")]))
    assert list(out["label"]) == ["PERSON", "PERSON"] and list(out["tier"]) == [2, 2]


def test_author_names_are_handles_in_the_text_with_or_without_the_at():
    from engine.text.recurrence import author_name_spans

    texts = ["JetBlueNews says hi to @JetBlueNews", "nothing here", "ab is too short to chase"]
    out = author_name_spans(texts, ["JetBlueNews", "someone", "ab"], _spans([]))
    assert list(out["original"]) == ["JetBlueNews", "@JetBlueNews"]
    assert set(out["label"]) == {"HANDLE"}


def test_placeholders_are_numbered_per_document_one_number_per_original():
    from engine.text.recurrence import number_placeholders

    spans = _spans(
        [
            (0, 0, 4, "PERSON", "Anna"),
            (0, 9, 12, "PERSON", "Bob"),
            (0, 20, 24, "PERSON", "ANNA"),
            (1, 0, 3, "PERSON", "Bob"),
            (2, 0, 4, "HANDLE", "@bob"),
            (2, 10, 13, "HANDLE", "bob"),
        ]
    )
    per_record = number_placeholders(spans)
    assert list(per_record) == ["[PERSON_1]", "[PERSON_2]", "[PERSON_1]", "[PERSON_1]", "[HANDLE_1]", "[HANDLE_1]"]
    one_document = number_placeholders(spans, documents=["d", "d", "e"])
    assert list(one_document[:4]) == ["[PERSON_1]", "[PERSON_2]", "[PERSON_1]", "[PERSON_2]"]


def test_no_replaced_original_survives_anywhere_in_the_released_text(tiny_dataset):
    """The leak the issue found: a name replaced in one place still readable in another."""
    texts = list(tiny_dataset.texts)
    texts[1] = texts[1] + " cc user0 and @user1"  # authors named in the text, bare and as a handle
    data = dataclasses.replace(tiny_dataset, frame=tiny_dataset.frame.assign(text=texts))
    fitted = get_protector("redact", use_ner=False).fit(data)
    for level in range(5):
        r = fitted.release(level)
        released = " ".join(r.data["text"])
        for original in set(r.changes["original"]):
            assert not re.search(rf"(?<![\w@#]){re.escape(original)}(?!\w)", released), (level, original)
        if level >= 1:
            assert not re.search(r"\buser[01]\b", released)


def test_hashtags_glued_to_a_hashtag_are_hashtags():
    text = "home #neptune#waivethefee #x and C#"
    assert [text[s:e] for s, e, lb in sorted(pattern_spans(text)) if lb == "HASHTAG"] == [
        "#neptune",
        "#waivethefee",
        "#x",
    ]


@pytest.mark.slow
def test_a_text_longer_than_the_models_limit_is_redacted_with_its_offsets(tiny_dataset, monkeypatch):
    """A document spaCy would refuse whole (E088) is redacted in pieces; every change points at its original
    characters in the whole text, entities from the last piece included."""
    from engine.text import entities

    nlp = entities.load_spacy()
    monkeypatch.setattr(nlp, "max_length", 500)
    monkeypatch.setattr(entities, "MAX_PIECE_CHARS", 400)
    long_text = "".join(
        f"Call {i}: Barack Obama met Angela Merkel in Berlin on Monday, write to desk{i}@example.com. "
        for i in range(25)
    )  # about 2,300 characters: six pieces
    assert len(long_text) > 4 * entities.MAX_PIECE_CHARS
    frame = tiny_dataset.frame.copy()
    frame.loc[0, "text"] = long_text
    dataset = dataclasses.replace(tiny_dataset, frame=frame)
    release = get_protector("redact").fit(dataset).release(4, None)
    changes = release.changes[release.changes["record"] == 0]
    for row in changes.itertuples():
        assert long_text[row.start : row.end] == row.original
    assert {"Barack Obama", "Angela Merkel", "Berlin", "desk24@example.com"} <= set(changes["original"])
    assert changes["start"].max() > len(long_text) - 120  # the last sentence, in the last piece
    redacted = release.data.loc[0, "text"]
    assert "Obama" not in redacted and "Berlin" not in redacted and "@example.com" not in redacted


def test_named_entities_are_found_once_per_corpus_and_kept_only_when_read_through(tiny_dataset, monkeypatch):
    """Redaction and k-anonymity's tagger read one corpus's entities: found by the first, read back by
    the other (spaCy not run again); a reader that stops early leaves nothing half kept."""
    from engine.text import entities

    texts = [*tiny_dataset.texts.astype(str), "Angela Merkel landed in Berlin."]
    monkeypatch.setattr(entities, "_FOUND", entities.OrderedDict())
    calls = []
    real = entities.entity_spans

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(entities, "entity_spans", counted)
    next(entities.named_entities(texts))  # stopped after the first text
    assert not entities._FOUND
    first = [spans for _, spans in zip(texts, entities.named_entities(texts))]  # zip asks for no more
    again = list(entities.named_entities(texts))
    assert again == first and len(calls) == 2
    assert (texts[-1].index("Berlin"), len(texts[-1]) - 1, "GPE") in first[-1]
    assert list(entities.named_entities(texts[:-1])) == first[:-1] and len(calls) == 3  # another corpus


@pytest.mark.slow
def test_the_lean_pipeline_finds_the_entities_of_the_whole_model(tiny_dataset):
    """Named entities are found with only the recognizer loaded (no tagger, parser or shared token
    embedding); they are the ones the whole pipeline finds."""
    import spacy

    from engine.text import entities

    lean = entities.load_spacy()
    assert lean.pipe_names == ["ner"]
    whole = spacy.load(entities.SPACY_MODEL)
    texts = [*tiny_dataset.texts.astype(str), "Barack Obama flew Delta from Boston to Paris on Monday for $300."]
    found = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in lean.pipe(texts)]
    assert found == [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in whole.pipe(texts)]
    assert any(found)


def test_an_identifiers_file_names_organizations_tickers_and_people(tiny_dataset, tmp_path):
    frame = tiny_dataset.frame.copy()
    frame.loc[0, "text"] = "Welcome to the Aaron's call, AAN holders. Douglas Lindsay leads Aaron's."
    frame.loc[1, "text"] = "the ticker aan in lower case is a word, not the ticker"
    dataset = dataclasses.replace(tiny_dataset, frame=frame)
    ids = tmp_path / "ids.csv"
    ids.write_text(
        'ticker,label,value\nAAN,Company Name,"Aaron\'s, Inc."\nAAN,Executive,Douglas A. Lindsay\n', encoding="utf-8"
    )
    fitted = get_protector("redact", identifiers=str(ids), use_ner=False).fit(dataset)
    text = fitted.release(3, np.random.default_rng(0)).data.loc[0, "text"]
    assert "Aaron" not in text and "AAN" not in text and "Douglas Lindsay" not in text, text
    assert fitted.release(3, np.random.default_rng(0)).data.loc[1, "text"] == frame.loc[1, "text"]
    at_two = fitted.release(2, np.random.default_rng(0)).data.loc[0, "text"]
    assert "Douglas Lindsay" not in at_two and "AAN" in at_two  # people at level 2, organizations at 3
    with pytest.raises(ConfigError, match="identifiers file 'nowhere.csv' does not exist"):
        get_protector("redact", identifiers="nowhere.csv").check(dataset)


def test_names_in_a_direct_identifier_column_are_redacted_wherever_they_appear(tiny_dataset):
    """A participants column ("Name--title" per line) names people: each is replaced at level 2 in every record
    (not only its own), middle initial or not, and the column itself is dropped from any bundle."""
    frame = tiny_dataset.frame.copy()
    frame.loc[0, "text"] = "Douglas Lindsay and Kelly Wall thank you."
    frame.loc[1, "text"] = "As Douglas A. Lindsay said, margins held."
    frame["participants"] = ""
    frame.loc[0, "participants"] = "Douglas A. Lindsay--Chief Executive Officer\nC. Kelly Wall--Chief Financial Officer"
    schema = dataclasses.replace(tiny_dataset.schema, direct_identifiers=("participants",))
    dataset = dataclasses.replace(tiny_dataset, frame=frame, schema=schema)
    assert schema.identifiers["participants"] == "drop"
    fitted = get_protector("redact", use_ner=False).fit(dataset)
    at_two = fitted.release(2, np.random.default_rng(0)).data
    assert at_two.loc[0, "text"] == "[PERSON_1] and [PERSON_2] thank you.", at_two.loc[0, "text"]
    assert "Lindsay" not in at_two.loc[1, "text"] and "Douglas" not in at_two.loc[1, "text"]
    at_one = fitted.release(1, np.random.default_rng(0)).data
    assert at_one.loc[0, "text"] == frame.loc[0, "text"]  # people are level 2


def test_a_name_found_inside_a_longer_span_of_a_higher_tier_is_replaced_at_the_lower_level():
    """spaCy calls "United" a person in one tweet and reads "United Flight Booking Problems" as one entity of a
    higher tier in another: at the person's level the name must go there too, and at the entity's level the
    longer span replaces both (no overlapping replacement)."""
    from engine.text.recurrence import outermost, propagate

    texts = ["thanks United for nothing", "just the United Flight Booking Problems again"]
    spans = pd.DataFrame(
        [(0, 7, 13, "PERSON", 2, "United"), (1, 9, 39, "EVENT", 4, "United Flight Booking Problems")],
        columns=["record", "start", "end", "label", "tier", "original"],
    )
    made = propagate(texts, spans)
    at_two = outermost(made[made["tier"] <= 2])
    assert sorted(zip(at_two["record"], at_two["original"])) == [(0, "United"), (1, "United")]
    at_four = outermost(made[made["tier"] <= 4])
    assert sorted(zip(at_four["record"], at_four["original"])) == [(0, "United"), (1, "United Flight Booking Problems")]


def test_a_shorter_name_of_a_lower_tier_where_a_longer_one_starts_is_kept():
    """Both found by the detector elsewhere, "Flight" (ORG, tier 3) and "Flight Booking Problems" (PRODUCT,
    tier 4) recur in a third text: at level 3 its "Flight" goes, at level 4 the whole product."""
    from engine.text.recurrence import outermost, propagate

    texts = ["my Flight is late", "the Flight Booking Problems page", "never Flight Booking Problems again"]
    spans = pd.DataFrame(
        [(0, 3, 9, "ORG", 3, "Flight"), (1, 4, 27, "PRODUCT", 4, "Flight Booking Problems")],
        columns=["record", "start", "end", "label", "tier", "original"],
    )
    made = propagate(texts, spans)
    third = made[made["record"] == 2]
    assert sorted(third["original"]) == ["Flight", "Flight Booking Problems"]
    at_three = outermost(made[made["tier"] <= 3])
    assert list(at_three.loc[at_three["record"] == 2, "original"]) == ["Flight"]
    at_four = outermost(made[made["tier"] <= 4])
    assert list(at_four.loc[at_four["record"] == 2, "original"]) == ["Flight Booking Problems"]
