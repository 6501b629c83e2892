"""Named-entity swapping from chunks to release, and its risk and utility (Greve & Sablica, Sections 2–3): the
steps the `swap` method's fit and release are made of.

`prepare` (once, for given category roles): direct identifiers suppressed (`identifiers`), the chunks' entities
by category (`entities`), the pre-swap data D_pre — the chunks with their C ("must change") categories
suppressed, which is what a release at r = 0 gives, so that DR = DU = 1 there (Section 2.3) — its embeddings on
the unit sphere (`chunking.TfidfSvdEmbedder` unless another embedder is given) and a PKB or spherical Cauchy
mixture fitted to them (`mixtures`), whose most responsible component is each chunk's cluster.
`release` (per swap rate r and seed): valid pairs swapped (`swapping`; a pair also exchanges its C entities),
the chunks of the pairs rewritten from their entities (`rewrite`) and embedded again, and DR (Eq. 2.16,
`engine.measures.risk.pitman`, on the S categories' table z_J) and DU (Eq. 2.19,
`engine.measures.utility.embedding_fit`) of the result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.measures.risk.pitman import SwapRisk, swap_disclosure_risk
from engine.measures.utility.embedding_fit import EmbeddingFit, swap_utility
from engine.progress import Progress, no_progress
from engine.protect.swap.chunking import Embed, TfidfSvdEmbedder
from engine.protect.swap.entities import CATEGORIES, ChunkEntities, chunk_entities
from engine.protect.swap.identifiers import suppress_identifiers
from engine.protect.swap.mixtures import Kind, SphericalMixture, fit_mixture
from engine.protect.swap.rewrite import rewrite_chunk
from engine.protect.swap.swapping import SwapResult, check_roles, swap_entities


@dataclass
class Prepared:
    """What every release of one corpus shares."""

    chunks: list[str]  # with direct identifiers suppressed: what the entities' offsets refer to
    reference: list[str]  # D_pre: the chunks with their C categories suppressed
    documents: np.ndarray
    roles: dict[str, str]
    entities: ChunkEntities
    embed: Embed
    embeddings: np.ndarray  # of the reference chunks
    mixture: SphericalMixture
    clusters: np.ndarray


PLACEHOLDER = re.compile(r"\[[^\[\]\n]{1,40}\]")
"""A bracketed placeholder ("[Company Name]", "[Executive 2]", "[Event]"): never part of an entity."""
EMPTY_MENTIONS = pd.DataFrame(columns=["start", "end", "category", "text"])


def _mentions_of(entities: ChunkEntities) -> dict[int, pd.DataFrame]:
    return {int(k): m for k, m in entities.mentions.groupby("chunk")}


def prepare(
    chunks: Sequence[str],
    documents: Sequence,
    roles: Mapping[str, str],
    identifiers: Mapping[object, Mapping[str, Sequence[str]]] | None = None,
    categories: Mapping[str, Sequence[str]] = CATEGORIES,
    clusters: int = 10,
    kind: Kind = "pkb",
    min_weight: float | None = None,
    embed: Embed | None = None,
    seed: int = 0,
    progress: Progress = no_progress,
) -> Prepared:
    """The steps before any swap (module docstring). ``identifiers`` maps a document to its direct identifiers
    by label (`suppress_identifiers`); ``roles`` gives each category S, F, C or U (unnamed: U)."""
    docs = np.asarray(list(documents), dtype=object)
    if len(docs) != len(chunks):
        raise ValueError(f"{len(chunks)} chunks but {len(docs)} document labels")
    identifiers = identifiers or {}
    clean = [suppress_identifiers(text, identifiers.get(doc, {}))[0] for text, doc in zip(chunks, docs)]
    found = chunk_entities(clean, categories, progress, skip=PLACEHOLDER)
    _, change, _ = check_roles(found.values, roles)
    mentions = _mentions_of(found)
    reference = [
        rewrite_chunk(text, mentions[k], found.values.loc[k].to_dict(), dict.fromkeys(change, ()))[0]
        if change and k in mentions
        else text
        for k, text in enumerate(clean)
    ]
    progress(0, 1, "embedding the chunks")
    embedder = embed if embed is not None else TfidfSvdEmbedder(seed=seed).fit(reference)
    vectors = embedder(reference)
    mixture = fit_mixture(
        vectors, clusters, kind=kind, min_weight=min_weight, rng=np.random.default_rng(seed), progress=progress
    )
    return Prepared(clean, reference, docs, dict(roles), found, embedder, vectors, mixture, mixture.predict(vectors))


@dataclass
class SwapRelease:
    """One release: the rewritten chunks, the swap, and its DR and DU."""

    chunks: list[str]
    swap: SwapResult
    mentions: list[pd.DataFrame]  # per chunk: its mentions after the rewrite (start, end, category, text, original)
    risk: SwapRisk
    utility: EmbeddingFit


def rewrite(prepared: Prepared, result: SwapResult) -> tuple[list[str], list[pd.DataFrame]]:
    """The chunks' texts after ``result`` (a swap of ``prepared``'s entities): the chunks of the pairs rewritten
    from the clean chunks with their new S and C values, every other chunk as in D_pre; and per chunk its
    mentions after the rewrite."""
    values, roles = prepared.entities.values, prepared.roles
    mentions = _mentions_of(prepared.entities)
    exchanged = [c for c in values.columns if roles.get(c, "U") in ("S", "C")]
    texts, rewritten = list(prepared.reference), [mentions.get(k, EMPTY_MENTIONS) for k in range(len(values))]
    for k in np.flatnonzero(result.swapped):
        texts[k], rewritten[k] = rewrite_chunk(
            prepared.chunks[k],
            mentions.get(int(k), EMPTY_MENTIONS),
            values.loc[k].to_dict(),
            result.values.loc[k, exchanged].to_dict(),
        )
    return texts, rewritten


def risk_cells(prepared: Prepared) -> list[tuple]:
    """Each chunk's cell of the S categories' table z_J (the tuple of its entities there), as DR counts them."""
    values = prepared.entities.values
    swap_categories, _, _ = check_roles(values, prepared.roles)
    return list(values[swap_categories].itertuples(index=False, name=None))


def release(prepared: Prepared, rate: float, rng: np.random.Generator, population: float = 1e10) -> SwapRelease:
    """Swap at rate ``rate`` (module docstring); ``population`` is the N of Eq. 2.14."""
    values, roles = prepared.entities.values, prepared.roles
    result = swap_entities(values, prepared.documents, prepared.clusters, roles, rate, rng)
    texts, rewritten = rewrite(prepared, result)
    after = prepared.embeddings.copy()
    moved = [k for k in range(len(texts)) if texts[k] != prepared.reference[k]]
    if moved:
        after[moved] = prepared.embed([texts[k] for k in moved])
    risk = swap_disclosure_risk(risk_cells(prepared), result.swapped, population)
    return SwapRelease(texts, result, rewritten, risk, swap_utility(prepared.mixture, prepared.embeddings, after))
