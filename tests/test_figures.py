"""Fast tests of the shared Plotly figures and the change highlighter."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from engine.figures.text import (
    COLOURS,
    attack_bars_figure,
    cosine_by_author_figure,
    frontier_figure,
    highlight_changes,
    label_colours,
    methods_frontier_figure,
    metric_along_knob_figure,
)
from engine.measures.base import MetricResult
from engine.protect.base import Knob
from engine.results import SweepResult, summarize

RISK, UTILITY = "attack_identification_rate", "unigram_cosine"


def make_sweep(scale: str = "linear") -> SweepResult:
    knob = Knob("level", "λ", "Redaction level", 0.0, 1.0, 0.5, scale=scale, grid=(0.0, 0.5, 1.0))
    rows = []
    for k, risk, util in [(0.0, 0.8, 1.0), (0.5, 0.4, 0.8), (1.0, 0.1, 0.5)]:
        for rep, jitter in enumerate((-0.02, 0.02)):
            rows.append({"knob": k, "replicate": rep, "metric": RISK, "kind": "risk", "value": risk + jitter})
            rows.append(
                {"knob": k, "replicate": rep, "metric": UTILITY, "kind": "utility", "value": util - abs(jitter)}
            )
    frame = pd.DataFrame(rows)
    return SweepResult(
        dataset="tiny",
        fingerprint="f" * 64,
        method="redact",
        knob=knob,
        grid=[0.0, 0.5, 1.0],
        replicates=2,
        seed=7,
        rows=frame,
        summary=summarize(frame),
        baseline={
            RISK + "_confidential": MetricResult(RISK + "_confidential", 0.9),
            UTILITY + "_confidential": MetricResult(UTILITY + "_confidential", 1.0),
        },
    )


def test_a_frontier_axis_does_not_stretch_rounding_noise_into_a_slope():
    """Risk values 1e-9 apart (a swap's DR on data it barely changes) are drawn level, within a span of 0.01
    kept inside the measure's range (a rate of 1 on an axis that does not run to 1.005); an axis whose values
    differ more keeps its span (with room at the right for the last point's label)."""
    sweep = make_sweep()
    rows = sweep.rows.copy()
    risk = rows["metric"] == RISK
    rows.loc[risk, "value"] = 1 - 1e-9 * rows.loc[risk, "knob"]
    baseline = {**sweep.baseline, RISK + "_confidential": MetricResult(RISK + "_confidential", 1.0)}
    flat = dataclasses.replace(sweep, rows=rows, summary=summarize(rows), baseline=baseline)
    fig = frontier_figure(flat, RISK, UTILITY)
    low, high = sorted(fig.layout.yaxis.range)
    assert high - low == pytest.approx(0.01 * 1.06) and low < 1 - 1e-9 < 1 < high < 1.001
    x_low, x_high = fig.layout.xaxis.range  # utilities 0.48 … 1 (the star): 5% at the left, 10% at the right
    assert x_low == pytest.approx(0.48 - 0.05 * 0.52, abs=1e-3) and x_high == pytest.approx(1 + 0.1 * 0.52, abs=1e-3)
    assert frontier_figure(sweep, RISK, UTILITY).layout.yaxis.range is None


def test_frontier_marks_current_and_chosen_knob():
    fig = frontier_figure(make_sweep(), RISK, UTILITY, current=0.5, chosen=1.0)
    by_role = {t.meta["role"]: t for t in fig.data if isinstance(t.meta, dict) and "role" in t.meta}
    assert pytest.approx(by_role["current"].x[0]) == 0.78
    assert pytest.approx(by_role["current"].y[0]) == 0.4
    assert by_role["current"].marker.size > 12
    assert pytest.approx(by_role["chosen"].y[0]) == 0.1
    assert any(t.name == "Unprotected data" and t.marker.symbol == "star" for t in fig.data)
    assert fig.layout.uirevision == "textsdc"
    assert fig.layout.yaxis.title.text == "Attack identification rate"


def test_the_chosen_points_value_is_written_clear_of_its_marker_and_inside_the_figure():
    """Issue 54: the small point's label sat under the large chosen marker; the value is written by the marker,
    offset past it (Plotly offsets a label by its marker's size), on the side away from the figure's edge, and
    once when the chosen and current values are one."""

    def roles(fig) -> dict:
        return {t.meta["role"]: t for t in fig.data if isinstance(t.meta, dict) and "role" in t.meta}

    def point_labels(fig) -> dict[str, str]:
        points = next(t for t in fig.data if t.name.startswith("Redaction level"))
        return dict(zip(points.customdata, points.text))

    fig = frontier_figure(make_sweep(), RISK, UTILITY, chosen=1.0)
    chosen = roles(fig)["chosen"]
    assert chosen.mode == "markers+text" and list(chosen.text) == ["1"] and chosen.cliponaxis is False
    assert chosen.textposition == "top right"  # lowest utility, lowest risk: room above and to the right
    assert point_labels(fig) == {"0": "0", "0.5": "0.5", "1": ""}  # not also under the marker
    # at the highest utility (the right edge), near the top: written to the left
    assert roles(frontier_figure(make_sweep(), RISK, UTILITY, chosen=0.0))["chosen"].textposition == "top left"
    both = roles(frontier_figure(make_sweep(), RISK, UTILITY, current=0.5, chosen=0.5))
    assert list(both["chosen"].text) == ["0.5"] and list(both["current"].text) == [""]


def test_frontier_axes_follow_each_measures_direction():
    """fmr is a risk measure where higher is safer: its axis runs downwards so that safer is still lower, and
    propensity-score utility Up (lower is better) runs right to left; the plain pair is not turned."""
    plain = frontier_figure(make_sweep(), RISK, UTILITY)
    x_low, x_high = plain.layout.xaxis.range  # utility from left to right, room at the right for a label
    assert plain.layout.yaxis.autorange is True and x_low < x_high
    sweep = make_sweep()
    for frame in (sweep.rows, sweep.summary):
        frame["metric"] = frame["metric"].map({RISK: "fmr", UTILITY: "propensity_up"}).fillna(frame["metric"])
    sweep.baseline = {}
    turned = frontier_figure(sweep, "fmr", "propensity_up")
    x_left, x_right = turned.layout.xaxis.range  # drawn reversed: the larger value at the left
    assert turned.layout.yaxis.autorange == "reversed" and x_left > x_right
    assert "axis reversed" in turned.layout.yaxis.title.text
    assert turned.layout.title.text.endswith("lower right is better")


def test_frontier_without_current_has_no_marker_and_skips_off_grid_knob():
    fig = frontier_figure(make_sweep(), RISK, UTILITY, current=0.3)
    assert not [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("role") == "current"]


def test_metric_along_knob_log_axis_baseline_and_current():
    sweep = make_sweep()
    sweep.knob = Knob("eps", "ε", "Privacy budget", 0.1, 10.0, 1.0, scale="log", more_privacy="lower")
    sweep.summary["knob"] = sweep.summary["knob"].map({0.0: 0.1, 0.5: 1.0, 1.0: 10.0})
    fig = metric_along_knob_figure(sweep, RISK, current=1.0)
    assert fig.layout.xaxis.type == "log"
    names = [t.name for t in fig.data]
    assert "95% range over replicates" in names and "Unprotected data" in names
    assert any(isinstance(t.meta, dict) and t.meta.get("role") == "current" for t in fig.data)


def attack_detail() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # alice is identified: her own bar is the tallest
            ("alice", "alice", 0.9, True, True),
            ("alice", "bob", 0.2, False, False),
            ("alice", "carol", 0.0, False, False),
            # bob is missed: carol scores higher than bob
            ("bob", "alice", 0.0, False, False),
            ("bob", "bob", 0.3, True, False),
            ("bob", "carol", 0.6, False, True),
        ],
        columns=["target", "candidate", "score", "is_true", "is_guess"],
    )


