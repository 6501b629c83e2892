"""Tokenizing free text into words, keeping @handles, #hashtags and [PLACEHOLDER]s as single tokens."""

from __future__ import annotations

import re
import sys
from functools import lru_cache

# A redaction placeholder such as [PERSON] is one token, distinct from the word "person".
TOKEN_RE = re.compile(r"\[[A-Z_]+\]|[@#]?\w+(?:['’]\w+)*")

CACHED_TEXT_CHARS = 1_000
CACHED_TEXTS = 50_000
"""Texts up to `CACHED_TEXT_CHARS` long keep their tokens in memory, the `CACHED_TEXTS` most recent ones: the
measures of a sweep tokenize the same original texts, and many unchanged released ones, at every knob value
and replicate. The tokens are interned, so an entry costs a tuple of pointers (at most about 80 MB in all)."""


@lru_cache(maxsize=CACHED_TEXTS)
def _cached_tokens(text: str) -> tuple[str, ...]:
    return tuple(sys.intern(t.lower()) for t in TOKEN_RE.findall(text))


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    if len(text) <= CACHED_TEXT_CHARS:
        return list(_cached_tokens(text))
    return [t.lower() for t in TOKEN_RE.findall(text)]
