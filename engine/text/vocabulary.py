"""Vocabularies for synthesizing text: a public word list that a dependency ships, or the data's own words.

A differentially private synthesizer protects the released counts only over a vocabulary fixed before the
confidential data is seen; a vocabulary read off the data discloses which words occur in it (a rare name, a
handle). The public list is the lower-case alphabetic entries of the string store of spaCy's English model
``en_core_web_sm`` 3.8.0 (MIT licence; read from the installed model's ``vocab/strings.json``, never from a
loaded pipeline, whose store grows with every text it processes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from engine.errors import ConfigError

PUBLIC_VOCABULARY_SOURCE = "the English word list of spaCy's en_core_web_sm 3.8.0 model (MIT licence)"


@lru_cache(maxsize=1)
def public_vocabulary() -> tuple[str, ...]:
    """The public word list, sorted: lower-case alphabetic strings of the model's string store."""
    from importlib.util import find_spec

    from engine.text.entities import SPACY_MODEL

    spec = find_spec(SPACY_MODEL)
    if spec is None or spec.origin is None:
        raise ConfigError(f"the spaCy model package {SPACY_MODEL} is not installed; run `make install`")
    files = sorted(Path(spec.origin).parent.glob("*/vocab/strings.json"))
    if not files:
        raise ConfigError(f"the spaCy model package {SPACY_MODEL} has no vocab/strings.json; reinstall it")
    strings = json.loads(files[0].read_text(encoding="utf-8"))
    return tuple(sorted({s for s in strings if s.isalpha() and s.islower()}))


def vocabulary_digest(words: Iterable[str]) -> str:
    """SHA-256 of a vocabulary's words, one a line (UTF-8), in the order given: what a release record keeps of a
    public vocabulary, so that anyone can check the word list it was drawn over."""
    import hashlib

    return hashlib.sha256("\n".join(words).encode("utf-8")).hexdigest()


def data_vocabulary(token_lists: Iterable[list[str]]) -> tuple[str, ...]:
    """Every distinct token of the data, sorted."""
    return tuple(sorted({t for tokens in token_lists for t in tokens}))
