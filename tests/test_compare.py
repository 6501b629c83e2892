"""Several methods on one frontier: `engine.compare` and `textsdc compare`."""

import json

import numpy as np
import pytest

from engine.cli import main
from engine.compare import applicable_methods, compare_methods
from engine.errors import ConfigError
from engine.measures.settings import MeasureSettings
from tests.conftest import make_tiny_dataset


@pytest.fixture(scope="module")
def comparison():
    return compare_methods(make_tiny_dataset(), [("redact", {"use_ner": False}), ("md", {})], seed=3)


def test_every_method_is_swept_with_the_same_seed_and_measures(comparison):
    rows = comparison.rows()
    assert set(rows["method"]) == {"redact", "md"}
    assert comparison.seed == 3 and all(s.seed == 3 for s in comparison.sweeps.values())
    assert set(rows.columns) == {"method", "knob", "metric", "kind", "mean", "lo", "hi"}
    assert comparison.default_pair()[0] == "release_identification_probability"  # the whole-release intruder


def test_a_text_method_and_a_field_method_meet_on_the_whole_release_intruder():
    both = compare_methods(
        make_tiny_dataset(),
        [("redact", {"use_ner": False}), ("cart", {"fields": ("airline",)})],
        options=MeasureSettings(classifier_target="airline"),  # the tiny texts tell the airline, not the mood
    )
    assert both.common("risk") == ["release_identification_probability"]
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
            "no method 'all'; the methods are redact, glm, cart, count-bayes, md, rnn, swap, kanon, or all alone",
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