def test_attack_bars_colours_true_and_false_positives():
    fig = attack_bars_figure(attack_detail())
    bars = {t.meta["category"]: t for t in fig.data if t.type == "bar"}
    assert bars["true_positive"].marker.color == COLOURS["true_positive"] == "#2ca02c"
    assert list(bars["true_positive"].x) == ["alice"]
    assert bars["false_positive"].marker.color == COLOURS["false_positive"] == "#d62728"
    assert list(bars["false_positive"].x) == ["carol"]
    assert list(bars["false_negative"].x) == ["bob"]
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["alice: identified", "bob: missed"]
    zero = [t for t in fig.data if isinstance(t.meta, dict) and t.meta.get("category") == "zero"]
    assert zero and all(y == 0 for t in zero for y in t.y)


def test_attack_bars_respects_targets_and_limit():
    fig = attack_bars_figure(attack_detail(), max_targets=1)
    assert [a.text for a in fig.layout.annotations] == ["alice: identified"]
    fig = attack_bars_figure(attack_detail(), targets=["bob"])
    assert [a.text for a in fig.layout.annotations] == ["bob: missed"]


def test_attack_bars_name_every_user_and_say_when_others_tie_or_nobody_is_guessed():
    """Sixteen wrong guesses tied at 1 are all named (plotly's own ticks named every other one), the title
    says the target was missed among a tie, and a target whose records nobody's resemble reads "no guess"."""
    tied = [f"user{i:02d}" for i in range(16)]
    detail = pd.DataFrame(
        [("ann", u, 1.0, False, True) for u in tied]
        + [("ann", "ann", 0.0, True, False), ("zoe", "zoe", 0.0, True, False)],
        columns=["target", "candidate", "score", "is_true", "is_guess"],
    )
    fig = attack_bars_figure(detail, ["ann", "zoe"])
    assert [a.text for a in fig.layout.annotations] == ["ann: missed, 16 others tie", "zoe: no guess"]
    assert list(fig.layout.xaxis.tickvals) == sorted([*tied, "ann"]) == list(fig.layout.xaxis.ticktext)
    assert fig.layout.xaxis.tickfont.size == 10 and fig.layout.xaxis2.tickfont.size == 12
    assert list(fig.layout.xaxis2.tickvals) == ["zoe"]


