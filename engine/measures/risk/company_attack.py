"""Can an intruder still tell which document's metadata (which company) a released chunk came from? The intruder
of the named-entity swap, and McNemar's test on its paired outcomes before and after the swap (Greve & Sablica,
Tables 2–3).

A stated departure: the paper asks two large language models to name the company; here the intruder is what a
steward can run offline. It reads, first, a gazetteer of every document's direct identifiers (the metadata
value itself, e.g. the ticker, and the names of the identifiers file): a chunk naming exactly one company's
identifiers is attributed to it. Otherwise a classifier names the company: a linear support vector machine (one
company against the rest) on TF-IDF of words and word pairs beside TF-IDF of the named entities in the text
(every entity string the corpus's chunks hold, matched as whole words), trained on the original text of other
chunks of the same companies — for each document, a seeded half of its chunks is the intruder's reading (kept
from the attack) and the other half are the targets. The intruder is strong: it has read the companies' own
words, names included. Its vocabularies are bounded (the `WORD_FEATURES` most frequent words and pairs seen in
two chunks or more, the `ENTITY_FEATURES` most frequent entities), so its memory grows with the number of
companies, not with the corpus. Of the classifiers tried on these features it names the most targets before any
swap: on the earnings-calls demo 55% (multinomial logistic regression 51%), on the 306 calls of 2021 Q3 37%
(logistic regression 32%, with a peak of 4.3 GB where this one stays at 1.7 GB, the swap's fit included).

`swap_attack_accuracy` is the share of targets the intruder names correctly in the release (chunks not swapped
read as in D_pre: identifiers and C categories suppressed), so it is the pre-swap accuracy at r = 0 and falls as
swaps put other companies' entities in the chunks. Its detail gives the accuracy before and after on the
swapped targets (Table 2) and McNemar's exact test on those paired outcomes (Table 3), whose p-value is
`swap_mcnemar_p`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from engine.intervals import wilson
from engine.measures.base import Attack, Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.risk.paired import mcnemar_exact
from engine.measures.shared import preset_of
from engine.measures.swapped import fitted_swap, original_chunks, released_chunks, swap_detail, swapped_flags
from engine.text.alternation import longest_first
from engine.text.names import identifier_pattern

WORD_FEATURES = 2**15
ENTITY_FEATURES = 2**14
SPLIT_SEED = 20250101
"""Seed of the split of each document's chunks into the intruder's reading and the targets (fixed, so every
release of a dataset is attacked on the same targets)."""


class Gazetteer:
    """Every document's identifying strings, matched as `identifier_pattern` matches one (whole words; exact
    case for a short all-capital string, else any case), all at once: two alternations, longest first
    (`longest_first`; the strings matched in any case are casefolded)."""

    def __init__(self, identifiers: dict[str, list[str]]) -> None:
        self.exact: dict[str, set[str]] = {}
        self.folded: dict[str, set[str]] = {}
        for label, values in identifiers.items():
            for v in (v.strip() for v in values):
                if not v:
                    continue
                if identifier_pattern(v).flags & re.IGNORECASE:
                    self.folded.setdefault(v.casefold(), set()).add(label)
                else:
                    self.exact.setdefault(v, set()).add(label)
        self.patterns = [
            (
                table,
                re.compile(r"(?<!\w)(?:" + longest_first(table) + r")(?!\w)", flags),
            )
            for table, flags in ((self.exact, 0), (self.folded, re.IGNORECASE))
            if table
        ]

    def __len__(self) -> int:
        return len(self.exact) + len(self.folded)

    def labels_in(self, text: str) -> set[str]:
        """The documents whose identifiers ``text`` names."""
        out: set[str] = set()
        for table, pattern in self.patterns:
            for m in pattern.finditer(text):
                out |= table[m.group(0) if table is self.exact else m.group(0).casefold()]
        return out


@dataclass
class Intruder:
    """The gazetteer and the classifier, with the targets and their pre-swap outcomes."""

    labels: np.ndarray  # the metadata value of every chunk
    targets: np.ndarray  # chunk positions attacked
    gazetteer: Gazetteer
    model: object
    pre: np.ndarray  # bool per target: named correctly in D_pre

    def name(self, texts: list[str]) -> np.ndarray:
        """The company the intruder names for each text."""
        guesses: np.ndarray = np.array(list(self.model.predict(texts)), dtype=object)  # type: ignore[attr-defined]
        for i, text in enumerate(texts):
            hits = self.gazetteer.labels_in(text)
            if len(hits) == 1:
                guesses[i] = hits.pop()
        return guesses

    def correct(self, texts: list[str], chunks: np.ndarray) -> np.ndarray:
        """Whether the intruder names the company of each of ``texts`` (the texts of ``chunks``) correctly."""
        return np.asarray(self.name(texts) == self.labels[chunks], dtype=bool)


class EntityTokens:
    """An analyzer for scikit-learn's vectorizers: the known entity strings a text holds, as whole words."""

    def __init__(self, entities: list[str]) -> None:
        known = {e for e in entities if len(e) > 1}
        self.pattern = re.compile(r"(?<!\w)(?:" + longest_first(known) + r")(?!\w)") if known else None

    def __call__(self, text: str) -> list[str]:
        return self.pattern.findall(text) if self.pattern is not None else []


