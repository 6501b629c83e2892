"""The measure registry: every measure declared once, applicability as "not measured" with a reason, shared
preparation done once, and both frontier axes oriented by the measures' direction."""

import pickle
import re

import numpy as np
import pandas as pd
import pytest

import engine.measures.bayes_counts as bayes_counts
import engine.measures.risk.counts as risk_counts
import engine.measures.utility.cells as cells
import engine.measures.utility.counts as utility_counts
import engine.measures.utility.pmse as pmse
from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError
from engine.frontier import frontier, select_by_risk_threshold, select_by_tradeoff
from engine.measures.base import (
    DIRECTIONS,
    KINDS,
    METRICS,
    TARGETS,
    Measure,
    MetricResult,
    NotApplicable,
    PrepareContext,
    measured_number,
    metric_info,
)
from engine.measures.evaluate import FIELD_METRICS, NUMERIC_METRICS, TEXT_METRICS, Evaluator, MeasureSettings
from engine.measures.registry import MEASURES, measure_class, measure_ids
from engine.measures.utility.topics import TopicModel
from engine.protect import get_protector
from engine.results import summarize
from engine.sweep import run_sweep

# ---------------------------------------------------------------------------------------------------------------
# Declarations


@pytest.mark.parametrize("cls", MEASURES, ids=lambda c: c.id)
def test_every_registered_measure_is_fully_declared(cls):
    assert issubclass(cls, Measure)
    assert re.fullmatch(r"[a-z][a-z0-9_]*", cls.id)
    assert cls.kind in KINDS and cls.better in DIRECTIONS and cls.applies_to in TARGETS
    for text in (cls.label, cls.meaning, cls.source):
        assert isinstance(text, str) and text.strip()
    assert re.search(r"\(?\d{4}\)?|Section|Eq\.", cls.source), cls.source  # names a paper and a place in it
    assert cls.low < cls.high
    info = metric_info(cls.id)
    assert info.meaning.startswith(cls.meaning) and cls.intruder_use in info.meaning
    assert (cls.kind == "risk") <= bool(cls.intruder_use.strip())  # every risk measure says how it reads the preset
    assert (info.id, info.kind, info.better, info.label, info.source, info.low, info.high) == (
        cls.id,
        cls.kind,
        cls.better,
        cls.label,
        cls.source,
        cls.low,
        cls.high,
    )


def test_ids_are_unique_and_the_registry_orders_metrics():
    ids = [m.id for m in MEASURES]
    assert len(ids) == len(set(ids))
    assert list(METRICS) == ids == measure_ids()
    assert measure_ids("text") == TEXT_METRICS
    assert measure_ids("categorical") == FIELD_METRICS
    assert measure_ids("numeric") == NUMERIC_METRICS == bayes_counts.NUMERIC_METRICS
    assert TEXT_METRICS == [
        "attack_identification_rate",
        "unigram_cosine",
        "bigram_cosine",
        "sentiment_cosine",
        "swap_dr",
        "swap_du",
        "swap_attack_accuracy",
        "swap_mcnemar_p",
        "qi_unique_share",
        "smallest_class",
        "discernibility",
        "loss_metric",
    ]
    assert measure_ids("release") == [
        "release_identification_probability",
        "background_document_attack",
        "background_document_level",
        "background_author_attack",
        "stylometric_author_attack",
        "classifier_f1_ratio",
        "singling_out_risk",
        "linkability_risk",
        "inference_risk",
    ]
    assert measure_class("fmr").better == "higher"
    with pytest.raises(ConfigError, match="unknown metric 'nope'"):
        measure_class("nope")


def test_confidential_suffix_and_results_keep_their_metadata():
    info = metric_info("pmse_ratio_confidential")
    assert info.id == "pmse_ratio_confidential" and info.label.endswith("(unprotected data)")
    assert info.kind == "utility" and info.better == "one" and info.better_text == "closer to 1 is better"
    r = MetricResult("fmr", 0.25)
    assert r.kind == "risk" and r.info.better == "higher" and r.as_confidential().id == "fmr_confidential"
    with pytest.raises(ConfigError, match="unknown metric"):
        metric_info("no_such_metric")


# ---------------------------------------------------------------------------------------------------------------
# Applicability


