"""Intruder's texts that are verbatim copies of released texts: a cheap check before any measure runs.

When the intruder's external texts are the very texts of released records (the same review posted on several
products, a tweet that is also in the file), she does not need writing style: she matches those records
exactly, and the identification measures stay high until the text itself is changed. This counts them with a
hash set, after normalizing whitespace (runs of spaces, tabs and line breaks become one space; ends trimmed).
Empty texts are never counted as copies.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.data.dataset import Dataset
from engine.data.derived import derived

VERBATIM_WARNING_SHARE = 0.10  # warn when more than this share of the intruder's texts are copies


def normalized(text: object) -> str:
    """``text`` with runs of whitespace made one space and the ends trimmed."""
    return " ".join(str(text).split())


def count_verbatim(external_texts: Iterable[object], released_texts: Iterable[object]) -> tuple[int, int]:
    """How many of ``external_texts`` appear verbatim (after `normalized`) among ``released_texts``, and how
    many external texts there are."""
    released = {t for t in map(normalized, released_texts) if t}
    copies = total = 0
    for t in map(normalized, external_texts):
        total += 1
        copies += t in released
    return copies, total


def verbatim_intruder_texts(dataset: Dataset) -> tuple[int, int]:
    """How many of the intruder's external texts appear verbatim (after whitespace normalization) among the
    dataset's (confidential, to-be-released) texts, and how many external texts there are; (0, 0) when the
    dataset has no external texts."""
    ext = dataset.external
    text = dataset.schema.text
    if ext is None or len(ext) == 0 or text not in ext.columns:
        return 0, 0
    return derived(
        dataset, "verbatim intruder texts", lambda: count_verbatim(ext[text].tolist(), dataset.texts.tolist())
    )


def verbatim_warning(dataset: Dataset, share: float = VERBATIM_WARNING_SHARE) -> str | None:
    """The warning, in the steward's words, when more than ``share`` of the intruder's texts are verbatim
    copies of records in the data; None otherwise."""
    copies, total = verbatim_intruder_texts(dataset)
    if total == 0 or copies <= share * total:
        return None
    return (
        f"{copies:,} of the intruder's {total:,} external texts ({copies / total:.0%}) are word-for-word copies "
        "of texts in this data. The intruder can match those records exactly, without needing anyone's writing "
        "style, so synthesizing the other fields barely protects them: the identification risk stays high "
        "unless the text protection changes these texts."
    )
