"""How the record describes each released column (`ReleaseRecord.columns`): one sentence per treatment, written
by `engine.export.identifiers.column_treatments` and read by the release ledger (`engine.ledger.treatments`)."""

from __future__ import annotations

PROTECTED = "protected by the method"
AS_IS = "released as is"
GUARDED = "released as is but for the identifiers the release guard replaced"
WITHHELD = "withheld: left out of the bundle by the method, which protects it"
OTHER_TEXT_DROPPED = (
    "dropped: free text besides the text column, which the methods do not protect (the schema's other_text; "
    '[release] other_text = "protect" releases it guarded)'
)
OTHER_TEXT_GUARDED = (
    "free text released after the release guard alone (formats and identifier names replaced; the method "
    "protects the text column only)"
)
TREATMENT_TEXT = {
    "pseudonymize": "pseudonymized (keyed; the key stays with the steward)",
    "drop": "dropped",
    "keep": "identifier released in clear (kept by the schema's [release] choice)",
}
"""An identifier column's treatment (`Schema.identifiers`) as the record says it."""
