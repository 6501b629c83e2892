"""A detector's recall and precision on the steward's annotated records, per label and over all labels, at the
token level and at the span level, each with its Wilson 95% interval (`engine.intervals`).

Tokens are runs of word characters and single other characters, cut wherever a gold or a found span begins or
ends (so a token lies wholly in or out of every span). When the detector's labels matter (``by_label``: the
k-anonymity tagger's attribute decides how it is sanitized, the swap's category decides what is swapped) a gold
token counts as found only under its own label; when they do not (redaction and the release guard hide what they
find whatever they call it) under any label.

- **token recall** of a label: of the gold tokens of that label, the share found; **token precision**: of the
  tokens found under that label, the share inside a gold span (of that label when labels matter).
- **span recall**: of the gold spans, the share found whole (every token found: a span found in part leaves the
  rest in clear, as in `engine.text.detection_share`); **span precision**: of the found spans, the share lying
  wholly inside gold spans.
- **all**: the same over every label together (per token or span, each with its own label).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from engine.annotation.formats import span_tokens
from engine.annotation.spans import RecordAnnotation
from engine.intervals import wilson
from engine.text.detection_quality import Span

ALL = "all"
LEVELS = ("token", "span")


@dataclass(frozen=True)
class Share:
    """``hit`` of ``total``; the share is undefined (nan) without any."""

    hit: int
    total: int

    @property
    def value(self) -> float:
        return self.hit / self.total if self.total else float("nan")

    def interval(self) -> tuple[float, float]:
        """Wilson's 95% interval; (nan, nan) when nothing was counted."""
        return wilson(self.hit, self.total) if self.total else (float("nan"), float("nan"))

    def text(self) -> str:
        """The share and its interval as the page and the report show them: "80% [74–85%]"; "–" when nothing
        was counted."""
        if not self.total:
            return "–"
        lo, hi = self.interval()
        return f"{self.value:.0%} [{lo * 100:.0f}–{hi:.0%}]"


@dataclass(frozen=True)
class LabelScore:
    label: str
    level: str
    recall: Share
    precision: Share


@dataclass(frozen=True)
class DetectionScores:
    """The scores of one detector on ``records`` annotated records, one `LabelScore` per label (`ALL` first) and
    level."""

    records: int
    by_label: bool
    rows: tuple[LabelScore, ...]

    def to_dict(self) -> dict[str, object]:
        """The counts as plain JSON values (no record, span or text): what a manifest keeps."""
        return {
            "records": self.records,
            "by_label": self.by_label,
            "rows": [
                {
                    "label": r.label,
                    "level": r.level,
                    "recall": [r.recall.hit, r.recall.total],
                    "precision": [r.precision.hit, r.precision.total],
                }
                for r in self.rows
            ],
        }

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> DetectionScores:
        """The scores read back from `to_dict`."""
        return cls(
            records=int(entry["records"]),
            by_label=bool(entry["by_label"]),
            rows=tuple(
                LabelScore(
                    str(r["label"]),
                    str(r["level"]),
                    Share(int(r["recall"][0]), int(r["recall"][1])),
                    Share(int(r["precision"][0]), int(r["precision"][1])),
                )
                for r in entry["rows"]
            ),
        )

    def get(self, label: str, level: str = "token") -> LabelScore | None:
        return next((r for r in self.rows if r.label == label and r.level == level), None)

    @property
    def labels(self) -> list[str]:
        return list(dict.fromkeys(r.label for r in self.rows))

    def table(self, level: str = "token") -> pd.DataFrame:
        """One row per label at ``level``: the counts, the shares and their intervals."""
        rows = []
        for r in self.rows:
            if r.level != level:
                continue
            (rlo, rhi), (plo, phi) = r.recall.interval(), r.precision.interval()
            rows.append(
                {
                    "label": r.label,
                    "gold": r.recall.total,
                    "found": r.recall.hit,
                    "recall": r.recall.value,
                    "recall_lo": rlo,
                    "recall_hi": rhi,
                    "detected": r.precision.total,
                    "correct": r.precision.hit,
                    "precision": r.precision.value,
                    "precision_lo": plo,
                    "precision_hi": phi,
                }
            )
        return pd.DataFrame(rows)


def _inside(token: tuple[int, int], spans: Sequence[Span], label: str | None) -> bool:
    return any(s <= token[0] and token[1] <= e and (label is None or lab == label) for s, e, lab in spans)


def _label_at(token: tuple[int, int], spans: Sequence[Span]) -> str | None:
    return next((lab for s, e, lab in spans if s <= token[0] and token[1] <= e), None)


def score(
    gold: Sequence[RecordAnnotation], detected: Sequence[Sequence[Span]], by_label: bool = False
) -> DetectionScores:
    """The ``detected`` spans of each annotated record (one list per record of ``gold``, in its order) scored
    against the steward's (module docstring)."""
    if len(gold) != len(detected):
        raise ValueError(f"one list of detected spans per annotated record: {len(detected)} for {len(gold)}")
    counts: dict[str, Counter[str]] = {k: Counter() for k in ("tg", "tf", "td", "tc", "sg", "sf", "sd", "sc")}

    def add(key: str, label: str, ok: bool = True) -> None:
        for kind in (ALL, label):
            counts[key][kind] += ok

    for record, found in zip(gold, detected):
        tokens = span_tokens(record.text, [*record.spans, *found])
        gold_label = {t: _label_at(t, record.spans) for t in tokens}
        found_label = {t: _label_at(t, found) for t in tokens}

        for t in tokens:
            g, f = gold_label[t], found_label[t]
            hit = g is not None and f is not None and (not by_label or g == f)
            if g is not None:
                add("tg", g)
                add("tf", g, hit)
            if f is not None:
                add("td", f)
                add("tc", f, hit)
        for s, e, label in record.spans:
            inner = [t for t in tokens if s <= t[0] and t[1] <= e]
            add("sg", label)
            add("sf", label, all(_inside(t, found, label if by_label else None) for t in inner))
        for s, e, label in found:
            inner = [t for t in tokens if s <= t[0] and t[1] <= e]
            add("sd", label)
            add("sc", label, all(_inside(t, record.spans, label if by_label else None) for t in inner))
    labels = [ALL, *sorted(set().union(*(set(c) for c in counts.values())) - {ALL})]
    rows = tuple(
        LabelScore(
            label,
            level,
            Share(counts[p + "f"][label], counts[p + "g"][label]),
            Share(counts[p + "c"][label], counts[p + "d"][label]),
        )
        for label in labels
        for level, p in (("token", "t"), ("span", "s"))
    )
    return DetectionScores(len(gold), by_label, rows)
