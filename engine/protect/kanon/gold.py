"""The privacy-attribute gold sets: posts, their annotated spans, the tokens the labels are counted on, and the
agreement of two annotation passes (Abeywardana & Thayasivam, Section 5: "cross annotated … an agreement study
was performed", κ 0.6–0.7). Two sets (`GOLD_SETS`), annotated under one same GUIDELINES.md: the tagger's own
(``assets/gold/privacy-attributes``, Twitter profiles and tweets, split 70:30 to train and score it) and a
cross-source one it never trains on (``assets/gold/privacy-attributes-cross``, WNUT-17 posts and airline tweets,
issue 51).

Files of a set: ``posts.jsonl`` (id, kind, row, text), ``annotations.jsonl`` and ``second_pass.jsonl`` (id,
spans: [start, end, label, text], character offsets).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.errors import DataError
from engine.paths import ASSETS_DIR

GOLD_DIR = ASSETS_DIR / "gold" / "privacy-attributes"
CROSS_GOLD_DIR = ASSETS_DIR / "gold" / "privacy-attributes-cross"
GOLD_SETS = {"in-split": GOLD_DIR, "cross-source": CROSS_GOLD_DIR}
"""The gold sets by name: the tagger's own (trained on 70%, scored on 30%) and one from other sources."""
LABELS = ("DI", "QIAGE", "QIRACE", "QIREGION", "QIGENDER", "QILANG", "QIJOB", "SA")
"""Abeywardana & Thayasivam, Table 3; every other token is NONE."""
LABEL_NAMES = {
    "DI": "identifier",
    "QIAGE": "age",
    "QIRACE": "race or nationality",
    "QIREGION": "place",
    "QIGENDER": "gender",
    "QILANG": "language",
    "QIJOB": "occupation",
    "SA": "sensitive attribute",
}
"""What each label is, as a steward reads it."""
NONE = "NONE"
TOKEN = re.compile(r"[#@]?\w+(?:[-'’.@/]\w+)*|[^\w\s]")
"""A word with its hashtag or handle sign, inner hyphens, apostrophes, dots and slashes ("she/her", "25yo",
"me@x.com"), or one punctuation mark."""

Span = tuple[int, int, str]


@dataclass(frozen=True)
class Post:
    id: str
    kind: str
    row: int
    text: str


