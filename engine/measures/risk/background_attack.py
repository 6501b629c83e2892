"""Attacks of an intruder who holds a background corpus the steward declares (``--background``), built without
regard to any method: an attacker the tool did not design beside the method it grades.

The intruder reads the background's texts, each labelled by who wrote it (the data's author column) or by the
metadata of the document it belongs to (a field of the data constant within each document, such as the
company of a call), and trains a linear support vector machine, one label against the rest, on TF-IDF of
words and word pairs beside TF-IDF of character 3- to 5-grams (within words), with sublinear term frequency.
She then names each released record's label by the largest decision score among the background's labels.

- `background_author_attack` names the author of each released record, `background_document_attack` the
  document (its metadata) of each released record or passage;
- `background_document_level` pools a released document's passages: it sums their decision scores per label
  and names the document by the largest sum (reported wherever the release keeps the document column, that is
  wherever whole documents are released).

On a release of the named-entity swap, `background_document_attack`'s detail also counts the swapped chunks
whose label the background holds (`swapped_chunks`) and how many of them the intruder names with the identifiers
suppressed and nothing swapped (`swapped_named_before`: the chunks as the swap's D_pre holds them) and as
released (`swapped_named_after`): the swap's target (issue 50) is that the second share is at most half the
first (`SwapTarget`, which the export check `SwapMissesBackgroundTarget` reads).

Each value is the share named correctly among the released records (or documents) whose label the background
holds (the others cannot be named by this intruder; the detail counts them), with its Wilson 95% interval; the
chance level is one over the number of labels the background holds: an intruder guessing among them uniformly.
The vocabularies are bounded (`WORD_FEATURES`, `CHAR_FEATURES`, the most frequent terms of the background), so
the model grows with the number of labels, not with the corpus; coefficients are kept in single precision.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from engine.data.background import Background, read_background
from engine.data.dataset import Dataset
from engine.errors import ConfigError, DataError
from engine.intervals import wilson
from engine.measures.base import (
    Attack,
    Measure,
    MetricResult,
    NotApplicable,
    PrepareContext,
    ReleaseView,
    metric_info,
)
from engine.measures.swapped import swap_detail
from engine.protect.params import Param

if TYPE_CHECKING:
    from engine.measures.settings import MeasureSettings

WORD_FEATURES = 50_000
CHAR_FEATURES = 100_000
SVM_C = 1.0

BACKGROUND = Param(
    "background",
    str,
    None,
    "a file of texts an intruder may already hold (CSV, TSV, JSON Lines or Parquet, read as the data is): the "
    "background attacks train on its texts, labelled by the data's author column or by a field of the data "
    "constant within each document (e.g. the company) that the file has too; none: the background attacks are "
    "not measured",
    label="Background corpus",
)
"""The background corpus a steward declares, a setting of the background attacks."""


def releases_passages(fitted: object) -> bool:
    """Whether ``fitted``'s releases carry the text as passages with no document link (the swap's
    ``unit = "passages"``): the passages are attacked one by one, and no document as a whole."""
    return getattr(fitted, "unit", "documents") == "passages"


def document_label(dataset: Dataset, background: Background) -> str | None:
    """The field of the data that labels documents for the intruder: the first field, in schema order, constant
    within every document of the data, that the background has as a column with a value in common (None: none,
    or the data declares no document column)."""
    document = dataset.schema.document
    if document is None:
        return None
    frame = dataset.frame
    for f in dataset.schema.fields:
        if f.name not in background.frame.columns or f.name == document:
            continue
        if frame.groupby(document)[f.name].nunique(dropna=False).max() != 1:
            continue
        if _shared(frame[f.name], background.frame[f.name]):
            return f.name
    return None


def author_label(dataset: Dataset, background: Background) -> str | None:
    """The data's author column where the background has it with an author in common (None otherwise)."""
    author = dataset.schema.author
    if author is None or author not in background.frame.columns:
        return None
    return author if _shared(dataset.frame[author], background.frame[author]) else None


def label_values(values: pd.Series) -> np.ndarray:
    """A column's values as the attacks' labels: strings, stripped, a missing value as ""."""
    return values.astype("string").fillna("").str.strip().to_numpy(dtype=object)


def _shared(data: pd.Series, background: pd.Series) -> bool:
    return bool(set(label_values(data)) - {""} & set(label_values(background)) - {""})


TARGET_RATIO = 0.5
"""The swap's target against the background intruder: her share of swapped chunks named as released at most this
fraction of her share of the same chunks with the identifiers suppressed and nothing swapped."""


