"""Where two texts differ, word by word: the pieces each side shows, marked kept or changed.

Used to show two released values of one record side by side (the Compare page's diff of two pins) with what
differs marked. The texts are split into words and the runs of white space between them, and matched with
Python's `difflib.SequenceMatcher` (longest matching blocks, no junk heuristic), so that joining one side's
pieces gives back that side's text exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_PIECES = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class Piece:
    """A stretch of one side's text: ``changed`` when the other side does not have it at this place."""

    text: str
    changed: bool


def _pieces(text: str) -> list[str]:
    return _PIECES.findall(text)


def _joined(tokens: list[str], changed: bool) -> list[Piece]:
    return [Piece("".join(tokens), changed)] if tokens else []


def word_diff(a: str, b: str) -> tuple[list[Piece], list[Piece]]:
    """The pieces of ``a`` and of ``b``: the words both have at matching places unchanged, the others changed
    (removed from ``a``, put in ``b``). White space between two changed words is changed with them, so that a
    replaced phrase is one marked stretch; white space is compared as it is written."""
    x, y = _pieces(a), _pieces(b)
    left: list[Piece] = []
    right: list[Piece] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, x, y, autojunk=False).get_opcodes():
        changed = op != "equal"
        left += _joined(x[i1:i2], changed)
        right += _joined(y[j1:j2], changed)
    return _merged(left), _merged(right)


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Neighbouring pieces of the same kind as one, and white space alone between two changed pieces changed."""
    marked = list(pieces)
    for i in range(1, len(marked) - 1):
        p = marked[i]
        if not p.changed and not p.text.strip() and marked[i - 1].changed and marked[i + 1].changed:
            marked[i] = Piece(p.text, True)
    out: list[Piece] = []
    for p in marked:
        if out and out[-1].changed == p.changed:
            out[-1] = Piece(out[-1].text + p.text, p.changed)
        else:
            out.append(p)
    return out
