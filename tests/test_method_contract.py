"""The contract every registered method keeps (in the spirit of scikit-learn's `parametrize_with_checks`),
run over `engine.protect.METHODS`, the toy method of tests/toy_method.py and the plans of ``PLANS`` (each
check reading what a plan's steps declare). A new method is covered the moment it is registered; ``FAST`` may
give it settings that keep its fit quick on the small data."""

from __future__ import annotations

import html
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

from engine.cache import fit_key
from engine.errors import ConfigError
from engine.measures.base import metric_info
from engine.protect import METHODS, get_protector, method_class
from engine.protect.base import Fitted, Protector
from engine.protect.detection import DetectionShare
from engine.protect.params import Param
from engine.protect.plan import Plan
from engine.protect.plan.steps import step_ident
from engine.sweep import make_release, run_sweep
from tests.contract_data import contract_dataset
from tests.toy_method import WordShuffle

PLANS = ("redact+glm",)
"""Plans held to the same contract: a text method then a field synthesizer, composed from the registry."""
ALL = {**METHODS, WordShuffle.name: WordShuffle, **{p: method_class(p) for p in PLANS}}
FAST: dict[str, dict[str, Any]] = {
    "count-bayes": {"lambdas": (1.0, 1e7), "warmup": 100, "draws": 100},
    "glm": {"n_lambda": 20},
    "rnn": {"epochs": 3, "hidden": 16},
}


def steps(name: str) -> tuple[type[Protector], ...]:
    """The methods ``name`` applies in order: a plan's steps, or the method alone."""
    cls = ALL[name]
    return cls.step_classes if issubclass(cls, Plan) else (cls,)


def fast(name: str) -> dict[str, Any]:
    """The settings that keep the method quick on the contract data (a plan's, each step's prefixed by it)."""
    if not issubclass(ALL[name], Plan):
        return FAST.get(name, {})
    return {f"{step_ident(s.name)}__{k}": v for s in steps(name) for k, v in FAST.get(s.name, {}).items()}


def build(name: str, **params: Any) -> Protector:
    return ALL[name](**{**fast(name), **params})


@cache
def dataset():
    return contract_dataset()


@cache
def fitted(name: str) -> Fitted:
    return build(name).fit(dataset())


def ends(f: Fitted) -> tuple[float, float]:
    """(most private, least private) knob values of the fitted knob."""
    k = f.knob
    hi, lo = f.snap(k.high), f.snap(k.low)
    return (hi, lo) if k.more_privacy == "higher" else (lo, hi)


def other_value(p: Param, name: str) -> Any:
    """A value of ``p`` other than its default that the method accepts (None if there is none to try)."""
    schema = dataset().schema
    if p.example is not None:
        candidates: list[Any] = [p.example]
    elif p.fields:
        names = [f.name for f in schema.fields if f.kind in p.fields]
        candidates = [tuple(names[:1]), tuple(names[-1:])] if p.many else names
    elif p.type is bool:
        candidates = [not p.default]
    elif p.choices:
        candidates = [(c,) if p.many else c for c in p.choices if c != p.default]
    elif p.type in (int, float):
        base = p.default[0] if p.many and p.default else (p.default if p.default is not None else p.low or 1)
        steps = [base + 1, base - 1, base * 2, base / 2, p.low, p.high]
        singles = [
            p.type(v)
            for v in steps
            if v is not None
            and (p.low is None or v >= p.low)
            and (p.high is None or v <= p.high)
            and (p.type is float or float(v).is_integer())
        ]
        candidates = [(v,) for v in singles] if p.many else singles
    else:
        candidates = [("zebra0",), ("okay", "fine")] if p.many else ["zebra0"]
    for value in candidates:
        if value == p.default:
            continue
        try:
            build(name, **{p.name: value})
        except ConfigError:
            continue
        return value
    return None


methods = pytest.mark.parametrize("name", sorted(ALL))


@methods
def test_declares_what_the_cli_and_dashboard_need(name):
    cls = ALL[name]
    assert cls.name == name and cls.title and cls.description and cls.knob.symbol
    assert cls.changes in ("text", "fields")
    if cls.changes == "fields":
        assert cls.field_kinds and set(cls.field_kinds) <= {"categorical", "count", "continuous"}
    if cls.gold_check is not None:
        check = cls.gold_check
        assert check.title and check.help and check.suffixes and callable(check.run)
    for p in cls.parameters:
        assert p.help and p.flag.startswith("--")
        assert p.coerce(p.default, name) == (tuple(p.default) if p.many and p.default is not None else p.default)