@dataclass(frozen=True)
class SwapTarget:
    """The background intruder on the chunks a swap release swapped (those whose label the background holds):
    how many, how many she names with the identifiers suppressed and nothing swapped (``before``) and as
    released (``after``), pooled over the replicates of a detail."""

    chunks: int
    before: int
    after: int

    @property
    def share_before(self) -> float:
        return self.before / self.chunks

    @property
    def share_after(self) -> float:
        return self.after / self.chunks

    @property
    def reached(self) -> bool:
        """Whether the share named as released is at most `TARGET_RATIO` of the share named before."""
        return self.after <= TARGET_RATIO * self.before

    def statement(self, share: Any) -> str:
        """The comparison in words, ``share`` formatting a share (the measure's format): reached or not."""
        said = (
            f"she names {share(self.share_after)} of the {self.chunks:,} swapped chunks whose label the background "
            f"corpus holds as released ({self.after:,}), against {share(self.share_before)} of the same chunks with "
            f"the identifiers suppressed and nothing swapped ({self.before:,}); the target is at most half "
            f"({share(TARGET_RATIO * self.share_before)})"
        )
        if self.reached:
            return f"The swap reaches its target against the background attacker: {said}"
        return f"The swap does not reach its target against the background attacker: {said}"

    @classmethod
    def of(cls, detail: pd.DataFrame | None) -> SwapTarget | None:
        """Read from `background_document_attack`'s detail (None: not a swap release, or no swapped chunk the
        background can label)."""
        if detail is None or "swapped_chunks" not in detail.columns:
            return None
        chunks = int(detail["swapped_chunks"].sum())
        if chunks == 0:
            return None
        return cls(chunks, int(detail["swapped_named_before"].sum()), int(detail["swapped_named_after"].sum()))


def swap_target_reached(metrics: Mapping[str, MetricResult]) -> str | None:
    """The statement that a swap release reaches its target against the background intruder, when its measures
    say it does (a miss is the export check's warning, `SwapMissesBackgroundTarget`)."""
    measured = metrics.get("background_document_attack")
    target = None if measured is None else SwapTarget.of(measured.detail)
    if target is None or not target.reached:
        return None
    return target.statement(metric_info("background_document_attack").format)


@dataclass
class BackgroundIntruder:
    """The intruder trained on a background corpus: the two vectorizers, the labels she chooses among and one
    weight vector per label (rows of ``coef``, single precision)."""

    words: TfidfVectorizer
    chars: TfidfVectorizer
    labels: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray

    @classmethod
    def train(cls, texts: list[str], labels: np.ndarray) -> BackgroundIntruder:
        keep = labels != ""
        texts, labels = [t for t, k in zip(texts, keep, strict=True) if k], labels[keep]
        classes = np.unique(labels)
        if len(classes) < 2:
            raise DataError("the background corpus holds fewer than two labels; the attack needs at least two")
        words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=WORD_FEATURES, dtype=np.float32)
        chars = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, max_features=CHAR_FEATURES, dtype=np.float32
        )
        x = sparse.hstack([words.fit_transform(texts), chars.fit_transform(texts)]).tocsr()
        with warnings.catch_warnings():  # one text per label (a call per company) is what a background often holds
            warnings.filterwarnings("ignore", message="The number of unique classes is greater than 50%")
            svm = LinearSVC(C=SVM_C, dual="auto", max_iter=5000, random_state=0).fit(x, labels)
        coef, intercept = svm.coef_, svm.intercept_
        if len(svm.classes_) == 2:  # one decision function for two labels: the second label's, and its opposite
            coef, intercept = np.vstack([-coef, coef]), np.concatenate([-intercept, intercept])
        return cls(words, chars, svm.classes_, coef.astype(np.float32), intercept.astype(np.float32))

    def scores(self, texts: list[str]) -> np.ndarray:
        """Decision scores: one row per text, one column per label."""
        x = sparse.hstack([self.words.transform(texts), self.chars.transform(texts)]).tocsr()
        return np.asarray(x @ self.coef.T) + self.intercept

    @property
    def chance(self) -> float:
        return 1.0 / len(self.labels)


class LabelIntruder(Protocol):
    """What a background attack asks of its intruder: the labels she names among, her chance level and a score
    of each text for each label (the largest names it)."""

    labels: np.ndarray

    @property
    def chance(self) -> float: ...

    def scores(self, texts: list[str]) -> np.ndarray: ...


