"""The `swap` method end to end on the earnings-calls demo (shipped in assets/, so this runs on a fresh clone):
the release at r = 0 is D_pre with DR = DU = 1, risk, utility and the intruder's accuracy fall along r, the
frontier's choice makes the intruder measurably worse (Greve & Sablica, Tables 2–3), the swap's constraints
hold in the released text, releases are seeded, and the bundle carries neither the company nor which chunks
were swapped."""

from __future__ import annotations

import dataclasses
import html
import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from engine.cli import main
from engine.data.dataset import Dataset
from engine.data.demos import DEMOS_DIR
from engine.data.identifiers_file import read_identifiers
from engine.data.load import load_dataset
from engine.errors import ConfigError, DataError
from engine.frontier import frontier, select_by_tradeoff
from engine.measures.evaluate import Evaluator
from engine.protect import get_protector
from engine.protect.swap import method as swap_method
from engine.protect.swap.edits import apply
from engine.protect.swap.identifiers import names_of_one
from engine.protect.swap.method import OWN_NAMES, SwapDetail
from engine.sweep import make_release, run_sweep
from engine.text.embeddings import embed_texts
from engine.text.kept import KeptByText, text_key
from engine.text.names import identifier_pattern, name_variants

SWAP_METRICS = ["swap_dr", "swap_du", "swap_attack_accuracy", "swap_mcnemar_p"]
DEMO = DEMOS_DIR / "earnings-calls"


@pytest.fixture(scope="module")
def demo():
    return load_dataset("earnings-calls")


@pytest.fixture(scope="module")
def fitted(demo):
    return get_protector("swap").fit(demo)


@pytest.fixture(scope="module")
def evaluator(demo, fitted):
    return Evaluator(demo, SWAP_METRICS, fitted=fitted)


@pytest.fixture(scope="module")
def sweep(demo, fitted, evaluator):
    # M = 6 releases per rate: DU moves < 0.5% on this data, and its mean over fewer releases is mostly noise (the
    # paper: "Monte Carlo estimates with a large enough M" where the swaps vary; ρ(DU) was −0.78 at M = 3).
    return run_sweep(demo, get_protector("swap"), None, 6, 0, jobs=2, fitted=fitted, evaluator=evaluator)


def _chunks(fitted, release) -> list[str]:
    """The released chunks: in the demo every row is one chunk (a call has several rows)."""
    assert fitted.spans["record"].tolist() == list(range(len(release.data)))
    return release.data[fitted.text_column].tolist()


def test_a_releases_changes_rebuild_every_record_and_say_where_each_entity_came_from(demo, fitted):
    release = make_release(fitted, fitted.knob.grid[-2], seed=3)
    originals = demo.frame[fitted.text_column].astype(str).tolist()
    partner = {i: j for a, b in release.detail(SwapDetail).pairs for i, j in ((a, b), (b, a))}
    sources = {str(fitted.prepared.documents[j]) for j in partner.values()}
    for record, original in enumerate(originals):
        mine = release.changes[release.changes["record"] == record].sort_values("start")
        edits = list(mine[["start", "end", "replacement", "label"]].itertuples(index=False, name=None))
        assert apply(original, edits) == release.data[fitted.text_column].iloc[record]
        assert (mine["original"] == [original[s:e] for s, e in zip(mine["start"], mine["end"])]).all()
    labels = release.changes["label"]
    swapped = labels[labels.str.contains(" swapped in from document ")]
    assert len(swapped) > 20 and {label.rsplit(" ", 1)[1] for label in swapped} <= sources
    assert labels.str.startswith("suppressed [").sum() + len(swapped) == len(labels)
    # a chunk that was not swapped reads as in D_pre: its changes are the suppressions every release shares
    still = [k for k in range(len(originals)) if k not in partner]
    at_zero = make_release(fitted, 0.0, seed=3).changes
    for changes in (release.changes, at_zero):
        assert not changes[changes["record"].isin(still)]["label"].str.contains("swapped").any()
    pd.testing.assert_frame_equal(
        release.changes[release.changes["record"].isin(still)].reset_index(drop=True),
        at_zero[at_zero["record"].isin(still)].reset_index(drop=True),
    )


