import dataclasses

import numpy as np
import pandas as pd
import pytest

from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.redact import apply_spans
from engine.text.entities import find_identifiers, pattern_spans, resolve_overlaps


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
    assert apply_spans("hi @bob and #x", [(3, 7, "HANDLE"), (12, 14, "HASHTAG")]) == "hi [HANDLE] and [HASHTAG]"


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
    assert text4 == "[PERSON] from [GPE] emailed [EMAIL] on [DATE] [HASHTAG]"


def test_changes_point_at_the_original_spans(tiny_dataset):
    fitted = get_protector("redact").fit(tiny_dataset)
    r = fitted.release(1, None)
    texts = tiny_dataset.texts
    for row in r.changes.itertuples():
        assert texts[row.record][row.start : row.end] == row.original
        assert row.replacement == f"[{row.label}]"
    assert set(r.changes["label"]) == {"HANDLE", "HASHTAG"}
    assert r.protected_columns == ("text",)
    assert (r.data["mood"] == tiny_dataset.frame["mood"]).all()


@pytest.mark.parametrize("bad", [-1, 5, 2.5, "x", float("nan")])
def test_knob_out_of_range_is_refused_with_the_accepted_range(tiny_dataset, bad):
    fitted = get_protector("redact", use_ner=False).fit(tiny_dataset)
    with pytest.raises(ConfigError, match=r"Redaction level|whole number"):
        fitted.release(bad, None)


def test_unknown_method_names_the_available_ones():
    with pytest.raises(ConfigError, match="available methods: cart, count-bayes, glm, redact"):
        get_protector("nope")
