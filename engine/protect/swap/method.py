"""The `swap` method: named entities swapped between similar chunks of different documents, with the swap rate r
as the knob (Greve & Sablica 2025; the steps are in `engine.protect.swap.pipeline`).

What is protected is a document's metadata (``metadata``: which company an earnings call came from), not a
person. The fit suppresses the direct identifiers of that metadata (the value itself, e.g. the ticker, and
the names listed for it in an identifiers file), finds the named entities of every chunk, embeds the chunks
and clusters them; a release at rate r swaps the entities of the S categories between round(r·n/2) pairs of
chunks of different documents in one cluster, and with them the C and A categories (A, exchanged along: people,
places, products and the company terms learnt from the data by default, an extension of the paper measured
against a background intruder in docs/swap.md). The release withholds the metadata column (the bundle leaves it
out) and its record of changes stays in the internal review: it would tell which chunks kept their entities.
With ``unit = "passages"`` it withholds every column and releases the chunks alone, shuffled, in
``passages.csv``: no whole document leaves, and the document-level risk does not apply.

Chunks: when a document has several rows, each row is a chunk (the earnings-calls demo); when every document
is one row, each row is cut into semantic chunks (breakpoints between consecutive sentences above the
``percentile``-th percentile of their embedding distances, Section 3.1) and its chunks are rejoined in place.

Identifiers file: a CSV with the columns <metadata column>, label, value (e.g. ``ADP,Company Name,"Automatic
Data Processing, Inc."``); by default ``identifiers.csv`` in a demo's folder, or ``<stem>.identifiers.csv``
beside a data file, when there is one. Labels "Executive" are numbered ("[Executive 1]").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.data.identifiers_file import (
    column_identifiers,
    identifiers_digest,
    identifiers_path,
    merged,
    read_identifiers,
)
from engine.errors import ConfigError, DataError
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release, ReleaseDetail, Statement
from engine.protect.corrections import KEPT, KeptCorrections, kept_corrections, method_corrections
from engine.protect.detection import DetectionShare, gold_digest
from engine.protect.params import Param
from engine.protect.redact import CHANGE_COLUMNS
from engine.protect.swap import pipeline
from engine.protect.swap.chunking import DEFAULT_PERCENTILE, TfidfSvdEmbedder, chunk_documents
from engine.protect.swap.edits import Edit, compose
from engine.protect.swap.entities import CATEGORIES, detection_shares, gold_found
from engine.protect.swap.identifiers import OWN_NAME_CHUNKS, names_of_one, spelling_out
from engine.protect.swap.swapping import check_roles, swap_entities, valid_pairs
from engine.protect.swap.vocabulary import TERM
from engine.text.embeddings import MiniLMEmbedder, model_version
from engine.text.names import variants_under

SWAP_KNOB = Knob(
    name="rate",
    symbol="r",
    label="Swap rate",
    low=0.0,
    high=1.0,
    default=0.05,
    scale="linear",
    more_privacy="higher",
    grid=(0.0, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2),
    help="share of the chunks whose named entities are swapped with a similar chunk of another document",
)
CATEGORY_NAMES = (*CATEGORIES, TERM)
"""spaCy's categories (`CATEGORIES`) and the company terms learnt from the data (`vocabulary.TERM`)."""


@dataclass(frozen=True)
class SwapDetail(ReleaseDetail):
    """What the measures of a swap need from one release, kept out of the bundle: which chunks were swapped,
    the pairs (chunk positions), and the released text of every chunk the release rewrote."""

    swapped: np.ndarray
    pairs: tuple[tuple[int, int], ...]
    requested_pairs: int
    moved: dict[int, str]
    section: ClassVar[str] = "swap"
    block: ClassVar[str] = "measure figures"