@methods
def test_params_round_trip_through_get_protector(name):
    p = build(name)
    again = ALL[name](**p.params()) if name not in METHODS else get_protector(name, **p.params())
    assert again.params() == p.params()
    assert fit_key(again, dataset()) == fit_key(p, dataset())


@methods
def test_unknown_parameter_is_a_config_error_naming_the_accepted_ones(name):
    with pytest.raises(ConfigError, match="has no parameter 'no_such_thing'"):
        ALL[name](no_such_thing=1)


@methods
def test_changing_any_parameter_changes_the_cache_key(name):
    """A parameter of the fit changes the fit's key; one every method shares for its releases (the release
    guard's) leaves the fit's key and changes the sweep's."""
    from engine.cache import sweep_name
    from engine.protect.params import RUN_PARAMETERS

    base, sweep = fit_key(build(name), dataset()), sweep_name(build(name), dataset(), {})
    tried = 0
    for p in ALL[name].parameters:
        value = other_value(p, name)
        if value is None:
            continue
        tried += 1
        other = build(name, **{p.name: value})
        if p.name in RUN_PARAMETERS:
            assert fit_key(other, dataset()) == base and sweep_name(other, dataset(), {}) != sweep, p.name
        else:
            assert fit_key(other, dataset()) != base, p.name
    assert tried == sum(1 for p in ALL[name].parameters if other_value(p, name) is not None)


@methods
def test_knob_bounds_are_enforced_with_a_config_error(name):
    f = fitted(name)
    k = f.knob
    for bad in (k.low - abs(k.low) - 1, k.high * 10 + 1, float("nan"), "many"):
        with pytest.raises(ConfigError):
            make_release(f, bad, seed=0)


@methods
def test_same_seed_same_release_other_seed_other_release(name):
    f = fitted(name)
    private, _ = ends(f)
    for value in (f.knob.default, private):
        a = make_release(f, f.snap(value), seed=3, replicates=2, replicate=1)
        b = make_release(f, f.snap(value), seed=3, replicates=2, replicate=1)
        pd.testing.assert_frame_equal(a.data, b.data)
    if not ALL[name].deterministic:
        differs = [
            not make_release(f, private, seed=3).data.equals(make_release(f, private, seed=4).data) for _ in range(1)
        ]
        assert any(differs), "a stochastic method gave the same release under two seeds"


@methods
def test_a_release_changes_only_the_columns_it_declares(name):
    f, data = fitted(name), dataset()
    private, _ = ends(f)
    release = make_release(f, private, seed=1)
    assert list(release.data.columns) == list(data.frame.columns) and len(release.data) == data.n_records
    declared = set(release.protected_columns)
    # What each step declares it changes: the text, or the fields it synthesizes (of the kinds it declares).
    texts = {data.schema.text} if any(s.changes == "text" for s in steps(name)) else set()
    kinds = {k for s in steps(name) if s.changes == "fields" for k in s.field_kinds}
    assert declared == texts | set(f.synthesized_fields)
    assert bool(f.synthesized_fields) == bool(kinds)
    assert {data.schema.field(c).kind for c in declared - texts} <= kinds
    for column in data.frame.columns:
        if column not in declared:
            pd.testing.assert_series_equal(release.data[column], data.frame[column], check_names=False)
    changed = [c for c in declared if not release.data[c].astype(str).equals(data.frame[c].astype(str))]
    assert changed, "the most private setting changed none of the declared columns"
    named = ALL[name].change_labels
    if named and release.changes is not None and len(release.changes):
        unnamed = set(release.changes["label"].astype(str)) - set(named)
        assert not unnamed, f"change labels {sorted(unnamed)} are not in change_labels"


@methods
def test_most_private_end_is_no_riskier_than_the_least_private(name):
    f, data = fitted(name), dataset()
    private, open_ = ends(f)
    sweep = run_sweep(data, build(name), grid=[private, open_], replicates=3, seed=0, fitted=f)
    risks = [m for m in sweep.metric_ids if metric_info(m).kind == "risk"]
    assert risks, sweep.skipped
    risk = risks[0]  # the method's own risk measure: the first the registry lists for it
    mean = sweep.summary[sweep.summary.metric == risk].set_index("knob")["mean"]
    sign = -1.0 if metric_info(risk).better == "higher" else 1.0
    assert sign * mean[private] <= sign * mean[open_] + 1e-12, (risk, mean.to_dict())


