"""From tagged posts to a k-anonymous release (Abeywardana & Thayasivam, Sections 3.3 and 4.3): the quasi-
identifier table of the records, the sanitization of each attribute (Table 6), and the text rebuilt with the
sanitized values in place.

Each record (a post, or an author with all their posts) becomes a row: per quasi-identifier label, the tuple of
the distinct values its tagged spans state (lower case, a hashtag's sign dropped), empty when it states none.
Each attribute takes one operation (`SCHEME`, the paper's Table 6 by default):

- generalize: along the attribute's hierarchy (`hierarchies`), its level chosen by the lattice search
  (`lattice.k_anonymize`);
- suppress: every stated value becomes "*";
- union: within each equivalence class, every record that states the attribute shows the union of the values
  the class's records state ("India, Sri Lanka, USA");
- swap: within each equivalence class, the records that state the attribute exchange their values (a seeded
  permutation).

A union or a swap writes one record's values into another's text, so it writes them as the attribute's
vocabulary does (`vocabulary`: "usa" → "United States"); a value outside it (a handle, a name the tagger took
for a place) is generalized instead, to "*" when its hierarchy does not know it, and takes no part in a union.
No value written holds a string tagged DI anywhere (`clear_of`: written "*" instead), and a string the tagger
took for a direct identifier less often than for one quasi-identifier takes that label (`majority_labels`) before
the identifiers are made consistent. A union of more than `MAX_UNION` values is generalized, all its values one level up the hierarchy at a time,
until it is no longer. The public table shows a swapped attribute only as whether the record states it; its
values go to a table of their own, per class and without record order (anatomy, Xiao & Tao 2006), so that the
table's every column is as k-anonymous as its classes.

For union and swap the classes are those of the generalized and suppressed attributes together with whether
each union or swap attribute is stated at all (a post that names no place cannot be made to name one), so
every class shares its union cells, and a swapped value stays in its class. Direct identifiers (DI) become
"****" (the paper's complete anonymization); sensitive values (SA) stay, as the attribute the classes protect
(with ℓ-diversity or t-closeness when asked); a suppressed record's quasi-identifier spans all become "*", and
so do its cells of the public table.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.protect.kanon.gold import Span
from engine.protect.kanon.hierarchies import AGE, GENDER, LANGUAGE, OCCUPATION, PLACE
from engine.protect.kanon.lattice import ANY, Anonymized, Hierarchy, class_codes, k_anonymize
from engine.protect.kanon.vocabulary import released as released_value

QI_LABELS = ("QIAGE", "QIRACE", "QIREGION", "QIGENDER", "QILANG", "QIJOB")
OPERATIONS = ("generalize", "suppress", "union", "swap")
SCHEME = {
    "QIAGE": "generalize",
    "QIRACE": "union",
    "QIREGION": "union",
    "QIGENDER": "generalize",
    "QILANG": "generalize",
    "QIJOB": "swap",
}
"""The paper's Table 6: age, gender and language generalized, race and region as a union, occupation swapped."""
HIERARCHIES: dict[str, Hierarchy] = {
    "QIAGE": AGE,
    "QIREGION": PLACE,
    "QIGENDER": GENDER,
    "QILANG": LANGUAGE,
    "QIRACE": Hierarchy(1, lambda value, level: value),
    "QIJOB": OCCUPATION,
}
"""Race generalizes straight to "*": no maintained hierarchy of how people name their race or nationality."""
MASK = "****"
STATED = "stated"
MAX_UNION = 3
"""The most values a union writes; a longer one is generalized along the hierarchy until it is no longer."""


def _whole_words(words: Sequence[str]) -> re.Pattern[str] | None:
    """Whole-word occurrences of any of ``words`` (longest first); None for no words."""
    ordered = sorted(set(words), key=len, reverse=True)
    return re.compile(r"(?<![\w@#])(?:" + "|".join(map(re.escape, ordered)) + r")(?!\w)") if ordered else None


