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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from engine.errors import ConfigError, DataError
from engine.protect.base import ReleaseDetail
from engine.protect.steward_files import FOLDER, read_steward_file, steward_path, write_steward_file
from engine.text.detection_quality import Span

ANNOTATIONS_FOLDER = FOLDER
"""The cache folder's folder of a steward's annotations and the corrections kept from them."""
KIND = "corrections"
"""The kind of a kept corrections file (`engine.protect.steward_files`): its name ends in ``-corrections.json``."""
REPLAY_OPTION = "--annotations"
"""The option of `textsdc release` and `textsdc verify` that gives a replay the kept corrections files."""
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

    def apply(
        self,
        text: str,
        spans: Sequence[Tiered],
        tier: Callable[[str], float] = lambda _: 0.0,
        by_label: bool = False,
    ) -> list[Tiered]:
        """``spans`` (start, end, label, knob value from which replaced) of ``text`` corrected (module docstring);
        an added span is replaced from ``tier(label)``. ``by_label``: the labels matter (the swap's categories,
        the tagger's attributes), so a found span covering a denied string under another label gives way to it."""
        allowed = set(self.allow)
        kept = [t for t in spans if text[t[0] : t[1]] not in allowed]
        added = [
            (s, e, label, tier(label))
            for s, e, label in self.denied_in(text)
            if not any(k[0] <= s and e <= k[1] and (not by_label or k[2] == label) for k in kept)
        ]
        kept = [k for k in kept if not any(a[0] < k[1] and k[0] < a[1] for a in added)]
        return sorted([*kept, *added])


def corrected(
    texts: Sequence[str], spans: Sequence[Sequence[Span]], corrections: Corrections | None
) -> list[list[Span]]:
    """Each text's ``spans`` (start, end, label) corrected by ``corrections`` (`Corrections.apply`; none: as they
    are): what the swap's entity recognizer and the k-anonymity tagger find, with the steward's lists; their labels
    matter, so a denied string found under another label takes the steward's."""
    if not corrections:
        return [list(s) for s in spans]
    return [
        [
            (s, e, label)
            for s, e, label, _ in corrections.apply(text, [(a, b, lab, 0.0) for a, b, lab in found], by_label=True)
        ]
        for text, found in zip(texts, spans)
    ]


def method_corrections(fingerprint: str, method: str, choice: str) -> Corrections | None:
    """The lists kept for ``method``'s own detector that it runs with (``corrections = choice``), None when it
    runs without; ConfigError, naming the files looked for, when "kept" finds none of the method's nor the
    guard's (`corrections_in_use`)."""
    return corrections_in_use(fingerprint, (method, GUARD_DETECTOR), choice).get(method)


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
    return steward_path(fingerprint, detector, KIND)


def keep_corrections(corrections: Corrections) -> Path:
    """Keep ``corrections`` (readable by the steward's account only), replacing the kept ones; returns the file."""
    body = {"allow": list(corrections.allow), "deny": [list(d) for d in corrections.deny]}
    path = corrections_path(corrections.fingerprint, corrections.detector)
    return write_steward_file(path, corrections.fingerprint, corrections.detector, body)


def _parsed(body: dict[str, Any]) -> Corrections:
    allow = tuple(str(s) for s in body["allow"])
    deny = tuple((str(s), str(label)) for s, label in body["deny"])
    return Corrections(body["fingerprint"], body["detector"], allow, deny)


def read_corrections(path: Path, fingerprint: str | None = None, detector: str | None = None) -> Corrections | None:
    """The corrections in the file at ``path`` (of ``fingerprint`` and ``detector`` when given); None when there
    is no such file; DataError when it is not a corrections file."""
    return read_steward_file(
        path, fingerprint, detector, _parsed, "corrections", "delete it and keep the corrections again"
    )


def kept_corrections(fingerprint: str, detector: str) -> Corrections | None:
    """The corrections kept for the dataset with ``fingerprint`` and ``detector``; None when none are kept."""
    return read_corrections(corrections_path(fingerprint, detector), fingerprint, detector)


def import_corrections(paths: Iterable[str | Path], fingerprint: str) -> list[Corrections]:
    """Keep the corrections of the dataset with ``fingerprint`` that the files at ``paths`` hold (a kept
    corrections file, or a folder holding them such as a copy of the steward's cache folder's `FOLDER`), for a
    replay away from the steward's machine (`REPLAY_OPTION`); returns those kept. ConfigError naming the path when
    one does not exist, is not a corrections file, or none of them holds this dataset's."""
    found: list[Corrections] = []
    given = [Path(p) for p in paths]
    for path in given:
        if path.is_dir():
            files = sorted(path.glob(f"*-{KIND}.json"))
        elif path.is_file():
            files = [path]
        else:
            raise ConfigError(f"{REPLAY_OPTION} {path}: no such file or folder")
        for file in files:
            try:
                lists = read_corrections(file)
            except DataError:
                raise ConfigError(
                    f"{REPLAY_OPTION} {file}: not a kept corrections file; accepted: the ...-{KIND}.json files of "
                    f"the steward's cache folder ({FOLDER}/), or a folder holding them"
                ) from None
            if lists is not None and lists.fingerprint == fingerprint:
                found.append(lists)
    if not found:
        raise ConfigError(
            f"{REPLAY_OPTION} {', '.join(map(str, given))}: no corrections of this dataset (fingerprint "
            f"{fingerprint[:12]}…); the files are of other data"
        )
    for lists in found:
        keep_corrections(lists)
    return found


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
        looked = ", ".join(str(corrections_path(fingerprint, d)) for d in detectors)
        raise ConfigError(
            f"corrections = kept, but no corrections of {' or '.join(detectors)} are kept for this dataset on this "
            f"machine: looked for {looked}, none found (they stay in the steward's cache folder and no bundle "
            f"holds them). Copy the steward's file(s) and give them with {REPLAY_OPTION} FILE (a file, or the "
            f'folder holding them), keep them on the Protect page\'s annotation panel ("Use these corrections"), '
            "replay on the steward's machine, or set corrections = none"
        )
    return kept
