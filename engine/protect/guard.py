"""The release guard: what no method is trusted to remove alone, removed after every method.

Each method removes what it was designed to find; what it was not designed for would leave in the bundle: the
URLs and phone numbers of a k-anonymized profile, the handles a text generator learned, the author names a field
synthesis releases with the text. The guard runs after every release, before it is measured or written, over
every released text and string field, the free-text columns besides the text that the schema asks to protect
among them (not the identifier columns, which leave pseudonymized or not at all, nor the columns a method
withholds or no bundle holds):

- the validated format recognizers of `engine.text.recognizers` (URLs, e-mail addresses, phone numbers, @handles,
  card numbers, IBANs, US social security numbers, IP addresses), each span kept at the confidence redaction
  keeps it at (`DEFAULT_THRESHOLDS`);
- the names of the data's identifier columns — the author, the document and the direct identifiers —, of any
  other column named as holding people's names or handles (`name_columns`: a schema may make a user_name a
  field) and of the identifiers file beside the data (`engine.data.identifiers_file`), with their variants
  (`name_variants`; a listed company's also by its distinctive first word, a listed person's by honorific and
  surname: `variants_under`), matched as whole words anywhere (a name of three characters or more; a short
  all-capital one, a ticker, in capitals only).

What it finds is replaced by a typed placeholder (``[URL]``, ``[NAME]``), counted per type in the release's
`GuardCounts` (the manifest and the report say how many of each it replaced). The steward may leave types alone
(the common method parameter ``guard_off``, `GUARD_OFF`); the release then says so in a warning. With the common
parameter ``corrections`` "kept" the guard runs with the allow and deny lists the steward kept for it
(`engine.protect.corrections`): an allowed string is left, a denied one replaced with its type.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import pandas as pd
from pandas.api.types import is_numeric_dtype as is_numeric

from engine.data.dataset import Dataset
from engine.data.identifiers_file import identifiers_path, names_in, read_identifiers
from engine.data.infer import person_name_column
from engine.protect.base import Fitted, Protector, Release, ReleaseDetail
from engine.protect.corrections import GUARD_DETECTOR, Corrections, corrections_in_use
from engine.protect.params import CORRECTIONS, GUARD_OFF, GUARD_TYPES
from engine.text.names import name_variants, variants_under
from engine.text.recognizers import DEFAULT_THRESHOLDS, RECOGNIZERS

NAME = "NAME"
FORMATS = tuple(t for t in GUARD_TYPES if t != NAME)
"""The guard's types that the format recognizers find."""
MIN_NAME_CHARS = 3
"""Shortest name the guard looks for (shorter ones are initials or words)."""
TYPE_WORDS = {
    "URL": ("URL", "URLs"),
    "EMAIL": ("e-mail address", "e-mail addresses"),
    "PHONE": ("phone number", "phone numbers"),
    "HANDLE": ("@handle", "@handles"),
    "CREDIT_CARD": ("card number", "card numbers"),
    "IBAN": ("IBAN", "IBANs"),
    "US_SSN": ("social security number", "social security numbers"),
    "IP_ADDRESS": ("IP address", "IP addresses"),
    NAME: ("name of an identifier column", "names of identifier columns"),
}

_WORD = re.compile(r"\w+")


def counted(kind: str, n: int) -> str:
    """``n`` of a guard type in words: "1 URL", "281 phone numbers"."""
    one, many = TYPE_WORDS.get(kind, (kind, kind))
    return f"{n:,} {one if n == 1 else many}"


@dataclass(frozen=True)
class GuardCounts(ReleaseDetail):
    """What the guard replaced in one release: per type, how many spans (``replaced``), in which columns
    (``columns``), and the types the steward left alone (``off``)."""

    replaced: Mapping[str, int]
    columns: tuple[str, ...]
    off: tuple[str, ...] = ()
    section: ClassVar[str] = "guard"
    block: ClassVar[str] = "caption"

    def changed_columns(self) -> tuple[str, ...]:
        return self.columns

    def facts(self) -> tuple[tuple[str, str], ...]:
        found = [counted(k, n) for k, n in self.replaced.items() if n]
        said = f"replaced {', '.join(found)} the method left" if found else "found nothing the method left"
        if self.off:
            said += f"; left alone: {', '.join(self.off)}"
        return (("Release guard", said),)


