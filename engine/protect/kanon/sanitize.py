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

For union and swap the classes are those of the generalized and suppressed attributes together with whether
each union or swap attribute is stated at all (a post that names no place cannot be made to name one), so
every class shares its union cells, and a swapped value stays in its class. Direct identifiers (DI) become
"****" (the paper's complete anonymization); sensitive values (SA) stay, as the attribute the classes protect
(with ℓ-diversity or t-closeness when asked); a suppressed record's quasi-identifier spans all become "*".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.protect.kanon.gold import Span
from engine.protect.kanon.hierarchies import AGE, GENDER, LANGUAGE, OCCUPATION, PLACE
from engine.protect.kanon.lattice import ANY, Anonymized, Hierarchy, class_codes, k_anonymize

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


def _whole_words(words: Sequence[str]) -> re.Pattern[str] | None:
    """Whole-word occurrences of any of ``words`` (longest first); None for no words."""
    ordered = sorted(set(words), key=len, reverse=True)
    return re.compile(r"(?<![\w@#])(?:" + "|".join(map(re.escape, ordered)) + r")(?!\w)") if ordered else None


def propagate(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> list[list[Span]]:
    """The tagged spans made consistent (values of 3 characters or more): every whole-word occurrence of a
    direct identifier in any text becomes DI (over any other label there: DI comes first), and every further
    occurrence of a quasi-identifier's value in its own text takes its label."""
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
    released: pd.DataFrame  # the values as released (tuples)
    anonymized: Anonymized  # the lattice search over the generalized and suppressed attributes
    class_ids: np.ndarray  # per record: its equivalence class (−1 when suppressed)
    replacement: list[dict[tuple[str, str], str]]  # per record: (label, normalized value) → released text


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
) -> Sanitized:
    """The k-anonymous sanitization of ``qi`` (module docstring); ``surface`` gives the values as written, for
    the released unions and swaps."""
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
    class_ids = np.where(anonymized.suppressed, -1, class_codes(anonymized.table))
    released = pd.DataFrame(index=qi.index)
    replacement: list[dict[tuple[str, str], str]] = [{} for _ in range(len(qi))]
    members_of: dict[int, list[int]] = {}  # class → its records, in record order
    for r, cid in enumerate(class_ids.tolist()):
        if cid >= 0:
            members_of.setdefault(cid, []).append(r)
    for c in qi.columns:
        op = scheme.get(c, "generalize")
        if op in ("generalize", "suppress"):
            level = anonymized.levels[c]
            h = hierarchies[c]
            cells = []
            for r, cell in enumerate(qi[c]):
                if anonymized.suppressed[r]:
                    out = {v: ANY for v in cell}
                elif op == "suppress":
                    out = {v: ANY for v in cell}
                else:
                    out = {v: surface.get((c, v), v) if level == 0 else h.at(v, level) for v in cell}
                replacement[r].update({(c, v): w for v, w in out.items()})
                cells.append(tuple(sorted(set(out.values()))))
            released[c] = cells
            continue
        cells = [() for _ in range(len(qi))]
        stated = qi[c].tolist()
        for r in np.flatnonzero(anonymized.suppressed).tolist():
            replacement[r].update({(c, v): ANY for v in stated[r]})
            cells[r] = (ANY,) if stated[r] else ()
        for cid in sorted(members_of):
            members = [r for r in members_of[cid] if stated[r]]
            if not members:
                continue
            if op == "union":
                union = tuple(sorted({surface.get((c, v), v) for r in members for v in stated[r]}))
                for r in members:
                    replacement[r].update({(c, v): ", ".join(union) for v in stated[r]})
                    cells[r] = union
            else:  # swap: a seeded permutation of the class's stating records
                order = [members[i] for i in rng.permutation(len(members))]
                for r, source in zip(members, order):
                    theirs = tuple(surface.get((c, v), v) for v in stated[source])
                    replacement[r].update({(c, v): theirs[i % len(theirs)] for i, v in enumerate(stated[r])})
                    cells[r] = theirs
        released[c] = cells
    return Sanitized(qi.copy(), released, anonymized, class_ids, replacement)


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
