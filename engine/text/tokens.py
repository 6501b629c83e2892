"""Tokenizing free text into words, keeping @handles, #hashtags and [PLACEHOLDER]s as single tokens."""

from __future__ import annotations

import re

# A redaction placeholder such as [PERSON] is one token, distinct from the word "person".
TOKEN_RE = re.compile(r"\[[A-Z_]+\]|[@#]?\w+(?:['’]\w+)*")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``."""
    return [t.lower() for t in TOKEN_RE.findall(text)]
