"""The `kanon` method end to end on the gold set's 640 posts (shipped in assets/, so this runs on a fresh
clone): every release is k-anonymous (pycanon, over every column of its released table), DM and LM rise with k,
no direct identifier survives, the text changes only inside tagged spans, releases are seeded, and the bundle
carries the quasi-identifier table and the claims `textsdc verify` checks."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from pycanon import anonymity
from scipy.stats import spearmanr

from engine.data.dataset import Dataset
from engine.data.schema import Schema
from engine.errors import ConfigError
from engine.measures.evaluate import Evaluator
from engine.protect import get_protector
from engine.protect.kanon.gold import read_posts
from engine.protect.kanon.method import ATTRIBUTES, QI_TABLE, KanonDetail
from engine.protect.kanon.sanitize import QI_LABELS, SCHEME
from engine.sweep import make_release, run_sweep

METRICS = ["qi_unique_share", "smallest_class", "discernibility", "loss_metric"]


@pytest.fixture(scope="module")
def posts() -> Dataset:
    frame = pd.DataFrame({"text": [p.text for p in read_posts().values()]})
    return Dataset("gold-posts", frame, Schema(text="text"), source="tests")


@pytest.fixture(scope="module")
def fitted(posts):
    return get_protector("kanon").fit(posts)


def _released_columns(table: pd.DataFrame) -> list[str]:
    """Every column of the released table but the mark of suppressed rows and the sensitive values: a swapped
    attribute only says whether the record states it (its values are in a table per class)."""
    return [c for c in table.columns if c not in ("suppressed", "SA")]


def test_every_release_is_k_anonymous_and_suppresses_at_most_the_limit(fitted):
    within = []
    for k in fitted.knob.grid:
        release = make_release(fitted, k, seed=0)
        detail = release.detail(KanonDetail)
        table = release.tables[QI_TABLE]
        kept = table[~table["suppressed"]].reset_index(drop=True)
        assert set(QI_LABELS) < set(_released_columns(table))
        assert anonymity.k_anonymity(kept, _released_columns(table)) >= k
        assert detail.class_sizes[~detail.suppressed].min() >= k
        # within the 5% limit, unless no generalization reaches k there (whether a post states an attribute
        # at all cannot be generalized away): then the least suppression the top node needs, and it says so
        assert table["suppressed"].mean() <= 0.05 + 1e-9 or detail.over_limit
        within.append(not detail.over_limit)
    assert within[:3] == [True, True, True] and not all(within)


def test_dm_and_lm_rise_with_k_and_risk_falls(posts, fitted):
    evaluator = Evaluator(posts, METRICS, fitted=fitted)
    sweep = run_sweep(posts, get_protector("kanon"), None, 1, 0, jobs=1, fitted=fitted, evaluator=evaluator)
    means = sweep.summary.pivot(index="knob", columns="metric", values="mean").sort_index()
    for metric in ("discernibility", "loss_metric"):
        assert spearmanr(means.index, means[metric]).statistic >= 0.8, means[metric].tolist()
    assert (means["smallest_class"] >= means.index).all()
    unique = sweep.detail(means.index[0], "qi_unique_share").iloc[0]
    assert unique["unique_before"] > 0.05 and unique["unique_after"] == 0.0
    from engine.report.kanon import KanonSection

    figure = dict(KanonSection.figures(sweep, 5))["kanon-group-sizes"]
    sizes = [int(x.replace(",", "")) for x in figure.data[0].x]
    assert min(sizes) >= 5 and "k = 5" in figure.layout.title.text
    histogram = sweep.detail(5.0, "smallest_class")
    kept = int((histogram["records"]).sum())
    assert kept + int(histogram["suppressed"].iloc[0]) == len(posts.frame)


def test_no_direct_identifier_survives_and_text_changes_only_inside_tagged_spans(fitted):
    release = make_release(fitted, 5, seed=0)
    before = fitted.frame[fitted.text_column].tolist()
    after = release.data[fitted.text_column].tolist()
    for row, spans in enumerate(fitted.spans):
        for start, end, label in spans:
            if label == "DI":
                assert not re.search(rf"(?<!\w){re.escape(before[row][start:end])}(?!\w)", after[row]), row
        # put every change back: the original comes out, so nothing outside the spans moved
        changes = release.changes[release.changes["record"] == row].sort_values("start")
        tagged = {(s, e) for s, e, _ in spans}
        assert set(zip(changes["start"], changes["end"])) == tagged  # every span found, changed or kept
        kept = changes[changes["original"] == changes["replacement"]]
        assert set(kept["label"]) <= {"SA", *QI_LABELS}  # a direct identifier is never kept
        rebuilt, pos, at = [], 0, 0
        for start, end, original, new in changes[["start", "end", "original", "replacement"]].itertuples(index=False):
            assert (start, end) in tagged
            shift = start - pos
            rebuilt.append(after[row][at : at + shift])
            rebuilt.append(original)
            at += shift + len(new)
            pos = end
        rebuilt.append(after[row][at:])
        assert "".join(rebuilt) == before[row]


def test_releases_are_seeded(fitted):
    a = make_release(fitted, 3, seed=1)
    b = make_release(fitted, 3, seed=1)
    pd.testing.assert_frame_equal(a.data, b.data)
    c = make_release(fitted, 3, seed=2)
    assert not a.data.equals(c.data)  # occupations are swapped within classes under the seed


def test_the_scheme_is_checked_and_operations_apply(posts):
    with pytest.raises(ConfigError, match="blur"):
        get_protector("kanon", age="blur")
    every = {name: "generalize" for name, _ in ATTRIBUTES.values()}
    generalized = get_protector("kanon", **every).fit(posts)
    release = make_release(generalized, 10, seed=0)
    table = release.tables[QI_TABLE]
    assert anonymity.k_anonymity(table[~table["suppressed"]], list(QI_LABELS)) >= 10
    assert set(SCHEME) == set(QI_LABELS)


def test_records_by_author_need_an_author_field(posts):
    with pytest.raises(ConfigError, match="needs an author field"):
        get_protector("kanon", unit="author").fit(posts)
    frame = posts.frame.assign(user=[f"u{i // 4}" for i in range(len(posts.frame))])
    by_author = Dataset("gold-authors", frame, Schema(text="text", author="user"), source="tests")
    fitted = get_protector("kanon", unit="author").fit(by_author)
    release = make_release(fitted, 5, seed=0)
    assert len(release.tables[QI_TABLE]) == frame["user"].nunique()
    assert np.all(fitted.groups == pd.factorize(frame["user"])[0])


def test_the_cli_release_bundle_carries_the_quasi_identifier_table_and_no_identifier(posts, fitted, tmp_path):
    from engine.cli import main

    data = tmp_path / "posts.csv"
    posts.frame.to_csv(data, index=False)
    (tmp_path / "posts.schema.toml").write_text('text = "text"\n', encoding="utf-8")
    out = tmp_path / "bundle"
    assert main(["release", "--data", str(data), "--method", "kanon", "--knob", "5", "--out", str(out)]) == 0
    table = pd.read_csv(out / f"{QI_TABLE}.csv", dtype=str, keep_default_na=False)
    assert len(table) == len(posts.frame) and set(QI_LABELS) <= set(table.columns)
    released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)["text"].tolist()
    for row, spans in enumerate(fitted.spans):
        for start, end, label in spans:
            name = posts.frame["text"].iloc[row][start:end]
            if label == "DI" and len(name) >= 3:
                assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", released[row]), (row, name)


def test_the_release_says_how_it_reached_k_in_counts_only():
    from engine.protect.kanon.lattice import Anonymized
    from engine.protect.kanon.method import summary

    def anonymized(levels, suppressed, over_limit=False):
        n = len(suppressed)
        return Anonymized(levels, pd.DataFrame(index=range(n)), np.array(suppressed), np.ones(n), 1, 0.1, over_limit)

    scheme = {**SCHEME, "QIJOB": "generalize"}
    done = anonymized({"QIAGE": 2, "QIREGION": 0, "QIJOB": 1, "QIGENDER": 0}, [False, False, True, False])
    assert summary(done, scheme, 0.05) == (
        "Generalized age to 10-year bands, occupation to occupational group. United within each group: race or "
        "nationality, place. Suppressed: 1 of 4 records (25.0%)."
    )
    assert summary(anonymized({"QIAGE": 0}, [False] * 4), SCHEME, 0.05) == (
        "Nothing generalized. United within each group: race or nationality, place. Swapped within each group: "
        "occupation. Suppressed: 0 of 4 records (0.0%)."
    )
    out = summary(anonymized({"QIAGE": 4}, [True, True, False, False], over_limit=True), SCHEME, 0.05)
    assert out.startswith("Out of reach within the limit of 5% suppressed records")
    assert out.endswith("every attribute at its top level, 2 of 4 records (50.0%) suppressed.")


def test_every_release_carries_its_summary_and_labels_its_changes(fitted):
    from engine.protect.kanon.method import KAnonymity

    for k in (2, 50):
        release = make_release(fitted, k, seed=0)
        detail, said = release.detail(KanonDetail), release.fact("Anonymization")
        assert f"{int(detail.suppressed.sum()):,} of {len(detail.suppressed):,} records" in said
        assert ("Out of reach" in said) == detail.over_limit
        assert set(release.changes["label"]) <= set(KAnonymity.change_labels)


def test_the_tagger_quality_table_is_drawn_per_label():
    from engine.figures.kanon import tagger_quality_figure
    from engine.protect.kanon.gold import LABEL_NAMES
    from engine.protect.kanon.tagger import held_out_quality

    figure = tagger_quality_figure(held_out_quality(), LABEL_NAMES)
    [table] = figure.data
    labels, what, _, _, f1, support = table.cells.values
    quality = held_out_quality().set_index("label")
    assert labels[-1] == "macro" and labels[-2] == "NONE"  # the macro F1 is the mean over the rows above it
    assert labels[:-1] == [label for label in quality.index[:-1] if quality.loc[label, "support"] > 0]
    assert f"{quality.loc['macro', 'support']:,}" == support[-1]
    assert what[labels.index("QIAGE")] == "age"
    assert f1[labels.index("DI")] == f"{quality.loc['DI', 'f1']:.2f}"
    assert f"macro F1 {quality.loc['macro', 'f1']:.2f}" in figure.layout.title.text


def test_an_evaluator_of_the_method_takes_the_shared_measures_as_they_were_prepared(posts, fitted):
    shared = Evaluator(posts)
    own = Evaluator(posts, fitted=fitted, shared=shared)
    alone = Evaluator(posts, fitted=fitted)
    assert own.available == alone.available and own.skipped == alone.skipped
    assert set(METRICS) <= set(own.available) and not set(METRICS) & set(shared.available)
    taken = {m.id: m for m in shared._measures}
    assert all(m is taken[m.id] for m in own._measures if m.id in taken) and taken
    release = make_release(fitted, 5, seed=0)
    a, b = own.evaluate(release), alone.evaluate(release)
    assert {k: v.value for k, v in a.items()} == {k: v.value for k, v in b.items()}


def test_the_group_size_axis_has_ticks_to_read_whatever_its_range():
    """Powers of ten alone gave a range of 30 to 900 a single tick ("100"); 1-2-5 ticks give it several, a wide
    range keeps the powers of ten, every label with thousands separators."""
    from engine.figures.kanon import log_ticks

    narrow = log_ticks(30, 900)
    assert narrow["tickvals"] == [20, 50, 100, 200, 500, 1000] and narrow["ticktext"][-1] == "1,000"
    assert len([v for v in narrow["tickvals"] if 30 <= v <= 900]) >= 3
    assert log_ticks(5, 6000)["tickvals"] == [1, 10, 100, 1000, 10000]
    assert log_ticks(1, 1)["tickvals"] == [1]


def test_the_report_and_the_page_show_the_tagger_and_the_groups_from_one_function(posts, fitted, tmp_path):
    """k-anonymity's figures reach the reviewer's report as they reach the Protect page (`page_figures`): the
    tagger's quality per label and the sizes of the groups at the released k."""
    from engine.export.chosen import Prepared, Run, export_chosen
    from engine.record.replay import ReplaySpec
    from engine.report.registry import page_figures

    protector = get_protector("kanon")
    evaluator = Evaluator(posts, METRICS, fitted=fitted)
    sweep = run_sweep(posts, protector, [2.0, 5.0], 1, 0, jobs=1, fitted=fitted, evaluator=evaluator)
    keys = [key for key, _ in page_figures(sweep, 5.0)]
    assert keys == ["kanon-tagger-quality", "kanon-group-sizes"]
    out = tmp_path / "bundle"
    spec = ReplaySpec("posts made in the test", "kanon", 5.0, 0, 1, str(out))
    export_chosen(out, spec, Prepared(posts, protector, fitted, evaluator, sweep), run=Run(audit_log=tmp_path / "a"))
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>k-anonymity: the tagger&#x27;s quality and the groups</h2>" in report
    for key in keys:
        assert f'id="fig-{key}"' in report