def few_words_dataset() -> Dataset:
    """An uploaded table whose texts use four words: too few for the topic model's 5 topics; no author."""
    rng = np.random.default_rng(0)
    words = ["nice hat", "nice shoe", "red hat", "red shoe", "hat", "shoe"]
    n = 60
    frame = pd.DataFrame(
        {
            "text": [words[i % len(words)] for i in range(n)],
            "colour": rng.choice(["red", "blue", "green"], n),
            "shop": rng.choice(["north", "south"], n),
        }
    )
    schema = Schema(
        text="text", fields=(FieldSpec("colour", "categorical", "sensitive"), FieldSpec("shop", "categorical", "key"))
    )
    return Dataset("few-words", frame, schema, None, source="tests")


def shuffled(dataset: Dataset, field: str, seed: int = 1) -> pd.DataFrame:
    values = dataset.frame[field].to_numpy().copy()
    np.random.default_rng(seed).shuffle(values)
    return dataset.frame.assign(**{field: values})


def test_few_words_lists_the_topic_measures_as_not_measured_and_measures_the_rest():
    d = few_words_dataset()
    ev = Evaluator(d, fields=["colour"])
    for mid in ("topic_content_correlation", "topic_prevalence_ratio"):
        assert "too few for 5 topics" in ev.skipped[mid]
    assert "author column" in ev.skipped["identification_probability"]
    assert ev.available == [
        "confidential_value_rate",
        "pmse_ratio",
        "pmse",
        "cell_difference_1way",
        "cell_difference_2way",
        "release_identification_probability",  # the key field alone, without texts by the authors
        "classifier_f1_ratio",
    ]
    out = ev.evaluate(shuffled(d, "colour"))
    assert list(out) == ev.available
    assert all(np.isfinite(r.value) for r in out.values())
    assert out["confidential_value_rate"].value < 1.0 and out["cell_difference_1way"].value == 0.0


def test_a_sweep_on_few_words_runs_and_reports_the_topic_measures_as_skipped():
    d = few_words_dataset()
    result = run_sweep(d, get_protector("glm", fields=["colour"]), grid="path", replicates=1, seed=0, use_cache=False)
    assert "too few for 5 topics" in result.skipped["topic_prevalence_ratio"]
    assert {"pmse_ratio", "confidential_value_rate"} <= set(result.rows["metric"])
    assert not {"topic_content_correlation", "topic_prevalence_ratio"} & set(result.rows["metric"])


def test_wrong_settings_given_by_the_user_are_still_errors():
    d = few_words_dataset()
    with pytest.raises(ConfigError, match="FIELD=LEVEL"):
        Evaluator(d, fields=["colour"], options=MeasureSettings(level="size=large"))
    with pytest.raises(ConfigError, match="unknown metric"):
        Evaluator(d, metrics=["pmse", "no_such_metric"], fields=["colour"])
    n = numeric_dataset()
    with pytest.raises(ConfigError, match="intruder-uncertainty field 'price'"):
        Evaluator(n, fields=["days", "price"], options=MeasureSettings(uncertainty_field="price"))


def test_measures_of_what_a_method_leaves_alone_are_skipped_with_a_reason(tiny_dataset):
    ev = Evaluator(tiny_dataset, metrics=["unigram_cosine", "pmse", "emr"], fields=["mood"])
    assert ev.available == ["pmse"]
    assert "leaves the text as it is" in ev.skipped["unigram_cosine"]
    assert "count or continuous fields; this method synthesizes none" in ev.skipped["emr"]
    text = Evaluator(tiny_dataset, metrics=["unigram_cosine", "pmse"])
    assert text.available == ["unigram_cosine"] and "leaves every field" in text.skipped["pmse"]


def test_a_measure_that_raises_not_applicable_does_not_stop_the_others(tiny_dataset, monkeypatch):
    def refuse(self, context):
        raise NotApplicable("needs something this data lacks")

    monkeypatch.setattr(measure_class("unigram_cosine"), "prepare", refuse)
    ev = Evaluator(tiny_dataset)
    assert ev.skipped["unigram_cosine"] == "needs something this data lacks"
    assert "does not predict mood" in ev.skipped["classifier_f1_ratio"]  # the tiny moods are drawn at random
    assert list(ev.evaluate(tiny_dataset.frame)) == [
        "attack_identification_rate",
        "bigram_cosine",
        "sentiment_cosine",
        "release_identification_probability",
    ]


