from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info

from engine.errors import ConfigError
from engine.frontier import frontier, pareto_mask, select_by_risk_threshold, select_by_tradeoff
from engine.measures.evaluate import Evaluator
from engine.protect import get_protector
from engine.results import interval95, summarize
from engine.sweep import make_release, replicate_rng, run_sweep


def test_pareto_mask_on_a_hand_example():
    risk = np.array([0.1, 0.2, 0.3, 0.25])
    util = np.array([0.5, 0.7, 0.9, 0.6])
    # (0.25, 0.6) is beaten by (0.2, 0.7); the other three trade off.
    assert list(pareto_mask(risk, util)) == [True, True, True, False]


def summary_of(points):
    rows = []
    for knob, r, u in points:
        rows += [
            {"knob": knob, "replicate": 0, "metric": "risk_m", "kind": "risk", "value": r},
            {"knob": knob, "replicate": 0, "metric": "util_m", "kind": "utility", "value": u},
        ]
    return summarize(pd.DataFrame(rows))


def test_selection_rules():
    s = summary_of([(0, 0.30, 1.0), (1, 0.20, 0.9), (2, 0.05, 0.5), (3, 0.0, 0.1)])
    t = frontier(s, "risk_m", "util_m")
    assert select_by_risk_threshold(t, 0.2).knob == 1
    assert select_by_risk_threshold(t, 0.01).knob == 3
    with pytest.raises(ConfigError, match="lowest risk reached is 0"):
        select_by_risk_threshold(t, -0.1)
    # risk − a·utility: a=0.1 → knob 3 (−0.01); a=0.5 → knob 1 (0.2 − 0.45 = −0.25); a=2 → knob 0 (−1.7)
    assert select_by_tradeoff(t, 0.1).knob == 3
    assert select_by_tradeoff(t, 0.5).knob == 1
    assert select_by_tradeoff(t, 2.0).knob == 0
    with pytest.raises(ConfigError, match="positive"):
        select_by_tradeoff(t, 0)


def test_interval_is_the_central_95_percent_of_replicates():
    mean, lo, hi = interval95(np.arange(101.0))
    assert (mean, lo, hi) == (50.0, 2.5, 97.5)


def test_a_releases_own_interval_and_chance_travel_into_the_summary():
    rows = pd.DataFrame(
        [
            {"knob": 0.0, "replicate": 0, "metric": "risk_m", "kind": "risk", "value": 0.5, "lo": 0.3, "hi": 0.7}
            | {"chance": 0.25},
            {"knob": 1.0, "replicate": 0, "metric": "risk_m", "kind": "risk", "value": 0.4, "lo": 0.35, "hi": 0.45}
            | {"chance": 0.25},
            {"knob": 1.0, "replicate": 1, "metric": "risk_m", "kind": "risk", "value": 0.2, "lo": 0.15, "hi": 0.25}
            | {"chance": 0.25},
            {"knob": 0.0, "replicate": 0, "metric": "util_m", "kind": "utility", "value": 0.9}
            | {"lo": np.nan, "hi": np.nan, "chance": np.nan},
        ]
    )
    s = summarize(rows).set_index(["knob", "metric"])
    # one replicate: the release's own interval, not a point
    assert tuple(s.loc[(0.0, "risk_m"), ["mean", "lo", "hi", "chance"]]) == (0.5, 0.3, 0.7, 0.25)
    # two replicates: the widest of their spread (0.205–0.395) and their own intervals' mean (0.25–0.35)
    lo, hi = s.loc[(1.0, "risk_m"), ["lo", "hi"]]
    assert np.isclose(lo, 0.205) and np.isclose(hi, 0.395)
    assert np.isnan(s.loc[(0.0, "util_m"), "chance"]) and s.loc[(0.0, "util_m"), "lo"] == 0.9


def test_replicate_streams_are_the_seed_sequence_children():
    a = replicate_rng(7, 3, 1).random(4)
    b = np.random.default_rng(np.random.SeedSequence(7).spawn(3)[1]).random(4)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ConfigError, match="replicate must be between 0 and 2"):
        replicate_rng(7, 3, 3)


def test_sweep_is_tidy_deterministic_and_monotone(tiny_dataset):
    calls = []
    progress = lambda done, total, what: calls.append((done, total, what))
    protector = get_protector("redact", use_ner=False)
    a = run_sweep(tiny_dataset, protector, replicates=5, seed=3, progress=progress)
    b = run_sweep(tiny_dataset, protector, replicates=5, seed=3)
    pd.testing.assert_frame_equal(a.rows, b.rows)
    assert a.replicates == 1  # a deterministic method is measured once per knob value
    assert list(a.rows.columns) == ["knob", "replicate", "metric", "kind", "value", "lo", "hi", "chance"]
    assert list(a.summary.columns) == ["knob", "metric", "kind", "mean", "lo", "hi", "chance"]
    assert calls and calls[-1][0] == calls[-1][1]
    # the bar moves once a release is made and at each of its measures, the unprotected data's measures first
    steps = [c for c in calls if c[2] == "protecting and measuring"]
    total = (1 + a.rows.metric.nunique() - 1) * (len(a.grid) + 1)  # the worst attack is no measure of its own
    done = [c[0] for c in steps]
    assert {c[1] for c in steps} == {total} and done == sorted(done) and sorted(set(done)) == list(range(total + 1))
    risk = a.summary[a.summary.metric == "attack_identification_rate"].sort_values("knob")["mean"].to_numpy()
    assert np.all(np.diff(risk) <= 1e-12)
    assert risk[0] == a.baseline["attack_identification_rate_confidential"].value
    assert "attack_identification_rate" in a.details[1.0]