class NameIndex:
    """Names as sequences of lowercased words (a short all-capital name, a ticker, as written), for finding them
    as whole words in a text in one pass over its words."""

    def __init__(self, names: Iterable[str]) -> None:
        self.folded: set[tuple[str, ...]] = set()
        self.exact: set[tuple[str, ...]] = set()
        self.longest = 0
        for name in names:
            words = tuple(_WORD.findall(name))
            if not words or len(name.strip()) < MIN_NAME_CHARS:
                continue
            if len(name) <= 5 and name.isupper():
                self.exact.add(words)
            else:
                self.folded.add(tuple(w.lower() for w in words))
            self.longest = max(self.longest, len(words))
        # What a name can start with, and how many words names have: most of a text's words start none, and
        # are passed over without building a tuple for every length up to the longest name.
        self._first_exact = {words[0] for words in self.exact}
        self._first_folded = {words[0] for words in self.folded}
        self._first_lowered = self._first_folded | {w.lower() for w in self._first_exact}
        self._lengths = sorted({len(w) for w in self.exact} | {len(w) for w in self.folded}, reverse=True)

    def __len__(self) -> int:
        return len(self.folded) + len(self.exact)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The (start, end) of every name in ``text``, the longest at each place, none overlapping."""
        if not self.longest:
            return []
        # Most texts hold no word a name starts with. In an ASCII text, lower-casing changes no character's
        # length and no word's bounds, so one set of its lower-cased words tells (a C-level test, no loop).
        if text.isascii() and self._first_lowered.isdisjoint(_WORD.findall(text.lower())):
            return []
        found_words = list(_WORD.finditer(text))
        raw = [m.group() for m in found_words]
        low = [w.lower() for w in raw]
        out, i, total = [], 0, len(raw)
        while i < total:
            found = 0
            if raw[i] in self._first_exact or low[i] in self._first_folded:
                for n in self._lengths:
                    if n <= total - i and (tuple(raw[i : i + n]) in self.exact or tuple(low[i : i + n]) in self.folded):
                        found = n
                        break
            if found:
                out.append((found_words[i].start(), found_words[i + found - 1].end()))
                i += found
            else:
                i += 1
        return out


def name_columns(dataset: Dataset) -> tuple[str, ...]:
    """The columns whose names the guard looks for: the identifier columns (the author, the document, the direct
    identifiers) and every other column of strings named as holding people's names or handles
    (`engine.data.infer.person_name_column`: user_name, full_name, screen_name, handle, a "name" of many values),
    whatever role the schema gives it: a field or free text that holds names is no reason to leave them in the
    text, and as a field they leave as [NAME]. The text column itself is never one: it is what the release
    protects, whatever it is called (the listings' "name" is a listing's title, not a person's)."""
    frame = dataset.frame
    named = [
        str(c)
        for c in frame.columns
        if c not in dataset.schema.identifiers
        and c != dataset.schema.text
        and not is_numeric(frame[c])
        and person_name_column(c, frame[c])
    ]
    return (*(c for c in dataset.schema.identifiers if c in frame.columns), *named)


def data_names(dataset: Dataset, identifiers: str | None = None) -> list[str]:
    """Every name the `name_columns` hold and the identifiers file beside the data lists (its keys too, such as
    tickers), with their variants."""
    raw: list[str] = []
    for column in name_columns(dataset):
        for value in dataset.frame[column].dropna().astype(str).unique():
            raw += names_in(value)
    variants = [v for name in raw for v in name_variants(name)]
    path = identifiers_path(dataset, identifiers)
    if path is not None:
        for key, by_label in read_identifiers(path).items():
            variants += name_variants(key)
            variants += [
                v for label, values in by_label.items() for name in values for v in variants_under(label, name)
            ]
    return list(dict.fromkeys(variants))


def guarded(fitted: Fitted, protector: Protector, dataset: Dataset) -> Fitted:
    """``fitted`` with the release guard of ``dataset`` and ``protector``'s ``guard_off``: itself when it has
    one already, else a copy that has (the fit itself is not changed: a cached one may serve other settings)."""
    if fitted.guard is not None:
        return fitted
    params = protector.params()
    detectors = (*((protector.name,) if protector.detects else ()), GUARD_DETECTOR)
    kept = corrections_in_use(dataset.fingerprint, detectors, params[CORRECTIONS.name])
    out = copy.copy(fitted)
    identifiers = getattr(protector, "identifiers", None)
    out.guard = Guard.prepare(dataset, params[GUARD_OFF.name], identifiers, kept.get(GUARD_DETECTOR))
    return out


SEEN_TEXTS = 200_000
"""Texts whose guarded form a guard remembers (a sweep's releases share most of their texts)."""
_NOTHING: Counter[str] = Counter()
"""The counts of a text the guard leaves as it is, shared by all of them (read, never changed). Each text
remembered held a Counter, the Counter's attribute dict and the alias ``Counter[str]()`` leaves on it: 157,000 of
each after the first release of 200,000 posts."""


@dataclass
class Guard:
    """The guard of one dataset: the names to look for, the columns to look in, the types left alone; `apply`
    guards one release. Texts already seen are looked up (a field synthesis releases the same texts every time).
    """

    names: NameIndex
    off: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    corrections: Corrections | None = None
    """The allow and deny lists the steward kept for the guard, if it runs with them."""
    """The columns never guarded: the identifier columns (they leave by their own treatment) and the free-text
    columns besides the text that no bundle holds (`Schema.other_text`)."""
    _seen: dict[str, tuple[str, Counter[str]]] = field(default_factory=dict, repr=False)

    @classmethod
    def prepare(
        cls,
        dataset: Dataset,
        off: Sequence[str] = (),
        identifiers: str | None = None,
        corrections: Corrections | None = None,
    ) -> Guard:
        """The guard of ``dataset``: its names (`data_names`), the types ``off`` left alone, the kept
        ``corrections`` it runs with."""
        index = NameIndex(data_names(dataset, identifiers) if NAME not in off else [])
        schema = dataset.schema
        return cls(index, tuple(off), (*schema.identifiers, *schema.dropped_other_text), corrections)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """The (start, end, type) of what the guard replaces in ``text``: the longest at each place, none
        overlapping, corrected by the kept lists (an allowed string left, a denied one of a type not left alone
        added)."""
        spans: list[tuple[int, int, str]] = []
        for kind in FORMATS:
            if kind in self.off:
                continue
            threshold = DEFAULT_THRESHOLDS.get(kind, 0.5)
            spans += [(s, e, kind) for s, e, c in RECOGNIZERS[kind](text) if c >= threshold]
        spans += [(s, e, NAME) for s, e in self.names.spans(text)]
        chosen: list[tuple[int, int, str]] = []
        for s, e, kind in sorted(spans, key=lambda t: (t[0], -(t[1] - t[0]))):
            if not chosen or s >= chosen[-1][1]:
                chosen.append((s, e, kind))
        if self.corrections:
            tiered = self.corrections.apply(text, [(s, e, k, 0.0) for s, e, k in chosen])
            chosen = [(s, e, k) for s, e, k, _ in tiered if k not in self.off]
        return chosen

    def guard_text(self, text: str) -> tuple[str, Counter[str]]:
        """``text`` with what the guard finds replaced by typed placeholders, and the count of each type."""
        kept = self._seen.get(text)
        if kept is not None:
            return kept
        chosen = self.spans(text)
        result = (text, _NOTHING)
        if chosen:
            out, at = [], 0
            counts: Counter[str] = Counter()  # not Counter[str](): that keeps its alias on every instance
            for s, e, kind in chosen:
                out += [text[at:s], f"[{kind}]"]
                at = e
                counts[kind] += 1
            result = ("".join(out) + text[at:], counts)
        if len(self._seen) < SEEN_TEXTS:
            self._seen[text] = result
        return result

    def apply(self, release: Release) -> Release:
        """``release`` with every released text and string field guarded, and its `GuardCounts`."""
        data = release.data.copy(deep=False)
        totals: Counter[str] = Counter()
        changed = []
        for column in data.columns:
            if column in self.skip or column in release.withheld:
                continue
            values = data[column]
            if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)):
                continue
            guarded, any_change = [], False
            for value in values.tolist():
                if isinstance(value, str) and value:
                    new, counts = self.guard_text(value)
                    totals.update(counts)
                    any_change |= new != value
                    guarded.append(new)
                else:
                    guarded.append(value)
            if any_change:
                data[column] = pd.Series(guarded, index=values.index, dtype=values.dtype)
                changed.append(str(column))
        replaced = {kind: totals[kind] for kind in GUARD_TYPES if kind not in self.off}
        detail = GuardCounts(replaced, tuple(changed), self.off)
        warnings = release.warnings
        if self.off:
            left = ", ".join(TYPE_WORDS.get(k, (k, k))[1] for k in self.off)
            warnings = (
                *warnings,
                f"the release guard was switched off for {left}: those the method left are released as they are",
            )
        kept = (self.corrections.kept(),) if self.corrections is not None else ()
        return replace(release, data=data, details=(*release.details, detail, *kept), warnings=warnings)
