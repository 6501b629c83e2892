"""A detector's allow and deny lists, kept from a steward's corrections (issue 51; learnt in
`engine.annotation.corrections`), per dataset (its fingerprint) and detector, and how they correct what the
detector finds.

- the **allow list**: strings the detector found that the steward removed; never replaced again;
- the **deny list**: strings the steward marked with a label that the detector missed; always found, with that
  label.

Strings are exact and case-sensitive and match as whole words (no word character just before or after).
`Corrections.apply` corrects a detector's spans of one text: found spans whose string is allowed are dropped;
every whole-word occurrence of a denied string is added with its label, unless a kept span already covers it,
and the kept spans it overlaps are dropped (the steward's mark wins).

The lists are kept in the cache folder beside the annotations, only when the steward chooses to keep them, never
in a bundle. A method runs with them when its parameter ``corrections`` is "kept" (redaction's own detector, and
the release guard after every method); the release then records their digest and counts, not their strings
(they may be confidential names).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from engine.atomic import atomic_write_bytes
from engine.errors import ConfigError, DataError
from engine.paths import cache_dir
from engine.protect.base import ReleaseDetail
from engine.text.detection_quality import Span

ANNOTATIONS_FOLDER = "annotations"
"""The cache folder's folder of a steward's annotations and the corrections kept from them."""
GUARD_DETECTOR = "guard"
"""The release guard's name among the detectors (a method's own is named as the method)."""
NONE, KEPT = "none", "kept"
CHOICES = (NONE, KEPT)
"""The values of the method parameter ``corrections``: the detectors as they are, or with the kept lists."""

Tiered = tuple[int, int, str, float]
"""A found span: start, end, label, and the knob value from which the method replaces it."""


@dataclass(frozen=True)
class Corrections:
    """The allow list (strings) and the deny list (string → label) of one dataset and detector."""

    fingerprint: str
    detector: str
    allow: tuple[str, ...] = ()
    deny: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "allow", tuple(sorted(set(self.allow))))
        object.__setattr__(self, "deny", tuple(sorted(dict(self.deny).items())))

    def digest(self) -> str:
        """A digest of the lists (what a release records instead of their strings)."""
        payload = [self.fingerprint, self.detector, list(self.allow), [list(d) for d in self.deny]]
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()

    def counts(self) -> dict[str, int]:
        return {"allow": len(self.allow), "deny": len(self.deny)}

    def kept(self) -> KeptCorrections:
        """What a release records of these lists: counts and digest, never a string."""
        return KeptCorrections(self.detector, self.digest(), len(self.allow), len(self.deny))

    def __bool__(self) -> bool:
        return bool(self.allow or self.deny)

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        if not self.deny:
            return None
        longest_first = sorted((s for s, _ in self.deny), key=lambda s: (-len(s), s))
        return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(s) for s in longest_first) + r")(?!\w)")

    def denied_in(self, text: str) -> list[Span]:
        """Every whole-word occurrence of a denied string in ``text``, with its label (the longest at a place)."""
        if self._pattern is None:
            return []
        labels = dict(self.deny)
        return [(m.start(), m.end(), labels[m.group()]) for m in self._pattern.finditer(text)]

    def apply(self, text: str, spans: Sequence[Tiered], tier: Callable[[str], float] = lambda _: 0.0) -> list[Tiered]:
        """``spans`` (start, end, label, knob value from which replaced) of ``text`` corrected (module docstring);
        an added span is replaced from ``tier(label)``."""
        allowed = set(self.allow)
        kept = [t for t in spans if text[t[0] : t[1]] not in allowed]
        added = [
            (s, e, label, tier(label))
            for s, e, label in self.denied_in(text)
            if not any(k[0] <= s and e <= k[1] for k in kept)
        ]
        kept = [k for k in kept if not any(a[0] < k[1] and k[0] < a[1] for a in added)]
        return sorted([*kept, *added])


@dataclass(frozen=True)
class KeptCorrections(ReleaseDetail):
    """The kept corrections a release's detector ran with, as the release records them (the manifest's
    ``corrections``, the report's facts): the detector, the lists' digest and their counts, never a string."""

    detector: str
    digest: str
    allow: int
    deny: int
    section: ClassVar[str] = "facts"
    block: ClassVar[str] = "caption"

    def facts(self) -> tuple[tuple[str, str], ...]:
        who = (
            "Redaction"
            if self.detector == "redact"
            else "Release guard"
            if self.detector == GUARD_DETECTOR
            else self.detector
        )
        said = (
            f"{self.allow:,} string{'s' if self.allow != 1 else ''} never replaced, {self.deny:,} always replaced "
            f"(the steward's kept corrections, digest {self.digest[:12]})"
        )
        return ((f"{who}'s corrections", said),)

    def to_dict(self) -> dict[str, Any]:
        return {"detector": self.detector, "digest": self.digest, "allow": self.allow, "deny": self.deny}

    @classmethod
    def from_dict(cls, entry: dict[str, Any]) -> KeptCorrections:
        return cls(str(entry["detector"]), str(entry["digest"]), int(entry["allow"]), int(entry["deny"]))


def corrections_path(fingerprint: str, detector: str) -> Path:
    """The file of the kept corrections of the dataset with ``fingerprint`` for ``detector``."""
    return cache_dir() / ANNOTATIONS_FOLDER / f"{fingerprint[:32]}-{detector}-corrections.json"


def keep_corrections(corrections: Corrections) -> Path:
    """Keep ``corrections`` (readable by the steward's account only), replacing the kept ones; returns the file."""
    path = corrections_path(corrections.fingerprint, corrections.detector)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "fingerprint": corrections.fingerprint,
        "detector": corrections.detector,
        "allow": list(corrections.allow),
        "deny": [list(d) for d in corrections.deny],
    }
    atomic_write_bytes(path, json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8"), private=True)
    return path


def kept_corrections(fingerprint: str, detector: str) -> Corrections | None:
    """The corrections kept for the dataset with ``fingerprint`` and ``detector``; None when none are kept."""
    path = corrections_path(fingerprint, detector)
    if not path.is_file():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        if body["fingerprint"] != fingerprint or body["detector"] != detector:
            raise KeyError("fingerprint")
        allow = tuple(str(s) for s in body["allow"])
        deny = tuple((str(s), str(label)) for s, label in body["deny"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise DataError(f"the corrections file {path} is damaged; delete it and keep the corrections again") from None
    return Corrections(fingerprint, detector, allow, deny)


def drop_corrections(fingerprint: str, detector: str) -> None:
    corrections_path(fingerprint, detector).unlink(missing_ok=True)


def corrections_in_use(fingerprint: str, detectors: Sequence[str], choice: str) -> dict[str, Corrections]:
    """The kept corrections of each of ``detectors`` that a method with ``corrections = choice`` runs with on the
    dataset with ``fingerprint``: none for "none"; for "kept" those kept (a detector may have none), and a
    ConfigError when none of them has any kept on this machine (a replay away from the steward's cache)."""
    if choice != KEPT:
        return {}
    kept = {d: c for d in detectors if (c := kept_corrections(fingerprint, d)) is not None}
    if not kept:
        raise ConfigError(
            f"corrections = kept, but no corrections of {' or '.join(detectors)} are kept for this dataset on this "
            "machine (they stay in the steward's cache folder and no bundle holds them): keep them on the Protect "
            "page's annotation panel (\"Use these corrections\"), replay on the steward's machine, or set "
            "corrections = none"
        )
    return kept
