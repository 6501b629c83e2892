"""The contract of plans (`engine.protect.plan`): a release made of registered methods in order, each step fitted
on the data as the steps before it released it. A no-op first step gives the second method alone, a plan of
one step is that method, the order matters where a step conditions on what another changed, and the knobs of
each step are read, checked and moved as one method's knob is."""

from __future__ import annotations

import pickle
from functools import cache

import numpy as np
import pandas as pd
import pytest

from engine.errors import ConfigError
from engine.protect import METHODS, get_protector, method_class
from engine.protect.base import Fitted, Protector
from engine.protect.plan import KnobValues, Plan, PlanStep, plan_class
from engine.protect.plan import method as plan_method
from engine.sweep import make_release
from tests.contract_data import contract_dataset

FAST = {"glm__n_lambda": 20}


@cache
def dataset():
    return contract_dataset()


def released(protector: Protector, value: float | None = None, seed: int = 3) -> pd.DataFrame:
    fitted = protector.fit(dataset())
    return make_release(fitted, fitted.knob.default if value is None else value, seed).data


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def test_a_plan_is_resolved_from_the_registry_by_its_steps_names():
    cls = method_class("redact+glm")
    assert issubclass(cls, Plan) and cls.name == "redact+glm"
    assert cls.knob is METHODS["glm"].knob  # the last step's knob is the plan's
    names = [p.name for p in cls.parameters]
    assert names[0] == "redact__level"  # the knob of the step before the last is a parameter
    assert "glm__fields" in names and "redact__use_ner" in names
    assert names.count("guard_off") == 1  # the release guard's settings once, for the whole plan
    assert [p.flag for p in cls.parameters][:2] == ["--redact.level", "--redact.use-ner"]
    assert "text as the steps before it released it" in cls.description
    assert method_class("kanon+count-bayes").name == "kanon+count-bayes"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("redact+nope", "no method 'nope'; each step is one of"),
        ("glm+glm", "names glm twice"),
        ("redact+", "has an empty step"),
        ("redact+md+glm+cart", "a plan has at most 3"),
        ("nope", "unknown method 'nope'"),
    ],
)
def test_a_plan_that_cannot_be_says_why(name, said):
    with pytest.raises(ConfigError, match=said):
        get_protector(name)


def test_a_step_parameter_out_of_range_names_the_step_and_what_is_accepted():
    with pytest.raises(ConfigError, match=r"redact__level.*from 0 to 4, got 7.*'redact\+glm'"):
        get_protector("redact+glm", redact__level=7)
    with pytest.raises(ConfigError, match="has no parameter 'fields'"):
        get_protector("redact+glm", fields=("mood",))


def test_a_no_op_first_step_gives_the_second_method_alone_byte_for_byte():
    plan = get_protector("redact+glm", redact__level=0, **FAST)
    alone = get_protector("glm", n_lambda=20)
    lam = alone.fit(dataset()).knob.grid[4]
    assert csv_bytes(released(plan, lam)) == csv_bytes(released(alone, lam))


def test_a_plan_of_one_step_is_that_method():
    one = plan_class("glm", METHODS)(glm__n_lambda=20)
    alone = get_protector("glm", n_lambda=20)
    assert one.knob is alone.knob and one.deterministic == alone.deterministic
    assert csv_bytes(released(one)) == csv_bytes(released(alone))
    assert csv_bytes(released(plan_class("redact", METHODS)(), 2)) == csv_bytes(released(get_protector("redact"), 2))


def test_the_order_matters_where_a_step_conditions_on_what_another_changed():
    text = dataset().schema.text
    first = get_protector("redact+glm", redact__level=2, **FAST)
    lam = first.fit(dataset()).knob.grid[-1]  # the least shrinkage: the fields follow the text most
    redacted_first = released(first, lam)
    glm_first = released(get_protector("glm+redact", glm__n_lambda=20, glm__lambda=lam), 2)
    # The same text either way (redaction does not read the fields) ...
    assert redacted_first[text].tolist() == glm_first[text].tolist()
    # ... but the fields are drawn from a model of the redacted text in one order, of the original in the other.
    assert redacted_first["mood"].tolist() != glm_first["mood"].tolist()
    # Where the last step changes nothing, the plan is its first step drawn with the step's own generator.
    other = released(get_protector("glm+redact", glm__n_lambda=20, glm__lambda=lam), 0)
    alone = get_protector("glm", n_lambda=20).fit(dataset()).release(lam, plan_method.step_rng(0, 0)).data
    assert csv_bytes(other) == csv_bytes(alone)


def test_a_plan_release_holds_every_steps_protection_and_says_its_steps():
    plan = get_protector("redact+glm", redact__level=2, step_seed=5, **FAST)
    fitted = plan.fit(dataset())
    release = make_release(fitted, fitted.knob.default, 0)
    assert release.method == "redact+glm"
    assert set(release.protected_columns) == {dataset().schema.text, "mood"}
    steps = [d for d in release.details if isinstance(d, PlanStep)]
    assert [s.method for s in steps] == ["redact", "glm"] and steps[0].seed == 5 and steps[1].seed is None
    assert release.fact("Plan step 1") == "Identifier redaction, level = 2, drawn with step seed 5 at position 0"
    assert fitted.synthesized_fields == ["mood"]
    assert release.changes is not None and len(release.changes)  # the redaction's changes