def build_intruder(
    labels: np.ndarray,
    documents: np.ndarray,
    originals: list[str],
    reference: list[str],
    gazetteer: dict[str, list[str]],
    entities: list[str],
) -> Intruder:
    """Split each document's chunks into reading and targets, train the classifier on the reading's original
    text, and attack the targets' pre-swap text (module docstring)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline, make_union
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(SPLIT_SEED)
    reading, targets = [], []
    for doc in pd.unique(documents):
        mine = np.flatnonzero(documents == doc)
        mine = mine[rng.permutation(len(mine))]
        half = len(mine) // 2
        reading += mine[:half].tolist()
        targets += mine[half:].tolist()
    reading_idx, target_idx = np.sort(reading), np.sort(targets)
    if len(np.unique(labels[reading_idx])) < 2:
        raise ValueError("the intruder needs chunks of at least two companies to read; the documents are too short")
    words = TfidfVectorizer(
        ngram_range=(1, 2), sublinear_tf=True, min_df=2, max_features=WORD_FEATURES, dtype=np.float32
    )
    named = TfidfVectorizer(analyzer=EntityTokens(entities), max_features=ENTITY_FEATURES, dtype=np.float32)
    features = make_union(words, named) if entities else words  # texts that name nothing: the words alone
    model = make_pipeline(features, LinearSVC(C=1.0))
    model.fit([originals[k] for k in reading_idx], labels[reading_idx])
    svm = model.steps[-1][1]
    # Kept in single precision, as its features are: the 306 calls of 2021 Q3 give 306 × 41,527 coefficients,
    # 51 MB instead of 102 in every process that holds the intruder (a sweep's too). Their 11,992 guesses of the
    # targets' reference and original texts came out the same (smallest gap between a text's top two scores
    # 1.4e-6).
    svm.coef_ = svm.coef_.astype(np.float32)
    intruder = Intruder(labels, target_idx, Gazetteer(gazetteer), model, np.zeros(0, dtype=bool))
    intruder.pre = intruder.correct([reference[k] for k in target_idx], target_idx)
    return intruder


class _SwapAttack(Measure):
    """What the attack and its McNemar test share: the intruder, prepared once, and one attack per release."""

    applies_to = "text"
    methods = ("swap",)
    intruder_use = (
        "her texts here are other text of the same companies; not measured for an intruder who holds no texts. "
        "The field values she knows do not enter this attack (the company is the protected field)."
    )

    def prepare(self, context: PrepareContext) -> None:
        preset_of(context, needs_texts=True)
        fitted = fitted_swap(context)
        self._fitted = fitted

        def build() -> Intruder:
            from engine.measures.base import ReleaseView as View

            originals = original_chunks(fitted, View(context.dataset, context.dataset.frame))
            p = fitted.prepared
            values = p.entities.values
            entities = [str(e) for c in values.columns for cell in values[c] for e in cell]
            return build_intruder(fitted.labels, p.documents, originals, p.reference, fitted.gazetteer, entities)

        self._intruder = context.shared("swap-intruder", build)
        n = len(self._intruder.targets)
        self.note = (
            f"Intruder: a gazetteer of {len(self._intruder.gazetteer):,} identifying strings, then a classifier of words "
            "and named entities "
            f"trained on the original text of half of each document's chunks; attacked: the other {n:,} chunks "
            f"({self._intruder.pre.mean():.0%} named correctly before any swap)."
        )

    def _attack(self, view: ReleaseView) -> pd.DataFrame:
        def run() -> pd.DataFrame:
            intruder, fitted = self._intruder, self._fitted
            targets = intruder.targets
            detail = swap_detail(view)
            if detail is None:  # the unprotected data: the original chunks, identifiers in place
                texts = original_chunks(fitted, view)
                post = intruder.correct([texts[k] for k in targets], targets)
            else:
                post = intruder.pre.copy()
                texts = released_chunks(fitted, view)
                moved = np.array([k in detail.moved for k in targets], dtype=bool)
                if moved.any():
                    post[moved] = intruder.correct([texts[k] for k in targets[moved]], targets[moved])
            swapped = swapped_flags(fitted, view)[targets]
            return pd.DataFrame({"chunk": targets, "swapped": swapped, "pre": intruder.pre, "post": post})

        return view.memo("swap-attack", run)

    @staticmethod
    def summary(outcomes: pd.DataFrame) -> pd.DataFrame:
        """Accuracy before and after on all targets and on the swapped ones, with McNemar's test on the latter."""
        rows = []
        for what, part in (("all targets", outcomes), ("swapped targets", outcomes[outcomes["swapped"]])):
            row = {"chunks": what, "n": len(part), "accuracy_pre": np.nan, "accuracy_post": np.nan}
            row.update({"lost": 0, "gained": 0, "p_value": 1.0})
            if len(part):
                test = mcnemar_exact(part["pre"].to_numpy(), part["post"].to_numpy())
                row.update(
                    accuracy_pre=test.before_accuracy,
                    accuracy_post=test.after_accuracy,
                    lost=test.lost,
                    gained=test.gained,
                    p_value=test.p_value,
                )
            rows.append(row)
        return pd.DataFrame(rows)