def test_cosine_histogram():
    fig = cosine_by_author_figure(
        pd.DataFrame({"author": list("abcde"), "cosine": [0.5, 0.9, 0.949, 1.0, 0.0]}), "Word similarity"
    )
    assert fig.data[0].type == "bar" and len(fig.data[0].x) == 21  # counted here, whatever the number of authors
    counts = dict(zip(np.round(fig.data[0].x, 3), fig.data[0].y))
    assert counts[0.025] == 1 and counts[0.525] == 1 and counts[0.925] == 2 and counts[1.025] == 1
    assert sum(fig.data[0].y) == 5
    assert fig.layout.title.text == "Word similarity per author" and fig.layout.yaxis.title.text == "Authors"
    per_record = cosine_by_author_figure(pd.DataFrame({"author": ["0", "1"], "cosine": [0.5, 0.9]}), "W", "record")
    assert per_record.layout.title.text == "W per record" and per_record.layout.yaxis.title.text == "Records"


def test_highlight_changes_escapes_everything():
    text = "Hi <script>alert(1)</script> from Ann & Bo"
    start = text.index("Ann")
    changes = pd.DataFrame(
        [
            {
                "record": 0,
                "column": "text",
                "start": start,
                "end": start + 3,
                "original": "Ann",
                "replacement": "<b>X</b>",
                "label": 'PER"SON',
            }
        ]
    )
    orig, prot = highlight_changes(text, changes)
    for out in (orig, prot):
        assert "<script>" not in out and "&lt;script&gt;" in out and "&amp; Bo" in out
    assert '<mark class="orig" title="PER&quot;SON">Ann</mark>' in orig
    assert '<mark class="repl" title="PER&quot;SON">&lt;b&gt;X&lt;/b&gt;</mark>' in prot
    assert "Ann" not in prot


def test_highlight_changes_several_spans_in_any_order_and_none():
    text = "Ann met Bo"
    changes = pd.DataFrame({"start": [8, 0], "end": [10, 3], "replacement": ["[P2]", "[P1]"], "label": ["P", "P"]})
    _, prot = highlight_changes(text, changes)
    assert prot == '<mark class="repl" title="P">[P1]</mark> met <mark class="repl" title="P">[P2]</mark>'
    assert highlight_changes("a<b", changes.iloc[0:0]) == ("a&lt;b", "a&lt;b")
    with pytest.raises(ValueError):
        highlight_changes(
            text, pd.DataFrame({"start": [0, 2], "end": [3, 5], "replacement": ["", ""], "label": ["", ""]})
        )