def test_a_bundle_claims_l_and_t_with_its_sensitive_column_and_verify_counts_them_as_pycanon_does(
    posts, fitted, tmp_path, capsys
):
    from dataclasses import replace

    from engine.cli import main
    from engine.export.chosen import Prepared, Run, export_chosen
    from engine.record.manifest import read_record
    from engine.record.replay import ReplaySpec

    protector = get_protector("kanon", ell=2, t=0.4)
    out = tmp_path / "bundle"
    spec = ReplaySpec("posts made in the test", "kanon", 5.0, 0, 1, str(out), protector.params())
    prepared = Prepared(posts, protector, replace(fitted, ell=2, t=0.4))
    export_chosen(out, spec, prepared, run=Run(audit_log=tmp_path / "audit.sqlite"))
    [claim] = read_record(out).claims
    assert (claim.k, claim.ell, claim.t, claim.sensitive) == (5, 2, 0.4, "SA")
    table = pd.read_csv(out / f"{QI_TABLE}.csv", dtype=str, keep_default_na=False)
    kept = table[table["suppressed"] == "False"].reset_index(drop=True)
    columns = _released_columns(table)
    k, ell = anonymity.k_anonymity(kept, columns), anonymity.l_diversity(kept, columns, ["SA"])
    t = anonymity.t_closeness(kept, columns, ["SA"])
    assert k >= 5 and ell >= 2 and t <= 0.4 + 1e-9
    capsys.readouterr()
    assert main(["verify", str(out), "--no-replay"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for claimed, found in ((f"k = 5 claimed; on {QI_TABLE}.csv", f": k = {k} ✓"),
                           (f"ℓ = 2 claimed; SA on {QI_TABLE}.csv", f": ℓ = {ell} ✓"),
                           (f"t = 0.4 claimed; SA on {QI_TABLE}.csv", f": t = {t:.3f} ✓")):  # fmt: skip
        assert any(line.startswith(claimed) and line.endswith(found) for line in lines), (claimed, lines)


def test_a_string_taken_for_an_identifier_less_often_than_for_a_place_is_a_place():
    """The tagger's labels made consistent by vote (issue 51): "London" a DI once and a place twice is a place
    everywhere (sanitized as one, not masked); "Ann" a DI once and nothing else stays DI, and so does a tie."""
    from engine.protect.kanon.sanitize import majority_labels, propagate

    texts = ["London Supporters FC", "from London", "London born", "Ann and Bob", "Bob in Paris", "Paris"]
    spans = [
        [(0, 6, "DI")],
        [(5, 11, "QIREGION")],
        [(0, 6, "QIREGION")],
        [(0, 3, "DI"), (8, 11, "DI")],
        [(0, 3, "QIJOB"), (7, 12, "QIREGION")],
        [(0, 5, "DI")],
    ]
    voted = majority_labels(texts, spans)
    assert voted[0] == [(0, 6, "QIREGION")]
    assert voted[3] == [(0, 3, "DI"), (8, 11, "DI")]  # "Bob": one DI, one QIJOB: a tie keeps DI
    assert voted[5] == [(0, 5, "DI")]  # "Paris": one DI, one place: a tie keeps DI
    done = propagate(texts, spans)
    assert done[0] == [(0, 6, "QIREGION")] and done[4][0] == (0, 3, "DI")  # Bob masked everywhere


def test_a_written_value_never_holds_a_string_masked_elsewhere():
    """A union, a swap or a generalization writes "*" for a value holding a string tagged DI anywhere."""
    from engine.protect.kanon.sanitize import clear_of

    clear = clear_of(["Social", "Al"])  # "Al" shorter than 3 characters: not held against values
    assert clear("Social worker") == "*" and clear("Social") == "*"
    assert clear("Socially distant") == "Socially distant" and clear("Alabama") == "Alabama"
    assert clear_of([])("Social worker") == "Social worker"