class BackgroundAttack(Measure):
    """What the three background attacks share: the background read, the label chosen, the intruder trained
    once (`PrepareContext.shared`), the released texts scored once per release (`ReleaseView.memo`)."""

    kind = "risk"
    better = "lower"
    applies_to = "release"
    settings = (BACKGROUND,)
    reads_withheld = True
    names_by: str = "document"  # "author" or "document": the label the attack names

    intruder_use = (
        "the background attacks do not read the preset: their intruder holds the declared background corpus and "
        "the released texts, nothing else."
    )

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        path = settings[BACKGROUND.name]
        if path is not None:
            try:
                read_background(path)
            except DataError as exc:
                raise ConfigError(f"--background: {exc}") from None

    def prepare(self, context: PrepareContext) -> None:
        path = context.settings[BACKGROUND.name]
        if path is None:
            raise NotApplicable("no background corpus declared (--background, or the Data page)")
        dataset = context.dataset
        text = dataset.schema.text
        if text in context.withheld and not releases_passages(context.fitted):
            raise NotApplicable("the release withholds the text")
        background = context.shared(("background", path), lambda: read_background(path))
        label = (author_label if self.names_by == "author" else document_label)(dataset, background)
        if label is None:
            raise NotApplicable(self._no_label(dataset, background))
        self.label_field, self.text = label, text
        self.intruder = self.train(context, background, label)
        truth = label_values(dataset.frame[label])
        self.truth = truth
        self.attackable = np.isin(truth, self.intruder.labels)
        if not self.attackable.any():
            raise NotApplicable(f"no record's {label} is among the background corpus's")
        self.note = (
            f"trained on {background.rows:,} texts of {background.name} labelled by {label} "
            f"({len(self.intruder.labels):,} labels); {int(self.attackable.sum()):,} of {len(truth):,} records have "
            "a label the background holds"
        )

    def train(self, context: PrepareContext, background: Background, label: str) -> LabelIntruder:
        """The intruder trained on the background's texts labelled by ``label``, once for every measure that asks
        (`PrepareContext.shared`): here the linear SVM of words and character n-grams."""
        return context.shared(
            ("background_intruder", background.sha256, label),
            lambda: BackgroundIntruder.train(background.texts(), label_values(background.frame[label])),
        )

    def _no_label(self, dataset: Dataset, background: Background) -> str:
        if self.names_by == "author":
            if dataset.schema.author is None:
                return "the data has no author column"
            return (
                f"the background corpus has no author in its column '{dataset.schema.author}' in common with the data"
            )
        if dataset.schema.document is None:
            return "the data declares no document column"
        return (
            "no field of the data constant within each document is a column of the background corpus with a "
            "value in common"
        )

    def _scores(self, view: ReleaseView) -> np.ndarray:
        texts = view.data[self.text].fillna("").astype(str).tolist()
        return view.memo(("background_scores", id(self.intruder)), lambda: self.intruder.scores(texts))

    def _result(self, correct: np.ndarray, detail: pd.DataFrame) -> MetricResult:
        n, k = len(correct), int(correct.sum())
        lo, hi = wilson(k, n)
        return MetricResult(self.id, k / n if n else float("nan"), detail, lo=lo, hi=hi, chance=self.intruder.chance)

    def compute(self, view: ReleaseView) -> MetricResult:
        scores = self._scores(view)
        named = self.intruder.labels[np.argmax(scores, axis=1)]
        correct = (named == self.truth)[self.attackable]
        row = {
            "unit": "records",
            "attacked": int(self.attackable.sum()),
            "named": int(correct.sum()),
            "not_attackable": int((~self.attackable).sum()),
            "labels": len(self.intruder.labels),
        }
        return self._result(correct, pd.DataFrame([row]))


class BackgroundAuthorAttack(BackgroundAttack):
    """Share of released records whose author an intruder trained on the background corpus names."""

    id = "background_author_attack"
    names_by = "author"
    label = "Background attack: author named"
    card_label = "Background author attack"
    meaning = (
        "Share of released records whose author an intruder names, who trained a classifier of words and "
        "character n-grams on the background corpus the steward declared (texts labelled by their authors); "
        "read against the chance level of guessing among the background's authors."
    )
    source = (
        "Ororbia, Linder & Snoke, Section 3 (a linear SVM names the author), trained here on a declared background "
        "corpus with word and character n-gram TF-IDF"
    )
    attack = Attack(
        holds=("background",),
        names="author",
        assumptions=(
            "The intruder holds the background corpus (other texts by the same authors, each with its author) and "
            "the released texts; she names each released text's author among the background's authors by a "
            "linear classifier of its words and character n-grams. She knows nothing of the confidential data."
        ),
    )


