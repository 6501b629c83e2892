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

from engine.progress import Progress, no_progress
from engine.protect.corrections import Corrections
from engine.protect.swap.chunking import Embed, TfidfSvdEmbedder
from engine.protect.swap.disclosure import SwapRisk, swap_disclosure_risk
from engine.protect.swap.edits import Edit, apply, compose
from engine.protect.swap.embedding_fit import EmbeddingFit, swap_utility
from engine.protect.swap.entities import CATEGORIES, ChunkEntities, chunk_entities
from engine.protect.swap.identifiers import identifier_edits
from engine.protect.swap.mixtures import Kind, SphericalMixture, fit_mixture
from engine.protect.swap.rewrite import MENTION_COLUMNS, Mention, rewritten
from engine.protect.swap.swapping import SwapResult, check_roles, swap_entities
from engine.protect.swap.vocabulary import TERM, company_terms, term_mentions


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
    suppressions: list[list[Edit]]  # per chunk: the edits of its original text that give ``chunks``


PLACEHOLDER = re.compile(r"\[[^\[\]\n]{1,40}\]")
"""A bracketed placeholder ("[Company Name]", "[Executive 2]", "[Event]"): never part of an entity."""
EMPTY_MENTIONS = pd.DataFrame(columns=["start", "end", "category", "text"])


def tagged_mentions(entities: ChunkEntities) -> dict[int, list[Mention]]:
    """Each chunk's mentions (start, end, category, text), by chunk position."""
    out: dict[int, list[Mention]] = {}
    columns = ["chunk", "start", "end", "category", "text"]
    for k, start, end, category, text in entities.mentions[columns].itertuples(index=False, name=None):
        out.setdefault(int(k), []).append((int(start), int(end), str(category), str(text)))
    return out


def _must_change_suppressed(
    clean: Sequence[str], entities: ChunkEntities, roles: Mapping[str, str]
) -> list[tuple[str, list[Edit]]]:
    """Each clean chunk with its C categories suppressed (D_pre), and the edits that did it."""
    _, change, _ = check_roles(entities.values, roles)
    if not change:
        return [(text, []) for text in clean]
    tagged = tagged_mentions(entities)
    rows = entities.values.loc[list(tagged)].to_dict("index")
    out = []
    for k, text in enumerate(clean):
        new, edits, _ = (
            rewritten(text, tagged[k], rows[k], dict.fromkeys(change, ())) if k in tagged else (text, [], [])
        )
        out.append((new, edits))
    return out


def pre_swap_edits(prepared: Prepared) -> dict[int, list[Edit]]:
    """The edits of each chunk's original text that give D_pre (direct identifiers and C categories
    suppressed), for the chunks that have any."""
    out = {}
    for k, (first, (_, second)) in enumerate(
        zip(prepared.suppressions, _must_change_suppressed(prepared.chunks, prepared.entities, prepared.roles))
    ):
        if first or second:
            out[k] = compose(first, second, prepared.chunks[k])
    return out


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
    labels: Sequence | None = None,
    corrections: Corrections | None = None,
) -> Prepared:
    """The steps before any swap (module docstring). ``identifiers`` maps a document to its direct identifiers
    by label (`identifier_edits`); ``roles`` gives each category S, F, C, A or U (unnamed: U); a role for
    `vocabulary.TERM` adds the company terms as a category, learnt by ``labels`` (each chunk's protected value;
    default its document); ``corrections``: the steward's kept lists for the entity recognizer."""
    docs = np.asarray(list(documents), dtype=object)
    if len(docs) != len(chunks):
        raise ValueError(f"{len(chunks)} chunks but {len(docs)} document labels")
    identifiers = identifiers or {}
    suppressions = [identifier_edits(text, identifiers.get(doc, {})) for text, doc in zip(chunks, docs)]
    clean = [apply(text, edits) for text, edits in zip(chunks, suppressions)]
    found = chunk_entities(clean, categories, progress, skip=PLACEHOLDER, corrections=corrections)
    if TERM in roles:
        found = with_terms(clean, found, list(docs) if labels is None else labels)
    reference = [text for text, _ in _must_change_suppressed(clean, found, roles)]
    progress(0, 1, "embedding the chunks")
    embedder = embed if embed is not None else TfidfSvdEmbedder(seed=seed).fit(reference)
    vectors = embedder(reference)
    mixture = fit_mixture(
        vectors, clusters, kind=kind, min_weight=min_weight, rng=np.random.default_rng(seed), progress=progress
    )
    return Prepared(
        clean, reference, docs, dict(roles), found, embedder, vectors, mixture, mixture.predict(vectors), suppressions
    )


