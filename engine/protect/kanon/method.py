"""The `kanon` method: privacy attributes tagged in the text, the posts (or authors) made k-anonymous on the
quasi-identifiers they state, and the text rebuilt with the sanitized values (Abeywardana & Thayasivam; the
steps are in `tagger`, `sanitize` and `lattice`). The knob is k, the least size of an equivalence class.

`fit` tags every text once (the CRF of `tagger`, trained on the project's gold set, or with ``tagger``
"retrained" the one retrained on the steward's annotations of this dataset and kept: `retrained`) and builds the
records' quasi-identifier table; `release(k)` searches the generalization lattice, sanitizes and rebuilds the text. The
bundle carries the released quasi-identifier table (`quasi_identifiers.csv`, one row per record — a post, or an
author with ``--unit author`` — in the order of the released data: its class, its attributes as released,
whether it was suppressed, and its sensitive values when ℓ or t is asked) and, when an attribute is swapped,
that attribute's values per class (`swapped_values.csv`: class, attribute, values, records; no record order).
The release claims (an `AnonymityClaim`, which the manifest records and `textsdc verify` checks) that the first
is k-anonymous over every column but ``suppressed`` (and ``SA``), its suppressed rows set aside.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release, ReleaseDetail, Statement
from engine.protect.claims import AnonymityClaim
from engine.protect.corrections import KEPT, KeptCorrections, corrected, kept_corrections, method_corrections
from engine.protect.detection import GOLD_NAME, DetectionShare
from engine.protect.kanon.found import tagger_found
from engine.protect.kanon.gold import LABEL_NAMES, Span
from engine.protect.kanon.lattice import ANY, Anonymized
from engine.protect.kanon.retrained import CHOICES, PACKAGED, RETRAINED, RetrainedTagger, kept_retrained, tagger_in_use
from engine.protect.kanon.sanitize import (
    HIERARCHIES,
    MAX_UNION,
    OPERATIONS,
    SCHEME,
    Sanitized,
    propagate,
    qi_table,
    rebuild,
    sanitize,
    sensitive_values,
)
from engine.protect.params import Param
from engine.protect.redact import CHANGE_COLUMNS

KANON_KNOB = Knob(
    name="k",
    symbol="k",
    label="Least group size",
    low=2,
    high=50,
    default=5,
    scale="log",
    integer=True,
    more_privacy="higher",
    grid=(2, 3, 5, 10, 20, 50),
    help="every record shares the quasi-identifiers it states with at least k − 1 others (or is suppressed)",
)
QI_TABLE = "quasi_identifiers"
SWAPPED_TABLE = "swapped_values"
CLASS = "class"
SUPPRESSED = "suppressed"
SENSITIVE = "SA"
ATTRIBUTES = {
    "QIAGE": ("age", "age"),
    "QIRACE": ("race", "race or nationality"),
    "QIREGION": ("place", "place"),
    "QIGENDER": ("gender", "gender"),
    "QILANG": ("language", "language"),
    "QIJOB": ("occupation", "occupation"),
}
"""Each quasi-identifier label, its parameter and what it is called."""


@dataclass(frozen=True)
class KanonDetail(ReleaseDetail):
    """What the measures of a k-anonymous release read (kept out of the bundle but the released table)."""

    original: pd.DataFrame
    released: pd.DataFrame
    suppressed: np.ndarray
    class_sizes: np.ndarray
    levels: dict[str, int]
    loss: float
    over_limit: bool  # k was out of reach within the suppression limit: more records were suppressed
    section: ClassVar[str] = "kanon"
    block: ClassVar[str] = "measure figures"


def summary(anonymized: Anonymized, scheme: dict[str, str], max_suppressed: float) -> str:
    """What a release did to reach its k, in counts only: each attribute's operation (and a generalized one's
    level), the records suppressed, and whether k was out of reach within the suppression limit."""
    n, gone = len(anonymized.suppressed), int(anonymized.suppressed.sum())
    share = f"{gone:,} of {n:,} records ({gone / n:.1%})" if n else "no record"
    if anonymized.over_limit:
        return (
            f"Out of reach within the limit of {max_suppressed:.0%} suppressed records (whether a record states "
            f"an attribute at all cannot be generalized away): every attribute at its top level, {share} suppressed."
        )
    generalized = [
        f"{LABEL_NAMES[label]} to {HIERARCHIES[label].level_name(level)}"
        for label, level in anonymized.levels.items()
        if label in HIERARCHIES and scheme.get(label, "generalize") == "generalize" and level > 0
    ]
    said = [f"Generalized {', '.join(generalized)}." if generalized else "Nothing generalized."]
    for op, how in (("union", "United within each group"), ("swap", "Swapped within each group")):
        names = [LABEL_NAMES[label] for label in ATTRIBUTES if scheme.get(label) == op]
        if names:
            said.append(f"{how}: {', '.join(names)}.")
    said.append(f"Suppressed: {share}.")
    return " ".join(said)


def _flat(table: pd.DataFrame) -> pd.DataFrame:
    """A table of tuples as text cells ("" when nothing is stated; values joined by "; ")."""
    return table.apply(lambda col: col.map(lambda cell: "; ".join(cell)))


def public_tables(done: Sanitized, scheme: dict[str, str], sensitive: np.ndarray | None) -> dict[str, pd.DataFrame]:
    """The released tables: per record (in the order of its first post) its quasi-identifiers as released, its
    class ("*" when suppressed), whether it was suppressed and, with ``sensitive`` (ℓ or t asked), its sensitive
    values; and, when an attribute is swapped, its values per class (`sanitize.Sanitized.swapped`)."""
    suppressed = done.anonymized.suppressed
    table = _flat(done.table)
    table.insert(0, CLASS, [str(c) if c else ANY for c in done.class_ids])
    table[SUPPRESSED] = suppressed
    if sensitive is not None:
        table[SENSITIVE] = sensitive
    out = {QI_TABLE: table}
    if "swap" in scheme.values():
        out[SWAPPED_TABLE] = done.swapped
    return out


def claim(k: int, levels: dict[str, int], scheme: dict[str, str], ell: int | None, t: float | None) -> AnonymityClaim:
    """What the release claims of its quasi-identifier table, with how each attribute is released."""
    how = {}
    for label, (name, _) in ATTRIBUTES.items():
        op = scheme.get(label, "generalize")
        if op == "generalize":
            level = levels.get(label, 0)
            said = HIERARCHIES[label].level_name(level)
            how[label] = f"{name}: {said}" if level == 0 else f"{name}: generalized to {said}"
        elif op == "suppress":
            how[label] = f"{name}: suppressed ('*')"
        elif op == "union":
            how[label] = f"{name}: the union of its class's values (at most {MAX_UNION}, else generalized)"
        else:
            how[label] = (
                f"{name}: whether stated; swapped within its class in the text, its values per class in "
                f"{SWAPPED_TABLE}.csv (anatomy)"
            )
    sensitive = SENSITIVE if ell or t else None
    return AnonymityClaim(
        table=f"{QI_TABLE}.csv",
        quasi_identifiers=(CLASS, *ATTRIBUTES),
        k=k,
        suppressed=SUPPRESSED,
        sensitive=sensitive,
        ell=ell,
        t=t,
        attributes=tuple(how.items()),
        separate=(f"{SWAPPED_TABLE}.csv",) if "swap" in scheme.values() else (),
        class_column=CLASS,
    )


@dataclass
class FittedKanon(Fitted):
    frame: pd.DataFrame
    text_column: str
    spans: list[list[Span]]
    groups: np.ndarray  # per row: its record (0 … m−1)
    qi: pd.DataFrame
    surface: dict[tuple[str, str], str]
    sensitive: np.ndarray
    scheme: dict[str, str]
    max_suppressed: float
    ell: int | None
    t: float | None
    method: str = "kanon"
    knob: Knob = KANON_KNOB
    detection: tuple[DetectionShare, ...] = ()
    """What share of the attributes and identifiers the tagger finds on gold it was not trained on
    (`detection_shares`); the quasi-identifiers' first."""
    corrections: KeptCorrections | None = None
    """The steward's kept lists the tagger ran with (digest and counts)."""
    retrained: RetrainedTagger | None = None
    """The retrained tagger the texts were tagged with, when it was (``tagger`` "retrained")."""

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        k = int(self.knob.validate(value))
        texts = self.frame[self.text_column].astype(str).tolist()
        identifiers = sorted({t[a:b] for t, spans in zip(texts, self.spans) for a, b, label in spans if label == "DI"})
        done = sanitize(
            self.qi,
            k,
            self.scheme,
            self.max_suppressed,
            self.sensitive,
            self.ell,
            self.t,
            rng,
            self.surface,
            identifiers,
        )
        rows = []
        for row, (text, spans) in enumerate(zip(texts, self.spans)):
            new, changes = rebuild(text, spans, done.replacement[int(self.groups[row])])
            texts[row] = new
            rows += [(row, self.text_column, s, e, o, n, label) for s, e, o, n, label in changes]
        data = self.frame.copy()
        data[self.text_column] = texts
        a = done.anonymized
        detail = KanonDetail(done.original, done.released, a.suppressed, a.class_sizes, a.levels, a.loss, a.over_limit)
        said = Statement("Anonymization", summary(a, self.scheme, self.max_suppressed))
        sensitive = self.sensitive if self.ell or self.t else None
        return Release(
            data=data,
            method=self.method,
            knob=float(k),
            protected_columns=(self.text_column,),
            changes=pd.DataFrame(rows, columns=CHANGE_COLUMNS),
            details=(
                detail,
                said,
                claim(k, a.levels, self.scheme, self.ell, self.t),
                *(
                    replace(d, guarantee=f"k ≥ {k} over the attributes found") if i == 0 else d
                    for i, d in enumerate(self.detection)
                ),
                *((self.corrections,) if self.corrections is not None else ()),
                *((self.retrained,) if self.retrained is not None else ()),
            ),
            changes_ship=False,  # they would tell which records kept their value (a swap's fixed points)
            # (they also list the spans kept as written: new == original)
            tables=public_tables(done, self.scheme, sensitive),
        )