def test_embeddings_are_unit_vectors_and_long_texts_are_windowed():
    money = " ".join(["Revenue grew six percent in the quarter."] * 40)  # ~360 tokens: two windows
    weather = " ".join(["The weather in Paris was rainy and cold."] * 40)
    x = embed_texts([money, weather, money + " " + weather, money])
    assert x.shape == (4, 384)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    np.testing.assert_array_equal(x[0], x[3])
    # both halves of a text past the model's 256 tokens count (cut at 256, it would read as money alone)
    assert x[2] @ x[1] > x[0] @ x[1] + 0.3 and x[2] @ x[0] > x[1] @ x[0] + 0.3


def test_a_texts_embedding_is_the_same_in_any_batch_and_kept_once_computed(monkeypatch):
    """The kept vectors stand for new runs only because a text's embedding does not depend on its batch."""
    import engine.text.embeddings as embeddings

    texts = [f"Quarter {k}: revenue grew {k} percent in {place}." for k, place in enumerate(["Paris", "Ohio", "Lagos"])]
    texts.append(" ".join(["Margins held steady across every segment this year."] * 30))  # two windows
    monkeypatch.setattr(embeddings, "_kept", KeptByText(embeddings.CACHED_TEXTS))
    together = embed_texts(texts)
    monkeypatch.setattr(embeddings, "_kept", KeptByText(embeddings.CACHED_TEXTS))
    alone = np.vstack([embed_texts([t]) for t in reversed(texts)])[::-1]
    np.testing.assert_array_equal(together, alone)  # bit for bit
    computed = []
    monkeypatch.setattr(embeddings, "_embed", lambda new, progress: computed.append(new) or np.zeros((len(new), 384)))
    again = embed_texts([texts[2], "A text not seen before.", texts[2]])
    assert computed == [["A text not seen before."]]
    np.testing.assert_array_equal(again[0], together[2])
    np.testing.assert_array_equal(again[2], together[2])


def test_a_texts_embedding_is_the_same_with_one_thread_or_two_and_shared_between_processes(monkeypatch, tmp_path):
    """A sweep's workers embed with one thread each and share what they embedded; the vectors are the ones
    one process with two threads gives."""
    import engine.text.embeddings as embeddings
    from engine.text.kept import sharing

    texts = ["Revenue grew 12% to $4.1 billion in the quarter.", "We expect margins to expand next year."]
    monkeypatch.setattr(embeddings, "_kept", KeptByText(embeddings.CACHED_TEXTS))
    monkeypatch.setattr(embeddings, "model_threads", lambda: 2)
    two = embed_texts(texts)
    monkeypatch.setattr(embeddings, "_kept", KeptByText(embeddings.CACHED_TEXTS))
    monkeypatch.setattr(embeddings, "model_threads", lambda: 1)
    with sharing(tmp_path):
        one = embed_texts(texts)
        monkeypatch.setattr(embeddings, "_kept", KeptByText(embeddings.CACHED_TEXTS))
        monkeypatch.setattr(embeddings, "_embed", lambda new, progress: pytest.fail(f"embedded again: {new}"))
        shared = embed_texts(texts[::-1])[::-1]  # another process of the sweep: read, not embedded
    assert np.array_equal(one, two) and np.array_equal(shared, two)
    assert len(list((tmp_path / "embeddings").glob("*.npy"))) == 2


def test_many_texts_are_embedded_in_worker_processes_as_here(monkeypatch):
    import engine.text.embeddings as embeddings

    texts = ["Revenue grew 12% to $4.1 billion.", "Margins expand.", "Free cash flow was $2 billion. " * 40]
    monkeypatch.setattr(embeddings, "PARALLEL_MIN_TEXTS", 2)
    monkeypatch.setattr(embeddings, "MACHINE_THREADS", 2)
    reports: list[tuple] = []
    spread = embeddings._embed(texts, lambda *r: reports.append(r))
    assert "in 2 processes" in reports[-1][2] and reports[-1][:2] == (3, 3)
    assert np.array_equal(spread, embeddings._embed_here(texts, lambda *r: None))


def test_more_new_texts_than_are_kept_still_come_back_in_order(monkeypatch):
    import engine.text.embeddings as embeddings

    monkeypatch.setattr(embeddings, "_kept", KeptByText(2))
    monkeypatch.setattr(embeddings, "_embed", lambda new, progress: np.array([[float(len(t))] * 384 for t in new]))
    out = embed_texts(["a", "bbb", "cc", "a"])
    assert out[:, 0].tolist() == [1.0, 3.0, 2.0, 1.0]
    assert len(embeddings._kept) == 2 and text_key("cc") in embeddings._kept and text_key("a") not in embeddings._kept
    embed_texts(["bbb"])  # used again: now the latest, so "cc" goes first
    embeddings._kept.put(text_key("d"), np.zeros(384))
    assert text_key("bbb") in embeddings._kept and text_key("cc") not in embeddings._kept