class SwapAttackAccuracy(_SwapAttack):
    id = "swap_attack_accuracy"
    kind = "risk"
    better = "lower"
    label = "Protected value named by the intruder"
    meaning = (
        "The share of the attacked chunks whose protected value (the document's metadata, such as its company) "
        "an intruder names correctly from the released text: a gazetteer of identifiers, then a classifier "
        "trained on other text with the same values."
    )
    source = "Greve & Sablica (2025), Table 2 (an offline classifier in place of the paper's language models)"
    attack = Attack(
        holds=("original_sample",),
        names="document",
        assumptions=(
            "The intruder has read the original text (identifiers in place) of half of each document's chunks, "
            "with each document's metadata, and a gazetteer of every document's identifiers; she names the "
            "metadata of the other half as released. She was built beside the swap, on the data it protects. "
            "Chance: guessing one of the documents' metadata values she read."
        ),
    )

    def compute(self, view: ReleaseView) -> MetricResult:
        outcomes = self._attack(view)
        named = outcomes["post"].to_numpy(bool)
        lo, hi = wilson(int(named.sum()), len(named))
        chance = 1.0 / len(self._intruder.model.steps[-1][1].classes_)  # type: ignore[attr-defined]
        return MetricResult(self.id, float(named.mean()), self.summary(outcomes), lo=lo, hi=hi, chance=chance)


class SwapMcNemarP(_SwapAttack):
    id = "swap_mcnemar_p"
    kind = "risk"
    better = "lower"
    label = "McNemar p-value of the swap"
    p_value = True
    meaning = (
        "McNemar's exact test of 'the swap changed nothing the intruder gets right' on the swapped chunks, before "
        "and after: a small p-value says the swap made the intruder measurably worse. 1 when nothing was swapped."
    )
    source = "Greve & Sablica (2025), Table 3"

    def compute(self, view: ReleaseView) -> MetricResult:
        table = self.summary(self._attack(view))
        return MetricResult(self.id, float(table["p_value"].iloc[1]), None)
