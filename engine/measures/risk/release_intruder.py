"""Re-identification from the release as a whole: one intruder, using text and fields together, for every
method — those that change the text and those that change the fields are judged by the same attack.

It is the two-stage attack of Schneider, Hu, Mankad & Bale (2023), Section 4.2, Eqs. 7–9, taken from the
synthesized fields to the whole release, with what the intruder holds and knows set by an attacker preset
(`engine.measures.intruders`):

- **Targets.** With other texts by the authors (the dataset's external records, when the preset holds texts),
  every pair (external text x_z of person q, released record i of q), as in the paper. Without them, every
  record is its own target and the intruder has only its known field values (at most `MAX_TARGETS` records,
  a seeded sample beyond that; the note says so).
- **First stage (Eq. 7), generalized.** She keeps the released records whose values agree with what she knows
  of the target: the *confidential* values of the preset's fields (none, the key fields, or the key and the
  sensitive fields), a category exactly (Eq. 7's equality), a number within the preset's tolerance
  (|yᵢ − y_z| ≤ t·|y_z|) or, for the papers' intruder, Guo & Hu's closeness (a count ±5, an amount ±5% on the
  log scale).
- **Second stage (Eqs. 8–9).** She weights each kept record by s = 1/d, d the standardized L1 distance of
  Eq. 8 between the record's *released* text and x_z (the full stylometric features of Section 5.1), and
  normalizes over the kept records. Without texts every kept record weighs the same (1/|N_z|).
- **Per record and per author.** ``probability`` is Eq. 9 on the target's own record; ``author_probability``
  is the mass on all the target's released records together (as `author_probabilities` of the field
  measure). The measure is the mean over targets of their records' mean probability.

Choices made here and stated: the word vocabulary of Eq. 8 is that of the confidential and the intruder's
texts, fixed across releases, so a record whose text a method left as it was keeps its distance and releases
compare on one scale (a word that only a release contains, such as a placeholder, adds nothing to either
text's vector); distances of unchanged texts are computed once, those of a changed text once per process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

from engine.data.dataset import Dataset
from engine.measures.base import Attack, Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.measures.intruders import INTRUDER, Intruder, intruder
from engine.measures.risk.identification import (
    MIN_DISTANCE,
    by_target,
    shared_style_similarity,
    standardized_l1_distances,
    style_similarity,
)
from engine.measures.risk.matching import Closeness, close_pairs, key_groups
from engine.progress import Progress, no_progress
from engine.text.features import StyleFeatures, style_words, stylometric_features

METRIC_ID = "release_identification_probability"
MAX_TARGETS = 2000
"""Targets without texts: records drawn at random beyond this many (the note says so)."""
MAX_INTRUDER_TEXTS = 300
"""The intruder's texts used at most (drawn at random beyond this many; the note says so): each costs a pass
over the released texts for every release whose texts change."""
MAX_SEEN_TEXTS = 20_000
"""Changed texts whose distances a process remembers (each a column of up to `MAX_INTRUDER_TEXTS` values)."""


def known_fields(dataset: Dataset, preset: Intruder) -> list[str]:
    """The fields whose confidential values the intruder of ``preset`` knows (by their schema role, so that
    she is the same intruder whichever method made the release)."""
    return [f.name for f in dataset.schema.fields if preset.knows_role(f.role)]


PRODUCT_BLOCK = 16_384
"""Released texts taken at a time where `ReplacedColumns` is read whole: a block of the matrix is written out
(300 intruder texts × 16,384: 38 MB), never the whole."""


@dataclass(frozen=True)
class ReplacedColumns:
    """A matrix held as ``base`` with its ``columns`` (ascending) replaced by ``values``, written out a block at
    a time, never whole: 1/d of Eq. 8 between the intruder's texts and a release's, whose unchanged texts' columns
    are the confidential texts'. Of 200,000 posts and 300 intruder texts, a copy for each release was 480 MB,
    and the product with the first stage copied it again. (Sums are taken over the written-out blocks, not as
    the base's minus the replaced columns': a verbatim copy's 1/d of 10¹² would cancel away the others.)"""

    base: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    def _blocks(self) -> Iterator[tuple[slice, np.ndarray]]:
        """Each block of columns written out, in column order (Fortran order: its transpose is row order)."""
        width = self.base.shape[1]
        for start in range(0, width, PRODUCT_BLOCK):
            stop = min(start + PRODUCT_BLOCK, width)
            block = np.array(self.base[:, start:stop], order="F")
            lo, hi = np.searchsorted(self.columns, [start, stop])
            block[:, self.columns[lo:hi] - start] = self.values[:, lo:hi]
            yield slice(start, stop), block

    def row_sums(self) -> np.ndarray:
        """Σ_j S[z, j] for every row z."""
        sums = np.zeros(self.base.shape[0])
        for _, block in self._blocks():
            sums += block.sum(axis=1)
        return sums

    def times_transposed(self, m: sparse.spmatrix) -> np.ndarray:
        """M Sᵀ for a sparse M (anything × the matrix's columns)."""
        m = sparse.csc_matrix(m, dtype=np.float64)
        out = np.zeros((m.shape[0], self.base.shape[0]))
        for columns, block in self._blocks():
            out += m[:, columns] @ block.T
        return out

    def at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """S[rows[k], cols[k]] for every k."""
        out = self.base[rows, cols]
        if len(self.columns):
            place = np.minimum(np.searchsorted(self.columns, cols), len(self.columns) - 1)
            hit = self.columns[place] == cols
            out[hit] = self.values[rows[hit], place[hit]]
        return out

    def whole(self) -> np.ndarray:
        """The matrix written out."""
        out = self.base.copy()
        out[:, self.columns] = self.values
        return out


@dataclass
class ReleaseIntruder:
    """The intruder's side, prepared once per dataset: her targets, what she knows of each target record, and
    the text distances of the confidential texts (reused for every record a release leaves as it was)."""

    pairs: pd.DataFrame  # external (−1 without texts), record, target
    records: np.ndarray  # the distinct target records, ascending
    categorical: dict[str, np.ndarray]  # field → the known value of each target record, as text
    numeric: dict[str, np.ndarray]  # field → the known value of each target record
    closeness: dict[str, tuple[Closeness, float]]  # numeric field → how a released value must agree with it
    authors: np.ndarray  # an author code per released record (each record its own without an author column)
    original_texts: np.ndarray | None = None  # the confidential texts (None without texts)
    vocabulary: CountVectorizer | None = None  # the word counter of Eq. 8, fitted once
    intruder_features: StyleFeatures | None = None
    similarity: np.ndarray | None = None  # intruder texts × records, 1/d of the confidential texts
    seen: dict[str, np.ndarray] = field(default_factory=dict)  # released text → its column of 1/d

    @functools.cached_property
    def author_records(self) -> tuple[np.ndarray, np.ndarray]:
        """(pair, record) for every released record by each pair's author: the same for every release, made
        once."""
        rec = self.pairs["record"].to_numpy()
        members = pd.Series(np.arange(len(self.authors))).groupby(self.authors).apply(np.asarray)
        group = members.loc[self.authors[rec]].to_numpy()
        lengths = np.fromiter((len(g) for g in group), dtype=np.int64, count=len(group))
        js = np.concatenate(group) if len(group) else np.zeros(0, dtype=np.int64)
        return np.repeat(np.arange(len(rec)), lengths), js

    @classmethod
    def prepare(
        cls,
        dataset: Dataset,
        preset: Intruder,
        seed: int = 0,
        progress: Progress = no_progress,
        similarity: Callable[[list[str]], np.ndarray] | None = None,
    ) -> tuple[ReleaseIntruder, str]:
        """The intruder of ``preset`` on ``dataset`` and a note of how the attack is taken on this data;
        ``similarity`` gives `style_similarity` of the confidential texts and the texts she holds when it may
        have been computed before (`shared_style_similarity`)."""
        frame = dataset.frame.reset_index(drop=True)
        schema = dataset.schema
        fields = known_fields(dataset, preset)
        author = schema.author
        external = dataset.external
        has_texts = (
            preset.texts
            and author is not None
            and external is not None
            and len(external) > 0
            and schema.text in external.columns
            and author in external.columns
        )
        notes = [preset.describe()]
        if preset.texts and not has_texts:
            notes.append("This data has no other texts by its authors, so she links on field values alone.")
        if not has_texts and not fields:
            raise NotApplicable(
                "the chosen intruder has nothing to link with on this data: no other texts by the authors and "
                "no field values she knows (choose an intruder who knows fields, or give key fields)"
            )
        rng = np.random.default_rng(seed)
        if has_texts:
            assert author is not None and external is not None
            external = external.reset_index(drop=True)
            if len(external) > MAX_INTRUDER_TEXTS:
                keep = np.sort(rng.choice(len(external), MAX_INTRUDER_TEXTS, replace=False))
                notes.append(
                    f"She holds {MAX_INTRUDER_TEXTS:,} of the {len(external):,} external texts, drawn at random "
                    f"(seed {seed})."
                )
                external = external.iloc[keep].reset_index(drop=True)
            authors = pd.factorize(frame[author].astype(str))[0]
            names = frame[author].astype(str).to_numpy(dtype=object)
            by_author: dict[str, list[int]] = {}
            for i, a in enumerate(names):
                by_author.setdefault(a, []).append(i)
            ext_authors = external[author].astype(str).tolist()
            rows = [(z, i, a) for z, a in enumerate(ext_authors) for i in by_author.get(a, [])]
            if not rows:
                raise NotApplicable("none of the intruder's external authors appears in the data")
            pairs = pd.DataFrame(rows, columns=["external", "record", "target"])
        else:
            records = np.arange(len(frame))
            if len(records) > MAX_TARGETS:
                records = np.sort(rng.choice(records, MAX_TARGETS, replace=False))
                notes.append(f"Targets: {MAX_TARGETS:,} records drawn at random (seed {seed}) of {len(frame):,}.")
            authors = np.arange(len(frame))
            pairs = pd.DataFrame({"external": -1, "record": records, "target": records.astype(str)})
        targets = np.unique(pairs["record"].to_numpy())
        categorical = {
            f: frame[f].astype(str).to_numpy(dtype=object)[targets]
            for f in fields
            if schema.field(f).kind == "categorical"
        }
        numeric = {
            f: pd.to_numeric(frame[f], errors="coerce").to_numpy(dtype=float)[targets]
            for f in fields
            if schema.field(f).kind != "categorical"
        }
        closeness = {f: preset.closeness(schema.field(f).kind) for f in numeric}
        side = cls(pairs, targets, categorical, numeric, closeness, np.asarray(authors))
        if has_texts:
            assert external is not None
            texts = dataset.texts.astype(str).to_numpy(dtype=object)
            ext_texts = external[schema.text].astype(str).tolist()
            side.original_texts = texts
            side.vocabulary = style_words([*texts, *ext_texts])
            side.intruder_features = stylometric_features(ext_texts, side.vocabulary)
            side.similarity = similarity(ext_texts) if similarity else style_similarity(texts, ext_texts, progress)
        return side, " ".join(notes)

    def replaced_similarity(self, texts: np.ndarray) -> ReplacedColumns | None:
        """1/d of Eq. 8 between every intruder text and every released text: the confidential texts' matrix with
        the columns of the texts that differ from them computed again, each changed text once per process (a
        text several releases share, such as a post redacted alike at two levels, is looked up; at most
        `MAX_SEEN_TEXTS` are remembered)."""
        if self.similarity is None:
            return None
        assert self.original_texts is not None and self.intruder_features is not None
        changed = np.flatnonzero(texts != self.original_texts)
        if len(changed) == 0:
            return ReplacedColumns(self.similarity, changed, self.similarity[:, :0])
        changed_texts = [str(t) for t in texts[changed]]
        new = list(dict.fromkeys(t for t in changed_texts if t not in self.seen))  # in the order they come
        fresh: dict[str, np.ndarray] = {}
        if new:
            features = stylometric_features(new, self.vocabulary)
            columns = standardized_l1_distances(features, self.intruder_features)
            del features
            np.divide(1.0, np.maximum(columns, MIN_DISTANCE, out=columns), out=columns)  # no copy (480 MB at 200k)
            fresh = dict(zip(new, columns.T, strict=True))
        if len(new) == len(changed_texts):  # each changed text new and once: the columns are the values, no copy
            values = columns
        else:
            values = np.column_stack([fresh[t] if t in fresh else self.seen[t] for t in changed_texts])
        room = MAX_SEEN_TEXTS - len(self.seen)
        if room > 0:  # copies: a view would keep this release's whole matrix of columns alive
            self.seen.update({t: column.copy() for t, column in list(fresh.items())[:room]})
        return ReplacedColumns(self.similarity, changed, values)

    def first_stage(self, data: pd.DataFrame, withheld: tuple[str, ...] = ()) -> sparse.csr_matrix | None:
        """Eq. 7 generalized: for every target record (rows, `records`' order) the released records whose values
        agree with what the intruder knows of it; None when she knows no field the release shows (every record
        is kept). A ``withheld`` field (one the method leaves out of the bundle) cannot be matched, whatever she
        knows of it.

        A category agrees when it is equal, a number when it is `close` by the preset's closeness, a missing
        number with a missing one only. Found without a targets × records table: the records with the target's
        categories (and missing numbers) are searched by value (`engine.measures.risk.matching.close_pairs`).
        """
        categorical = {f: v for f, v in self.categorical.items() if f not in withheld}
        numeric = {f: v for f, v in self.numeric.items() if f not in withheld}
        if not categorical and not numeric:
            return None
        numbers = {f: pd.to_numeric(data[f], errors="coerce").to_numpy(dtype=float) for f in numeric}
        known = pd.DataFrame(
            {
                **{f"is {f}": v for f, v in categorical.items()},
                **{f"missing {f}": np.isnan(v) for f, v in numeric.items()},
            }
        )
        released = pd.DataFrame(
            {
                **{f"is {f}": data[f].astype(str).to_numpy(dtype=object) for f in categorical},
                **{f"missing {f}": np.isnan(v) for f, v in numbers.items()},
            }
        )
        group_t, group_r = key_groups(known, released, list(known.columns))
        i, j = close_pairs(
            group_t, group_r, [(values, numbers[f], *self.closeness[f]) for f, values in numeric.items()]
        )
        return sparse.csr_matrix((np.ones(len(i), dtype=bool), (i, j)), shape=(len(self.records), len(data)))

    def evaluate(self, released: pd.DataFrame, text_column: str, withheld: tuple[str, ...] = ()) -> MetricResult:
        """The whole-release identification probability of one release (laid out like the dataset; ``withheld``
        names the fields it leaves out of the bundle, which she cannot link on).

        With S the similarities (intruder texts × released records, all 1 without texts) and M the first stage
        (target records × released records, all 1 when no field is known), a pair (z, i) gets

            probability        = M[i, i] S[z, i] / Σ_j M[i, j] S[z, j]
            author_probability = Σ_{j by i's author} M[i, j] S[z, j] / Σ_j M[i, j] S[z, j]

        computed without a pairs × records matrix: the denominators as M Sᵀ, the author mass over the author's
        own records only.
        """
        data = released.reset_index(drop=True)
        n = len(data)
        similarity = self.replaced_similarity(data[text_column].astype(str).to_numpy(dtype=object))
        match = self.first_stage(data, withheld)
        ext = self.pairs["external"].to_numpy()
        rec = self.pairs["record"].to_numpy()
        row = np.searchsorted(self.records, rec)  # each pair's target record among `records`
        if match is None:
            matches = np.full(len(self.records), n)
            kept = np.ones(len(self.records), dtype=bool)
            if similarity is None:
                denominator = np.full(len(rec), float(n))
            else:
                denominator = similarity.row_sums()[ext]
        else:
            matches = np.asarray(match.sum(axis=1)).ravel()
            kept = np.asarray(match[np.arange(len(self.records)), self.records]).ravel() > 0
            if similarity is None:
                denominator = matches[row].astype(float)
            else:
                denominator = similarity.times_transposed(match)[row, ext]  # (target records × intruder texts)
        own_weight = kept[row] * (1.0 if similarity is None else similarity.at(ext, rec))
        # The author mass: the same first stage, over the released records of the pair's author only.
        at, js = self.author_records
        weight = np.ones(len(js)) if match is None else np.asarray(match[row[at], js]).ravel()
        if similarity is not None:
            weight = weight * similarity.at(ext[at], js)
        author_mass = np.bincount(at, weights=weight, minlength=len(rec))
        safe = np.where(denominator > 0, denominator, 1.0)
        prob = np.where(denominator > 0, own_weight / safe, 0.0)
        author_prob = np.where(denominator > 0, author_mass / safe, 0.0)
        detail = self.pairs.assign(
            probability=prob,
            author_probability=np.clip(author_prob, prob, 1.0),
            first_stage_matches=matches[row],
            matched=kept[row],
        )
        return MetricResult(METRIC_ID, float(by_target(detail).mean()), detail=detail)


class ReleaseIdentificationProbability(Measure):
    """Re-identification from the release as a whole, text and fields together, by the intruder of the chosen
    attacker preset (Schneider et al. 2023's two-stage attack, Eqs. 7–9, generalized; see the module)."""

    id = METRIC_ID
    kind = "risk"
    better = "lower"
    label = "Whole-release identification probability"
    meaning = (
        "Average probability that the chosen intruder puts on a target's own released record, linking with "
        "everything the release shows: she keeps the records whose released fields agree with what she knows "
        "of the target, then weighs them by how close their released text is to another text she holds by the "
        "target. The same intruder for every method, so methods that change the text and methods that change "
        "the fields compare on one scale (a method that withholds a field she knows gives her less to link on: a "
        "comparison of methods keeps it off their common frontier). 0 = never found; 1/number of records is a blind guess."
    )
    source = (
        "Generalizes Schneider, Hu, Mankad & Bale (2023), Section 4.2, Eqs. 7–9 from synthesized fields to the "
        "whole release: first stage on the preset's known fields (numbers within its tolerance), second stage "
        "on the released texts"
    )
    applies_to = "release"
    reads_withheld = True  # its note says what she cannot link on
    attack = Attack(
        holds=("other_texts", "key_fields", "released_fields"),
        names="record",
        assumptions=(
            "The intruder of the chosen preset: she keeps the released records whose fields agree with what she "
            "knows of a target (none, the key fields, or the key and protected fields) and, where she holds other "
            "texts by the target, weighs them by how close their released text is to hers. She was built beside "
            "the tool's methods. Chance: a blind guess among the released records (1 / their number)."
        ),
    )
    intruder_use = (
        "follows every part of the preset: with her texts she weighs the released texts (without them she links "
        "on field values alone), on the fields she knows she keeps the records that agree, numbers within the "
        "preset's tolerance."
    )

    def prepare(self, context: PrepareContext) -> None:
        preset = intruder(context.settings[INTRUDER.name])
        self.text_column = context.dataset.schema.text
        self.intruder, self.note = context.shared(
            ("release_intruder", preset.name),
            lambda: ReleaseIntruder.prepare(
                context.dataset,
                preset,
                context.settings.seed,
                context.progress,
                lambda texts: shared_style_similarity(context, texts),
            ),
        )
        known = known_fields(context.dataset, preset)
        hidden = [f for f in known if f in context.withheld]
        matched = [f for f in known if f not in context.withheld]
        self.task = "with the intruder matching records on " + (
            f"{', '.join(matched[:-1])}{' and ' if len(matched) > 1 else ''}{matched[-1]}" if matched else "no field"
        )
        if hidden:
            self.note += (
                f" The releases withhold {', '.join(hidden)} from the bundle, so she cannot link on "
                f"{'it' if len(hidden) == 1 else 'them'} (the data as it is, with every field, is the baseline)."
            )

    def compute(self, view: ReleaseView) -> MetricResult:
        withheld = () if isinstance(view.release, pd.DataFrame) else view.release.withheld
        result = self.intruder.evaluate(view.data, self.text_column, withheld)
        return replace(result, chance=1.0 / len(view.data) if len(view.data) else None)