def detection_shares() -> tuple[DetectionShare, ...]:
    """The share of the quasi-identifiers, and of the direct identifiers, the tagger finds on the gold set's
    held-out posts (`engine.protect.kanon.found`)."""
    posts, counts = tagger_found()
    gold = f"{posts:,} held-out posts of {GOLD_NAME} it was not trained on"
    parts = tuple((what, counts[label].found, counts[label].total) for label, (_, what) in ATTRIBUTES.items())
    return (
        DetectionShare(
            detector="the tagger",
            what="quasi-identifiers (" + ", ".join(what for _, (_, what) in ATTRIBUTES.items()) + ")",
            gold=gold,
            found=sum(p[1] for p in parts),
            total=sum(p[2] for p in parts),
            parts=parts,
        ),
        DetectionShare(
            detector="the tagger",
            what="direct identifiers (names, handles, e-mail addresses, phone numbers)",
            gold=gold,
            found=counts["DI"].found,
            total=counts["DI"].total,
        ),
    )


class KAnonymity(Protector):
    """Tag privacy attributes in the text and sanitize them to k-anonymity."""

    protects_by = "generalised"
    name = "kanon"
    title = "k-anonymity of attributes in text"
    description = (
        "Finds direct identifiers, quasi-identifiers (age, race, place, gender, language, occupation) and "
        "sensitive attributes in each post, then generalizes, unites or swaps the quasi-identifiers until every "
        "post shares them with at least k − 1 others, and writes the sanitized values back into the text."
    )
    knob = KANON_KNOB
    detects = "privacy attributes"
    shown_first = ("smallest_class", "loss_metric")
    change_labels = {label: LABEL_NAMES[label] for label in ("DI", *ATTRIBUTES, "SA")}

    unit: str
    age: str
    race: str
    place: str
    gender: str
    language: str
    occupation: str
    tagger: str
    max_suppressed: float
    ell: int
    t: float
    corrections: str  # the common parameter (`engine.protect.params.CORRECTIONS`)
    parameters = (
        Param(
            "unit",
            str,
            "post",
            "what must be k-anonymous: each post, or each author with all their posts (needs an author field)",
            choices=("post", "author"),
            label="Record",
        ),
        *(
            Param(
                name,
                str,
                SCHEME[label],
                f"how {what} found in the text is sanitized: generalized along its hierarchy, suppressed ('*'), "
                "released as the union of its group's values, or swapped within its group (default: the paper's "
                "Table 6)",
                choices=OPERATIONS,
                expert=True,
                label=f"{what.capitalize()}",
            )
            for label, (name, what) in ATTRIBUTES.items()
        ),
        Param(
            "tagger",
            str,
            PACKAGED,
            "which privacy-attribute tagger finds the attributes: the one packaged with the gold set, or the one "
            "retrained on the gold set and the steward's annotated sample of this dataset and kept on the Protect "
            "page's annotation panel (the release records how many annotated records it learnt from, never the "
            "model, and is replayed only where it is kept)",
            choices=CHOICES,
            expert=True,
            label="Tagger",
        ),
        Param(
            "max_suppressed",
            float,
            0.05,
            "largest share of records suppressed (every quasi-identifier '*') to reach k",
            low=0.0,
            high=1.0,
            label="Most records suppressed",
        ),
        Param(
            "ell",
            int,
            0,
            "distinct ℓ-diversity of the sensitive attributes in every class kept (0: not asked)",
            low=0,
            high=50,
            expert=True,
            label="ℓ-diversity",
        ),
        Param(
            "t",
            float,
            0.0,
            "t-closeness of the sensitive attributes in every class kept (0: not asked)",
            low=0.0,
            high=1.0,
            expert=True,
            label="t-closeness",
        ),
    )

    def scheme_map(self) -> dict[str, str]:
        """Quasi-identifier label → its operation, from the parameters."""
        return {label: getattr(self, name) for label, (name, _) in ATTRIBUTES.items()}

    def fit_identity(self, dataset: Any = None) -> dict[str, Any]:
        """The tagger's settings, the digest of the gold set it is trained on and of the model shipped with it."""
        import hashlib

        from engine.protect.kanon.gold import GOLD_DIR
        from engine.protect.kanon.tagger import C1, C2, ITERATIONS, MODEL_FILE, SHIPPED

        gold = hashlib.sha256((GOLD_DIR / "annotations.jsonl").read_bytes()).hexdigest()
        shipped = SHIPPED / MODEL_FILE
        model = hashlib.sha256(shipped.read_bytes()).hexdigest() if shipped.is_file() else None
        use = isinstance(dataset, Dataset) and self.corrections == KEPT
        kept = kept_corrections(dataset.fingerprint, self.name) if use else None
        use_retrained = isinstance(dataset, Dataset) and self.tagger == RETRAINED
        # a key is computed before a fit refuses
        retrained = kept_retrained(dataset.fingerprint) if use_retrained else None
        return {
            "tagger": f"crf c1={C1} c2={C2} iterations={ITERATIONS}",
            "gold_set": gold,
            "model": model,
            "corrections": kept.digest() if kept is not None else None,
            "retrained": retrained[1].digest if retrained is not None else None,
        }

    def check(self, dataset: Any) -> list[str]:
        if self.unit == "author" and dataset.schema.author is None:
            raise ConfigError("--unit author needs an author field in the schema; this dataset has none")
        return []

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedKanon:
        self.check(dataset)
        texts = dataset.texts.astype(str).tolist()
        progress(0, 1, "loading the privacy-attribute tagger")
        tagger, retrained = tagger_in_use(dataset.fingerprint, self.tagger)
        kept = method_corrections(dataset.fingerprint, self.name, self.corrections)
        spans = corrected(texts, propagate(texts, tagger.tag(texts, progress)), kept)
        if self.unit == "author":
            groups = pd.factorize(dataset.frame[dataset.schema.author].astype(str))[0]
        else:
            groups = np.arange(len(texts))
        qi, surface = qi_table(texts, spans, groups)
        return FittedKanon(
            frame=dataset.frame,
            text_column=dataset.schema.text,
            spans=spans,
            groups=np.asarray(groups),
            qi=qi,
            surface=surface,
            sensitive=sensitive_values(texts, spans, groups),
            scheme=self.scheme_map(),
            max_suppressed=self.max_suppressed,
            ell=self.ell or None,
            t=self.t or None,
            detection=detection_shares(),
            corrections=kept.kept() if kept is not None else None,
            retrained=retrained,
        )