def test_rate_zero_releases_the_pre_swap_data_with_dr_and_du_one(demo, fitted, evaluator):
    release = make_release(fitted, 0.0, seed=0)
    detail = release.detail(SwapDetail)
    assert not detail.pairs and not detail.swapped.any()
    measured = evaluator.evaluate(release)
    assert measured["swap_dr"].value == 1.0 and measured["swap_du"].value == 1.0
    assert measured["swap_mcnemar_p"].value == 1.0
    # every chunk reads as D_pre: the company's ticker and names are gone from its own chunks
    chunks = _chunks(fitted, release)
    assert chunks == fitted.prepared.reference
    for k, text in enumerate(chunks):
        label = fitted.labels[k]
        assert not any(f" {name} " in f" {text} " for name in fitted.gazetteer[label] if len(name) > 3), k


def test_measures_of_every_method_do_not_use_the_withheld_company(demo, fitted):
    """The bundle leaves the ticker out: the whole-release intruder cannot link on it and a classifier of the
    release has no ticker to learn (predicting it from the text is the swap's attack, not a use of the release)
    — also where the dashboard takes the measures of every method from an Evaluator prepared without the fit."""
    metrics = ["release_identification_probability", "classifier_f1_ratio"]
    shared = Evaluator(demo, metrics)
    assert set(shared.available) == set(metrics)  # the data as it is: the ticker links and is a target
    release = make_release(fitted, 0.0, seed=0)
    confidential = shared.evaluate(demo.frame)["release_identification_probability"].value
    for own in (Evaluator(demo, metrics, fitted=fitted), Evaluator(demo, metrics, fitted=fitted, shared=shared)):
        assert "ticker is withheld from the release" in own.skipped["classifier_f1_ratio"]
        assert "withhold ticker from the bundle" in own.notes["release_identification_probability"]
        risk = own.evaluate(release)["release_identification_probability"].value
        assert risk == pytest.approx(1 / demo.n_records) and confidential > 10 * risk  # nothing left to link on


@pytest.mark.slow
def test_risk_utility_and_the_intruder_fall_along_r(sweep):
    """The acceptance of issue 13 on the demo: Spearman ≤ −0.8 over the grid for DR, DU and the intruder's
    accuracy (M = 6 releases per rate); at the frontier's choice (Eq. 2.8) the intruder names at least a third
    fewer swapped chunks correctly and McNemar rejects at 5%."""
    means = sweep.summary.pivot(index="knob", columns="metric", values="mean").sort_index()
    rates = means.index.to_numpy()
    assert means.loc[0.0, "swap_dr"] == 1.0 and means.loc[0.0, "swap_du"] == 1.0
    for metric, bound in (("swap_dr", -0.8), ("swap_attack_accuracy", -0.8), ("swap_du", -0.8)):
        rho = spearmanr(rates, means[metric]).statistic
        assert rho <= bound, (metric, rho, means[metric].round(4).tolist())
    assert means["swap_du"].iloc[-1] < 1.0
    table = frontier(sweep.summary, "swap_dr", "swap_du")
    chosen = select_by_tradeoff(table, a=1.0).knob
    assert chosen > 0
    attack = sweep.detail(chosen, "swap_attack_accuracy")  # every replicate (Table 2 reports means over runs)
    swapped = attack[attack["chunks"] == "swapped targets"]
    assert len(swapped) == sweep.replicates and (swapped["n"] >= 20).all()
    pre, post = swapped["accuracy_pre"].mean(), swapped["accuracy_post"].mean()
    assert post <= pre * 2 / 3, swapped.to_dict("records")
    assert (swapped["p_value"] < 0.05).all()
    assert sweep.metric_at(chosen, "swap_mcnemar_p").value == pytest.approx(swapped["p_value"].mean())


