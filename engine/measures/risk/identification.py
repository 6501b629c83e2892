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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from engine.errors import DataError
from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import require_intruder_texts
from engine.protect.base import Progress, no_progress
from engine.text.features import StyleFeatures, stylometric_features

METRIC_ID = "identification_probability"
MIN_DISTANCE = 1e-12


def _row_standardization(f: StyleFeatures) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of every document's whole feature vector (Eq. 8)."""
    p = f.n_features
    s1 = np.asarray(f.words.sum(axis=1)).ravel() + f.style.sum(axis=1)
    s2 = np.asarray(f.words.multiply(f.words).sum(axis=1)).ravel() + (f.style**2).sum(axis=1)
    mean = s1 / p
    sd = np.sqrt(np.maximum(s2 / p - mean**2, 0.0))
    return mean, np.where(sd > 0, sd, 1.0)


def standardized_l1_distances(released: StyleFeatures, intruder: StyleFeatures) -> np.ndarray:
    """d(xᵢ, x_z) of Eq. 8 for every intruder text z (rows) and released text i (columns).

    Computed without densifying the word block: where a word is absent from both documents the standardized
    values are the constants −mean/sd of each document, so those features contribute
    (words − |union of supports|)·|aᵢ − a_z| in one term.
    """
    m_r, s_r = _row_standardization(released)
    m_z, s_z = _row_standardization(intruder)
    a_r, a_z = -m_r / s_r, -m_z / s_z
    W = released.words.tocsr()
    Wc = W.tocsc()
    data_r = W.data / np.repeat(s_r, np.diff(W.indptr)) + np.repeat(a_r, np.diff(W.indptr))
    row_of = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    supp_r = np.diff(W.indptr)
    style_r = (released.style - m_r[:, None]) / s_r[:, None]
    style_z = (intruder.style - m_z[:, None]) / s_z[:, None]
    Z = intruder.words.tocsr()
    p_words = W.shape[1]
    out = np.empty((Z.shape[0], W.shape[0]))
    for z in range(Z.shape[0]):
        cols = Z.indices[Z.indptr[z] : Z.indptr[z + 1]]
        vals = Z.data[Z.indptr[z] : Z.indptr[z + 1]] / s_z[z] + a_z[z]
        # Words of released documents, against the intruder's constant a_z where the intruder lacks them.
        term_r = np.bincount(row_of, weights=np.abs(data_r - a_z[z]), minlength=W.shape[0])
        # The intruder's words: correct the released side there (value or the document's constant).
        sub = Wc[:, cols].toarray()  # n × |supp z|
        present = sub != 0
        z_r = np.where(present, sub / s_r[:, None] + a_r[:, None], a_r[:, None])
        term_z = np.abs(z_r - vals[None, :]).sum(axis=1)
        overlap = present.sum(axis=1)
        overlap_term = (np.abs(z_r - a_z[z]) * present).sum(axis=1)
        union = supp_r + len(cols) - overlap
        words = (p_words - union) * np.abs(a_r - a_z[z]) + term_r - overlap_term + term_z
        style = np.abs(style_r - style_z[z]).sum(axis=1)
        out[z] = words + style
    return out


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
    ) -> IdentificationRisk:
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
        if not match_fields:
            raise DataError("identification needs at least one field the intruder matches on (synthesized or key)")
        progress(0, 1, "measuring writing-style distances")
        vocabulary = [*map(str, released_texts), *map(str, external_texts)]
        released = stylometric_features([str(t) for t in released_texts], vocabulary)
        intruder = stylometric_features([str(t) for t in external_texts], vocabulary)
        distance = standardized_l1_distances(released, intruder)
        progress(1, 1, "measuring writing-style distances")
        pairs = pd.DataFrame(rows, columns=["external", "record", "target"])
        keys = match_keys(confidential, match_fields)
        return cls(
            1.0 / np.maximum(distance, MIN_DISTANCE), pairs, list(match_fields), keys[pairs["record"].to_numpy()]
        )

    def evaluate(self, released: pd.DataFrame) -> MetricResult:
        """Eq. 9 on the true record of every (target, record) pair, for one release of the fields."""
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
        detail = self.pairs.assign(probability=prob, first_stage_matches=matches, matched=in_first_stage)
        per_target = detail.groupby("target", sort=True)["probability"].mean()
        return MetricResult(METRIC_ID, float(per_target.mean()), detail=detail)


def match_keys(frame: pd.DataFrame, fields: Sequence[str]) -> np.ndarray:
    """The values of ``fields`` of every record joined into one string (records match when keys are equal)."""
    parts = [frame[f].astype(str).to_numpy(dtype=object) for f in fields]
    out = parts[0].copy()
    for p in parts[1:]:
        out = out + "\x1f" + p
    return out


def by_target(detail: pd.DataFrame) -> pd.Series:
    """Each target's identification probability: the mean over their records (and over replicates)."""
    return detail.groupby("target", sort=True)["probability"].mean()


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

    def prepare(self, context: PrepareContext) -> None:
        d = context.dataset
        ext, author = require_intruder_texts(d)
        schema = d.schema
        match = list(dict.fromkeys([*context.categorical, *(f.name for f in schema.fields_with_role("key"))]))
        self.risk = IdentificationRisk.prepare(
            d.texts.astype(str).tolist(),
            d.frame[author].astype(str).tolist(),
            ext[schema.text].astype(str).tolist(),
            ext[author].astype(str).tolist(),
            d.frame,
            match,
            context.progress,
        )

    def compute(self, view: ReleaseView) -> MetricResult:
        return self.risk.evaluate(view.data)
