"""The two-stage identification probability of Schneider, Hu, Mankad & Bale (2023), Section 4.2, Eqs. 6–9.

The intruder holds, for each target z, another text x_z by the same person (the dataset's external records)
and knows the target's structured values y_z. First stage (Eq. 7): she keeps the released records whose
fields equal y_z, N_z = {i : yᵢ = y_z}, each with probability 1/|N_z|. Second stage (Eqs. 8–9): she weights
each kept record by its text's similarity s = 1/d to x_z, where d is the L1 distance between the two feature
vectors after standardizing each vector by its own mean and standard deviation (Eq. 8), and normalizes the
weights over N_z. The probability on the target's own record is the risk of that target.

Choices the paper leaves open, made here and stated:

- Features are the full stylometric set of Section 5.1 (`engine.text.features.stylometric_features`), word
  vocabulary from the released and the intruder's texts together. The text is not synthesized, so every
  distance is computed once; a release changes only who is in N_z.
- What the intruder knows (y_z): the *confidential* values, in the target's released record, of the fields
  she matches on — the synthesized fields and the key fields (Reiter & Mitra 2009's intruder who knows the
  target's true values; the paper's intruder knows the target's state and rating).
- A target with several released records (an author with several reviews) is evaluated once per record, with
  the same external text; the target's probability is the mean over their records, and the measure is the
  mean over targets. M releases are averaged by the sweep (the paper's average over M).
- A distance of exactly 0 (the same text released and held by the intruder) gets similarity 1/10⁻¹² so that
  record takes essentially all the weight, which is the limit of Eq. 9.

The author-level identification probability (`AuthorIdentificationProbability`) extends the measure from
records to authors: the probability the intruder names the target as the author is the mass she puts on *all*
the target's released records, summed, rather than the mass on one record averaged over the target's records.
It is the same computation (the same prepared distances, the same first-stage match per release), read off
differently; see `author_probabilities`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.spatial.distance import cdist

from engine.errors import DataError
from engine.measures.base import Attack, Measure, MetricResult, NotApplicable, PrepareContext, ReleaseView
from engine.measures.shared import original_texts, preset_of, require_intruder_texts
from engine.progress import Progress, no_progress
from engine.text.features import StyleFeatures, style_words, stylometric_features

METRIC_ID = "identification_probability"
AUTHOR_METRIC_ID = "author_identification_probability"
MIN_DISTANCE = 1e-12


def _row_standardization(f: StyleFeatures) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of every document's whole feature vector (Eq. 8)."""
    p = f.n_features
    s1 = np.asarray(f.words.sum(axis=1)).ravel() + f.style.sum(axis=1)
    s2 = np.asarray(f.words.multiply(f.words).sum(axis=1)).ravel() + (f.style**2).sum(axis=1)
    mean = s1 / p
    sd = np.sqrt(np.maximum(s2 / p - mean**2, 0.0))
    return mean, np.where(sd > 0, sd, 1.0)


DENSE_SHARE = 0.2
"""Style features non-zero in at least this share of the texts are compared densely by `standardized_l1_distances`
(the same distances either way: the sparse path's cost grows with the non-zero values, the dense one's with the
texts)."""


def dense_style(*blocks: np.ndarray) -> np.ndarray:
    """Which style features (columns of every block) are non-zero in at least `DENSE_SHARE` of the rows of all
    ``blocks`` together."""
    rows = sum(len(b) for b in blocks)
    nonzero = sum((np.count_nonzero(b, axis=0) for b in blocks), np.zeros(blocks[0].shape[1], dtype=np.int64))
    return nonzero >= DENSE_SHARE * max(rows, 1)


DISTANCES = "measuring writing-style distances"
_CELLS = 1_000_000  # most (intruder texts × released texts) cells of a block's tables ...
_TRIPLES = 1_000_000  # ... and most shared non-zero features (released text, intruder text, feature) in it
"""A block's arrays are a few of 8 MB each. The distances of the texts a redaction of 200,000 posts changed rose
680 MB over the memory they began with at 4,000,000, 400 MB at 1,000,000, and took 4.4 s instead of 4.0 s."""


