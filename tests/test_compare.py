"""Several methods on one frontier: `engine.compare` and `textsdc compare`."""

import json
import re

import numpy as np
import pytest

from engine.cli import main
from engine.compare import Comparison, applicable_methods, compare_methods
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.figures.text import comparison_figure
from engine.measures.settings import MeasureSettings
from tests.conftest import make_tiny_dataset, tiny_frames

SWAP = ("swap", {"embedding": "tfidf-svd"})  # the fast embedding: what is compared here is the task, not the swap
RISK, UTILITY = "release_identification_probability", "classifier_f1_ratio"


@pytest.fixture(scope="module")
def comparison():
    return compare_methods(make_tiny_dataset(), [("redact", {"use_ner": False}), ("md", {})], seed=3)


def test_every_method_is_swept_with_the_same_seed_and_measures(comparison):
    rows = comparison.rows()
    assert set(rows["method"]) == {"redact", "md"}
    assert comparison.seed == 3 and all(s.seed == 3 for s in comparison.sweeps.values())
    assert set(rows.columns) == {"method", "knob", "metric", "kind", "mean", "lo", "hi", "chance"}
    assert comparison.default_pair()[0] == "release_identification_probability"  # the whole-release intruder


def test_a_text_method_and_a_field_method_meet_on_the_whole_release_intruder():
    both = compare_methods(
        make_tiny_dataset(),
        [("redact", {"use_ner": False}), ("cart", {"fields": ("airline",)})],
        options=MeasureSettings(classifier_target="airline"),  # the tiny texts tell the airline, not the mood
    )
    # and the worst applicable attack over chance, here the whole-release intruder's (the only attack both have)
    assert both.common("risk") == ["release_identification_probability", "worst_attack"]
    assert both.common("utility") == ["classifier_f1_ratio"]
    assert both.default_pair()[0] == "release_identification_probability"
    front = both.frontier(*both.default_pair())
    assert set(front["method"]) == {"redact", "cart"} and front["pareto"].any()
    assert both.to_json(*both.default_pair())["options"]["intruder"] == "posts_and_fields"


def test_the_frontier_across_methods_holds_exactly_the_undominated_protecting_pairs(comparison):
    risk, utility = comparison.default_pair()
    front = comparison.frontier(risk, utility)
    assert front["pareto"].any()
    assert not front.loc[front["unprotected"], "pareto"].any()  # redaction level 0 protects nothing
    protecting = front[~front["unprotected"]]
    r, u = protecting["risk_score"].to_numpy(), protecting["utility_score"].to_numpy()
    for i, on in enumerate(protecting["pareto"]):
        beaten = ((r <= r[i]) & (u >= u[i]) & ((r < r[i]) | (u > u[i]))).any()
        assert on == (not beaten)


def test_a_measure_not_every_method_took_is_named(comparison):
    with pytest.raises(ConfigError, match="risk measure 'nope' was not taken by every method; common risk"):
        comparison.frontier("nope", comparison.default_pair()[1])


def test_one_method_or_a_method_twice_is_refused(tiny_dataset):
    with pytest.raises(ConfigError, match="at least two methods"):
        compare_methods(tiny_dataset, [("redact", {})])
    with pytest.raises(ConfigError, match="named twice"):
        compare_methods(tiny_dataset, [("redact", {}), ("redact", {})])