def test_a_sweep_shared_with_this_process_equals_one_run_here(demo, fitted, evaluator, monkeypatch):
    """With a large fit (the 306 calls) this process takes a share of the sweep beside one worker, with the
    originals and the embeddings the worker publishes; the measures are those of one process."""
    import engine.sweep
    from engine.text import embeddings

    grid = fitted.knob.grid[1:4]
    one = run_sweep(demo, get_protector("swap"), grid, 2, 0, jobs=1, fitted=fitted, evaluator=evaluator)
    embeddings._kept.clear()  # what the run in this process embedded is worked out again, here or in the worker
    monkeypatch.setattr(engine.sweep, "SHARE_HERE_BYTES", 0)
    shared = run_sweep(demo, get_protector("swap"), grid, 2, 0, jobs=2, fitted=fitted, evaluator=evaluator)
    pd.testing.assert_frame_equal(one.rows, shared.rows, check_exact=True)


def test_swaps_pair_different_documents_keep_f_and_change_c(fitted):
    release = make_release(fitted, fitted.knob.high, seed=1)
    detail = release.detail(SwapDetail)
    p = fitted.prepared
    assert len(detail.pairs) > 20
    for a, b in detail.pairs:
        assert p.documents[a] != p.documents[b]
        assert p.clusters[a] == p.clusters[b]
    chunks = _chunks(fitted, release)
    mentions = p.entities.mentions
    for row in mentions[mentions["category"] == "date"].itertuples(index=False):  # F: dates stay
        assert row.text in chunks[row.chunk], (row.chunk, row.text)
    partner = {i: j for a, b in detail.pairs for i, j in ((a, b), (b, a))}
    events = p.entities.values["event"]
    for row in mentions[mentions["category"] == "event"].itertuples(index=False):  # C: suppressed or exchanged
        brought = events[partner[row.chunk]] if row.chunk in partner else ()
        if row.text not in brought:
            assert row.text not in chunks[row.chunk], (row.chunk, row.text)
    assert release.withheld == ("ticker",) and not release.changes_ship


def test_releases_are_seeded(fitted):
    r = fitted.knob.grid[4]
    a, b, c = (make_release(fitted, r, seed=s) for s in (5, 5, 6))
    pd.testing.assert_frame_equal(a.data, b.data)
    pd.testing.assert_frame_equal(a.changes, b.changes)
    assert a.detail(SwapDetail).pairs != c.detail(SwapDetail).pairs


def test_the_bundle_withholds_the_company_and_the_changes(demo, tmp_path, fitted):
    out = tmp_path / "bundle"
    knob = fitted.knob.grid[-2]
    assert (
        main(["release", "--data", "earnings-calls", "--method", "swap", "--knob", str(knob), "--out", str(out)]) == 0
    )
    names = {p.name for p in out.iterdir()}
    assert "changes.csv" not in names
    released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    assert "ticker" not in released.columns
    manifest = json.loads((out / "manifest.json").read_text())
    assert "withheld" in manifest["columns"]["ticker"]
    bundle = "\n".join((out / n).read_text(encoding="utf-8", errors="ignore") for n in names if n != "release.parquet")
    assert "swapped in from" not in bundle  # the internal review's labels say where entities came from
    # no record names its own company: the direct identifiers are suppressed before any swap
    for record, label in enumerate(demo.frame["ticker"]):
        text = f" {released['text'].iloc[record]} "
        for name in fitted.gazetteer[label]:
            if len(name) > 3:
                assert f" {name} " not in text, (record, name)
    # names the identifiers file did not list, held by one company's chunks only: the bundle says how many, the
    # internal review (beside it) which, as rows of an identifiers file
    own = fitted.own_names
    assert len(own) and list(own.columns) == ["ticker", "label", "value", "chunks"]
    [warning] = [w for w in manifest["warnings"] if "held by the chunks of one ticker only" in w]
    assert warning.startswith(f"{len(own):,} names") and "give the file (Identifiers file)" in warning
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "held by the chunks of one ticker only" in report and OWN_NAMES not in report
    review = (tmp_path / "bundle.internal-review.html").read_text(encoding="utf-8")
    assert html.escape(OWN_NAMES) in review and f"<td>{html.escape(own['value'].iloc[0])}</td>" in review


