"""Disclosure risk of synthesized counts and amounts as measures (Guo & Hu, Section 4): attribute risk AR at the
paper's four radius pairs and identification EMR, TMR, FMR and unique matches, computed by
`engine.measures.risk.matching` from the shared `NumericMeasures`."""

from __future__ import annotations

from typing import Any

from engine.measures.base import MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.measures.bayes_counts import NumericMeasure
from engine.measures.risk.matching import (
    RADIUS_PAIRS,
    UNCERTAINTY_LEVELS,
    attribute_risk,
    attribute_risk_id,
    identification_risk,
    intruder_uncertainty,
)
from engine.measures.shared import preset_of


def knowing_preset(context: PrepareContext) -> None:
    """`NotApplicable` when the preset's intruder knows no field: these measures match on field values."""
    preset = preset_of(context)
    if preset.knows == "nothing":
        raise NotApplicable(f"the intruder chosen ('{preset.label}') knows no field values to match records on")


# ---------------------------------------------------------------------------------------------------------------
# Attribute disclosure (Section 4.1)


class AttributeRisk(NumericMeasure):
    """`attribute_risk` at one pair of radii (count ±``r_count``, amount ±``r_price``·100%)."""

    kind = "risk"
    better = "lower"
    source = "Guo & Hu, Section 4.1, Table 3 (after Mitra et al. 2020)"
    high = float("inf")
    intruder_use = (
        "not measured for an intruder who knows no field values; otherwise she looks up the key fields and "
        "guesses the count and amount within the measure's own radii (the measure's definition, whatever the "
        "preset's tolerance)."
    )
    r_count: float
    r_price: float

    def prepare(self, context: PrepareContext) -> None:
        knowing_preset(context)
        super().prepare(context)

    def compute(self, view: ReleaseView) -> MetricResult:
        n = self.numeric
        counts, amounts = n.split()
        return attribute_risk(n.dataset.frame, view.data, n.keys, counts, amounts, self.r_count, self.r_price)


def attribute_risk_measure(r_count: float, r_price: float) -> type[AttributeRisk]:
    """The `AttributeRisk` class of one radius pair."""
    rc, rp = int(r_count), int(round(100 * r_price))
    return type(
        f"AttributeRiskR{rc}P{rp}",
        (AttributeRisk,),
        {
            "__module__": __name__,  # pickled by reference: each class is also a module attribute of that name
            "__doc__": f"Attribute risk AR with counts within ±{rc} and amounts within ±{rp}% (Guo & Hu, Table 3).",
            "id": attribute_risk_id(r_count, r_price),
            "label": f"Attribute risk AR (count ±{rc}, amount ±{rp}%)",
            "card_label": f"Attribute risk AR (±{rc}, ±{rp}%)",
            "meaning": f"Summed over records, the share of released records with the record's key values whose "
            f"count is within ±{rc} and amount within ±{rp}% of its confidential values: how often an "
            "intruder who knows the key values would guess the sensitive ones closely (Guo & Hu, "
            "Section 4.1, Table 3).",
            "r_count": float(r_count),
            "r_price": float(r_price),
        },
    )


AttributeRiskR5P5, AttributeRiskR5P10, AttributeRiskR10P5, AttributeRiskR10P10 = (
    attribute_risk_measure(rc, rp) for rc, rp in RADIUS_PAIRS
)


# ---------------------------------------------------------------------------------------------------------------
# Identification disclosure (Sections 4.2–4.3)


class _IdentificationMeasure(NumericMeasure):
    """One result of `identification_risk`, which yields EMR, TMR, FMR and unique matches in one matching pass."""

    kind = "risk"
    source = "Reiter & Mitra (2009); Guo & Hu, Section 4.2, Table 4"
    intruder_use = (
        "not measured for an intruder who knows no field values; she matches on the key fields, and on the "
        "synthesized count and amount only when she knows the protected fields, within the preset's tolerance "
        "(the papers' intruder, the default: a count ±5, an amount ±5% on the log scale)."
    )

    def prepare(self, context: PrepareContext) -> None:
        knowing_preset(context)
        super().prepare(context)

    def rules(self) -> dict[str, Any]:
        """The synthesized fields she matches on and how closely (`identification_risk`'s arguments)."""
        counts, amounts = self.numeric.split()
        preset = self.numeric.intruder
        if preset.knows != "fields":
            return {"count_fields": [], "continuous_fields": []}
        return {
            "count_fields": counts,
            "continuous_fields": amounts,
            "count_rule": preset.closeness("count"),
            "amount_rule": preset.closeness("continuous"),
        }

    def identification(self, view: ReleaseView) -> dict[str, MetricResult]:
        n = self.numeric
        return view.memo(
            ("identification_risk", self.numeric.intruder.name),
            lambda: identification_risk(n.dataset.frame, view.data, n.keys, **self.rules()),
        )

    def compute(self, view: ReleaseView) -> MetricResult:
        return self.identification(view)[self.id]


class Emr(_IdentificationMeasure):
    """EMR; its detail is the intruder-uncertainty curve (Section 4.3, Eq. 11) when a key count is known with
    noise, else the per-record matches."""

    id = "emr"
    better = "lower"
    label = "Expected match risk (EMR)"
    card_label = "Expected matches EMR"
    meaning = (
        "Expected number of records an intruder who knows a target's key values, count and amount correctly "
        "identifies among the released records that match them (count ±5, log amount ±5%); a record that "
        "matches c released records counts 1/c when it is among them (Reiter & Mitra 2009; Guo & Hu, Table 4)."
    )
    high = float("inf")

    def compute(self, view: ReleaseView) -> MetricResult:
        emr = self.identification(view)["emr"]
        n = self.numeric
        if n.noisy is None:
            return emr
        curve = intruder_uncertainty(
            n.dataset.frame, view.data, n.keys, n.noisy, UNCERTAINTY_LEVELS, n.seed, **self.rules()
        )
        return MetricResult("emr", emr.value, detail=curve)


class Tmr(_IdentificationMeasure):
    """True match rate (Reiter & Mitra 2009; Guo & Hu, Section 4.2, Table 4)."""

    id = "tmr"
    better = "lower"
    label = "True match rate (TMR)"
    meaning = (
        "Share of records whose match among the released records is unique and is the record itself "
        "(Reiter & Mitra 2009; Guo & Hu, Table 4)."
    )


class Fmr(_IdentificationMeasure):
    """False match rate; higher is safer (Reiter & Mitra 2009; Guo & Hu, Section 4.2, Table 4)."""

    id = "fmr"
    better = "higher"
    label = "False match rate (FMR)"
    card_label = "False matches FMR"
    meaning = (
        "Share of unique matches that point at the wrong record: the intruder is misled. Higher is safer "
        "(Reiter & Mitra 2009; Guo & Hu, Table 4); 0 on the unprotected data."
    )


class UniqueMatches(_IdentificationMeasure):
    """Records with exactly one released match (Guo & Hu, Section 4.2, Table 4)."""

    id = "unique_matches"
    better = "lower"
    label = "Unique matches"
    meaning = (
        "Number of records that match exactly one released record (true or false) on the key values, count "
        "±5 and log amount ±5% (Guo & Hu, Table 4)."
    )
    high = float("inf")