def test_the_command_writes_the_comparison_and_its_figure(capsys, tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    out = tmp_path / "cmp"
    code = main(["compare", *data, "--methods", "redact,md", "--no-use-ner", "--seed", "3", "--out", str(out)])
    assert code == 0
    written = json.loads((out / "compare.json").read_text())
    assert set(written["methods"]) == {"redact", "md"} and written["seed"] == 3
    assert written["methods"]["redact"]["params"]["use_ner"] is False
    front = written["frontier"]
    assert front["risk"] == "release_identification_probability" and front["pareto"]
    assert {(p["method"], p["knob"]) for p in front["pareto"]} == {
        (p["method"], p["knob"]) for p in front["points"] if p["pareto"]
    }
    assert all(np.isfinite(r["mean"]) for r in written["rows"] if r["mean"] is not None)
    assert "on one frontier" in (out / "compare.html").read_text()
    assert "frontier across methods" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--methods", "redact,nope"], "no method 'nope'; the methods are"),
        (
            ["--methods", "all,md"],
            "no method 'all'; the methods are redact, glm, cart, count-bayes, md, rnn, swap, kanon, plans of them "
            "joined by '+' (e.g. redact+glm), or all alone",
        ),
        (["--methods", "redact,md", "--fields", "mood"], "--fields does not apply to methods redact, md"),
        (["--methods", "redact,md", "--risk", "nope"], "--risk: unknown metric 'nope'; known metrics:"),
    ],
)
def test_the_command_names_what_is_wrong(capsys, tiny_files, tmp_path, args, message):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    assert main(["compare", *data, *args, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_every_method_that_applies_is_named_and_the_others_say_why(tiny_dataset):
    found = applicable_methods(tiny_dataset)
    from engine.protect import METHODS

    assert list(found) == list(METHODS)
    assert found["redact"] == "" and found["md"] == "" and found["glm"] == ""
    assert "count or continuous" in found["count-bayes"]  # the tiny data has no count or amount
    # The parameters given count: glm asked to synthesize a field that is not there refuses.
    assert "nope" in applicable_methods(tiny_dataset, {"glm": {"fields": ["nope"]}})["glm"]


def _moods() -> tuple:
    """The tiny data with a mood its words tell (the classifier can learn it); the swap protects the mood, its
    first sensitive field, and withholds it from its releases."""
    frame, ext = tiny_frames()
    frame["mood"] = [["meh", "meh", "good", "bad"][i % 4] for i in range(len(frame))]
    return frame, ext


@pytest.fixture(scope="module")
def with_swap():
    frame, ext = _moods()
    dataset = Dataset("moods", frame, make_tiny_dataset().schema, ext, source="tests")
    return compare_methods(dataset, [("redact", {"use_ner": False}), SWAP], seed=3)


def test_a_method_that_withholds_the_sensitive_field_is_measured_on_another_task(with_swap):
    redact, swap = with_swap.sweeps["redact"], with_swap.sweeps["swap"]
    assert swap.withheld == ("mood",) and redact.withheld == ()
    assert redact.tasks[UTILITY] == "predicting the field mood"
    assert swap.tasks[UTILITY] == "predicting the field airline"  # the withheld mood is no target
    assert redact.tasks[RISK] == "with the intruder matching records on airline and mood"
    assert swap.tasks[RISK] == "with the intruder matching records on airline"  # she has one field fewer
    assert {UTILITY, RISK} <= set(with_swap.common("utility") + with_swap.common("risk"))


@pytest.mark.parametrize("utility", [UTILITY, "bigram_cosine"])
def test_the_swap_is_kept_off_the_frontier_across_methods_with_its_reason(with_swap, utility):
    apart = with_swap.apart(RISK, utility)
    assert list(apart) == ["swap"]
    assert apart["swap"].startswith(
        "Named-entity swap is kept off the frontier across methods: its releases withhold mood, so it is measured "
        "on another task — Whole-release identification probability with the intruder matching records on airline "
        "(the methods on the frontier: with the intruder matching records on airline and mood)"
    )
    assert ("Classifier F1 ratio predicting the field airline" in apart["swap"]) == (utility == UTILITY)
    front = with_swap.frontier(RISK, utility)
    swap = front["method"] == "swap"
    assert front.loc[swap, "apart"].all() and not front.loc[swap, "pareto"].any()
    assert front.loc[~swap, "pareto"].any() and not front.loc[~swap, "apart"].any()
    # Without it the swap's lower risk (a column missing, not a protection) would beat every redaction level.
    assert front.loc[swap, "risk"].max() < front.loc[~swap & ~front["unprotected"], "risk"].min()
    written = with_swap.to_json(RISK, utility)["frontier"]
    assert written["apart"] == apart
    assert {p["method"] for p in written["pareto"]} == {"redact"}
    assert all(p["apart"] == (p["method"] == "swap") for p in written["points"])
    assert written["tasks"][RISK] == "with the intruder matching records on airline and mood"
    assert written["same_task"].startswith("The same task for every method but Named-entity swap: Whole-release")


def test_the_figure_draws_the_swap_apart_and_says_why(with_swap):
    fig = comparison_figure(with_swap, RISK, UTILITY)
    swap = next(t for t in fig.data if t.name.startswith("Named-entity swap"))
    assert "another task, not compared" in swap.name and swap.line.dash == "dot"
    ring = next(t for t in fig.data if t.name.startswith("Best across methods"))
    assert all(name.startswith("Identifier redaction") for name in ring.customdata)
    assert "is kept off the frontier across methods" in fig.layout.title.subtitle.text


def test_the_task_of_the_most_methods_is_the_frontier_s_and_a_tie_goes_to_the_one_that_withholds_nothing(with_swap):
    w = with_swap
    swap_first = Comparison(w.dataset, w.fingerprint, w.seed, w.replicates, dict(reversed(w.sweeps.items())), w.params)
    assert list(swap_first.apart(RISK, UTILITY)) == ["swap"]  # listed first, but it withholds the mood
    alone = Comparison(w.dataset, w.fingerprint, w.seed, w.replicates, {"swap": w.sweeps["swap"]}, w.params)
    assert alone.apart(RISK, UTILITY) == {}
    assert alone.task_line(RISK, UTILITY) == (
        "The same task for every method: Whole-release identification probability with the intruder matching "
        "records on airline; Classifier F1 ratio predicting the field airline."
    )


def test_methods_that_release_the_same_columns_share_one_task(comparison):
    risk, utility = comparison.default_pair()
    assert comparison.apart(risk, utility) == {}
    assert not comparison.frontier(risk, utility)["apart"].any()
    assert comparison.task_line(risk, utility).startswith("The same task for every method: Whole-release")


def test_the_command_writes_why_the_swap_is_apart(capsys, tmp_path):
    frame, ext = _moods()
    frame.to_csv(tmp_path / "data.csv", index=False)
    ext.to_csv(tmp_path / "external.csv", index=False)
    (tmp_path / "schema.toml").write_text(
        'text = "text"\nauthor = "user"\n\n[fields.airline]\nkind = "categorical"\nrole = "key"\n\n'
        '[fields.mood]\nkind = "categorical"\nrole = "sensitive"\n\n[external]\nfile = "external.csv"\n'
    )
    data = ["--data", str(tmp_path / "data.csv"), "--schema", str(tmp_path / "schema.toml")]
    out = tmp_path / "cmp"
    args = ["--methods", "redact,swap", "--no-use-ner", "--embedding", "tfidf-svd", "--utility", UTILITY]
    assert main(["compare", *data, *args, "--seed", "3", "--out", str(out)]) == 0
    front = json.loads((out / "compare.json").read_text())["frontier"]
    assert list(front["apart"]) == ["swap"] and "its releases withhold mood" in front["apart"]["swap"]
    assert front["pareto"] and all(p["method"] == "redact" for p in front["pareto"])
    figure = (out / "compare.html").read_text().replace("\\u003cbr\\u003e", " ")  # the subtitle's lines joined
    assert "predicting the field airline (the methods on the frontier: predicting the field mood)" in figure
    printed = capsys.readouterr().out
    assert "Named-entity swap is kept off the frontier across methods" in printed
    assert "(another task)" in printed


def test_a_method_whose_protection_depends_on_detection_shows_its_share_at_every_level(comparison):
    from engine.protect.detection import DetectionShare, gold_size

    shares = comparison.detection("redact")
    assert comparison.detection("md") == {}  # md's protection finds nothing in the text
    assert sorted(shares) == sorted(comparison.sweeps["redact"].grid)
    assert shares[0.0] == ()  # level 0 replaces nothing
    top = shares[max(shares)]
    assert top and all(isinstance(d, DetectionShare) for d in top)
    # a higher level finds at least as much of each kind the lower one finds
    found = {k: {d.what: d.found for d in v} for k, v in shares.items()}
    levels = sorted(k for k in found if found[k])
    for low, high in zip(levels, levels[1:], strict=False):
        assert all(found[high][what] >= n for what, n in found[low].items())
    rows = [r for r in comparison.to_json(*comparison.default_pair())["detection"] if r["knob"] == max(shares)]
    assert {r["method"] for r in rows} == {"redact"}
    for r in rows:
        assert r["gold"] == f"{gold_size():,} posts of the shipped gold set (profile descriptions and tweets)"
        if r["share"] is not None:
            assert r["lo"] <= r["share"] <= r["hi"] and r["share"] == pytest.approx(r["found"] / r["total"])
    line = comparison.detection_text("redact", max(shares))
    assert line.startswith(f"{top[0].what} {top[0].estimate()}") and f" on {rows[0]['gold']}" in line
    assert comparison.detection_text("redact", 0.0) == "" and comparison.detection_text("md", 1000.0) == ""
    short = comparison.detection_text("redact", max(shares), gold=False)  # a table's cell: the kinds' short names
    assert short == "; ".join(f"{d.what.split(' (')[0]} {d.estimate()}" for d in top) and "(" not in short
    lines = comparison.detection_lines()
    assert len(lines) == len(levels) and all(line.split()[0] == "redact" for line in lines)


def test_the_command_prints_the_detection_share_of_each_level(capsys, tiny_files, tmp_path):
    data = ["--data", str(tiny_files.parent / "data.csv"), "--schema", str(tiny_files)]
    assert main(["compare", *data, "--methods", "redact,md", "--no-use-ner", "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    block = out.split("Residual detection risk: ")[1].splitlines()[1:]
    from engine.protect.detection import gold_size

    assert block[0].startswith("  redact       level 1: direct identifiers (names, handles, e-mail addresses, ")
    assert re.search(r"\) \d+% \[\d+–\d+%\] on [\d,]+ posts of the shipped gold set", block[0])
    assert f"on {gold_size():,} posts" in block[0]
    assert [line.split(":")[0] for line in block[:4]] == [f"  redact       level {k}" for k in range(1, 5)]
    written = json.loads((tmp_path / "o" / "compare.json").read_text())
    assert {r["method"] for r in written["detection"]} == {"redact"}