def with_terms(chunks: Sequence[str], entities: ChunkEntities, labels: Sequence) -> ChunkEntities:
    """``entities`` with the company terms of ``chunks`` (`vocabulary`) as one more category; words inside a
    placeholder or an entity mention are not read."""
    blocked: list[list[tuple[int, int]]] = [[(m.start(), m.end()) for m in PLACEHOLDER.finditer(t)] for t in chunks]
    for k, start, end in entities.mentions[["chunk", "start", "end"]].itertuples(index=False, name=None):
        blocked[int(k)].append((int(start), int(end)))
    terms = company_terms(chunks, list(labels), blocked)
    values, mentions = term_mentions(chunks, terms, blocked)
    table = entities.values.assign(**{TERM: pd.Series(values, index=entities.values.index, dtype=object)})
    rows = pd.DataFrame(mentions, columns=entities.mentions.columns)
    together = pd.concat([entities.mentions, rows], ignore_index=True) if len(rows) else entities.mentions
    return ChunkEntities(table, together.sort_values(["chunk", "start"], kind="stable", ignore_index=True))


@dataclass
class SwapRelease:
    """One release: the rewritten chunks, the swap, and its DR and DU."""

    chunks: list[str]
    swap: SwapResult
    mentions: list[pd.DataFrame]  # per chunk: its mentions after the rewrite (start, end, category, text, original)
    risk: SwapRisk
    utility: EmbeddingFit


def rewrite(
    prepared: Prepared, result: SwapResult, sources: Mapping[int, object] | None = None
) -> tuple[list[str], dict[int, tuple[list[Edit], list[tuple[int, int, str, str, str]]]]]:
    """The chunks' texts after ``result`` (a swap of ``prepared``'s entities): the chunks of the pairs rewritten
    from the clean chunks with their new S and C values, every other chunk as in D_pre. Also, for each chunk of
    a pair, the edits of its clean text (labelled with the document its entities came from, ``sources[k]``) and
    its mentions after the rewrite (`rewritten`)."""
    values, roles = prepared.entities.values, prepared.roles
    exchanged = [c for c in values.columns if roles.get(c, "U") in ("S", "C", "A")]
    swapped = [int(k) for k in np.flatnonzero(result.swapped)]
    tagged = tagged_mentions(prepared.entities)
    before = values.loc[swapped].to_dict("index")
    after = result.values.loc[swapped, exchanged].to_dict("index")
    texts, changed = list(prepared.reference), {}
    for k in swapped:
        source = None if sources is None else str(sources[k])
        texts[k], edits, mentions = rewritten(prepared.chunks[k], tagged.get(k, []), before[k], after[k], source)
        changed[k] = (edits, mentions)
    return texts, changed


def risk_cells(prepared: Prepared) -> list[tuple]:
    """Each chunk's cell of the S categories' table z_J (the tuple of its entities there), as DR counts them."""
    values = prepared.entities.values
    swap_categories, _, _ = check_roles(values, prepared.roles)
    return list(values[swap_categories].itertuples(index=False, name=None))


def release(prepared: Prepared, rate: float, rng: np.random.Generator, population: float = 1e10) -> SwapRelease:
    """Swap at rate ``rate`` (module docstring); ``population`` is the N of Eq. 2.14."""
    values, roles = prepared.entities.values, prepared.roles
    result = swap_entities(values, prepared.documents, prepared.clusters, roles, rate, rng)
    texts, changed = rewrite(prepared, result)
    groups = {int(k): m for k, m in prepared.entities.mentions.groupby("chunk")}
    mentions = [
        pd.DataFrame(changed[k][1], columns=MENTION_COLUMNS) if k in changed else groups.get(k, EMPTY_MENTIONS)
        for k in range(len(texts))
    ]
    after = prepared.embeddings.copy()
    moved = [k for k in range(len(texts)) if texts[k] != prepared.reference[k]]
    if moved:
        after[moved] = prepared.embed([texts[k] for k in moved])
    risk = swap_disclosure_risk(risk_cells(prepared), result.swapped, population)
    return SwapRelease(texts, result, mentions, risk, swap_utility(prepared.mixture, prepared.embeddings, after))