def test_sweep_refuses_bad_grids_and_replicates(tiny_dataset):
    protector = get_protector("redact", use_ner=False)
    with pytest.raises(ConfigError, match="out of range"):
        run_sweep(tiny_dataset, protector, grid=[0, 9])
    with pytest.raises(ConfigError, match="empty"):
        run_sweep(tiny_dataset, protector, grid=[])


@pytest.mark.parametrize("share_here", [False, True])
def test_parallel_sweep_equals_serial(tiny_dataset, monkeypatch, share_here):
    """A stochastic method (CART draws from its leaves), so the seeding of parallel replicates is exercised:
    workers must draw the same releases as the serial loop, and replicates must differ from each other. With
    ``share_here`` this process takes a share of the tasks beside one worker, as it does with large fits."""
    import engine.sweep

    monkeypatch.setattr(engine.sweep, "SHARE_HERE_BYTES", 0 if share_here else 2**62)
    protector = get_protector("cart", fields=["mood"])
    grid = [1e-3, 5e-2]
    serial = run_sweep(tiny_dataset, protector, grid=grid, replicates=3, seed=1, jobs=1)
    parallel = run_sweep(tiny_dataset, protector, grid=grid, replicates=3, seed=1, jobs=2)
    pd.testing.assert_frame_equal(serial.rows, parallel.rows, check_exact=True)
    per_replicate = serial.rows[serial.rows["kind"] == "utility"].pivot_table(
        index=["knob", "metric"], columns="replicate", values="value"
    )
    assert (per_replicate.nunique(axis=1) > 1).any()


def test_a_sweep_keeps_the_releases_it_is_asked_for_and_they_are_the_releases(tiny_dataset):
    """The dashboard shows a kept release instead of making it again: it must be the same release, holding only
    the columns it changed — its protected ones, and the text the release guard took the handles out of — until it
    is put back into the data."""
    from engine.cache import fit_cached

    protector = get_protector("cart", fields=["mood"])
    grid = [1e-3, 5e-2]
    sweep = run_sweep(tiny_dataset, protector, grid=grid, replicates=3, seed=1, keep_releases=2)
    assert sorted(sweep.releases) == sweep.grid and all(len(v) == 2 for v in sweep.releases.values())
    fitted = fit_cached(protector, tiny_dataset)  # as the sweep fits it: with the release guard
    for value in sweep.grid:
        for r, kept in enumerate(sweep.releases[value]):
            assert list(kept.data.columns) == ["mood", "text"] and kept.replicate == r
            made = make_release(fitted, value, 1, 3, r)
            pd.testing.assert_frame_equal(kept.within(tiny_dataset.frame).data, made.data)
    assert run_sweep(tiny_dataset, protector, grid=grid, replicates=3, seed=1).releases == {}


class ThreadCounting(Evaluator):
    """Reports, as the value of every measure, the most BLAS/OpenMP threads any pool allowed while measuring."""

    def evaluate(self, release, report=None):
        threads = max((p["num_threads"] for p in threadpool_info()), default=1)
        measured = super().evaluate(release, report)
        return {mid: replace(r, value=float(threads), detail=None) for mid, r in measured.items()}


def test_releases_are_measured_with_one_thread_whatever_the_jobs(tiny_dataset):
    """Exact replay whatever --jobs (issue 10): the main process has as many BLAS threads as cores, joblib's
    workers cores / jobs; a floating sum split over another number of threads rounds differently, so both
    paths measure with one thread."""
    protector = get_protector("cart", fields=["mood"])
    for jobs in (1, 2):
        evaluator = ThreadCounting(tiny_dataset, fields=["mood"])
        sweep = run_sweep(tiny_dataset, protector, grid=[1e-3], replicates=2, jobs=jobs, evaluator=evaluator)
        measured = sweep.rows[sweep.rows["metric"] != "worst_attack"]  # derived from the attacks' values
        assert set(measured["value"]) == {1.0}, jobs


def test_fits_are_cached_on_disk(tiny_dataset, _private_cache):
    from engine.cache import fit_cached

    protector = get_protector("redact", use_ner=False)
    first = fit_cached(protector, tiny_dataset)
    files = list((_private_cache / "fits").glob("redact-*.joblib"))
    assert files
    second = fit_cached(protector, tiny_dataset)
    pd.testing.assert_frame_equal(first.spans, second.spans)
    tiny_dataset.frame.loc[0, "text"] = "something else @x"
    tiny_dataset.__dict__.pop("fingerprint", None)
    fit_cached(protector, tiny_dataset)
    assert len(list((_private_cache / "fits").glob("redact-*.joblib"))) == len(files) + 1