def test_highlight_changes_colours_each_change_by_its_label_and_names_it():
    text = "Nurse from Texas, 65"
    changes = pd.DataFrame(
        {"start": [0, 11, 18], "end": [5, 16, 20], "replacement": ["Grace", "Americas", "60-69"]}
    ).assign(label=["QIJOB", "QIREGION", "QIAGE"])
    labels = {"QIAGE": "age", "QIREGION": 'pl"ace'}  # QIJOB named by no label: marked as before
    orig, prot = highlight_changes(text, changes, labels)
    age, place = label_colours(list(labels)).values()
    assert f'<mark class="orig" title="QIAGE" data-label="age" style="background:{age}">65</mark>' in orig
    assert f'data-label="pl&quot;ace" style="background:{place}">Americas</mark>' in prot
    assert '<mark class="repl" title="QIJOB">Grace</mark>' in prot
    assert highlight_changes(text, changes) == highlight_changes(text, changes, {})  # no labels: as before
    assert len(set(label_colours([str(i) for i in range(8)]).values())) == 8


def test_frontier_labels_of_coinciding_points_are_not_printed_on_top_of_each_other():
    from engine.figures.text import uncluttered_labels

    x = np.array([0.0, 0.001, 0.002, 0.5, 1.0])
    y = np.array([0.0, 0.0, 0.0, 0.01, 0.08])
    assert uncluttered_labels(x, y, ["0.1", "0.5", "1", "1000", "10000"]) == ["0.1", "", "", "1000", "10000"]
    flat = np.zeros(3)
    assert uncluttered_labels(flat, flat, ["a", "b", "c"]) == ["a", "", ""]
    # Side by side at one height, 8 % of the width apart: the text of two labels would run together.
    level = np.array([0.0, 0.08, 1.0]), np.array([1.0, 1.0, 0.0])
    assert uncluttered_labels(*level, ["0.25", "0.5", "5"]) == ["0.25", "", "5"]
    # Far apart among themselves, but squeezed into a corner by what else the axes show (the unprotected star at
    # 10): drawn, they are 1% of the width apart, and only the first is labelled.
    corner = np.array([0.0, 0.1]), np.array([0.0, 0.0])
    assert uncluttered_labels(*corner, ["5000", "10000"]) == ["5000", "10000"]
    assert uncluttered_labels(*corner, ["5000", "10000"], [10.0], [0.0]) == ["5000", ""]
    # Values 1e-9 apart on an axis drawn at least 0.01 wide (a swap's DR on reviews): one label, not nine.
    noise = np.linspace(0.999, 0.999 + 8e-9, 9), np.linspace(1.0, 1.0 - 8e-9, 9)
    assert sum(bool(s) for s in uncluttered_labels(*noise, list("abcdefghi"), min_span=0.01)) == 1


def test_methods_frontier_draws_each_method_along_its_knob_with_its_ends_labelled():
    first, second = make_sweep(), make_sweep("log")
    for frame in (second.rows, second.summary):
        frame["value" if "value" in frame else "mean"] = frame["value" if "value" in frame else "mean"] * 0.5
    fig = methods_frontier_figure([("Redaction", first), ("Other", second)], RISK, UTILITY)
    lines = [t for t in fig.data if t.name != "Unprotected data"]
    assert [t.name for t in lines] == ["Redaction (along λ)", "Other (along λ)"]
    for t in lines:
        assert len(t.x) == 3 and not t.text[1]  # the middle point is read on hover
        assert list(t.customdata) == ["λ 0", "λ 0.5", "λ 1"]
    # Each end's label sits away from its neighbour: the line runs down and left from the least private end.
    assert (lines[0].textposition[0], lines[0].textposition[-1]) == ("top right", "bottom left")
    labelled = [(t.x[i], t.y[i]) for t in lines for i in range(3) if t.text[i]]
    assert len(labelled) >= 2
    assert any(t.name == "Unprotected data" for t in fig.data)
    assert methods_frontier_figure([("Redaction", first)], "pmse_ratio", UTILITY).data == ()