@dataclass
class FittedSwap(Fitted):
    """The prepared swap of one dataset; `release` swaps at a rate."""

    frame: pd.DataFrame
    text_column: str
    metadata: str
    spans: pd.DataFrame  # one row per chunk: record, start, end (in the record's text)
    prepared: pipeline.Prepared
    labels: np.ndarray  # the metadata value of each chunk's document
    population: float
    rate_limit: float
    gazetteer: dict[str, list[str]]  # metadata value → the strings that identify it (the intruder's list)
    candidates: np.ndarray  # the valid pairs (chunk positions), listed once: a release only draws from them
    method: str = "swap"
    knob: Knob = SWAP_KNOB
    _pre_changes: dict[int, list[Edit]] | None = field(default=None, repr=False)
    released_as_is: tuple[str, ...] = ()  # columns the bundle would carry in clear (not pseudonymized)
    suppressed: str = ""  # what is suppressed before any swap, in the steward's words
    own_names: pd.DataFrame | None = None  # `identifiers.names_of_one`: names left that one value's chunks hold
    detection: tuple[DetectionShare, ...] = ()  # what spaCy finds of the swapped and must-change categories
    unit: str = "documents"  # what the bundle releases: whole documents, or shuffled passages with no link
    corrections: KeptCorrections | None = None  # the steward's kept lists the entity recognizer ran with

    _withheld: tuple[tuple[str, ...], str] | None = field(default=None, init=False, repr=False)

    def withheld(self) -> tuple[tuple[str, ...], str]:
        """The columns the bundle leaves out: the protected field, and every column released in clear that spells
        out its value (`identifiers.spelling_out`); and why, in words. Worked out once: every release shares it."""
        if self._withheld is None:
            self._withheld = self._find_withheld()
        return self._withheld

    def withheld_columns(self) -> tuple[str, ...]:
        return self.withheld()[0]

    def _find_withheld(self) -> tuple[tuple[str, ...], str]:
        if self.unit == "passages":
            return tuple(str(c) for c in self.frame.columns), (
                f"every column of the data is withheld ({', '.join(map(str, self.frame.columns))}): the bundle "
                f"releases the passages alone, shuffled, in {PASSAGES}.csv, with no column linking a passage to its "
                "document"
            )
        spelled = spelling_out(self.frame, self.metadata, self.released_as_is)
        named = [f"{self.metadata} (the protected field)"] + [
            f"{c} (it spells out {self.metadata} in {n:,} of {len(self.frame):,} records)" for c, n in spelled.items()
        ]
        verb = "is" if len(named) == 1 else "are"
        return (
            self.metadata,
            *spelled,
        ), f"{', '.join(named[:-1])}{' and ' if len(named) > 1 else ''}{named[-1]} {verb} withheld from the bundle"

    def _pre_swap(self) -> dict[int, list[Edit]]:
        """Per chunk, the edits of its original text that give D_pre (its direct identifiers and C categories
        suppressed), worked out once per fit: the chunks a release does not swap read as in D_pre."""
        if self._pre_changes is None:
            self._pre_changes = pipeline.pre_swap_edits(self.prepared)
        return self._pre_changes

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        rate = float(self.knob.validate(value))
        p = self.prepared
        result = swap_entities(p.entities.values, p.documents, p.clusters, p.roles, rate, rng, self.candidates)
        partner = {i: j for a, b in result.pairs for i, j in ((a, b), (b, a))}
        texts, swapped = pipeline.rewrite(p, result, {k: p.documents[j] for k, j in partner.items()})
        records = self.frame[self.text_column].astype(str).tolist()
        pre = self._pre_swap()
        by_record: dict[int, list[tuple[int, int, str]]] = {}
        rows = []
        for k, (record, start, end) in enumerate(self.spans[["record", "start", "end"]].itertuples(index=False)):
            # a swapped chunk was rewritten from its clean text (direct identifiers suppressed); others are D_pre's
            edits = compose(p.suppressions[k], swapped[k][0], p.chunks[k]) if k in swapped else pre.get(k, [])
            if not edits:
                continue
            by_record.setdefault(record, []).append((start, end, texts[k]))
            rows += [
                (record, self.text_column, start + s, start + e, records[record][start + s : start + e], new, lab)
                for s, e, new, lab in edits
            ]
        released = list(records)
        for record, pieces in by_record.items():
            out, last = [], 0
            for start, end, new in sorted(pieces):
                out += [records[record][last:start], new]
                last = end
            released[record] = "".join(out) + records[record][last:]
        data = self.frame.copy()
        data[self.text_column] = released
        moved = {k: texts[k] for k in range(len(texts)) if texts[k] != p.reference[k]}
        detail = SwapDetail(result.swapped, tuple(result.pairs), result.requested_pairs, moved)
        withheld, why = self.withheld()
        tables: dict[str, pd.DataFrame] = {}
        unit: list[Statement] = []
        if self.unit == "passages":
            order = rng.permutation(len(texts))
            tables[PASSAGES] = pd.DataFrame({self.text_column: [texts[int(k)] for k in order]})
            unit = [Statement("Released unit", passages_statement(len(texts)))]
        return Release(
            data=data,
            method=self.method,
            knob=rate,
            protected_columns=(self.text_column,),
            changes=pd.DataFrame(rows, columns=CHANGE_COLUMNS),
            details=(
                detail,
                Statement(
                    "Pairs swapped",
                    f"{len(result.pairs)} pairs swapped ({result.requested_pairs} asked for at this rate)",
                ),
                Statement("Columns withheld", why),
                *unit,
                *((Statement("Direct identifiers", self.suppressed),) if self.suppressed else ()),
                *self.detection,
                *((self.corrections,) if self.corrections is not None else ()),
            ),
            changes_ship=False,
            withheld=withheld,
            tables=tables,
            warnings=self.own_names_warning(),
            review_tables={} if self.own_names is None or not len(self.own_names) else {OWN_NAMES: self.own_names},
        )

    def own_names_warning(self) -> tuple[str, ...]:
        """What the bundle must say of `own_names` (how many, not which: the names would tell the companies)."""
        own = self.own_names
        if own is None or not len(own):
            return ()
        values = own[self.metadata].nunique()
        return (
            f"{len(own):,} names (organizations, people, products) are held by the chunks of one {self.metadata} "
            f"only ({values:,} of {len(np.unique(self.labels)):,} values), in {OWN_NAME_CHUNKS} chunks or more, and "
            "were not suppressed: the chunks a release does not swap keep them, and they point to their "
            f"{self.metadata}. The internal review lists them as rows of an identifiers file (columns "
            f"{self.metadata}, label, value): give the file (Identifiers file) to suppress them before any swap",
        )


