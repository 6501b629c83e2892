"""Topic-model utility: how the relation between the fields and what the texts talk about survives synthesis.

Schneider, Hu, Mankad & Bale (2023, Section 4.1.2) fit a structural topic model (STM; Roberts et al. 2014)
with the fields as prevalence and content covariates. We stand in for the STM, which has no maintained Python
implementation, with pieces that estimate the same two things:

- the topics: latent Dirichlet allocation (Blei, Ng & Jordan 2003; batch variational Bayes, 10 passes, on
  scikit-learn's settings: `engine.text.lda`) with T topics on the normalized word counts, prepared as stm's
  ``textProcessor`` does by default: English stop words, words shorter than 3 letters and words of a single
  document removed; web addresses are removed first. The text is not synthesized, so the topics and each
  document's topic shares θᵢ are fitted once.
- prevalence coefficients μ: per topic t, the least-squares regression of θᵢₜ on indicators of the synthesized
  fields' levels (the most frequent level of each field the reference), with the usual OLS variances. The
  coefficient of one chosen level (the paper's "low rating coefficient", Tables 3–5) is the quantity of
  interest; over M synthetic datasets it is combined with the partial-synthesis rules (`combining`).
- content coefficients β: for level k of a field and topic t, the distribution over words of the tokens that
  documents of level k assign to topic t — Σᵢ:yᵢ=k nᵢᵥ rᵢᵥₜ with rᵢᵥₜ = θᵢₜ φₜᵥ / Σₜ' θᵢₜ' φₜ'ᵥ, the
  posterior share of topic t in word v of document i. Eq. 4 correlates β computed with the confidential and
  with the synthetic levels; Eq. 5 averages the correlations over levels (and the M datasets).

In the STM the covariates also shape the topics themselves; here the topics are shared and the covariates act
only through the regressions and the level-wise word distributions, which is what Eqs. 4–5 compare.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from engine.errors import ConfigError, DataError
from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.measures.shared import field_levels, synthetic_codes
from engine.measures.utility.combining import combine_table
from engine.progress import Progress, no_progress
from engine.protect.field_synthesis.sequential import FieldLevels
from engine.protect.params import Param
from engine.text.features import WordCounts, synthesis_counts
from engine.text.lda import LDA

if TYPE_CHECKING:
    from engine.data.dataset import Dataset
    from engine.measures.settings import MeasureSettings

URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
MIN_WORD_LENGTH = 3


@dataclass
class TopicModel:
    """Topics of the texts: document shares θ (n × T), topic-word distributions φ (T × V), and per topic the
    document × word matrix of token counts assigned to it."""

    vocabulary: np.ndarray
    theta: np.ndarray
    phi: np.ndarray
    assigned: list[sparse.csr_matrix]

    @property
    def n_topics(self) -> int:
        return self.theta.shape[1]

    def top_words(self, n: int = 3) -> list[list[str]]:
        """The ``n`` most probable words of each topic."""
        return [list(self.vocabulary[np.argsort(-row)[:n]]) for row in self.phi]

    def labels(self, n: int = 3) -> dict[int, str]:
        """Topic number (from 1) → "word, word, word"."""
        return {t + 1: ", ".join(words) for t, words in enumerate(self.top_words(n))}

    @classmethod
    def fit(
        cls,
        texts: Sequence[str],
        n_topics: int = 5,
        seed: int = 0,
        vendor_keywords: Sequence[str] = (),
        progress: Progress = no_progress,
    ) -> TopicModel:
        if n_topics < 2:
            raise DataError(f"the topic model needs at least 2 topics, got {n_topics}")
        progress(0, 1, "fitting the topic model")
        cleaned = [URL.sub(" ", str(t)) for t in texts]
        counts: WordCounts = synthesis_counts(cleaned, [*vendor_keywords, *ENGLISH_STOP_WORDS], min_df=2)
        long_words = np.array([len(w) >= MIN_WORD_LENGTH for w in counts.vocabulary], dtype=bool)
        X = counts.matrix[:, long_words].tocsr()
        counts = WordCounts(X, counts.vocabulary[long_words], counts.vendor_keywords)
        if X.shape[1] < n_topics:
            raise DataError(
                f"the texts have {X.shape[1]} words used in two or more documents, too few for {n_topics} topics"
            )
        lda = LDA.fit(X, n_topics, LDA_ITERATIONS, seed, progress)
        theta = lda.doc_topics
        phi = lda.topics / lda.topics.sum(axis=1, keepdims=True)
        coo = X.tocoo()
        share = theta[coo.row] * phi[:, coo.col].T  # nnz × T
        share /= share.sum(axis=1, keepdims=True)
        assigned = [
            sparse.csr_matrix((coo.data * share[:, t], (coo.row, coo.col)), shape=X.shape) for t in range(n_topics)
        ]
        progress(1, 1, "fitting the topic model")
        return cls(counts.vocabulary, theta, phi, assigned)


LDA_ITERATIONS = 10


def _level_indicators(
    values: pd.DataFrame, fields: Sequence[str], levels: dict[str, Sequence[str]]
) -> tuple[np.ndarray, list[tuple[str, str]]]:
    cols, names = [np.ones(len(values))], []
    for f in fields:
        v = values[f].astype(str).to_numpy()
        for level in levels[f][1:]:
            cols.append((v == level).astype(float))
            names.append((f, level))
    return np.column_stack(cols), names


def prevalence(
    model: TopicModel, values: pd.DataFrame, fields: Sequence[str], levels: dict[str, Sequence[str]]
) -> pd.DataFrame:
    """OLS of each topic's share on the fields' level indicators: one row per (field, level, topic) with the
    estimate and its variance (columns field, level, topic, estimate, variance)."""
    X, names = _level_indicators(values, fields, levels)
    n, k = X.shape
    XtX_inv = np.linalg.pinv(X.T @ X)
    beta = XtX_inv @ X.T @ model.theta  # k × T
    resid = model.theta - X @ beta
    sigma2 = (resid**2).sum(axis=0) / max(n - np.linalg.matrix_rank(X), 1)
    rows = []
    words = model.labels()
    for i, (f, level) in enumerate(names, start=1):
        for t in range(model.n_topics):
            rows.append(
                {
                    "field": f,
                    "level": level,
                    "topic": t + 1,
                    "topic_words": words[t + 1],
                    "estimate": float(beta[i, t]),
                    "variance": float(sigma2[t] * XtX_inv[i, i]),
                }
            )
    return pd.DataFrame(rows, columns=["field", "level", "topic", "topic_words", "estimate", "variance"])


ZERO_COEFFICIENT = 1e-9
"""A confidential coefficient this small (topic shares lie in [0, 1]) is a zero up to rounding: the level has no
relation to that topic to keep, and a ratio to it would be rounding noise blown up (±1e16 on a small sample)."""


def prevalence_ratio(confidential: pd.DataFrame, synthetic: pd.DataFrame, field: str, level: str) -> MetricResult:
    """Average over topics of the synthetic / confidential coefficient of one level (Schneider et al. 2023,
    Table 5); 1 = the relation of that level to every topic is kept. Topics whose confidential coefficient is
    zero (`ZERO_COEFFICIENT`) are left out of the average; NaN when none is left."""
    key = ["field", "level", "topic", "topic_words"]
    both = confidential.merge(synthetic, on=key, suffixes=("_confidential", "_synthetic"))
    chosen = both[(both["field"] == field) & (both["level"] == level)]
    chosen = chosen[chosen["estimate_confidential"].abs() > ZERO_COEFFICIENT]
    ratio = (chosen["estimate_synthetic"] / chosen["estimate_confidential"]).to_numpy()
    detail = synthetic.assign(chosen=(synthetic["field"] == field) & (synthetic["level"] == level))
    return MetricResult("topic_prevalence_ratio", float(ratio.mean()) if len(ratio) else float("nan"), detail=detail)


def content_coefficients(model: TopicModel, codes: np.ndarray, n_levels: int) -> np.ndarray:
    """β (levels × topics × words): token counts that documents of each level assign to each topic. A record
    whose released value the field never took (code −1: a value the release guard replaced) counts for no level."""
    known = np.flatnonzero(codes >= 0)
    G = sparse.csr_matrix((np.ones(len(known)), (codes[known], known)), shape=(n_levels, len(codes)))
    return np.stack([np.asarray((G @ A).todense()) for A in model.assigned], axis=1)


def _row_correlations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=-1) / den, np.nan)


def content_correlation(
    model: TopicModel, fields: Sequence[tuple[str, Sequence[str], np.ndarray, np.ndarray]]
) -> MetricResult:
    """Eq. 4 for every (field, level, topic) and their mean (Eq. 5 averaged over topics and fields).

    ``fields`` holds (name, levels, confidential codes, synthetic codes). A level that no synthetic record
    takes has no synthetic content coefficients; its correlations are missing and left out of the mean.
    """
    rows = []
    words = model.labels()
    for name, levels, conf, syn in fields:
        corr = _row_correlations(
            content_coefficients(model, conf, len(levels)), content_coefficients(model, syn, len(levels))
        )
        for k, level in enumerate(levels):
            for t in range(model.n_topics):
                rows.append(
                    {
                        "field": name,
                        "level": level,
                        "topic": t + 1,
                        "topic_words": words[t + 1],
                        "correlation": float(corr[k, t]),
                    }
                )
    detail = pd.DataFrame(rows, columns=["field", "level", "topic", "topic_words", "correlation"])
    value = float(np.nanmean(detail["correlation"])) if detail["correlation"].notna().any() else float("nan")
    return MetricResult("topic_content_correlation", value, detail=detail)


def prevalence_intervals(detail: pd.DataFrame, field: str | None = None, level: str | None = None) -> pd.DataFrame:
    """Prevalence coefficients combined over the M synthetic datasets (Reiter 2003): one row per (field, level,
    topic) with the estimate and its 95% interval. ``detail`` is the per-replicate `prevalence` table with a
    ``replicate`` column; ``field``/``level`` keep one level (default: the level marked ``chosen``)."""
    d = detail
    if field is not None and level is not None:
        d = d[(d["field"] == field) & (d["level"] == level)]
    elif "chosen" in d.columns:
        d = d[d["chosen"]]
    return combine_table(d, ["field", "level", "topic", "topic_words"])


def content_by_topic(detail: pd.DataFrame) -> pd.DataFrame:
    """Eq. 5: the content correlation of each field and topic averaged over levels (and replicates)."""
    return (
        detail.groupby(["field", "topic", "topic_words"], sort=True)["correlation"]
        .mean()
        .rename("correlation")
        .reset_index()
    )


def prevalence_level(levels: Sequence[FieldLevels], spec: str | None) -> tuple[str, str]:
    """The (field, level) whose topic-prevalence coefficient is followed: ``spec`` "FIELD=LEVEL", or by
    default the least frequent level of the first synthesized field. ConfigError names what is accepted."""
    by_name = {lv.name: lv.levels for lv in levels}
    if spec is None:
        return levels[0].name, levels[0].levels[-1]
    field, sep, level = spec.partition("=")
    if not sep or field not in by_name:
        raise ConfigError(
            f"topic prevalence level {spec!r} must be FIELD=LEVEL with FIELD one of the synthesized fields "
            f"({', '.join(by_name)})"
        )
    if level not in by_name[field][1:]:
        raise ConfigError(
            f"level {level!r} of {field} has no coefficient; choose one of {', '.join(by_name[field][1:])} "
            f"({by_name[field][0]!r}, the most frequent, is the reference)"
        )
    return field, level


TOPICS = Param("topics", int, 5, "synthesis measures: topics of the topic model", low=2, high=50, label="Topics")
LEVEL = Param(
    "level",
    str,
    None,
    "synthesis measures: FIELD=LEVEL whose topic-prevalence coefficient is followed "
    "(default: the least frequent level of the first field)",
    label="Field level whose topic prevalence is followed",
    fields=("categorical",),
    field_levels=True,
)


def topic_model(context: PrepareContext) -> TopicModel:
    """The `TopicModel` of the confidential texts, fitted once for both topic measures (a `DataError` when
    the texts have too few words is remembered, so both are listed as not measured with its reason)."""
    settings = context.settings
    return context.shared(
        "topic_model",
        lambda: TopicModel.fit(
            context.dataset.texts.astype(str).tolist(),
            settings[TOPICS.name],
            settings.seed,
            settings.vendor_keywords,
            progress=context.progress,
        ),
    )


class TopicContentCorrelation(Measure):
    """Eqs. 4–5 of Schneider et al. (2023): `content_correlation` of the synthetic levels with the confidential."""

    id = "topic_content_correlation"
    kind = "utility"
    better = "higher"
    label = "Topic content correlation"
    meaning = (
        "Correlation, over the vocabulary, between the words each field level uses within each topic in the "
        "confidential and in the synthetic data, averaged over levels and topics (Schneider et al. 2023, "
        "Eqs. 4–5). 1 = what each level says about each topic is kept."
    )
    source = "Schneider, Hu, Mankad & Bale (2023), Section 4.1.2, Eqs. 4–5"
    applies_to = "categorical"
    settings = (TOPICS,)
    low = -1.0

    def prepare(self, context: PrepareContext) -> None:
        self.levels = field_levels(context)
        self.model = topic_model(context)

    def compute(self, view: ReleaseView) -> MetricResult:
        syn = synthetic_codes(view, self.levels)
        return content_correlation(self.model, [(lv.name, lv.levels, lv.codes, s) for lv, s in zip(self.levels, syn)])


class TopicPrevalenceRatio(Measure):
    """Table 5 of Schneider et al. (2023): `prevalence_ratio` of the chosen level's coefficients."""

    id = "topic_prevalence_ratio"
    kind = "utility"
    better = "one"
    label = "Topic prevalence ratio"
    meaning = (
        "For the chosen field level, its regression coefficient on each topic's share in the synthetic data "
        "divided by the confidential one, averaged over topics (Schneider et al. 2023, Table 5). 1 = how much "
        "that level talks about each topic is kept; below 1 = shrunk towards no relation."
    )
    source = "Schneider, Hu, Mankad & Bale (2023), Section 4.1.2, Table 5"
    applies_to = "categorical"
    settings = (TOPICS, LEVEL)
    low = float("-inf")
    high = float("inf")

    @classmethod
    def check_settings(cls, dataset: Dataset, fields: Sequence[str], settings: MeasureSettings) -> None:
        categorical = [f for f in fields if dataset.schema.field(f).kind == "categorical"]
        if settings[LEVEL.name] is not None and categorical:
            prevalence_level([FieldLevels.of(f, dataset.frame[f]) for f in categorical], settings[LEVEL.name])

    def prepare(self, context: PrepareContext) -> None:
        levels = field_levels(context)
        self.model = topic_model(context)
        self.choice = prevalence_level(levels, context.settings[LEVEL.name])
        self.fields = list(context.categorical)
        self.level_names: dict[str, Sequence[str]] = {lv.name: lv.levels for lv in levels}
        self.confidential = prevalence(self.model, context.dataset.frame, self.fields, self.level_names)

    def compute(self, view: ReleaseView) -> MetricResult:
        field, level = self.choice
        synthetic = prevalence(self.model, view.data, self.fields, self.level_names)
        return prevalence_ratio(self.confidential, synthetic, field, level)