def test_names_of_one_company_are_those_only_its_chunks_hold_often_enough():
    """Hand-built mentions: "Ameren" in three of AEE's chunks is listed; "Missouri" in two is not (a place named
    in passing); "Microsoft", held by two companies' chunks, is not; dates are never names."""
    mentions = pd.DataFrame(
        [
            (0, "organization", "Ameren"), (1, "organization", "Ameren"), (2, "organization", "Ameren"),
            (2, "organization", "Ameren"), (0, "location", "Missouri"), (1, "location", "Missouri"),
            (1, "organization", "Microsoft"), (3, "organization", "Microsoft"), (4, "organization", "Microsoft"),
            (3, "person", "Greg"), (4, "person", "Greg"), (5, "person", "Greg"), (3, "date", "2021"),
            (4, "date", "2021"), (5, "date", "2021"),
        ],
        columns=["chunk", "category", "text"],
    )  # fmt: skip
    labels = np.array(["AEE", "AEE", "AEE", "AON", "AON", "AON"])
    own = names_of_one(mentions, labels, "ticker")
    assert own.to_dict("records") == [
        {"ticker": "AEE", "label": "Company Name", "value": "Ameren", "chunks": 3},
        {"ticker": "AON", "label": "Executive", "value": "Greg", "chunks": 3},
    ]


def test_a_column_that_spells_out_the_protected_field_is_withheld_too(fitted):
    """A file path holding the ticker, released as is beside a withheld ticker, would tell the company."""
    assert fitted.released_as_is == ("chunk",)  # call_id, the document column, leaves pseudonymized
    paths = [f"MAEC_Dataset/{call}/text.txt" for call in fitted.frame["call_id"]]
    frame = fitted.frame.assign(source_path=paths, quarter="2017Q1")
    with_path = dataclasses.replace(fitted, frame=frame, released_as_is=("chunk", "source_path", "quarter"))
    release = with_path.release(fitted.knob.grid[1], np.random.default_rng(0))
    assert release.withheld == ("ticker", "source_path")
    assert release.fact("Direct identifiers").startswith("before any swap, each document's own ticker and ")
    assert release.fact("Direct identifiers").endswith(" documents from identifiers.csv are suppressed")
    without = dataclasses.replace(fitted, suppressed=swap_method._suppressed_text("ticker", None, (), {}))
    said = without.release(fitted.knob.grid[1], np.random.default_rng(0)).fact("Direct identifiers")
    assert "no identifiers file was given" in said and "columns ticker, label, value" in said
    n, named = len(frame), int((frame["ticker"].str.len() >= 2).sum())  # a one-letter ticker is never matched
    assert release.fact("Columns withheld") == (
        f"ticker (the protected field) and source_path (it spells out ticker in {named:,} of {n:,} records) are "
        "withheld from the bundle"
    )
    alone = fitted.release(fitted.knob.grid[1], np.random.default_rng(0)).fact("Columns withheld")
    assert alone == "ticker (the protected field) is withheld from the bundle"


def test_names_in_a_direct_identifier_column_are_suppressed_and_never_released(demo, tmp_path):
    """The data's own columns can name what identifies a call (Section 3.1): a company column, one name per line
    as a list is read, is a direct-identifier column; its names leave the chunks before any swap, with no
    identifiers file, and neither the column nor the names reach the bundle."""
    companies = {t: ids["Company Name"] for t, ids in read_identifiers(DEMO / "identifiers.csv", "ticker").items()}
    frame = demo.frame.assign(company=["\n".join(companies.get(t, [])) for t in demo.frame["ticker"]])
    named = [
        (k, variant)
        for k, (text, t) in enumerate(zip(frame["text"], frame["ticker"]))
        for name in companies.get(t, [])
        for variant in name_variants(name)
        if len(variant) > 3 and identifier_pattern(variant).search(text)
    ]
    assert len(named) >= 20  # the calls name their companies: a suppression that did nothing would fail below
    data = tmp_path / "calls.csv"
    frame.to_csv(data, index=False)
    schema = dataclasses.replace(demo.schema, direct_identifiers=("company",))
    (tmp_path / "calls.schema.toml").write_text(schema.to_toml(), encoding="utf-8")
    dataset = load_dataset(data)
    assert dataset.schema.direct_identifiers == ("company",) and dataset.schema.identifiers["company"] == "drop"
    fitted = get_protector("swap", embedding="tfidf-svd").fit(dataset)
    assert fitted.suppressed.endswith("documents from the column company are suppressed"), fitted.suppressed
    for k, variant in named:
        assert not identifier_pattern(variant).search(fitted.prepared.chunks[k]), (k, variant)
    assert sum("[company]" in chunk for chunk in fitted.prepared.chunks) >= len({k for k, _ in named})
    out = tmp_path / "bundle"
    argv = ["release", "--data", str(data), "--method", "swap", "--embedding", "tfidf-svd", "--knob", "0", "--out"]
    assert main([*argv, str(out)]) == 0
    released = pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False)
    assert "company" not in released.columns
    for k, variant in named:
        assert not identifier_pattern(variant).search(released["text"].iloc[k]), (k, variant)


