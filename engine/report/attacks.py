"""The report section of the attacks: the worst applicable attack (the one furthest beyond its own baseline, every
attack on one scale: `engine.measures.attacks`), and every attack measured on the release with its interval, its
chance level, what it is read against, how far beyond its baseline it goes and, in plain words, what the intruder
holds, what she names and what she assumes; the attacks not measured with the reason."""

from __future__ import annotations

from engine.measures.attacks import attack_ids, beyond, worst_attack
from engine.measures.base import BASELINES, HOLDINGS, METRICS, NAMES
from engine.report.context import ReleaseReport, escaped
from engine.report.sections import ReportSection


class AttacksSection(ReportSection):
    id = "attacks"
    title = "Attacks and what they assume"

    @classmethod
    def applies(cls, report: ReleaseReport) -> bool:
        return bool(attack_ids(report.metrics))

    @classmethod
    def html(cls, report: ReleaseReport, internal: bool) -> list[str]:
        worst = worst_attack(report.metrics)
        rows = []
        for mid in attack_ids(report.metrics):
            m, info = report.metrics[mid], METRICS[mid]
            attack = info.attack
            assert attack is not None
            lo, hi = m.lo, m.hi
            interval = (
                f"{info.format(lo)} – {info.format(hi)}" if lo is not None and hi is not None and hi > lo else "—"
            )
            chance = "—" if m.chance is None else info.format(m.chance)
            if m.value is None or (attack.baseline == "chance" and m.chance is None):
                scaled = "—"
            else:
                scaled = info.format(m.value if attack.baseline == "control" else beyond(m.value, m.chance or 0.0))
            held = "; ".join(HOLDINGS[h] for h in attack.holds)
            rows.append(
                f"<tr><td>{escaped(info.label)}</td><td class='num'>{escaped(info.format(m.value))}</td>"
                f"<td class='num'>{escaped(interval)}</td><td class='num'>{escaped(chance)}</td>"
                f"<td>{escaped(BASELINES[attack.baseline])}</td><td class='num'>{escaped(scaled)}</td>"
                f"<td>{escaped(held)}</td><td>{escaped(NAMES[attack.names])}</td>"
                f"<td>{escaped(attack.assumptions)}</td></tr>"
            )
        skipped = [
            f"<li>{escaped(METRICS[mid].label)}: not measured ({escaped(why)})</li>"
            for mid, why in report.skipped.items()
            if mid in METRICS and METRICS[mid].attack is not None
        ]
        head = (
            "<p>No attack was measured with a chance level on this release.</p>"
            if worst is None
            else f"<p><strong>{escaped(worst.card())}</strong>. Of the attacks measured, this one goes furthest "
            f"beyond its own baseline. {escaped(worst.scale_sentence())}. {escaped(worst.sentence())}</p>"
        )
        scale = (
            "<p>Every attack is put on one scale, the one the Anonymeter framework (Giomi, Boenisch, Wehmeyer &amp; "
            "Tasnádi 2023) reads its risks on: (value − "
            "baseline) / (1 − baseline), the share of the room above the baseline the attack takes up. An attack "
            "that names authors, documents or records is read against its chance level (guessing at random); "
            "singling out, linkability and inference are corrected by their control records already and are taken "
            "as they are (their chance level is shown, not subtracted again).</p>"
        )
        return [
            f"<h2>{escaped(cls.title)}</h2>",
            head,
            scale,
            "<table class='measures'><tr><th>Attack</th><th>Value</th><th>95% interval</th><th>Chance</th>"
            "<th>Read against</th><th>Beyond its baseline</th>"
            f"<th>The intruder holds</th><th>She names</th><th>Assumptions</th></tr>{''.join(rows)}</table>",
            f"<ul>{''.join(skipped)}</ul>" if skipped else "",
        ]