def test_two_way_cells_need_a_second_categorical_field():
    d = few_words_dataset()
    d = Dataset("one-field", d.frame.drop(columns="shop"), Schema(text="text", fields=(d.schema.field("colour"),)))
    ev = Evaluator(d, metrics=["cell_difference_1way", "cell_difference_2way"], fields=["colour"])
    assert ev.available == ["cell_difference_1way"]
    assert "second categorical field" in ev.skipped["cell_difference_2way"]


# ---------------------------------------------------------------------------------------------------------------
# Shared preparation


def counting(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` by a wrapper that records each call and calls the original."""
    calls = []
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def numeric_dataset(n: int = 80) -> Dataset:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {
            "text": [f"listing {i}" for i in range(n)],
            "room": rng.choice(["home", "room"], n),
            "reviews": rng.integers(0, 30, n),
            "days": rng.integers(0, 365, n),
            "price": np.round(rng.lognormal(4, 0.5, n), 2),
        }
    )
    schema = Schema(
        text="text",
        fields=(
            FieldSpec("room", "categorical", "key"),
            FieldSpec("reviews", "count", "key"),
            FieldSpec("days", "count", "sensitive"),
            FieldSpec("price", "continuous", "sensitive"),
        ),
    )
    return Dataset("numeric", frame, schema, None, source="tests")


def test_the_topic_model_and_the_projections_are_prepared_once(tiny_dataset, monkeypatch):
    fits = counting(monkeypatch, TopicModel, "fit")
    projections = counting(monkeypatch, pmse, "random_projections")
    scores = counting(monkeypatch, pmse, "fit_logistic")
    tables = counting(monkeypatch, cells, "cell_differences")
    options = MeasureSettings(projections=3, topics=2)
    ev = Evaluator(tiny_dataset, fields=["mood"], options=options)
    assert {"topic_content_correlation", "topic_prevalence_ratio", "pmse", "pmse_ratio"} <= set(ev.available)
    assert len(fits) == 1 and len(projections) == 1
    out = ev.evaluate(shuffled(tiny_dataset, "mood"))
    assert len(scores) == 3  # one fit per projection serves both pmse and pmse_ratio
    assert len(tables) == 1  # one pass gives both cell-difference measures
    assert out["pmse"].detail is out["pmse_ratio"].detail


def test_a_failed_shared_preparation_is_tried_once_and_skips_every_measure_that_needs_it(monkeypatch):
    fits = counting(monkeypatch, TopicModel, "fit")
    ev = Evaluator(few_words_dataset(), fields=["colour"])
    assert len(fits) == 1
    assert ev.skipped["topic_content_correlation"] == ev.skipped["topic_prevalence_ratio"]


def test_the_numeric_preparation_and_the_matching_pass_are_shared(monkeypatch):
    d = numeric_dataset()
    prepared = counting(monkeypatch, bayes_counts.NumericMeasures, "prepare")
    matched = counting(monkeypatch, risk_counts, "identification_risk")
    effects = counting(monkeypatch, utility_counts, "main_effects")
    ev = Evaluator(d, fields=["days", "price"])
    assert ev.available == [*NUMERIC_METRICS, "release_identification_probability", "classifier_f1_ratio"]
    assert len(prepared) == 1 and ev.numeric is not None
    effects.clear()
    release = d.frame.assign(days=np.roll(d.frame["days"].to_numpy(), 3))
    out = ev.evaluate(release)
    assert len(matched) == 1  # EMR, TMR, FMR and unique matches from one matching pass
    assert len(effects) == 1  # Up and Uc share the release's main effects
    assert "S" in out["emr"].detail.columns  # the intruder-uncertainty curve on the noisy key count
    again = ev.numeric.evaluate(release, NUMERIC_METRICS)
    assert {k: v.value for k, v in again.items()} == {k: out[k].value for k in NUMERIC_METRICS}


def test_a_prepared_evaluator_pickles_for_parallel_sweeps():
    d = numeric_dataset()
    ev = Evaluator(d, fields=["days", "price"], progress=lambda *a: None)
    copy = pickle.loads(pickle.dumps(ev))
    assert copy.available == ev.available
    assert {k: v.value for k, v in copy.evaluate(d.frame).items()} == {
        k: v.value for k, v in ev.evaluate(d.frame).items()
    }


def test_prepare_context_memo_computes_once_and_remembers_reasons(tiny_dataset):
    context = PrepareContext(tiny_dataset, ["mood"], MeasureSettings(), lambda *a: None)
    calls = []
    assert context.shared("k", lambda: calls.append(1) or 7) == 7
    assert context.shared("k", lambda: calls.append(1) or 8) == 7
    assert len(calls) == 1

    def fail():
        calls.append(1)
        raise NotApplicable("no")

    for _ in range(2):
        with pytest.raises(NotApplicable, match="no"):
            context.shared("bad", fail)
    assert len(calls) == 2


# ---------------------------------------------------------------------------------------------------------------
# Frontier orientation


def fmr_summary(points):
    rows = []
    for knob, fmr, overlap in points:
        rows += [
            {"knob": knob, "replicate": 0, "metric": "fmr", "kind": "risk", "value": fmr},
            {"knob": knob, "replicate": 0, "metric": "ci_overlap", "kind": "utility", "value": overlap},
        ]
    return summarize(pd.DataFrame(rows))


def test_the_frontier_of_the_false_match_rate_treats_higher_as_safer():
    # FMR: higher is safer. Knob 2 (FMR 0.4, overlap 0.8) is beaten by knob 1 (safer and more useful); knob 0
    # is the most useful but the least safe. Taking FMR as lower-is-safer would make knob 0 beat everything.
    s = fmr_summary([(0, 0.0, 1.0), (1, 0.5, 0.9), (2, 0.4, 0.8), (3, 0.9, 0.5)])
    t = frontier(s, "fmr", "ci_overlap")
    assert list(t["pareto"]) == [True, True, False, True]
    assert list(t["risk"]) == [0.0, 0.5, 0.4, 0.9]  # raw means kept for figures
    assert list(t["risk_score"]) == [-0.0, -0.5, -0.4, -0.9]
    # A risk ceiling on FMR is a floor: FMR at least 0.45 leaves knobs 1 and 3; knob 1 is the more useful.
    choice = select_by_risk_threshold(t, 0.45)
    assert choice.knob == 1 and "at least 0.45" in choice.why
    with pytest.raises(ConfigError, match="highest reached is 0.9"):
        select_by_risk_threshold(t, 0.95)
    # risk_score − a·utility: a=0.1 → knob 3 (−0.95); a=2 → knob 1 (−2.3); a=10 → knob 0 (−10).
    assert select_by_tradeoff(t, 0.1).knob == 3
    assert select_by_tradeoff(t, 2.0).knob == 1
    assert select_by_tradeoff(t, 10.0).knob == 0


def test_a_lower_is_better_risk_keeps_its_frontier():
    rows = []
    for knob, r, u in [(0, 0.30, 1.0), (1, 0.20, 0.9), (2, 0.25, 0.6), (3, 0.0, 0.1)]:
        rows += [
            {"knob": knob, "replicate": 0, "metric": "emr", "kind": "risk", "value": r},
            {"knob": knob, "replicate": 0, "metric": "pmse", "kind": "utility", "value": u},
        ]
    t = frontier(summarize(pd.DataFrame(rows)), "emr", "pmse")
    assert list(t["risk_score"]) == list(t["risk"])
    assert list(t["utility_score"]) == [-1.0, -0.9, -0.6, -0.1]  # pMSE: lower is better
    # Oriented, knob 3 (risk 0, pMSE 0.1) beats every other knob.
    assert list(t["pareto"]) == [False, False, False, True]


def test_a_value_that_rounds_to_zero_is_not_shown_as_zero():
    """A p-value below 0.001 reads "< 0.001", as p-values are reported; another measure's small value keeps three
    significant digits (propensity scores differ there); from 1 to 1,000 four, never "221.400"."""
    p = metric_info("swap_mcnemar_p")
    assert [p.format(v) for v in (5.9e-05, 0.0, 0.0006, 0.25, float("nan"))] == [
        "<\u00a00.001",
        "0.000",
        "<\u00a00.001",
        "0.250",
        "—",
    ]
    assert metric_info("cell_difference_1way").format(-0.0002) == "-0.0002"
    assert [measured_number(v) for v in (0.000545, 5.14e-05, 0.0085077, 9.8114, 221.4, 999.96, 296007.0)] == [
        "0.000545",
        "0.0000514",
        "0.009",
        "9.811",
        "221.4",
        "1,000",
        "296,007",
    ]