def test_bad_settings_and_data_are_config_or_data_errors(demo, tmp_path):
    with pytest.raises(ConfigError, match="metadata field 'company' is not a column"):
        get_protector("swap", metadata="company").check(demo)
    with pytest.raises(ConfigError, match=r"population \(N\) = 10 is smaller than the 450 chunks"):
        get_protector("swap", population=10.0).check(demo)
    with pytest.raises(ConfigError, match="two roles"):
        get_protector("swap", swap=("organization",), fixed=("organization",))
    one = Dataset(
        name="one", frame=demo.frame[demo.frame["call_id"] == demo.frame["call_id"].iloc[0]], schema=demo.schema
    )
    with pytest.raises(DataError, match="at least two documents"):
        get_protector("swap").check(one)
    bad = tmp_path / "ids.csv"
    bad.write_text("ticker,name\nADP,Automatic Data Processing\n", encoding="utf-8")
    with pytest.raises(DataError, match="lacks the column"):
        read_identifiers(bad, "ticker")
    with pytest.raises(ConfigError, match="does not exist"):
        get_protector("swap", identifiers=str(tmp_path / "missing.csv")).check(demo)
    plain = dataclasses.replace(demo.schema, document=None, fields=())
    with pytest.raises(ConfigError, match=r"choose one with the parameter Protected field \(metadata\)$"):
        get_protector("swap").metadata_field(Dataset(name="plain", frame=demo.frame, schema=plain))


def test_the_intruders_gazetteer_matches_as_the_suppression_does():
    from engine.measures.risk.company_attack import Gazetteer
    from engine.text.names import identifier_pattern

    ids = {"ADP": ["ADP", "Automatic Data Processing"], "AAPL": ["AAPL", "Apple", "Tim Cook"], "X": ["X"]}
    gazetteer = Gazetteer(ids)
    texts = ["Automatic data processing said", "apple and ADP", "adp is lower", "X marks it", "x is small", "AAPLx"]
    for text in texts:
        one_by_one = {label for label, values in ids.items() for v in values if identifier_pattern(v).search(text)}
        assert gazetteer.labels_in(text) == one_by_one, text
    assert len(gazetteer) == 6


def test_the_report_and_the_page_show_the_uniques_and_the_attack_along_r_from_one_function(
    demo, fitted, evaluator, sweep, tmp_path
):
    """The swap's figures along r reach the reviewer's report as they reach the Protect page (`page_figures`),
    with the released rate marked."""
    from engine.export.chosen import Prepared, Run, export_chosen
    from engine.record.replay import ReplaySpec
    from engine.report.registry import page_figures

    rate = sweep.grid[2]
    keys = [key for key, _ in page_figures(sweep, rate)]
    assert keys == ["swap-uniques", "swap-attack"]
    out = tmp_path / "bundle"
    spec = ReplaySpec("calls made in the test", "swap", rate, 0, sweep.replicates, str(out), with_frontier=True)
    prepared = Prepared(demo, get_protector("swap"), fitted, evaluator, sweep)
    export_chosen(out, spec, prepared, run=Run(audit_log=tmp_path / "a"))
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>The swap along r: unique chunks and the intruder</h2>" in report
    for key in keys:
        assert f'id="fig-{key}"' in report


def test_texts_that_name_nothing_are_released_with_the_warning_that_nothing_is_protected(tmp_path, capsys):
    """Texts without a named entity (and a rating the swap may take as its field): the swap's own names, its
    intruder and its release still run, and the release says it protects nothing, instead of an IndexError or
    sklearn's "empty vocabulary"."""
    rng = np.random.default_rng(1)
    words = "good bad fine ok nice poor great awful decent lovely".split()
    frame = pd.DataFrame(
        {
            "doc": [f"d{i % 6}" for i in range(60)],
            "text": [" ".join(rng.choice(words, 12)) for _ in range(60)],
            "overall": rng.integers(1, 6, 60),
        }
    )
    assert names_of_one(pd.DataFrame({"chunk": [], "category": [], "text": []}), np.array(["a"]), "f").empty
    data = tmp_path / "plain.csv"
    frame.to_csv(data, index=False)
    assert main(["release", "--data", str(data), "--method", "swap", "--out", str(tmp_path / "out")]) == 0
    assert "protects nothing" in capsys.readouterr().err