def majority_labels(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> list[list[Span]]:
    """The tagged spans with a string the tagger took for a direct identifier less often than for one
    quasi-identifier (tagged spans of the same string, case as written) relabelled with that quasi-identifier
    ("London" a DI once, in a club's name, and a place in many posts): still sanitized, as its label says, not
    masked everywhere. A tie keeps DI."""
    votes: Counter[tuple[str, str]] = Counter(
        (t[a:b], lab) for t, s in zip(texts, spans) for a, b, lab in s if lab == "DI" or lab in QI_LABELS
    )
    relabel: dict[str, str] = {}
    for (string, label), n in votes.items():
        if label != "DI":
            continue
        best = max(QI_LABELS, key=lambda q: (votes[(string, q)], q))
        if votes[(string, best)] > n:
            relabel[string] = best
    return [[(a, b, relabel.get(t[a:b], lab) if lab == "DI" else lab) for a, b, lab in s] for t, s in zip(texts, spans)]


def propagate(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> list[list[Span]]:
    """The tagged spans made consistent (values of 3 characters or more): a string's DI tags outvoted by one
    quasi-identifier's take its label (`majority_labels`); then every whole-word occurrence of a direct
    identifier in any text becomes DI (over any other label there: DI comes first), and every further
    occurrence of a quasi-identifier's value in its own text takes its label."""
    spans = majority_labels(texts, spans)
    identifiers = _whole_words([t[a:b] for t, s in zip(texts, spans) for a, b, lab in s if lab == "DI" and b - a >= 3])
    out = []
    for text, given in zip(texts, spans):
        mine = list(given)
        if identifiers is not None:
            for m in identifiers.finditer(text):
                a, b = m.span()
                if any(lab == "DI" and x < b and a < y for x, y, lab in mine):
                    continue
                mine = [(x, y, lab) for x, y, lab in mine if not (x < b and a < y)] + [(a, b, "DI")]
        for x, y, lab in list(mine):
            if lab not in QI_LABELS or y - x < 3:
                continue
            same = _whole_words([text[x:y]])
            for m in same.finditer(text) if same is not None else ():
                if not any(p < m.end() and m.start() < q for p, q, _ in mine):
                    mine.append((m.start(), m.end(), lab))
        out.append(sorted(mine))
    return out


def normalize(value: str) -> str:
    return value.strip().lstrip("#").strip().lower()


Surface = dict[tuple[str, str], str]
"""(label, normalized value) → the value as the text first writes it (a hashtag's sign dropped)."""


def qi_table(
    texts: Sequence[str], spans: Sequence[Sequence[Span]], groups: Sequence[int]
) -> tuple[pd.DataFrame, Surface]:
    """One row per record (``groups`` gives each text's record, 0 … m−1), one column per quasi-identifier label,
    each cell the sorted tuple of the distinct normalized values the record's texts state; and the values'
    surface forms."""
    m = max(groups, default=-1) + 1
    cells: list[dict[str, set[str]]] = [{label: set() for label in QI_LABELS} for _ in range(m)]
    surface: Surface = {}
    for text, found, record in zip(texts, spans, groups):
        for start, end, label in found:
            if label in cells[record]:
                value = normalize(text[start:end])
                cells[record][label].add(value)
                surface.setdefault((label, value), text[start:end].strip().lstrip("#").strip())
    return pd.DataFrame({label: [tuple(sorted(c[label])) for c in cells] for label in QI_LABELS}), surface


def sensitive_values(texts: Sequence[str], spans: Sequence[Sequence[Span]], groups: Sequence[int]) -> np.ndarray:
    """Per record, its sensitive values joined ("none" when it states none), for ℓ-diversity and t-closeness."""
    m = max(groups, default=-1) + 1
    found: list[set[str]] = [set() for _ in range(m)]
    for text, s, record in zip(texts, spans, groups):
        found[record].update(normalize(text[a:b]) for a, b, label in s if label == "SA")
    return np.array(["|".join(sorted(v)) if v else "none" for v in found], dtype=object)


@dataclass(frozen=True)
class Sanitized:
    """A release's quasi-identifier table and how each record's values are to be written back."""

    original: pd.DataFrame  # the records' stated values
    released: pd.DataFrame  # per record, the values its text states as released (tuples)
    anonymized: Anonymized  # the lattice search over the generalized and suppressed attributes
    class_ids: np.ndarray  # per record: its equivalence class, 1 … C in order of its first record (0: suppressed)
    replacement: list[dict[tuple[str, str], str]]  # per record: (label, normalized value) → released text
    table: pd.DataFrame  # the public table (tuples): a swapped attribute only says whether it is stated
    swapped: pd.DataFrame  # per class and swapped attribute, its records' values and how many (anatomy)


def _union(
    values: Sequence[str], label: str, h: Hierarchy, clear: Callable[[str], str] = lambda w: w
) -> tuple[int, tuple[str, ...]]:
    """The level and the values a union of ``values`` writes: each value as its vocabulary writes it (outside
    it, generalized), passed through ``clear``, "*" left out; while more than `MAX_UNION`, every value one level
    up its hierarchy."""
    level, united = 0, {clear(released_value(label, v, h)) for v in values} - {ANY}
    while len(united) > MAX_UNION:
        level += 1
        united = {clear(h.at(v, level)) for v in values} - {ANY}
    return level, tuple(sorted(united))


def clear_of(identifiers: Sequence[str]) -> Callable[[str], str]:
    """What a release writes for a value: "*" when it holds one of ``identifiers`` (the strings tagged DI anywhere,
    3 characters or more) as a whole word, else the value: no written value carries an identifier the release
    masks elsewhere ("Social worker" where "Social" was taken for a name)."""
    blocked = _whole_words([i for i in identifiers if len(i) >= 3])
    if blocked is None:
        return lambda w: w
    seen: dict[str, str] = {}  # a value is written many times: searched once

    def clear(w: str) -> str:
        if w not in seen:
            seen[w] = ANY if blocked.search(w) else w
        return seen[w]

    return clear


def sanitize(
    qi: pd.DataFrame,
    k: int,
    scheme: Mapping[str, str] = SCHEME,
    max_suppressed: float = 0.05,
    sensitive: np.ndarray | None = None,
    ell: int | None = None,
    t: float | None = None,
    rng: np.random.Generator | None = None,
    surface: Surface | None = None,
    identifiers: Sequence[str] = (),
) -> Sanitized:
    """The k-anonymous sanitization of ``qi`` (module docstring); ``surface`` gives the values as written, for
    a generalized attribute released as stated; a value written that holds one of ``identifiers`` is written
    "*" (`clear_of`)."""
    clear = clear_of(identifiers)
    bad = {label: op for label, op in scheme.items() if op not in OPERATIONS}
    if bad:
        raise ValueError(f"unknown operations {bad}; each attribute is one of {', '.join(OPERATIONS)}")
    rng = rng if rng is not None else np.random.default_rng(0)
    surface = surface or {}
    lattice_cols = [c for c in qi.columns if scheme.get(c, "generalize") in ("generalize", "suppress")]
    grouped = [c for c in qi.columns if scheme.get(c, "generalize") in ("union", "swap")]
    table = qi[lattice_cols].copy()
    hierarchies = {}
    for c in lattice_cols:
        h = HIERARCHIES[c]
        # a suppressed attribute has one level only: "*" for every stated value
        hierarchies[c] = Hierarchy(0, h.generalize) if scheme.get(c) == "suppress" else h
    for c in grouped:  # whether the record states it: part of every class
        table[f"{c}:{STATED}"] = [(STATED,) if cell else () for cell in qi[c]]
        hierarchies[f"{c}:{STATED}"] = Hierarchy(0, lambda value, level: value)
    if not len(table.columns):
        table["-"] = [()] * len(qi)
        hierarchies["-"] = Hierarchy(0, lambda value, level: value)
    for c in [c for c in lattice_cols if scheme.get(c) == "suppress"]:
        table[c] = [tuple(sorted({ANY for _ in cell})) for cell in table[c]]
    anonymized = k_anonymize(table, hierarchies, k, max_suppressed, sensitive, ell, t)
    codes = class_codes(anonymized.table)
    members_of: dict[int, list[int]] = {}  # class → its records, in record order (classes by their first record)
    for r, code in enumerate(codes.tolist()):
        if not anonymized.suppressed[r]:
            members_of.setdefault(code, []).append(r)
    class_ids = np.zeros(len(qi), dtype=int)
    for number, members in enumerate(members_of.values(), start=1):
        class_ids[members] = number
    released = pd.DataFrame(index=qi.index)
    public = pd.DataFrame(index=qi.index)
    replacement: list[dict[tuple[str, str], str]] = [{} for _ in range(len(qi))]
    swapped_rows: list[tuple[int, str, str, int]] = []
    gone = np.flatnonzero(anonymized.suppressed).tolist()
    for c in qi.columns:
        op = scheme.get(c, "generalize")
        stated = qi[c].tolist()
        cells: list[tuple[str, ...]] = [() for _ in range(len(qi))]
        shown = cells.copy()  # what the public table says of the attribute
        if op in ("generalize", "suppress"):
            level, h = anonymized.levels[c], hierarchies[c]
            for r, cell in enumerate(stated):
                if op == "suppress":
                    out = {v: ANY for v in cell}
                else:
                    out = {v: clear(surface.get((c, v), v) if level == 0 else h.at(v, level)) for v in cell}
                replacement[r].update({(c, v): w for v, w in out.items()})
                cells[r] = shown[r] = tuple(sorted(set(out.values())))
        for members in members_of.values():
            members = [r for r in members if stated[r]]
            if op not in ("union", "swap") or not members:
                continue
            h = HIERARCHIES[c]
            if op == "union":
                level, union = _union([v for r in members for v in stated[r]], c, h, clear)
                for r in members:
                    for v in stated[r]:
                        mine = clear(released_value(c, v, h) if level == 0 else h.at(v, level))
                        replacement[r][(c, v)] = ANY if mine == ANY else ", ".join(union)
                    cells[r] = shown[r] = union or (ANY,)
                continue
            # swap: a seeded permutation of the class's stating records, each writing another's values
            own = {r: tuple(clear(released_value(c, v, h)) for v in stated[r]) for r in members}
            order = [members[i] for i in rng.permutation(len(members))]
            for r, source in zip(members, order):
                theirs = own[source]
                replacement[r].update({(c, v): theirs[i % len(theirs)] for i, v in enumerate(stated[r])})
                cells[r], shown[r] = tuple(sorted(set(theirs))), (STATED,)
            counts = Counter("; ".join(sorted(set(values))) for values in own.values())
            swapped_rows += [(int(class_ids[members[0]]), c, v, n) for v, n in sorted(counts.items())]
        for r in gone:  # a suppressed record: every value "*"
            replacement[r].update({(c, v): ANY for v in stated[r]})
            cells[r], shown[r] = ((ANY,) if stated[r] else ()), (ANY,)
        released[c], public[c] = cells, shown
    swapped = pd.DataFrame(swapped_rows, columns=["class", "attribute", "values", "records"])
    swapped = swapped.sort_values(["class", "attribute", "values"], kind="stable").reset_index(drop=True)
    return Sanitized(qi.copy(), released, anonymized, class_ids, replacement, public, swapped)


def rebuild(text: str, spans: Sequence[Span], replacement: Mapping[tuple[str, str], str]) -> tuple[str, list[tuple]]:
    """``text`` with every tagged span rewritten: DI masked, quasi-identifiers by ``replacement``, SA kept.
    Returns the text and every tagged span as (start, end, original, new, label): a span kept as written has
    new == original (the internal review shows what the tagger found, changed or not)."""
    out, changes, pos = [], [], 0
    for start, end, label in sorted(spans):
        original = text[start:end]
        if label == "DI":
            new = MASK
        elif label in QI_LABELS:
            new = replacement.get((label, normalize(original)), original)
            if normalize(new) == normalize(original):
                new = original
        else:
            new = original
        if new == original:
            changes.append((start, end, original, original, label))
            continue
        out += [text[pos:start], new]
        changes.append((start, end, original, new, label))
        pos = end
    out.append(text[pos:])
    return "".join(out), changes