def abs_sum_table(groups: np.ndarray, values: np.ndarray, n_groups: int, at: np.ndarray) -> np.ndarray:
    """T[g, j] = Σ |v − at[j]| over the ``values`` v of group g (``groups`` gives each value's group), for every
    group and point, in O((values + n_groups·points)·log points): each value's rank among the sorted points
    splits the sum into the values below a point and those above, read from running counts and sums."""
    m = len(at)
    order = np.argsort(at, kind="stable")
    points = at[order]
    rank = np.searchsorted(points, values, side="left")  # the points from `rank` on are ≥ the value
    bins = groups * (m + 1) + rank
    size = n_groups * (m + 1)
    count = np.bincount(bins, minlength=size).reshape(n_groups, m + 1).cumsum(axis=1)[:, :m]
    total = np.bincount(bins, weights=values, minlength=size).reshape(n_groups, m + 1).cumsum(axis=1)[:, :m]
    n_all = np.bincount(groups, minlength=n_groups)[:, None]
    sum_all = np.bincount(groups, weights=values, minlength=n_groups)[:, None]
    table = np.empty((n_groups, m))
    table[:, order] = (points * count - total) + (sum_all - total) - points * (n_all - count)
    return table


def _blocks(load: np.ndarray, per_row: int) -> list[slice]:
    """Consecutive rows grouped so that a group's ``load`` stays within `_TRIPLES` and its rows within
    `_CELLS` / ``per_row`` (a row alone may exceed them)."""
    most_rows = max(1, _CELLS // max(per_row, 1))
    out, start, acc = [], 0, 0
    for z, value in enumerate(load):
        if z > start and (acc + value > _TRIPLES or z - start >= most_rows):
            out.append(slice(start, z))
            start, acc = z, 0
        acc += value
    if start < len(load):
        out.append(slice(start, len(load)))
    return out


def standardized_l1_distances(
    released: StyleFeatures, intruder: StyleFeatures, progress: Progress = no_progress
) -> np.ndarray:
    """d(xᵢ, x_z) of Eq. 8 for every intruder text z (rows) and released text i (columns); ``progress`` hears
    every block of intruder texts.

    The style features non-zero in many texts (`dense_style`: the letters, short word lengths) go to `scipy`'s
    L1 `cdist`. The others (the words, function words, digits, long word lengths) are never densified: where
    such a feature is 0 its standardized value is the document's constant aᵢ = −meanᵢ/sdᵢ, so with Aᵢ and B_z
    the features stored for i and z, x and y the standardized values and P the number of sparse features,

        Σ_sparse |x − y| = (P − |Aᵢ| − |B_z|)·|aᵢ − a_z| + Σ_{Aᵢ} |x − a_z| + Σ_{B_z} |aᵢ − y|
                           + Σ_{Aᵢ ∩ B_z} (|x − y| − |x − a_z| − |aᵢ − y| + |aᵢ − a_z|).

    The two middle sums are `abs_sum_table`s; the last runs over the features the two texts share only.
    """
    m_r, s_r = _row_standardization(released)
    m_z, s_z = _row_standardization(intruder)
    a_r, a_z = -m_r / s_r, -m_z / s_z
    dense = dense_style(released.style, intruder.style)
    W = sparse.hstack([released.words, sparse.csr_matrix(released.style[:, ~dense])], format="csc")
    Z = sparse.hstack([intruder.words, sparse.csr_matrix(intruder.style[:, ~dense])], format="csr")
    n, n_z, p_sparse = W.shape[0], Z.shape[0], W.shape[1]
    style_r = (released.style[:, dense] - m_r[:, None]) / s_r[:, None]
    style_z = (intruder.style[:, dense] - m_z[:, None]) / s_z[:, None]
    out = cdist(style_z, style_r, "cityblock") if n and n_z else np.zeros((n_z, n))
    if not n or not n_z:
        return out
    w_rows = W.indices
    x = W.data / s_r[w_rows] + a_r[w_rows]  # the released side's stored values, standardized (column order)
    per_column = np.diff(W.indptr)
    supp_r, supp_z = np.bincount(w_rows, minlength=n), np.diff(Z.indptr)
    # Per intruder text, the (released text, feature) pairs it shares: what its part of a block costs.
    shared = np.bincount(np.repeat(np.arange(n_z), supp_z), weights=per_column[Z.indices], minlength=n_z)
    for block in _blocks(shared, n):
        progress(block.start, n_z, DISTANCES)
        b = a_z[block]
        k = len(b)
        part = (p_sparse - supp_r[None, :] - supp_z[block, None]) * np.abs(a_r[None, :] - b[:, None])
        part += abs_sum_table(w_rows, x, n, b).T
        Zb = Z[block].tocoo()
        y = Zb.data / s_z[block][Zb.row] + b[Zb.row]
        part += abs_sum_table(Zb.row, y, k, a_r)
        # The features both texts store: every (intruder value, released value) pair of a feature.
        reach = per_column[Zb.col]
        pair = np.repeat(np.arange(Zb.nnz), reach)
        starts = W.indptr[Zb.col] - (np.cumsum(reach) - reach)
        at = np.repeat(starts, reach) + np.arange(int(reach.sum()))
        i, xi, zr, yz = w_rows[at], x[at], Zb.row[pair], y[pair]
        both = np.abs(xi - yz) - np.abs(xi - b[zr]) - np.abs(a_r[i] - yz) + np.abs(a_r[i] - b[zr])
        part += np.bincount(zr * n + i, weights=both, minlength=k * n).reshape(k, n)
        out[block] += part
    return out


def style_similarity(
    texts: Sequence[str], external_texts: Sequence[str], progress: Progress = no_progress
) -> np.ndarray:
    """s = 1/d of Eqs. 8–9 between every external text (rows) and every text (columns), the word vocabulary
    that of both."""
    texts, external_texts = [str(t) for t in texts], [str(t) for t in external_texts]
    progress(0, len(external_texts), DISTANCES)
    vocabulary = style_words([*texts, *external_texts])
    released = stylometric_features(texts, vocabulary)
    intruder = stylometric_features(external_texts, vocabulary)
    distance = standardized_l1_distances(released, intruder, progress)
    progress(len(external_texts), len(external_texts), DISTANCES)
    return 1.0 / np.maximum(distance, MIN_DISTANCE)


def shared_style_similarity(context: PrepareContext, external_texts: Sequence[str]) -> np.ndarray:
    """`style_similarity` of the confidential texts and ``external_texts``, computed once for every measure of
    ``context`` that asks (Schneider et al.'s identification and the whole-release intruder, when she holds the
    same texts)."""
    external_texts = [str(t) for t in external_texts]
    return context.shared(
        ("style_similarity", tuple(external_texts)),
        lambda: style_similarity(original_texts(context), external_texts, context.progress),
    )


@dataclass
class IdentificationRisk:
    """The intruder's side, prepared once per dataset: targets, their known values and all text distances."""

    similarity: np.ndarray  # external texts × released records, 1/d
    pairs: pd.DataFrame  # one row per (target, true record): external, record, target
    match_fields: list[str]
    confidential_keys: np.ndarray  # the intruder's known values per pair, as one string key

    @classmethod
    def prepare(
        cls,
        released_texts: Sequence[str],
        released_authors: Sequence[str],
        external_texts: Sequence[str],
        external_authors: Sequence[str],
        confidential: pd.DataFrame,
        match_fields: Sequence[str],
        progress: Progress = no_progress,
        similarity: np.ndarray | None = None,
    ) -> IdentificationRisk:
        """The targets and their pairs; ``similarity`` is `style_similarity` of the released and the external
        texts when it was computed before (`shared_style_similarity`)."""
        released_authors = [str(a) for a in released_authors]
        external_authors = [str(a) for a in external_authors]
        by_author: dict[str, list[int]] = {}
        for i, a in enumerate(released_authors):
            by_author.setdefault(a, []).append(i)
        rows = [(z, i, a) for z, a in enumerate(external_authors) for i in by_author.get(a, [])]
        if not rows:
            raise DataError(
                "none of the intruder's external authors appears in the release; identification needs overlap"
            )
        if similarity is None:
            similarity = style_similarity(released_texts, external_texts, progress)
        pairs = pd.DataFrame(rows, columns=["external", "record", "target"])
        keys = match_keys(confidential, match_fields)
        return cls(similarity, pairs, list(match_fields), keys[pairs["record"].to_numpy()])

    def evaluate(self, released: pd.DataFrame) -> MetricResult:
        """Eq. 9 on the true record of every (target, record) pair, for one release of the fields."""
        detail = self.pair_probabilities(released).drop(columns="author_probability")
        per_target = detail.groupby("target", sort=True)["probability"].mean()
        return MetricResult(METRIC_ID, float(per_target.mean()), detail=detail)

    def pair_probabilities(self, released: pd.DataFrame) -> pd.DataFrame:
        """One row per (external text, target's record) pair of one release: ``probability``, Eq. 9 on that
        record when the intruder knows its values, and ``author_probability``, the mass she puts, knowing the
        same values, on all the target's released records together (see `author_probabilities`)."""
        keys = match_keys(released, self.match_fields)
        codes, uniques = pd.factorize(pd.Series(np.concatenate([keys, self.confidential_keys]), dtype=object))
        rec_codes, known = codes[: len(keys)], codes[len(keys) :]
        G = sparse.csr_matrix((np.ones(len(keys)), (np.arange(len(keys)), rec_codes)), shape=(len(keys), len(uniques)))
        totals = np.asarray(self.similarity @ G)
        ext = self.pairs["external"].to_numpy()
        rec = self.pairs["record"].to_numpy()
        in_first_stage = rec_codes[rec] == known
        denom = totals[ext, known]
        prob = np.where(in_first_stage & (denom > 0), self.similarity[ext, rec] / np.where(denom > 0, denom, 1.0), 0.0)
        matches = np.bincount(rec_codes, minlength=len(uniques))[known]
        # The target's records the intruder keeps, knowing the values of record i: for every external text z,
        # the similarity of each of the target's records j summed by j's released key, then read at i's known key.
        width = np.int64(len(uniques))
        kept_at = ext.astype(np.int64) * width + rec_codes[rec]  # (z, released key of j)
        asked_at = ext.astype(np.int64) * width + known  # (z, known key of i)
        cells, index = np.unique(np.concatenate([kept_at, asked_at]), return_inverse=True)
        mass = np.bincount(index[: len(rec)], weights=self.similarity[ext, rec], minlength=len(cells))
        own = mass[index[len(rec) :]]
        author_prob = np.where(denom > 0, own / np.where(denom > 0, denom, 1.0), 0.0)
        return self.pairs.assign(
            probability=prob,
            first_stage_matches=matches,
            matched=in_first_stage,
            author_probability=np.clip(author_prob, prob, 1.0),  # ≥ the own record's share despite rounding
        )


def match_keys(frame: pd.DataFrame, fields: Sequence[str]) -> np.ndarray:
    """The values of ``fields`` of every record joined into one string (records match when keys are equal)."""
    parts = [frame[f].astype(str).to_numpy(dtype=object) for f in fields]
    if not parts:  # she knows no field: every record matches every other
        return np.full(len(frame), "", dtype=object)
    out = parts[0].copy()
    for p in parts[1:]:
        out = out + "\x1f" + p
    return out


def by_target(detail: pd.DataFrame) -> pd.Series:
    """Each target's identification probability: the mean over their records (and over replicates)."""
    return detail.groupby("target", sort=True)["probability"].mean()


def author_probabilities(pairs: pd.DataFrame) -> MetricResult:
    """The author-level identification probability of one release, from `IdentificationRisk.pair_probabilities`.

    For target author q with released records R_q, external texts Z_q, and P(j | yᵢ, x_z) Eq. 9's
    probability on record j when the intruder knows the values yᵢ of record i and holds text x_z::

        A_q = 1/|Z_q| · Σ_{z ∈ Z_q} 1/|R_q| · Σ_{i ∈ R_q} Σ_{j ∈ R_q} P(j | yᵢ, x_z)

        A   = 1/|Q| · Σ_{q ∈ Q} A_q          (Q: the targets, external authors with a released record)

    The record-level measure is the same with the inner sum Σ_j replaced by its term j = i, so A_q ≥ the
    target's identification probability, and A_q ≤ 1 because the j ∈ R_q share one first stage N(yᵢ). When
    all the target's records are released with the values the intruder knows (e.g. an author with three
    identical records, each given 0.3), A_q is the sum of their record-level probabilities (0.9) where the
    record-level measure reports their mean (0.3).

    The detail has the pairs' columns with ``probability`` the author-level value of each (z, i) pair (so
    `by_target` reads per-target values from it) and ``record_probability`` the record-level one.
    """
    detail = pairs.rename(columns={"probability": "record_probability", "author_probability": "probability"})
    per_target = by_target(detail)
    return MetricResult(AUTHOR_METRIC_ID, float(per_target.mean()), detail=detail)


def _match_fields(context: PrepareContext) -> list[str]:
    """What the intruder of the preset matches on: the synthesized categorical fields when she knows the
    protected fields (the paper's intruder), and the key fields when she knows them."""
    preset = preset_of(context)
    synthesized = context.categorical if preset.knows == "fields" else []
    keys = (f.name for f in context.dataset.schema.fields_with_role("key")) if preset.knows_role("key") else ()
    return list(dict.fromkeys([*synthesized, *keys]))


IDENTIFICATION_INTRUDER_USE = (
    "not measured for an intruder who holds no texts. The first stage (Eq. 7) matches on the synthesized fields "
    "only when she knows the protected fields (the papers' intruder, the default, as in the paper) and on the "
    "key fields when she knows them; an intruder who knows no field keeps every record and links by writing "
    "alone."
)


def prepared_risk(context: PrepareContext) -> IdentificationRisk:
    """The intruder's side of the identification measures, prepared once for all of them."""
    preset_of(context, needs_texts=True)

    def prepare() -> IdentificationRisk:
        d = context.dataset
        ext, author = require_intruder_texts(d)
        external_texts = ext[d.schema.text].astype(str).tolist()
        return IdentificationRisk.prepare(
            original_texts(context),
            d.frame[author].astype(str).tolist(),
            external_texts,
            ext[author].astype(str).tolist(),
            d.frame,
            _match_fields(context),
            context.progress,
            shared_style_similarity(context, external_texts),
        )

    return context.shared("identification_risk", prepare)


def released_pairs(view: ReleaseView, risk: IdentificationRisk) -> pd.DataFrame:
    """`IdentificationRisk.pair_probabilities` of the release, computed once for both identification measures."""
    return view.memo("identification_pairs", lambda: risk.pair_probabilities(view.data))


class IdentificationProbability(Measure):
    """The two-stage identification probability (Schneider et al. 2023, Eqs. 7–9), the intruder matching on the
    synthesized categorical fields and the key fields."""

    id = METRIC_ID
    kind = "risk"
    better = "lower"
    label = "Identification probability"
    meaning = (
        "Average probability that an intruder who knows a target's field values and holds another text by "
        "them puts on the target's own record: first keeping the records whose released fields match, then "
        "weighting them by writing-style similarity (Schneider et al. 2023, Eqs. 7–9). 1/number of records "
        "would be a blind guess."
    )
    source = "Schneider, Hu, Mankad & Bale (2023), Section 4.2, Eqs. 7–9"
    applies_to = "categorical"
    intruder_use = IDENTIFICATION_INTRUDER_USE
    attack = Attack(
        holds=("other_texts", "key_fields"),
        names="record",
        assumptions=(
            "The intruder holds another text by each person she targets and knows the target's field values "
            "(which, by the intruder preset); she keeps the released records whose fields match and weights them "
            "by writing-style similarity. Chance: a blind guess among the released records (1 / their number)."
        ),
    )

    def prepare(self, context: PrepareContext) -> None:
        self.risk = prepared_risk(context)

    def compute(self, view: ReleaseView) -> MetricResult:
        pairs = released_pairs(view, self.risk)
        detail = pairs.drop(columns="author_probability")
        chance = 1.0 / len(view.data) if len(view.data) else None
        return MetricResult(METRIC_ID, float(by_target(detail).mean()), detail=detail, chance=chance)


class AuthorIdentificationProbability(Measure):
    """The identification probability of Schneider et al. (2023) extended from records to authors: the mass
    the intruder puts on all the target's released records, summed (`author_probabilities`)."""

    id = AUTHOR_METRIC_ID
    kind = "risk"
    better = "lower"
    label = "Author identification probability"
    meaning = (
        "Average probability that the same intruder names the right person as the author: the chances she gives "
        "to each of the person's released records are added up, not averaged. It matters when people have "
        "several records (the same review posted on several products, many tweets): the identification "
        "probability can look low because each record gets a share, while together they point at the person. "
        "0 = never named, 1 = always named; never below the identification probability."
    )
    source = (
        "Extends Schneider, Hu, Mankad & Bale (2023), Section 4.2, Eq. 9 from records to authors: for each of the "
        "target's external texts and each of her records whose values the intruder knows, Eq. 9's probabilities "
        "are summed over all the target's released records instead of read on the one record; then averaged "
        "over her records and external texts, and over targets"
    )
    applies_to = "categorical"
    intruder_use = IDENTIFICATION_INTRUDER_USE

    def prepare(self, context: PrepareContext) -> None:
        preset_of(context, needs_texts=True)
        d = context.dataset
        ext, author = require_intruder_texts(d)
        targets = set(ext[author].astype(str))
        counts = d.frame[author].astype(str).value_counts()
        if not (counts[counts.index.isin(targets)] > 1).any():
            raise NotApplicable(
                "every author the intruder targets has a single released record, so it equals the "
                "identification probability"
            )
        self.risk = prepared_risk(context)

    def compute(self, view: ReleaseView) -> MetricResult:
        return author_probabilities(released_pairs(view, self.risk))