class BackgroundDocumentAttack(BackgroundAttack):
    """Share of released records (passages) whose document metadata an intruder trained on the background
    corpus names."""

    id = "background_document_attack"
    names_by = "document"
    label = "Background attack: document named (per passage)"
    card_label = "Background passage attack"
    meaning = (
        "Share of released records (passages of documents) whose document metadata (e.g. the company) an "
        "intruder names, who trained a classifier of words and character n-grams on the background corpus the "
        "steward declared (documents of the same sources, labelled by that metadata); read against the chance "
        "level of guessing among the background's labels."
    )
    source = (
        "Ororbia, Linder & Snoke, Section 3 (a linear SVM names the author), trained here on a declared background "
        "corpus with word and character n-gram TF-IDF"
    )
    attack = Attack(
        holds=("background",),
        names="document",
        assumptions=(
            "The intruder holds the background corpus (other documents of the same sources, each labelled by its "
            "metadata, e.g. the company) and the released passages; she names each passage's label among the "
            "background's by a linear classifier of its words and character n-grams. She knows nothing of the "
            "confidential data."
        ),
    )

    def prepare(self, context: PrepareContext) -> None:
        super().prepare(context)
        fitted: Any = context.fitted
        self.swap = fitted if getattr(fitted, "method", None) == "swap" else None
        if self.swap is not None:  # each chunk's label (its record's) and whether she names it in D_pre
            self.chunk_truth = self.truth[self.swap.spans["record"].to_numpy()]
            self.chunk_attackable = np.isin(self.chunk_truth, self.intruder.labels)
            self.chunk_before = self._named(list(self.swap.prepared.reference)) == self.chunk_truth

    def _named(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.array([], dtype=object)
        return self.intruder.labels[np.argmax(self.intruder.scores(texts), axis=1)]

    def compute(self, view: ReleaseView) -> MetricResult:
        result = super().compute(view)
        detail = None if self.swap is None else swap_detail(view)
        if self.swap is None or detail is None or result.detail is None:
            return result
        swapped = np.flatnonzero(np.asarray(detail.swapped, dtype=bool) & self.chunk_attackable)
        reference = self.swap.prepared.reference
        after = self._named([detail.moved.get(int(k), reference[k]) for k in swapped]) == self.chunk_truth[swapped]
        counts = result.detail.assign(
            swapped_chunks=len(swapped),
            swapped_named_before=int(self.chunk_before[swapped].sum()),
            swapped_named_after=int(after.sum()),
        )
        return replace(result, detail=counts)


class BackgroundDocumentLevel(BackgroundAttack):
    """Share of released documents an intruder trained on the background corpus names, pooling each document's
    released passages."""

    id = "background_document_level"
    names_by = "document"
    label = "Background attack: documents named (passages pooled)"
    card_label = "Background document attack"
    meaning = (
        "Share of released documents whose metadata (e.g. the company) the background intruder names when she "
        "pools a document's released passages (the sum of their scores); reported wherever the release keeps "
        "which document each passage belongs to, that is wherever whole documents are released."
    )
    source = (
        "Ororbia, Linder & Snoke, Section 3 (a linear SVM names the author), trained on a declared background "
        "corpus; its scores summed over a released document's passages"
    )
    attack = Attack(
        holds=("background", "released_fields"),
        names="document",
        assumptions=(
            "The intruder holds the background corpus (other documents of the same sources, each labelled by its "
            "metadata) and the release, whose document column tells which passages belong together; she adds up "
            "her classifier's scores over a document's passages and names the document's label by the largest."
        ),
    )

    def prepare(self, context: PrepareContext) -> None:
        document = context.dataset.schema.document
        if releases_passages(context.fitted):
            raise NotApplicable(
                "the release carries passages, shuffled, with no column linking them to their document: no whole "
                "document is released"
            )
        if document is not None and document in context.withheld:
            raise NotApplicable("the release withholds the document column: no whole document is released")
        super().prepare(context)
        documents = context.dataset.frame[document].astype("string").fillna("").to_numpy(dtype=object)
        self.codes, firsts = pd.factorize(documents)[0], pd.Series(documents).drop_duplicates().index.to_numpy()
        self.document_truth = self.truth[firsts]
        self.document_attackable = self.attackable[firsts]

    def compute(self, view: ReleaseView) -> MetricResult:
        scores = self._scores(view)
        pooled = np.zeros((self.codes.max() + 1, scores.shape[1]))
        np.add.at(pooled, self.codes, scores)
        named = self.intruder.labels[np.argmax(pooled, axis=1)]
        correct = (named == self.document_truth)[self.document_attackable]
        detail = pd.DataFrame(
            [
                {
                    "unit": "documents",
                    "attacked": int(self.document_attackable.sum()),
                    "named": int(correct.sum()),
                    "not_attackable": int((~self.document_attackable).sum()),
                    "labels": len(self.intruder.labels),
                }
            ]
        )
        return self._result(correct, detail)