def _suppressed_text(
    metadata: str, path: Path | None, columns: Sequence[str], listed: dict[str, dict[str, list[str]]]
) -> str:
    """What the swap suppresses before swapping: each document's own value of the protected field, and the
    names of the identifiers file and of the data's direct-identifier columns, if any; without either, says
    what stays."""
    if path is None and not columns:
        return (
            f"before any swap, only each document's own {metadata} is suppressed: no identifiers file was given and "
            "no column of the data is a direct identifier, so the other names that tell a document (a company's "
            "name, its executives, its speakers) stay in the text wherever they are not swapped. Give the column "
            "that names them the role direct identifier on the Data page, or an Identifiers file (a CSV with the "
            f"columns {metadata}, label, value), to suppress them"
        )
    n = sum(len(values) for labels in listed.values() for values in labels.values())
    sources = [*([path.name] if path is not None else []), *(f"the column {c}" for c in columns)]
    return (
        f"before any swap, each document's own {metadata} and {n:,} names of {len(listed):,} documents from "
        f"{' and '.join(sources)} are suppressed"
    )


class EntitySwap(Protector):
    """Swap named entities between similar chunks of different documents."""

    name = "swap"
    title = "Named-entity swap"
    description = (
        "Hides which document (e.g. which company's earnings call) a passage came from: direct identifiers are "
        "suppressed, then organizations, products and the other chosen kinds of named entity are swapped between "
        "similar passages of different documents. Higher rates swap more passages."
    )
    knob = SWAP_KNOB
    changes = "text"
    detects = "named entities"
    shown_first = ("swap_dr", "swap_du")

    metadata: str | None
    swap: tuple[str, ...]
    fixed: tuple[str, ...]
    change: tuple[str, ...]
    along: tuple[str, ...]
    components: int
    mixture: str
    min_weight: float
    population: float
    embedding: str
    percentile: float
    identifiers: str | None
    unit: str
    corrections: str  # the common parameter (`engine.protect.params.CORRECTIONS`)
    parameters = (
        Param(
            "metadata",
            str,
            None,
            "the field whose value the text must not disclose, one value per document (default: the first "
            "sensitive categorical field, else the document column)",
            fields=("categorical",),
            suggest="sensitive",
            label="Protected field",
        ),
        Param(
            "swap",
            str,
            ("organization",),
            "entity categories swapped between the two chunks of a pair (S). The paper swaps organization and "
            "product; a pair needs entities in every S category, and products are named in few chunks (6% of "
            "the earnings-calls demo's: 6 pairs), so the default swaps organizations",
            choices=CATEGORY_NAMES,
            many=True,
            label="Swapped categories (S)",
        ),
        Param(
            "fixed",
            str,
            ("date",),
            "entity categories never changed (F)",
            choices=CATEGORY_NAMES,
            many=True,
            label="Fixed categories (F)",
        ),
        Param(
            "change",
            str,
            ("event",),
            "entity categories that must change (C): exchanged within a pair, suppressed everywhere else",
            choices=CATEGORY_NAMES,
            many=True,
            label="Must-change categories (C)",
        ),
        Param(
            "along",
            str,
            ("person", "location", "product", TERM),
            "entity categories exchanged along with the swapped ones within a pair, without a pair needing them "
            "(A; an extension of the paper, whose U categories may be suppressed otherwise): a chunk whose partner "
            "has none has its own suppressed, and the chunks no pair takes keep theirs. term: the words only one "
            "document's value uses (a company's products, segments, plants, jargon), learnt from the data",
            choices=CATEGORY_NAMES,
            many=True,
            label="Exchanged along (A)",
        ),
        Param(
            "components",
            int,
            10,
            "clusters of similar chunks (K, the mixture's components); pairs are drawn within one",
            low=1,
            high=200,
            label="Clusters (K)",
        ),
        Param(
            "mixture",
            str,
            "cauchy",
            "component density of the spherical mixture: spherical Cauchy or Poisson-kernel-based",
            choices=("cauchy", "pkb"),
            expert=True,
            label="Mixture density",
        ),
        Param(
            "min_weight",
            float,
            1e-3,
            "lower bound on a cluster's share (ε)",
            low=0.0,
            high=0.1,
            expert=True,
            label="Least cluster share (ε)",
        ),
        Param(
            "population",
            float,
            1e20,
            "population size N of the risk's superpopulation table (the paper uses 1e20)",
            low=1.0,
            high=1e40,
            expert=True,
            label="Population size (N)",
        ),
        Param(
            "embedding",
            str,
            "minilm",
            "chunk embeddings: all-MiniLM-L6-v2 (a sentence transformer, ~20 chunks a second) or TF-IDF + SVD "
            "(fast, but blind to what a swap changes: the utility then stays at 1)",
            choices=("minilm", "tfidf-svd"),
            expert=True,
            label="Chunk embedding",
        ),
        Param(
            "percentile",
            float,
            DEFAULT_PERCENTILE,
            "breakpoint percentile for cutting one-row documents into chunks",
            low=0.0,
            high=100.0,
            expert=True,
            label="Breakpoint percentile",
        ),
        Param(
            "identifiers",
            str,
            None,
            "CSV of direct identifiers (columns: <metadata field>, label, value); default identifiers.csv beside "
            "the data when there is one",
            expert=True,
            label="Identifiers file",
        ),
        Param(
            "unit",
            str,
            "documents",
            "what the bundle releases: whole documents (one row per record, as the data holds them; the "
            "document-level risk is reported) or passages (every chunk alone, shuffled, with no column linking it "
            "to its document; the document-level risk then does not apply)",
            choices=("documents", "passages"),
            label="Released unit",
        ),
    )

    def validate(self) -> None:
        roles = [*self.swap, *self.fixed, *self.change, *self.along]
        twice = sorted({c for c in roles if roles.count(c) > 1})
        if twice:
            raise ConfigError(
                f"categories {', '.join(twice)} are given two roles; give each at most one of swap, fixed, change, "
                "along"
            )
        if not self.swap:
            raise ConfigError("give at least one entity category to swap (swap); the paper swaps organization, product")

    def roles(self) -> dict[str, str]:
        return {
            **dict.fromkeys(self.swap, "S"),
            **dict.fromkeys(self.fixed, "F"),
            **dict.fromkeys(self.change, "C"),
            **dict.fromkeys(self.along, "A"),
        }

    def metadata_field(self, dataset: Dataset) -> str:
        """The field the swap protects: the one given, which must be a categorical field or the document column
        (never the text, whose release would then be withheld), else the first sensitive categorical field,
        else the document column."""
        schema = dataset.schema
        if self.metadata is not None:
            if self.metadata not in dataset.frame.columns:
                raise ConfigError(
                    f"metadata field {self.metadata!r} is not a column of {dataset.name}; columns: "
                    + ", ".join(map(str, dataset.frame.columns))
                )
            accepted = [f.name for f in schema.fields if f.kind == "categorical"]
            accepted += [schema.document] if schema.document is not None else []
            if self.metadata not in accepted:
                kinds = {f.name: f"a {f.kind} field" for f in schema.fields}
                what = {schema.text: "the text column", schema.author: "the author column"} | kinds
                named = next(p.named for p in self.parameters if p.name == "metadata")
                raise ConfigError(
                    f"{named} {self.metadata!r} is {what.get(self.metadata, 'not a field')}: the swap protects a "
                    "value of each document that its text must not disclose (the company of a call), a categorical "
                    "field or the document column; accepted here: "
                    + (", ".join(map(repr, accepted)) or "none (the data has neither)")
                )
            return self.metadata
        sensitive = [f.name for f in schema.fields_with_role("sensitive") if f.kind == "categorical"]
        if sensitive:
            return sensitive[0]
        if schema.document is not None:
            return schema.document
        named = next(p.named for p in self.parameters if p.name == "metadata")
        raise ConfigError(
            "the swap needs the field to protect: the data has no sensitive categorical field and no document "
            f"column; choose one with the parameter {named}"
        )

    def fit_identity(self, dataset: Dataset | None = None) -> dict:
        # the lists kept, if any, without refusing: a key is computed before a fit, which says what is missing
        use = isinstance(dataset, Dataset) and self.corrections == KEPT
        kept = kept_corrections(dataset.fingerprint, self.name) if use and dataset is not None else None
        return {
            "corrections": kept.digest() if kept is not None else None,
            "embedding": model_version() if self.embedding == "minilm" else "tfidf-svd (100 dims)",
            "identifiers": identifiers_digest(dataset, self.identifiers),
            "detection_gold": gold_digest(),  # what the residual detection risk is measured on
        }

    def check(self, dataset: Dataset) -> list[str]:
        metadata = self.metadata_field(dataset)
        if self.identifiers:
            identifiers_path(dataset, self.identifiers)
        frame = dataset.frame
        documents = frame[dataset.schema.document] if dataset.schema.document is not None else frame[metadata]
        per_document = frame.groupby(documents.astype(str))[metadata].nunique()
        if (per_document > 1).any():
            bad = per_document[per_document > 1].index[0]
            raise DataError(
                f"document {bad!r} has several values of {metadata}; the swap protects one value per document"
            )
        if documents.nunique() < 2:
            raise DataError("the swap needs at least two documents: it exchanges entities between documents")
        if documents.duplicated().any() and self.population < len(frame):  # every row a chunk
            raise ConfigError(
                f"population (N) = {self.population:g} is smaller than the {len(frame):,} chunks of "
                f"{dataset.name}; give at least the number of chunks (the paper uses 1e20)"
            )
        return []

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedSwap:
        self.check(dataset)
        metadata = self.metadata_field(dataset)
        schema, frame = dataset.schema, dataset.frame
        texts = frame[schema.text].astype(str).tolist()
        document_column = schema.document if schema.document is not None else metadata
        documents = frame[document_column].astype(str).to_numpy()
        embed = MiniLMEmbedder() if self.embedding == "minilm" else None
        if embed is not None:
            embed.progress = progress
        if pd.Series(documents).duplicated().any():
            spans = pd.DataFrame({"record": range(len(texts)), "start": 0, "end": [len(t) for t in texts]})
        else:
            cutter = embed or TfidfSvdEmbedder().fit(texts)
            if embed is not None:
                embed.progress = no_progress  # the bar counts documents here
            cuts = chunk_documents(texts, cutter, self.percentile, progress)
            if embed is not None:
                embed.progress = progress
            spans = pd.DataFrame(
                [(r, s, e) for r, doc in enumerate(cuts) for s, e in doc], columns=["record", "start", "end"]
            )
        chunks = [texts[r][s:e] for r, s, e in spans.itertuples(index=False)]
        if self.population < len(chunks):
            raise ConfigError(
                f"population (N) = {self.population:g} is smaller than the {len(chunks):,} chunks of {dataset.name}; "
                "N is the size of the population the chunks are a sample of: give at least the number of chunks "
                "(the paper uses 1e20)"
            )
        chunk_docs = documents[spans["record"].to_numpy()]
        labels = frame[metadata].astype(str).to_numpy()[spans["record"].to_numpy()]
        path = identifiers_path(dataset, self.identifiers)
        listed = merged(
            read_identifiers(path, metadata) if path is not None else {},
            column_identifiers(frame, schema.direct_identifiers, frame[metadata].astype(str)),
        )
        ids = {
            doc: {"Ticker" if metadata.lower() == "ticker" else metadata: [label], **listed.get(label, {})}
            for doc, label in zip(chunk_docs, labels)
        }
        kept = method_corrections(dataset.fingerprint, self.name, self.corrections)
        try:
            prepared = pipeline.prepare(
                chunks,
                chunk_docs,
                self.roles(),
                ids,
                clusters=self.components,
                kind="cauchy" if self.mixture == "cauchy" else "pkb",
                min_weight=self.min_weight,
                embed=embed,
                progress=progress,
                labels=labels,
                corrections=kept,
            )
        except ValueError as e:
            raise ConfigError(f"the swap cannot be prepared on {dataset.name}: {e}") from None
        finally:
            if embed is not None:
                embed.progress = no_progress  # the fit is cached and shipped to workers: no callback in it
        values, roles = prepared.entities.values, prepared.roles
        swap, _, others = check_roles(values, roles)
        candidates = valid_pairs(values, prepared.documents, prepared.clusters, swap, others)
        full = swap_entities(
            values, prepared.documents, prepared.clusters, roles, 1.0, np.random.default_rng(0), candidates
        )
        limit = min(1.0, 2 * len(full.pairs) / max(len(chunks), 1))
        protected = [c for c in (*self.swap, *self.change, *self.along) if c != TERM]  # terms are learnt, not detected
        return FittedSwap(
            frame=frame,
            text_column=schema.text,
            metadata=metadata,
            spans=spans,
            prepared=prepared,
            labels=labels,
            population=self.population,
            rate_limit=limit,
            candidates=candidates,
            gazetteer={
                label: list(
                    dict.fromkeys(
                        v for kind, values in by_label.items() for s in values for v in variants_under(kind, s)
                    )
                )
                for label, by_label in {str(lab): ids[doc] for doc, lab in zip(chunk_docs, labels)}.items()
            },
            knob=data_knob(limit),
            released_as_is=tuple(
                str(c)
                for c in frame.columns
                if c not in (schema.text, metadata) and schema.identifiers.get(str(c), "keep") == "keep"
            ),
            suppressed=_suppressed_text(metadata, path, schema.direct_identifiers, listed),
            own_names=names_of_one(prepared.entities.mentions, labels, metadata),
            detection=detection_shares(protected, gold_found(protected, progress)),
            unit=self.unit,
            corrections=kept.kept() if kept is not None else None,
        )


PASSAGES = "passages"
"""The bundle's table of passages (``passages.csv``) when the swap releases passages (``unit = "passages"``)."""


def passages_statement(n: int) -> str:
    """What a release of passages says of its unit and of the document-level risk."""
    return (
        f"{n:,} passages, shuffled, with no document id or other column linking them to their document: no whole "
        "document is released, so the document-level risk (a document's passages pooled) does not apply"
    )


OWN_NAMES = "Names held by one document's chunks only, not suppressed"
"""The internal review's table of `FittedSwap.own_names`."""


def data_knob(limit: float) -> Knob:
    """The swap-rate knob on this data: its grid spans 0 to the highest rate the valid pairs allowed in a swap
    at r = 1 (rounded down to 0.005; a higher rate swaps the same pairs, as there are no more), in 8 steps."""
    top = min(1.0, max(0.01, float(np.floor(limit * 200) / 200)))
    grid = tuple(sorted({round(float(v), 4) for v in np.linspace(0.0, top, 9)}))
    return Knob(**{**SWAP_KNOB.__dict__, "grid": grid, "default": grid[len(grid) // 2]})


__all__: Sequence[str] = ("EntitySwap", "FittedSwap", "SwapDetail")
