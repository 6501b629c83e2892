"""What share of the gold set's privacy attributes the tagger finds on posts it was not trained on (issue 50:
residual detection risk), per label: the tagger trained on the 70% of the gold set's posts of the held-out split
(`engine.protect.kanon.tagger.split`), each annotated span of the other 30% found when the tagger gives every one
of its tokens the span's label (`engine.text.detection_share`).

Training that tagger takes 15–50 s, so the counts ship with the tagger (``tagger/held_out_found.json``, written by
``scripts/train_tagger.py``) beside the digest of what it was trained on; a process whose tagger has another
digest computes them and keeps them in the cache folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from engine.protect.kanon.gold import LABELS, NONE
from engine.protect.kanon.tagger import SHIPPED, PrivacyTagger, gold_texts, split, trained, training_items
from engine.store import model_cached
from engine.text.detection_share import Found, spans_found

FOUND_FILE = "held_out_found.json"


def held_out_found(
    items: Sequence[tuple[list[dict[str, str | float]], list[str]]],
    ids: Sequence[str],
    texts: Sequence[str],
) -> tuple[int, dict[str, Found]]:
    """The held-out posts' count and, per label, how many of their annotated spans a tagger trained on the other
    posts finds (``items`` are every post's features and labels, `training_items`, in the order of ``ids``)."""
    import pycrfsuite

    from engine.protect.detection import shipped_gold

    train, test = split(ids)
    at = {i: k for k, i in enumerate(ids)}
    partial = PrivacyTagger.train_on([items[at[i]] for i in train])

    crf = pycrfsuite.Tagger()
    crf.open(str(partial.model_file))
    try:
        predicted = [list(crf.tag(pycrfsuite.ItemSequence(items[at[i]][0]))) for i in test]
    finally:
        crf.close()
    docs = shipped_gold(test)
    for doc, i in zip(docs, test):
        if doc.text != texts[at[i]] or len(doc.tokens) != len(items[at[i]][1]):
            raise ValueError(f"gold post {i}: its tokens are not those the tagger's features were made for")
    detected = [
        [(s, e, label) for (s, e), label in zip(doc.tokens, labels) if label != NONE]
        for doc, labels in zip(docs, predicted)
    ]
    kinds = [label for label in LABELS if label != "DI"]
    counts = spans_found(
        docs, detected, [*kinds, "DI", "NAME"], accept={**{k: {k} for k in kinds}, "DI": {"DI"}, "NAME": {"DI"}}
    )
    counts["DI"] = Found(counts["DI"].found + counts["NAME"].found, counts["DI"].total + counts["NAME"].total)
    del counts["NAME"]
    return len(test), counts


def _as_json(digest: str, posts: int, counts: dict[str, Found]) -> dict:
    return {
        "training_digest": digest,
        "posts": posts,
        "found": {label: [c.found, c.total] for label, c in counts.items()},
    }


def write_shipped_found(digest: str, posts: int, counts: dict[str, Found], folder: Path = SHIPPED) -> None:
    """Ship the held-out counts beside the tagger (`scripts/train_tagger.py`)."""
    text = json.dumps(_as_json(digest, posts, counts), indent=1, sort_keys=True) + "\n"
    (folder / FOUND_FILE).write_text(text, encoding="utf-8")


def _read(saved: dict) -> tuple[int, dict[str, Found]]:
    return int(saved["posts"]), {label: Found(int(f), int(t)) for label, (f, t) in saved["found"].items()}


@lru_cache(maxsize=1)
def tagger_found() -> tuple[int, dict[str, Found]]:
    """The held-out posts' count and the counts per label for the tagger this process uses: the shipped ones
    when they were measured for it, else measured here (about a minute) and kept in the cache folder."""
    digest = trained().digest
    path = SHIPPED / FOUND_FILE
    if path.is_file():
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved.get("training_digest") == digest:
            return _read(saved)

    def compute() -> dict:
        ids, texts, spans = gold_texts()
        posts, counts = held_out_found(training_items(texts, spans), ids, texts)
        return _as_json(digest, posts, counts)

    return _read(model_cached(f"privacy-tagger-found-{digest[:32]}", compute))