def test_cache_keys_change_with_the_engines_code(tiny_dataset, tmp_path, monkeypatch):
    import engine.cache as cache

    source = tmp_path / "engine"
    (source / "measures").mkdir(parents=True)
    (source / "measures" / "m.py").write_text("C = 1\n")
    before = cache.code_digest(source)
    (source / "measures" / "m.py").write_text("C = 0.1\n")
    cache.code_digest.cache_clear()
    assert cache.code_digest(source) != before

    protector = get_protector("redact", use_ner=False)
    key, name = cache.fit_key(protector, tiny_dataset), cache.sweep_name(protector, tiny_dataset, {"seed": 0})
    monkeypatch.setattr(cache, "ENGINE_DIR", source)
    assert cache.fit_key(protector, tiny_dataset) != key
    assert cache.sweep_name(protector, tiny_dataset, {"seed": 0}) != name


def test_rules_pass_over_the_unprotected_point_unless_asked():
    """Redaction level 0 is the unprotected data: its risk equals the baseline. With a small slope the
    trade-off rule picked it (issue 10); now it is passed over unless the steward asks for it."""
    s = summary_of([(0, 0.30, 1.0), (1, 0.20, 0.9), (2, 0.05, 0.5)])
    t = frontier(s, "risk_m", "util_m", unprotected_risk=0.30)
    assert list(t["unprotected"]) == [True, False, False]
    assert select_by_tradeoff(t, 2.0).knob == 1
    assert select_by_tradeoff(t, 2.0, allow_unprotected=True).knob == 0
    assert select_by_risk_threshold(t, 0.5).knob == 1
    assert select_by_risk_threshold(t, 0.5, allow_unprotected=True).knob == 0
    only = frontier(summary_of([(0, 0.30, 1.0)]), "risk_m", "util_m", unprotected_risk=0.30)
    with pytest.raises(ConfigError, match="no protecting setting"):
        select_by_tradeoff(only, 1.0)


def test_knob_values_are_shown_with_three_significant_digits_and_snap_back():
    from engine.protect.base import Knob, knob_number, three_significant

    assert [three_significant(v) for v in (0.0085077321, 1.0, 0.5, 1234.5, 1e-8, 0.001234, 1e5, 1e6, 6.21e-5, 2e9)] == [
        "0.00851",
        "1",
        "0.5",
        "1,234",
        "1e-8",
        "0.00123",
        "100,000",  # a λ path reads 100,000 then 1,000,000, not 100000 then 1e+06
        "1,000,000",
        "6.21e-5",
        "2e9",
    ]
    assert [knob_number(t) for t in ("1,000,000", "6.21e-5", " 0.5 ")] == [1e6, 6.21e-5, 0.5]
    with pytest.raises(ValueError, match="'1.2.3' is not a number; e.g. 0.5, 1,000,000 or 6.21e-5"):
        knob_number("1.2.3")
    from engine.protect.base import Fitted

    knob = Knob("lam", "λ", "Shrinkage", 1e-4, 1.0, 0.01, scale="log")
    path = np.geomspace(1.0, 1e-3, 100)  # glm's path: 100 values over three decades, 7 % apart

    class OnAPath(Fitted):
        method, knob = "path", Knob("lam", "λ", "Shrinkage", 1e-4, 1.0, 0.01, scale="log")

        def path_grid(self):
            return list(path)

        def release(self, value, rng, replicate=0):
            raise NotImplementedError

    fitted = OnAPath()
    for value in path:
        assert fitted.snap(float(knob.format(value))) == value  # what the steward reads names the path point
    between = float(np.sqrt(path[9] * path[10]))  # 3.5 % from either neighbour
    assert fitted.snap(between) == between  # left as asked
    with pytest.raises(ConfigError, match="accepted: 0.0001 to 1"):
        knob.validate(2.0)


def test_a_large_tables_background_sweep_ships_nothing_and_measures_the_same(tiny_dataset, monkeypatch):
    """Giving way and holding its objects once (a large table's full sweep behind its sample's view), a sweep
    runs every piece in its own thread and ships nothing; the results are those of a sweep in worker
    processes."""
    import os

    import engine.sweep as sweep
    from engine.workers import giving_way

    protector = get_protector("md", vocabulary="data")
    metrics = ["unigram_cosine"]
    grid = [1.0, 100.0]
    in_workers = run_sweep(tiny_dataset, protector, grid, replicates=2, seed=1, metrics=metrics, jobs=2)

    def no_shipping(objects: object) -> None:
        raise AssertionError("a large table's background sweep shipped its objects")

    monkeypatch.setattr(sweep, "shipped_once", no_shipping)
    pids: list[int] = []
    measure = sweep._measure
    monkeypatch.setattr(sweep, "_measure", lambda *a, **k: (pids.append(os.getpid()), measure(*a, **k))[1])
    with giving_way(held_once=True):
        held_once = run_sweep(tiny_dataset, protector, grid, replicates=2, seed=1, metrics=metrics, jobs=2)
    assert pids and set(pids) == {os.getpid()}
    pd.testing.assert_frame_equal(held_once.summary, in_workers.summary)