def test_flags_do_not_collide_and_mean_one_thing():
    from engine.cli import build_parser
    from engine.cli.args import method_parameters

    build_parser()  # argparse refuses two options with one flag
    params = method_parameters()
    assert {"fields", "predictors", "vendor_keywords"} <= set(params)
    assert params["predictors"][1] == ["cart", "count-bayes"]


def test_defaults_differ_from_every_tried_value():
    """The helper above must find a value for every parameter of the built-in methods (or the cache-key
    check would silently skip it)."""
    for name, cls in METHODS.items():
        missing = [p.name for p in cls.parameters if other_value(p, name) is None]
        assert not missing, (name, missing)


def test_count_bayes_snaps_a_lambda_between_grid_points_lazily():
    f = fitted("count-bayes")
    assert np.isclose(f.snap(1.0), 1.0)


@methods
def test_a_release_exports_with_every_section_and_check_that_applies_and_its_record_reads_back(
    name, tmp_path, monkeypatch
):
    """The export contract over every method: the bundle's manifest reads back into the record it was written
    from, every registered export check has spoken (its warnings are the record's), and every registered report
    section that applies writes into both reports without error."""
    from engine.export import registry as checks
    from engine.export.chosen import Prepared, Run, export_chosen
    from engine.protect.guard import guarded
    from engine.record.manifest import read_record
    from engine.record.replay import ReplaySpec
    from engine.report import registry as sections
    from engine.report.context import ReleaseReport
    from engine.sweep import metrics_with_intervals

    monkeypatch.setitem(METHODS, name, ALL[name])  # the toy too: a replay command names a registered method
    f, data = fitted(name), dataset()
    private, open_ = ends(f)
    protector = build(name)
    sweep = run_sweep(data, protector, grid=sorted({private, open_}), replicates=1, seed=0, fitted=f)
    out = tmp_path / "bundle"
    spec = ReplaySpec("the contract data", name, private, 0, 1, str(out), protector.params(), with_frontier=True)
    result = export_chosen(out, spec, Prepared(data, protector, f, sweep=sweep), run=Run(audit_log=tmp_path / "a"))
    assert read_record(out) == result.record
    release = make_release(guarded(f, protector, data), private, seed=0)  # as the export makes it
    # the residual detection risk of a method that depends on detection: in the manifest and the report
    found = tuple(d for d in release.details if isinstance(d, DetectionShare))
    assert result.record.detection == found and bool(found) == bool(ALL[name].detects), name
    metrics = metrics_with_intervals(sweep, private)
    assert list(result.record.warnings) == checks.release_warnings(data, release, metrics)
    report = ReleaseReport(result.record, data, release, metrics, f.knob, sweep, sweep)
    applied = [s for s in sections.SECTIONS if s.applies(report)]
    assert any(s.id == "along-knob" for s in applied)
    public = (out / "report.html").read_text(encoding="utf-8")
    for share in found:
        assert html.escape(share.describe(), quote=True) in public
    for section in applied:
        for internal in (False, True):
            assert isinstance(section.html(report, internal), list)
        drawn = section.figures(sweep, private)
        for key, _ in drawn if not section.internal_only else ():
            assert f'id="fig-{key}"' in public, (section.id, key)


def test_kanons_tagger_parameter_follows_corrections_pattern():
    """kanon's ``tagger`` is declared as the common ``corrections`` is: a choice whose default needs nothing kept,
    a flag of the commands, part of the fit's key, and a fit that refuses clearly where the steward's retrained
    tagger is not kept (a replay away from the steward's cache)."""
    from engine.cli.args import method_parameters
    from engine.protect.params import CORRECTIONS

    [tagger] = [p for p in METHODS["kanon"].parameters if p.name == "tagger"]
    assert tagger.choices == ("packaged", "retrained") and tagger.default == "packaged" and tagger.expert
    assert CORRECTIONS.choices == ("none", "kept") and CORRECTIONS.default == "none" and CORRECTIONS.expert
    assert "kanon" in method_parameters()["tagger"][1]
    retrained = build("kanon", tagger="retrained")
    assert fit_key(retrained, dataset()) != fit_key(build("kanon"), dataset())
    with pytest.raises(ConfigError, match="tagger = retrained, but no retrained tagger is kept for this dataset"):
        retrained.fit(dataset())
