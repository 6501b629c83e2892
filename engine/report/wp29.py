"""The report's section on singling out, linkability and inference: the three risks of the Article 29 Working
Party's Opinion 05/2014, as the Anonymeter framework of Giomi et al. (2023) measures them on the released table
(`engine.measures.risk.anonymeter_style`): for each, what it asks, its value and 95% interval, the attack's
success beside the control's and the random guess's (the chance level), and the attacker's assumptions."""

from __future__ import annotations

from typing import ClassVar

import pandas as pd

from engine.measures.base import MetricResult, measured_number, metric_info
from engine.measures.risk.anonymeter_style.measure import rate
from engine.measures.risk.anonymeter_style.rates import residual_risk, wilson
from engine.report.context import ReleaseReport, escaped
from engine.report.sections import ReportSection

QUESTIONS = {
    "singling_out_risk": "Can someone be isolated in the release?",
    "linkability_risk": "Can two records about the same person be linked through the release?",
    "inference_risk": "Can a person's protected value be deduced from the release?",
}


def interval(result: MetricResult) -> tuple[float, float] | None:
    """The risk's 95% interval: from the attacks themselves (their successes pooled over replicates, Wilson
    intervals as the framework takes them), else the interval the result carries."""
    d = result.detail
    if d is not None and {"attack", "successes", "attacks"} <= set(d.columns):
        pooled = d.groupby("attack")[["successes", "attacks"]].sum()
        if {"attack", "control", "baseline"} <= set(pooled.index) and (pooled["attacks"] > 0).all():
            risk = residual_risk(*(wilson(*pooled.loc[w]) for w in ("attack", "control", "baseline")))
            return risk.lo, risk.hi
    if result.lo is not None and result.hi is not None:
        return result.lo, result.hi
    return None


def _rates(result: MetricResult) -> tuple[str, str, str]:
    d = result.detail
    if d is None or "attack" not in d.columns:
        chance = "—" if result.chance is None else measured_number(result.chance)
        return "—", "—", chance
    return tuple(measured_number(rate(d, w)) for w in ("attack", "control", "baseline"))  # type: ignore[return-value]


class SinglingOutLinkabilityInferenceSection(ReportSection):
    """Singling out, linkability and inference, each with what it means, its interval and its assumptions."""

    id = "singling-out-linkability-inference"
    title = "Singling out, linkability and inference"
    measures: ClassVar[tuple[str, ...]] = tuple(QUESTIONS)

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        parts = [
            f"<h2>{escaped(cls.title)}</h2>",
            "<p>The three risks an anonymisation must address in the words of the Article 29 Working Party "
            "(Opinion 05/2014), measured as the Anonymeter framework does (Giomi et al. 2023) on the released "
            "table: its fields and four features of each text (its number of words, whether it holds a URL, an "
            "@handle, a digit). Each attack is made on the records the release was made from and, as a control, "
            "on records it was not made from; the risk is how much better it does on the first: (attack − control) "
            "/ (1 − control), 0 = no better, 1 = always. The chance level is what guessing at random achieves.</p>",
        ]
        rows = []
        for mid in cls.measures:
            result = report.metrics.get(mid)
            info = metric_info(mid)
            if result is None:
                reason = report.skipped.get(mid)
                if reason:
                    rows.append(
                        f"<tr><td>{escaped(info.card)}</td><td colspan='5'>not measured: {escaped(reason)}</td></tr>"
                    )
                continue
            span = interval(result)
            shown = "—" if span is None else f"{measured_number(span[0])}–{measured_number(span[1])}"
            attack, control, chance = _rates(result)
            rows.append(
                f"<tr><td>{escaped(info.card)}</td><td>{escaped(info.format(result.value))}</td>"
                f"<td>{escaped(shown)}</td><td>{escaped(attack)}</td><td>{escaped(control)}</td>"
                f"<td>{escaped(chance)}</td></tr>"
            )
        if not rows:
            return []
        parts.append(
            "<table><tr><th>Risk</th><th>Value</th><th>95% interval</th><th>Attack's success</th>"
            "<th>Control's success</th><th>Chance (random guess)</th></tr>" + "".join(rows) + "</table>"
        )
        for mid, question in QUESTIONS.items():
            if mid not in report.metrics:
                continue
            info = metric_info(mid)
            assumptions = info.attack.assumptions if info.attack is not None else ""
            note = report.notes.get(mid, "")
            parts.append(
                f"<h3>{escaped(info.card)}: {escaped(question)}</h3>"
                f"<p>{escaped(_what_it_says(report.metrics[mid]))}</p>"
                f"<p><b>Assumptions.</b> {escaped(assumptions)}</p>" + (f"<p>{escaped(note)}</p>" if note else "")
            )
        return parts


def _what_it_says(result: MetricResult) -> str:
    """The value in a sentence, with its interval and whether the attack beat guessing."""
    span = interval(result)
    value = measured_number(result.value)
    within = "" if span is None else f" (95% interval {measured_number(span[0])} to {measured_number(span[1])})"
    d = result.detail
    beat = ""
    if isinstance(d, pd.DataFrame) and "attack" in d.columns and rate(d, "attack") <= rate(d, "baseline"):
        beat = (
            " The attack did no better than guessing at random on this release, so it finds nothing here; that "
            "is not proof that a better attack would find nothing."
        )
    found = ""
    if isinstance(d, pd.DataFrame) and "found" in d.columns:
        asked = int(d["attacks"].iloc[0])
        found = (
            f" The released table held {int(d['found'].iloc[0]):,} conditions that isolate one released record; "
            f"{asked:,} attacks were asked, and those left without a condition count as failed."
        )
    return f"Risk {value}{within}: {metric_info(result.id).meaning}{found}{beat}"