def test_attack_bars_draw_the_target_the_guess_and_the_top_scores_of_many_users():
    """A panel over 100 released users draws 30: the target, the attacker's guess and the next highest scores
    (a browser redrawing thousands of bars at every slider move is not live)."""
    users = [f"user{i:03d}" for i in range(100)]
    scores = [0.0] * 100
    scores[57], scores[3], scores[90] = 0.6, 0.3, 0.05  # the guess (wrong), a runner-up, a small one
    detail = pd.DataFrame(
        {
            "target": "user010",
            "candidate": users,
            "score": scores,
            "is_true": [u == "user010" for u in users],
            "is_guess": [u == "user057" for u in users],
            "credit": 0.0,
        }
    )
    fig = attack_bars_figure(detail, ["user010"])
    drawn = {x for t in fig.data for x in t.x}
    assert len(drawn) == 30 and {"user010", "user057", "user003", "user090"} <= drawn
    assert fig.layout.xaxis.title.text == "30 of 100 users; the other 70 score ≤ 0.00"
    assert fig.layout.annotations[0].text == "user010: missed"
    assert len({x for t in attack_bars_figure(detail, ["user010"], max_users=200).data for x in t.x}) == 100


def test_every_registered_method_gets_its_own_colour_and_marker_on_the_comparison():
    from engine.figures.text import METHOD_COLOURS, METHOD_SYMBOLS
    from engine.protect import METHODS

    # `textsdc compare --methods all` draws every method on one chart: none may share a line's look.
    assert len(set(METHOD_COLOURS)) >= len(METHODS) and len(set(METHOD_SYMBOLS)) >= len(METHODS)
    assert "#d62728" not in METHOD_COLOURS  # the red of the frontier's ring


def test_every_figure_is_drawn_on_the_white_template():
    import plotly.io as pio

    from engine.figures.text import on_our_template

    # an AppTest earlier in this process imported Streamlit after the engine, which makes Streamlit's template
    # plotly's default; the dashboard imports Streamlit first and the report reasserts ours (`on_our_template`)
    on_our_template()
    white = pio.templates["plotly_white"].to_plotly_json()
    sweep = make_sweep()
    for figure in (frontier_figure(sweep, RISK, UTILITY), metric_along_knob_figure(sweep, RISK)):
        assert figure.layout.template.to_plotly_json() == white


def test_a_long_tailed_count_gets_bins_one_can_see_and_its_tail_in_the_last():
    """0–365 days keep the paper's bins of 25; favourites up to 296,007 (99% under ~5,000) get about 40 round
    bins up to the 99th percentile and a last bin for the rest: every record is counted once."""
    from engine.figures.bayes_counts import count_bins, count_histogram_figure

    rng = np.random.default_rng(0)
    days = rng.integers(0, 366, 500).astype(float)
    edges, tail = count_bins(days, [days[::-1]], 25.0)
    assert not tail and edges[1] - edges[0] == 25 and len(edges) <= 17
    favourites = np.append(rng.geometric(1 / 800, 999).astype(float), 296007.0)
    edges, tail = count_bins(favourites, [favourites], 25.0)
    assert tail and len(edges) - 1 <= 45 and edges[-2] >= np.quantile(favourites, 0.99)
    fig = count_histogram_figure(favourites, [favourites], "fav_number")
    assert sum(fig.data[0].y) == 1000 and sum(fig.data[1].y) == 1000
    assert fig.data[0].customdata[-1] == f"{edges[-2]:,.0f} or more"
    assert (
        fig.layout.xaxis.title.text
        == f"fav_number (bins of {edges[1] - edges[0]:,g}; the last holds {edges[-2]:,.0f} and more)"
    )


