"""The privacy-attribute gold set (``assets/gold/privacy-attributes``): posts, their annotated spans, the tokens
the labels are counted on, and the agreement of two annotation passes (Abeywardana & Thayasivam, Section 5:
"cross annotated … an agreement study was performed", κ 0.6–0.7).

Files (GUIDELINES.md beside them says how posts are annotated): ``posts.jsonl`` (id, kind, row, text),
``annotations.jsonl`` and ``second_pass.jsonl`` (id, spans: [start, end, label, text], character offsets).
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
