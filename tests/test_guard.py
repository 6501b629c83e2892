"""The release guard: after every method, before a release is measured or written, the validated recognizers and
the names of the data's identifier columns replace what the method left, counted per type; a type the steward
switches off is left and said so. Every registered method's bundle, at the ends and the middle of its knob, holds
none of the data's URLs, e-mail addresses, phone numbers, @handles or author names (tests/leakage.py scans every
bundle the tests write)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.export.chosen import Prepared, Run, export_chosen
from engine.export.ledgered import LedgerUse
from engine.protect import METHODS, get_protector
from engine.protect.base import Release
from engine.protect.guard import Guard, GuardCounts, NameIndex, guarded, name_columns
from engine.record.manifest import read_record
from engine.record.replay import ReplaySpec
from engine.sweep import make_release
from tests.contract_data import contract_dataset
from tests.leakage import format_identifiers, scan_bundle
from tests.test_method_contract import FAST, ends


def _data() -> Dataset:
    frame = pd.DataFrame(
        {
            "text": [
                "mail ann.lee@example.org or see https://example.org/ann",
                "ask @bobby_k, or call 212-736-5000",
                "Lincoln said the internal team at LNC would call",
                "nothing here but the word annual",
            ],
            "user": ["ann lee", "bobby_k", "carol", "dan"],
            "place": ["http://x.example/y", "NY", "LA", "SF"],
            "stars": [1, 2, 3, 4],
        }
    )
    schema = Schema(text="text", author="user", fields=(FieldSpec("place", "categorical", "key"),))
    return Dataset("guarded", frame, schema, source="tests")


def _release(data: Dataset) -> Release:
    return Release(data.frame.copy(), "test", 0.0, ("text",))


def test_the_guard_replaces_formats_and_names_in_text_and_string_fields_and_counts_them():
    data = _data()
    guard = Guard(NameIndex(["ann lee", "bobby_k", "Lincoln", "LNC"]), skip=("user",))
    out = guard.apply(_release(data))
    text = out.data["text"].tolist()
    assert text[0] == "mail [EMAIL] or see [URL]"
    assert text[1] == "ask [HANDLE], or call [PHONE]"
    assert text[2] == "[NAME] said the internal team at [NAME] would call"
    assert text[3] == "nothing here but the word annual"  # a name is a whole word only ("Ann" is no name here)
    assert out.data["place"].tolist() == ["[URL]", "NY", "LA", "SF"]  # a string field is guarded too
    assert out.data["user"].tolist() == data.frame["user"].tolist()  # identifier columns leave by their treatment
    counts = out.detail(GuardCounts)
    assert counts is not None and counts.columns == ("text", "place")
    assert {k: n for k, n in counts.replaced.items() if n} == {"EMAIL": 1, "URL": 2, "HANDLE": 1, "PHONE": 1, "NAME": 2}
    assert out.fact("Release guard").startswith("replaced 2 URLs, 1 e-mail address, 1 phone number, 1 @handle")
    assert out.compact().data.columns.tolist() == ["text", "place"]  # a kept release keeps what the guard changed


def test_a_short_capital_name_matches_in_capitals_only_and_the_longest_name_wins():
    index = NameIndex(["LNC", "Lincoln National", "Lincoln"])
    assert index.spans("lnc and LNC") == [(8, 11)]
    assert index.spans("at Lincoln National today") == [(3, 19)]
    # A text none of whose words starts a name is passed over at once; the answer is the word-by-word one, for
    # ASCII texts (the quick test) and others (Turkish İ lower-cases to two characters) alike.
    assert index.spans("nothing to see") == [] and index.spans("LINCOLN and lnc") == [(0, 7)]
    assert NameIndex(["İnce Ltd"]).spans("met İnce Ltd and İNCE LTD") == [(4, 12), (17, 25)]
    assert NameIndex(["ince ltd"]).spans("say Ince ltd") == [(4, 12)]


def test_a_type_switched_off_is_left_and_the_release_says_so():
    data = _data()
    out = Guard(NameIndex([]), off=("PHONE", "NAME"), skip=("user",)).apply(_release(data))
    assert "212-736-5000" in out.data["text"][1] and "PHONE" not in out.detail(GuardCounts).replaced
    assert out.detail(GuardCounts).off == ("PHONE", "NAME")
    [warning] = out.warnings
    assert warning.startswith("the release guard was switched off for phone numbers, names of identifier columns")


def test_the_guard_takes_the_names_of_the_identifier_columns_and_an_unknown_type_is_refused():
    data = _data()
    guard = Guard.prepare(data)
    assert guard.names.spans("thanks bobby_k and Ann Lee") == [(7, 14), (19, 26)]
    with pytest.raises(Exception, match="is not one of URL, EMAIL, PHONE"):
        get_protector("redact", guard_off=("PHONES",))


def test_switching_a_type_off_does_not_fit_again_but_is_a_sweep_of_its_own():
    from engine.cache import fit_key, sweep_name

    data = _data()
    on, off = get_protector("redact", use_ner=False), get_protector("redact", use_ner=False, guard_off=("URL",))
    assert fit_key(on, data) == fit_key(off, data)
    assert sweep_name(on, data, {"seed": 0}) != sweep_name(off, data, {"seed": 0})


@cache
def _leaky() -> Dataset:
    """The contract data with identifiers of every kind the guard replaces in each record's text."""
    data = contract_dataset()
    frame = data.frame.copy()
    numbers = [f"+1 212-736-{5000 + i}" for i in range(len(frame))]
    frame["text"] = [
        f"{t} see https://example.org/{u} mail {u}@example.org call {n} or {u}"
        for t, u, n in zip(frame["text"], frame["user"], numbers)
    ]
    return replace(data, frame=frame)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_methods_bundles_at_its_knobs_ends_and_middle_hold_none_of_the_datas_identifiers(name, tmp_path):
    data = _leaky()
    found = format_identifiers(data)
    assert all(len(found[k]) >= data.frame["user"].nunique() for k in ("URL", "EMAIL", "PHONE", "HANDLE"))
    protector = get_protector(name, **FAST.get(name, {}))
    fitted = guarded(protector.fit(data), protector, data)
    private, open_ = ends(fitted)
    grid = fitted.knob.default_grid()
    for value in sorted({private, open_, fitted.snap(grid[len(grid) // 2])}):
        out = tmp_path / f"at-{value:g}"
        spec = ReplaySpec("leaky contract data", name, value, 0, 1, str(out), protector.params())
        ledger = LedgerUse(override="the guard's test exports the knob's ends and middle of one data")
        export_chosen(
            out, spec, Prepared(data, protector, fitted), run=Run(audit_log=tmp_path / "audit", ledger=ledger)
        )
        tables = tuple(p.stem for p in out.glob("*.csv") if p.stem not in ("release", "changes"))
        assert scan_bundle(out, data, tables=tables) == [], (name, value)  # the conftest scans it too
        record = read_record(out)
        assert record.guard is not None and record.guard.off == ()
        released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
        assert not released["text"].str.contains("example.org", regex=False).any()


def test_a_release_with_a_type_switched_off_keeps_it_and_the_manifest_and_report_say_so(tmp_path):
    data = _leaky()
    protector = get_protector("redact", use_ner=False, guard_off=("PHONE",))
    fitted = guarded(protector.fit(data), protector, data)
    out = tmp_path / "bundle"
    spec = ReplaySpec("leaky contract data", "redact", 0.0, 0, 1, str(out), protector.params())
    export_chosen(out, spec, Prepared(data, protector, fitted), run=Run(audit_log=tmp_path / "audit"))
    record = read_record(out)
    assert record.guard is not None and record.guard.off == ("PHONE",) and "PHONE" not in record.guard.replaced
    assert any("switched off for phone numbers" in w for w in record.warnings)
    assert "+1 212-736-5000" in (out / "release.csv").read_text(encoding="utf-8")
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "What the release guard replaced" in report and "Left alone at the steward's request: PHONE" in report
    assert scan_bundle(out, data) == []  # switched off, so no finding: the manifest says it


def test_measures_are_taken_on_the_release_as_guarded(tmp_path):
    data = _leaky()
    protector = get_protector("glm", fields=("mood",), n_lambda=10)
    fitted = guarded(protector.fit(data), protector, data)
    release = make_release(fitted, fitted.knob.default, 0)
    assert not release.data["text"].str.contains("example.org", regex=False).any()
    assert release.detail(GuardCounts).replaced["URL"] == len(data.frame)


def test_a_column_of_names_the_schema_does_not_make_an_identifier_is_guarded_and_the_report_says_so(tmp_path):
    """Issue 48: a user_name kept as a field (a steward's schema, or a Data page mapping) holds people's names that
    the text names too; the guard takes them as it takes the identifier columns', and the section "Columns and
    their treatment" says so."""
    people = ["Marisol Quenby", "Tobias Fenwright", "Ines Harrowgate", "Dario Pellworth"] * 5
    frame = pd.DataFrame(
        {
            "text": [f"Spoke with {p} about the delayed parcel, number {i}" for i, p in enumerate(people)],
            "user_name": people,
            "stars": [1, 2, 3, 4, 5] * 4,
        }
    )
    schema = Schema(
        text="text",
        fields=(FieldSpec("user_name", "categorical", "other"), FieldSpec("stars", "categorical", "sensitive")),
    )
    data = Dataset("names kept as a field", frame, schema, source="tests")
    protector = get_protector("redact", use_ner=False)
    fitted = guarded(protector.fit(data), protector, data)
    out = tmp_path / "bundle"
    spec = ReplaySpec("names kept as a field", "redact", 0.0, 0, 1, str(out), protector.params())
    export_chosen(out, spec, Prepared(data, protector, fitted), run=Run(audit_log=tmp_path / "audit"))
    released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    assert released["text"][0] == "Spoke with [NAME] about the delayed parcel, number 0"
    assert set(released["user_name"]) == {"[NAME]"}
    assert not any(p in (out / "release.csv").read_text(encoding="utf-8") for p in set(people))
    assert read_record(out).guard.replaced["NAME"] == 2 * len(frame)
    report = " ".join((out / "report.html").read_text(encoding="utf-8").split())
    assert "looked for the names held in user_name in every released text and string field" in report
    assert "Of these, user_name is not an identifier column in the schema but named as holding people" in report


def test_the_guard_takes_a_listed_company_by_its_distinctive_first_word(tmp_path):
    """Issue 48: an identifiers file lists "Lincoln National Corporation"; a text saying "Lincoln" alone names it
    as plainly, while "National" alone is a word."""
    listed = tmp_path / "ids.csv"
    listed.write_text('ticker,label,value\nLNC,Company Name,"Lincoln National Corporation"\n', encoding="utf-8")
    guard = Guard.prepare(_data(), identifiers=str(listed))
    text = "Lincoln grew; a national bank did not, said LNC"
    assert [text[s:e] for s, e in guard.names.spans(text)] == ["Lincoln", "LNC"]


def test_the_text_column_is_never_taken_for_a_column_of_names_whatever_it_is_called():
    """The listings' text column is called "name" (a listing's title, many different values): it is what the
    release protects, so the guard does not take its values for people's names (which would replace every title
    by [NAME]); a "name" column beside another text still is one."""
    titles = [f"Sunny loft number {i} by the park" for i in range(20)]
    frame = pd.DataFrame({"name": titles, "price": list(range(20))})
    as_text = Dataset("listings", frame, Schema(text="name", fields=(FieldSpec("price", "continuous", "sensitive"),)))
    assert "name" not in name_columns(as_text)
    frame = pd.DataFrame({"text": titles, "name": [f"Host Person{i}" for i in range(20)]})
    beside = Dataset("posts", frame, Schema(text="text", fields=(FieldSpec("name", "categorical", "other"),)))
    assert "name" in name_columns(beside)


def _spans_by_every_run(index: NameIndex, text: str) -> list[tuple[int, int]]:
    """The names of ``text`` found by trying every run of words at every place, the longest first."""
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\w+", text)]
    out, i = [], 0
    while i < len(words):
        found = next(
            (
                n
                for n in range(min(index.longest, len(words) - i), 0, -1)
                if tuple(w for _, _, w in words[i : i + n]) in index.exact
                or tuple(w.lower() for _, _, w in words[i : i + n]) in index.folded
            ),
            0,
        )
        if found:
            out.append((words[i][0], words[i + found - 1][1]))
        i += found or 1
    return out


def test_names_are_found_as_trying_every_run_of_words_would():
    """The index skips words no name starts with and lengths no name has; what it finds is what trying every
    run of words at every place finds, the longest at each place, on texts of names, near-names and cases."""
    names = ["LNC", "Lincoln National", "Lincoln National Corp", "ann lee", "Ann", "bobby_k", "Mary Ann Lee"]
    index = NameIndex(names)
    vocabulary = ["Lincoln", "lincoln", "National", "Corp", "LNC", "lnc", "Ann", "ann", "Lee", "Mary", "bobby_k"]
    vocabulary += ["the", "flight", "was", "late", "National", "and"]
    rng = np.random.default_rng(7)
    for _ in range(400):
        text = " ".join(rng.choice(vocabulary, size=int(rng.integers(0, 14))))
        assert index.spans(text) == _spans_by_every_run(index, text), text