def test_a_plan_release_is_the_same_under_the_same_seed_and_survives_pickling():
    plan = get_protector("redact+glm", redact__level=1, **FAST)
    assert pickle.loads(pickle.dumps(plan)).params() == plan.params()
    fitted = plan.fit(dataset())
    again = pickle.loads(pickle.dumps(fitted))
    lam = fitted.knob.grid[-2]
    a, b = make_release(fitted, lam, 11).data, make_release(again, lam, 11).data
    assert csv_bytes(a) == csv_bytes(b)
    assert csv_bytes(a) != csv_bytes(make_release(fitted, lam, 12).data)


def test_moving_a_knob_fits_again_only_from_the_step_after_it(monkeypatch):
    plan_method.STEP_FITS.clear()
    fits: list[str] = []
    for name in ("redact", "glm"):
        cls = METHODS[name]
        original = cls.fit

        def counted(self, data, progress=None, _original=original, _name=name) -> Fitted:
            fits.append(_name)
            return _original(self, data) if progress is None else _original(self, data, progress)

        monkeypatch.setattr(cls, "fit", counted)
    get_protector("redact+glm", redact__level=1, **FAST).fit(dataset())
    assert fits == ["redact", "glm"]
    get_protector("redact+glm", redact__level=2, **FAST).fit(dataset())
    assert fits == ["redact", "glm", "glm"]  # the redaction's fit is kept; the GLM sees other text
    get_protector("redact+glm", redact__level=1, **FAST).fit(dataset())
    assert fits == ["redact", "glm", "glm"]  # both kept


def test_knob_values_are_read_per_step_by_name_or_symbol():
    knobs = (METHODS["redact"].knob, METHODS["glm"].knob)
    steps = ("redact", "glm")
    values = KnobValues.parse(["level=2", "λ=0.012"], steps, knobs, (1.0, 1.0))
    assert values.values == (2.0, 0.012)
    assert KnobValues.parse(["lambda=0.5"], steps, knobs, (1.0, 1.0)).values == (1.0, 0.5)
    assert values.words(knobs) == ["--knob", "level=2", "--knob", "lambda=0.012"]
    assert values.as_params(knobs) == {"redact__level": 2}
    single = KnobValues.parse(["3"], ("redact",), knobs[:1], (1.0,))
    assert single.values == (3.0,) and single.words(knobs[:1]) == ["--knob", "3"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["2"], "a plan has a knob per step; give level=VALUE, lambda=VALUE"),
        (["k=2"], "no step's knob is named 'k'"),
        (["level=2", "level=3"], "given twice"),
        (["level=9"], "out of range; accepted: 0 to 4"),
        (["level=two"], "'two' is not a number"),
    ],
)
def test_knob_values_that_cannot_be_say_why(given, said):
    knobs = (METHODS["redact"].knob, METHODS["glm"].knob)
    with pytest.raises(ConfigError, match=said):
        KnobValues.parse(given, ("redact", "glm"), knobs, (1.0, 1.0))


def test_step_seeds_are_derived_from_the_plan_seed_and_the_position():
    a = plan_method.step_rng(0, 0).random(3)
    assert np.array_equal(a, plan_method.step_rng(0, 0).random(3))
    assert not np.array_equal(a, plan_method.step_rng(0, 1).random(3))
    assert not np.array_equal(a, plan_method.step_rng(1, 0).random(3))


@cache
def airline():
    from engine.data.load import load_dataset

    return load_dataset("airline-tweets")


def own_handles(name: str, guarded: bool, **params) -> dict[str, int]:
    """The own-identifier export check's counts on the airline release of ``name``: as the method makes it, or
    ``guarded`` as every product path makes it (the release guard takes out the handles a method left)."""
    from engine.cache import fit_cached
    from engine.export.checks import own_identifiers_in_text

    protector = get_protector(name, **params)
    fitted = fit_cached(protector, airline(), use_cache=False) if guarded else protector.fit(airline())
    return own_identifiers_in_text(airline(), make_release(fitted, fitted.knob.default, 0))


def test_redact_then_glm_on_airline_tweets_names_no_author_in_the_text():
    # The field synthesizer alone releases the text as it is: its authors' names are in it, but for the guard.
    assert own_handles("glm", False, n_lambda=20)["name"] > 50
    for level in (1, 2):
        for guarded in (False, True):
            fast = {"redact__use_ner": False, "glm__n_lambda": 20}
            assert own_handles("redact+glm", guarded, redact__level=level, **fast) == {}
    # At level 0 the plan is the synthesizer alone: the names are there again.
    assert own_handles("redact+glm", False, redact__level=0, redact__use_ner=False, glm__n_lambda=20)["name"] > 50