def tokens(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each token of ``text`` (`TOKEN`)."""
    return [m.span() for m in TOKEN.finditer(text)]


def resolve(text: str, spans: Iterable[Sequence[str]], where: str = "") -> list[Span]:
    """Character offsets of annotated spans given as (exact text, label) in order of appearance: each is looked
    up after the previous one."""
    out, at = [], 0
    for piece, label in spans:
        if label not in LABELS:
            raise DataError(f"{where}: unknown label {label!r}; the labels are {', '.join(LABELS)}")
        start = text.find(piece, at)
        if start < 0:
            raise DataError(f"{where}: the span {piece!r} is not in the post after character {at}")
        out.append((start, start + len(piece), label))
        at = start + len(piece)
    return out


def token_labels(text: str, spans: Sequence[Span]) -> list[str]:
    """The label of every token of ``text``: the label of the span it overlaps, else NONE."""
    out = []
    for start, end in tokens(text):
        hit = [label for s, e, label in spans if s < end and e > start]
        out.append(hit[0] if hit else NONE)
    return out


def read_posts(folder: Path = GOLD_DIR) -> dict[str, Post]:
    path = folder / "posts.jsonl"
    if not path.is_file():
        raise DataError(f"the gold set's posts are missing: {path}")
    posts = [Post(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {p.id: p for p in posts}


def read_spans(path: Path, posts: Mapping[str, Post]) -> dict[str, list[Span]]:
    """An annotation file: post id → spans, each checked against the post's text."""
    out: dict[str, list[Span]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        post = posts.get(row["id"])
        if post is None:
            raise DataError(f"{path.name} line {n}: no post {row['id']!r}")
        spans = [(int(s), int(e), str(label)) for s, e, label, _ in row["spans"]]
        for s, e, label, piece in row["spans"]:
            if post.text[s:e] != piece or label not in LABELS:
                raise DataError(f"{path.name} line {n}: span {piece!r} ({label}) does not match the post")
        out[post.id] = spans
    return out


def span_problems(text: str, spans: Sequence[tuple[int, int, str, str]]) -> list[str]:
    """What is wrong with a post's stored spans ([start, end, label, text]): offsets outside the post, a text
    that is not the post's characters at its offsets, an unknown label, spans out of order or overlapping, or
    a span that starts or ends inside a word (a part of a word is allowed only before an apostrophe, a slash
    or a hyphen: ``girl`` of "girl's", ``Blogger`` of "Blogger/Speaker"). Empty when the spans are sound."""
    out, at = [], 0
    for start, end, label, piece in spans:
        where = f"{piece!r} at {start}–{end}"
        if not 0 <= start < end <= len(text):
            out.append(f"{where}: outside the post's {len(text)} characters")
            continue
        if text[start:end] != piece:
            out.append(f"{where}: the post has {text[start:end]!r} there")
        if label not in LABELS:
            out.append(f"{where}: unknown label {label!r}; the labels are {', '.join(LABELS)}")
        if start < at:
            out.append(f"{where}: before or inside the span before it (which ends at {at})")
        if (start and text[start - 1].isalnum() and text[start].isalnum()) or (
            end < len(text) and text[end].isalnum() and text[end - 1].isalnum()
        ):
            out.append(f"{where}: cuts a word")
        at = end
    return out


@dataclass(frozen=True)
class GoldSet:
    """One gold set: its posts, first-pass spans and second-pass spans (a subset of the posts)."""

    name: str
    folder: Path
    posts: dict[str, Post]
    first: dict[str, list[Span]]
    second: dict[str, list[Span]]


def gold_set(name: str = "in-split") -> GoldSet:
    """The gold set ``name`` of `GOLD_SETS`, read and checked by `read_posts` and `read_spans`."""
    if name not in GOLD_SETS:
        raise DataError(f"no gold set {name!r}; the gold sets are {', '.join(GOLD_SETS)}")
    folder = GOLD_SETS[name]
    posts = read_posts(folder)
    first = read_spans(folder / "annotations.jsonl", posts)
    return GoldSet(name, folder, posts, first, read_spans(folder / "second_pass.jsonl", posts))


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's κ of two labelings of the same items: (p_o − p_e) / (1 − p_e); 1 when both are one same label."""
    x, y = np.asarray(a), np.asarray(b)
    if len(x) != len(y) or not len(x):
        raise ValueError("κ needs two labelings of the same, non-empty items")
    observed = float(np.mean(x == y))
    expected = sum(float(np.mean(x == c)) * float(np.mean(y == c)) for c in np.union1d(x, y))
    return 1.0 if expected == 1.0 else (observed - expected) / (1.0 - expected)


def agreement(
    posts: Mapping[str, Post], first: Mapping[str, list[Span]], second: Mapping[str, list[Span]]
) -> dict[str, float]:
    """Token-level agreement of two passes over the posts both annotated: κ over all labels ("all") and, per
    label, κ of "this label or not"."""
    shared = sorted(set(first) & set(second))
    if not shared:
        raise ValueError("the two passes share no post")
    a = [t for i in shared for t in token_labels(posts[i].text, first[i])]
    b = [t for i in shared for t in token_labels(posts[i].text, second[i])]
    out = {"all": cohen_kappa(a, b)}
    for label in LABELS:
        x, y = [t == label for t in a], [t == label for t in b]
        if any(x) or any(y):
            out[label] = cohen_kappa([str(v) for v in x], [str(v) for v in y])
    return out