def test_one_wide_interval_does_not_set_the_frontier_axis():
    """A knob value whose replicates disagree wildly (utility −12 … 2) keeps its error bar, but the axis spans
    the points and at most half their span more, not the whole bar; intervals inside that room are drawn whole."""
    sweep = make_sweep()
    wide = sweep.summary["metric"].eq(RISK) & sweep.summary["knob"].eq(0.5)
    sweep.summary.loc[wide, ["lo", "hi"]] = [-12.0, 2.0]
    y_low, y_high = sorted(frontier_figure(sweep, RISK, UTILITY).layout.yaxis.range)
    points = [0.1, 0.4, 0.8, 0.9]  # the risks and the unprotected star
    span = max(points) - min(points)
    assert y_low == pytest.approx(min(points) - 0.5 * span - 0.05 * 2 * span)
    assert y_high == pytest.approx(max(points) + 0.5 * span + 0.05 * 2 * span)
    assert frontier_figure(make_sweep(), RISK, UTILITY).layout.yaxis.range is None


def test_a_log_knob_axis_is_labelled_as_the_slider_writes_its_values():
    """λ from 1 to 10,000,000 reads 1 … 10,000,000 at each power of ten (Plotly wrote 1e+3 beside "2" and "5");
    a range under three powers of ten gets 1, 2 and 5 of each."""
    from engine.figures.text import knob_axis

    axis = knob_axis(Knob("lam", "λ", "Prior precision", 1.0, 1e7, 1.0, scale="log"))
    assert axis["ticktext"] == ["1", "10", "100", "1,000", "10,000", "100,000", "1,000,000", "10,000,000"]
    tau = knob_axis(Knob("temperature", "τ", "Sampling temperature", 0.1, 5.0, 1.5, scale="log"))
    assert tau["ticktext"] == ["0.1", "0.2", "0.5", "1", "2", "5"]
    assert "tickvals" not in knob_axis(Knob("level", "level", "Redaction level", 0, 4, 2, integer=True))


def test_the_amount_density_does_not_draw_the_extreme_confidential_amounts():
    """The report that leaves with a release draws this figure: its curves run between the confidential 0.5% and
    99.5% quantiles, so neither the largest price (one listing at 10,000) nor the smallest is written in it."""
    from engine.figures.bayes_counts import amount_density_figure

    rng = np.random.default_rng(0)
    prices = np.append(np.round(np.exp(rng.normal(4.5, 0.5, 999))), 10_000.0)
    fig = amount_density_figure(prices, [prices[::-1]], "price")
    xs = np.concatenate([np.asarray(t.x, float) for t in fig.data])
    low, high = np.exp(np.quantile(np.log(prices), [0.005, 0.995]))
    assert xs.min() == pytest.approx(low) and xs.max() == pytest.approx(high)
    assert not np.isin([prices.min(), prices.max()], xs).any() and high < 1_000


def test_the_topic_correlation_legend_sits_at_the_foot_not_on_its_two_line_title():
    """Issue 54: above the plot its rows (two per field) covered the title's second line."""
    from engine.figures.field_synthesis import content_correlation_figure

    detail = pd.DataFrame(
        [
            {"field": f, "level": lv, "topic": t, "topic_words": "delay, hours", "correlation": 0.5}
            for f in ("airline", "sentiment")
            for lv in ("a", "b")
            for t in range(3)
        ]
    )
    fig = content_correlation_figure(detail)
    assert "<br>" in fig.layout.title.text and len(fig.data) == 4
    legend = fig.layout.legend
    assert (legend.yref, legend.y, legend.yanchor, legend.orientation) == ("container", 0, "bottom", "h")


def test_methods_whose_releases_coincide_all_show_on_the_comparison():
    """Issue 54: k-anonymity's points hid under redaction's, and md's under rnn's. The markers are hollow, and
    each method's marker and line are larger than those of the methods drawn over it."""
    same = make_sweep()
    fig = methods_frontier_figure([("Redaction", same), ("k-anonymity", same), ("Generator", same)], RISK, UTILITY)
    lines = [t for t in fig.data if t.name != "Unprotected data"]
    assert all(t.marker.symbol.endswith("-open") for t in lines)
    assert len({t.marker.symbol for t in lines}) == 3
    sizes, widths = [t.marker.size for t in lines], [t.line.width for t in lines]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 3
    assert widths == sorted(widths, reverse=True) and len(set(widths)) == 3
    assert sizes[-2] - sizes[-1] >= 3  # the rim of the one below shows round the one above
