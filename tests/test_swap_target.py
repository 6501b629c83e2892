"""The swap against an attacker it was not built beside (issue 50), on hand-made corpora: the company terms
learnt from the data, the categories exchanged along within a pair (role A) lowering a background intruder's
naming of swapped chunks where company terms carry identity, the release of passages without their document
link, and the statement a release makes of the target."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.measures.base import metric_info
from engine.measures.risk.background_attack import BackgroundIntruder, SwapTarget
from engine.protect import get_protector
from engine.protect.swap import pipeline
from engine.protect.swap.method import PASSAGES, SwapDetail
from engine.protect.swap.swapping import check_roles, swap_entities
from engine.protect.swap.vocabulary import TERM, company_terms, term_mentions
from engine.sweep import make_release

COMPANIES = {
    "AAA": ("Zorblax", "quintrel", "vandomar"),
    "BBB": ("Plexiton", "merovar", "tasselby"),
    "CCC": ("Grunwick", "ostrevan", "pellucid"),
    "DDD": ("Hambrio", "citraleen", "wobblex"),
    "EEE": ("Kestrova", "lumidane", "farrowick"),
    "FFF": ("Dravolin", "sprocketa", "yelmore"),
}
YEARS = ("2018", "2019", "2020", "2021")
ORGS = ("Microsoft", "Walmart", "Pfizer")
TOPICS = (
    "Freight costs eased while wages kept rising across the network.",
    "We repurchased shares and raised the dividend by a cent.",
    "Inventory turned faster and working capital improved.",
    "Our guidance for the full year stays unchanged despite weather.",
    "Pricing held firm even as competitors discounted heavily.",
    "The new distribution center opened ahead of schedule.",
    "Cash flow from operations doubled compared with last year.",
    "Leverage fell below two times and ratings agencies took note.",
)


def _chunk(company: str, k: int) -> str:
    a, b, c = COMPANIES[company]
    return (
        f"In {('January', 'March', 'June', 'October')[k % 4]} {YEARS[k % 4]}, {ORGS[k % 3]} signed with us again. "
        f"{TOPICS[k % len(TOPICS)]} Demand for {a} and the {b} line grew, and our {c} plants ran at capacity."
    )


def _letters(texts) -> np.ndarray:
    """A deterministic embedding for a hand-made corpus: letter counts, on the unit sphere."""
    x = np.array([[t.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts], dtype=float) + 1.0
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_company_terms_are_the_words_one_value_alone_holds_in_two_chunks_or_more():
    chunks = ["Zorblax grew", "zorblax and sales", "sales fell", "Plexiton grew once", "sales rose"]
    labels = ["A", "A", "B", "B", "B"]
    # "zorblax": 2 chunks of A only; "sales": A and B; "plexiton": one chunk; "grew": A and B
    assert company_terms(chunks, labels, [[] for _ in chunks], 1.0) == {"zorblax"}
    # concentration: a word one value holds in 2 of its 3 chunks is a term at 0.6, not at 1 ("zorblax" in A's
    # 2 chunks and one of B's; "sales" in one of A's and 2 of B's)
    chunks2 = [*chunks, "zorblax"]
    assert company_terms(chunks2, [*labels, "B"], [[] for _ in chunks2], 1.0) == set()
    assert company_terms(chunks2, [*labels, "B"], [[] for _ in chunks2], 0.6) == {"zorblax", "sales"}
    assert company_terms(chunks2, [*labels, "B"], [[] for _ in chunks2], 0.7) == set()
    values, mentions = term_mentions(chunks, {"zorblax"}, [[(0, 7)], [], [], [], []])
    assert values == [(), ("zorblax",), (), (), ()]  # the blocked span (an entity mention) is not read
    assert mentions == [(1, 0, 7, TERM, "zorblax")]


def test_a_categories_are_exchanged_in_a_pair_without_a_pair_needing_them():
    values = pd.DataFrame(
        {
            "organization": [("Acme",), ("Beta",), ("Gamma",), ("Delta",)],
            "term": [("zorblax",), (), ("plexiton",), ("grunwick",)],
            "date": [("2019",), ("2020",), ("2021",), ("2022",)],
        }
    )
    roles = {"organization": "S", "term": "A", "date": "F"}
    assert check_roles(values, roles) == (["organization"], [], ["date"])
    result = swap_entities(values, ["d1", "d2", "d3", "d4"], [0, 0, 0, 0], roles, 1.0, np.random.default_rng(0))
    assert len(result.pairs) == 2
    for i, j in result.pairs:
        assert result.values.at[i, "term"] == values.at[j, "term"]  # a partner without terms leaves none
        assert result.values.at[i, "date"] == values.at[i, "date"]
    with pytest.raises(ValueError, match="unknown roles"):
        check_roles(values, {"organization": "X"})


@pytest.fixture(scope="module")
def corpus():
    docs = [(company, k) for company in COMPANIES for k in range(8)]
    chunks = [_chunk(company, k) for company, k in docs]
    documents = [company for company, _ in docs]
    background = [" ".join(_chunk(company, k) for k in range(4, 8)) for company in COMPANIES]
    intruder = BackgroundIntruder.train(background, np.array(list(COMPANIES), dtype=object))
    return chunks, documents, intruder


def _named_swapped(corpus, roles: dict[str, str], seed: int) -> tuple[float, int]:
    chunks, documents, intruder = corpus
    prepared = pipeline.prepare(chunks, documents, roles, clusters=1, embed=_letters, seed=0)
    release = pipeline.release(prepared, 1.0, np.random.default_rng(seed))
    swapped = np.flatnonzero(release.swap.swapped)
    texts = [release.chunks[k] for k in swapped]
    named = intruder.labels[np.argmax(intruder.scores(texts), axis=1)] == np.asarray(documents, dtype=object)[swapped]
    return float(named.mean()), len(swapped)


def test_exchanging_company_terms_along_lowers_the_background_attack_on_swapped_chunks(corpus):
    paper = {"organization": "S", "date": "F"}
    extended = {**paper, TERM: "A"}
    before = [_named_swapped(corpus, paper, seed) for seed in range(3)]
    after = [_named_swapped(corpus, extended, seed) for seed in range(3)]
    assert all(n >= 20 for _, n in before + after)
    # with the organizations alone swapped, the terms still name nearly every swapped chunk's company;
    # exchanged along, they point to the partner's
    assert np.mean([share for share, _ in before]) >= 0.9
    assert np.mean([share for share, _ in after]) <= 0.2


def _dataset() -> Dataset:
    rows = [
        {"call": f"{company}-q3", "ticker": company, "text": " ".join(_chunk(company, i + k) for k in range(3))}
        for i, company in enumerate(COMPANIES)
    ]
    schema = Schema(text="text", document="call", fields=(FieldSpec("ticker", "categorical", "sensitive"),))
    return Dataset(name="hand-made calls", frame=pd.DataFrame(rows), schema=schema)


def test_a_release_of_passages_has_no_column_linking_a_passage_to_its_document_and_is_seeded():
    dataset = _dataset()
    fitted = get_protector("swap", embedding="tfidf-svd", unit="passages", components=1).fit(dataset)
    release = make_release(fitted, 1.0, seed=4)
    passages = release.tables[PASSAGES]
    assert list(passages.columns) == ["text"]
    assert set(release.withheld) == set(dataset.frame.columns)  # release.csv carries no column
    moved = release.detail(SwapDetail).moved
    chunks = [moved.get(k, text) for k, text in enumerate(fitted.prepared.reference)]  # each chunk as released
    assert sorted(passages["text"]) == sorted(chunks) and len(passages) == len(fitted.spans) > len(dataset.frame)
    assert passages["text"].tolist() != chunks  # shuffled
    again = make_release(fitted, 1.0, seed=4).tables[PASSAGES]
    other = make_release(fitted, 1.0, seed=5).tables[PASSAGES]
    assert again.equals(passages) and not other["text"].tolist() == passages["text"].tolist()
    assert "document-level risk" in (release.fact("Released unit") or "")
    whole = get_protector("swap", embedding="tfidf-svd", components=1).fit(dataset)
    assert PASSAGES not in make_release(whole, 1.0, seed=4).tables and "text" not in whole.withheld_columns()


def test_the_target_statement_says_reached_or_not():
    share = metric_info("background_document_attack").format
    reached = SwapTarget(chunks=100, before=80, after=40)
    missed = SwapTarget(chunks=100, before=80, after=41)
    assert reached.reached and not missed.reached
    assert reached.statement(share).startswith("The swap reaches its target")
    assert missed.statement(share).startswith("The swap does not reach its target")


def test_the_protect_page_says_so_when_the_target_is_reached_and_leaves_a_miss_to_the_warnings():
    from dashboard.views import protect
    from engine.measures.base import MetricResult
    from engine.measures.risk.background_attack import swap_target_reached

    assert protect.swap_target_reached is swap_target_reached  # what the page shows

    def measured(before: int, after: int) -> dict[str, MetricResult]:
        detail = pd.DataFrame([{"swapped_chunks": 50, "swapped_named_before": before, "swapped_named_after": after}])
        return {"background_document_attack": MetricResult("background_document_attack", 0.3, detail)}

    assert (swap_target_reached(measured(40, 20)) or "").startswith("The swap reaches its target")
    assert swap_target_reached(measured(40, 21)) is None
    assert swap_target_reached({}) is None
