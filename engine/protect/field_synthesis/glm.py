"""The shrinkage GLM synthesizer of Schneider, Hu, Mankad & Bale (2023), with the privacy knob λ.

Each sensitive categorical field is modelled by a multinomial logit on the text's word counts (and the fields
synthesized before it, see `engine.protect.field_synthesis.sequential`), Eq. 1, with independent Laplace priors of inverse
scale λ on the coefficients, Eq. 2. Synthetic values are drawn from the predictive probabilities, Eq. 3. As
λ grows the coefficients shrink to zero and the synthesizer samples every record from the field's marginal
distribution — privacy by design; as λ falls it reproduces the confidential values.

Posterior: by default the posterior *mode* (= the lasso estimate, the paper's footnote 2) is used and the
only randomness is the draw from the predictive distribution. With ``posterior="bootstrap"`` the uncertainty
about the coefficients is represented too, by the weighted-likelihood (Bayesian) bootstrap (Newton & Raftery
1994): ``posterior_draws`` refits of the whole path with Dirichlet(1, …, 1) record weights, each release
using one refit chosen at random. This approximates draws from the posterior of Eq. 3 under the same prior;
it multiplies the fitting time by ``posterior_draws``.

The λ path is fitted once per field (`engine.protect.field_synthesis.lasso`): one grid for all fields, from the largest
λmax of the fields down to 0.001 of it, 100 values on a log scale (Section 5.3); moving the knob only samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from engine import MAX_SEED
from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.base import Knob
from engine.protect.field_synthesis.lasso import LassoPath, fit_lasso_path, lambda_max, standardize_columns
from engine.protect.field_synthesis.sequential import (
    VENDOR_KEYWORDS,
    FieldLevels,
    FieldSynthesizer,
    SequentialFitted,
    design,
    field_levels,
    resolve_fields,
)
from engine.protect.params import Param
from engine.text.features import synthesis_counts

POSTERIORS = ("mode", "bootstrap")
SWEEP_POINTS = 12

GLM_KNOB = Knob(
    name="lambda",
    symbol="λ",
    label="Shrinkage",
    low=1e-12,
    high=1e12,
    default=1.0,
    scale="log",
    more_privacy="higher",
    help="Inverse scale of the Laplace prior on the text coefficients. Larger λ shrinks more coefficients to "
    "zero: more privacy, less of the text's information in the synthetic fields. The range is set by the "
    "data: from λmax (every coefficient zero) down to 0.001·λmax.",
)


def path_knob(lambdas: np.ndarray) -> Knob:
    """The λ knob of one fitted path: its range, a sweep grid of `SWEEP_POINTS` path values, a default."""
    idx = np.unique(np.round(np.linspace(0, len(lambdas) - 1, SWEEP_POINTS)).astype(int))
    return Knob(
        name=GLM_KNOB.name,
        symbol=GLM_KNOB.symbol,
        label=GLM_KNOB.label,
        low=float(lambdas[-1]),
        high=float(lambdas[0]),
        default=float(lambdas[len(lambdas) // 3]),
        scale="log",
        more_privacy="higher",
        grid=tuple(float(lambdas[i]) for i in idx),
        help=GLM_KNOB.help,
    )


@dataclass
class FittedGLM(SequentialFitted):
    """Per field, the λ path (or one path per posterior draw) on the shared grid ``lambdas``."""

    paths: list[list[LassoPath]] = field(default_factory=list)  # paths[draw][field]
    lambdas: np.ndarray = field(default_factory=lambda: np.zeros(0))
    method: str = "glm"

    @property
    def n_draws(self) -> int:
        return len(self.paths)

    def posterior_draw(self, rng: np.random.Generator) -> int:
        return int(rng.integers(self.n_draws)) if self.n_draws > 1 else 0

    def field_probabilities(self, j: int, X: sparse.csr_matrix, value: float, draw: int) -> np.ndarray:
        return self.paths[draw][j].predict_proba(X, value)

    def path_grid(self) -> list[float]:
        """All λ of the fitted path, largest first."""
        return [float(v) for v in self.lambdas]

    def complexity(self) -> pd.DataFrame:
        """Non-zero coefficients (feature × level) along the path for every field (Fig. 2), posterior mode
        (or the first bootstrap draw)."""
        rows = []
        for lv, path in zip(self.fields, self.paths[0]):
            for lam, nz in zip(path.lambdas, path.nonzero_counts()):
                rows.append({"knob": float(lam), "field": lv.name, "size": int(nz), "what": "non-zero coefficients"})
        return pd.DataFrame(rows, columns=["knob", "field", "size", "what"])


class GLMSynthesizer(FieldSynthesizer):
    """Sequential shrinkage-GLM synthesis of sensitive categorical fields given the text (knob λ)."""

    name = "glm"
    title = "Shrinkage GLM synthesis"
    description = (
        "Replaces the sensitive categorical fields by draws from a multinomial model of each field given the "
        "text (and the fields before it), with a Laplace prior of strength λ on the text's coefficients. "
        "Larger λ = more privacy: at λmax every record is drawn from the field's overall distribution. "
        "The text is released as it is, but for the identifiers the release guard takes out."
    )
    knob = GLM_KNOB

    fields: tuple[str, ...] | None
    vendor_keywords: tuple[str, ...]
    posterior: str
    posterior_draws: int
    bootstrap_seed: int
    n_lambda: int
    lambda_min_ratio: float
    parameters = (
        Param(
            "fields",
            str,
            None,
            "the categorical fields to synthesize, in order (default: the sensitive categorical fields)",
            many=True,
            fields=("categorical",),
            synthesized=True,
            suggest="sensitive",
            label="Fields to synthesize, in order",
        ),
        VENDOR_KEYWORDS,
        Param(
            "posterior",
            str,
            "mode",
            "the posterior mode (the lasso estimate), or Bayesian-bootstrap draws "
            "of the coefficients (weighted-likelihood bootstrap; fitting takes posterior_draws times longer)",
            choices=POSTERIORS,
            expert=True,
        ),
        Param(
            "posterior_draws",
            int,
            20,
            "bootstrap refits of the λ path when posterior is bootstrap",
            low=2,
            high=200,
            expert=True,
        ),
        Param("bootstrap_seed", int, 0, "seed of the bootstrap's record weights", low=0, high=MAX_SEED, expert=True),
        Param("n_lambda", int, 100, "λ values on the path, from λmax down", low=2, high=1000, expert=True),
        Param(
            "lambda_min_ratio",
            float,
            1e-3,
            "the smallest λ of the path as a share of λmax",
            low=1e-6,
            high=0.5,
            expert=True,
        ),
    )

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedGLM:
        names = resolve_fields(dataset, self.fields)
        levels = field_levels(dataset, names)
        progress(0, 1, "counting words")
        text = synthesis_counts(dataset.texts.tolist(), self.vendor_keywords)
        designs: list[sparse.csr_matrix] = []
        previous: list[tuple[np.ndarray, FieldLevels]] = []
        for lv in levels:
            designs.append(design(text.matrix, previous))
            previous.append((lv.codes, lv))
        top = max(lambda_max(X, lv.codes, lv.n_levels) for X, lv in zip(designs, levels))
        if top <= 1e-12:  # the gradient at the null model is a weighted mean of O(1) terms: this is rounding
            raise ConfigError("the text carries no information about the fields (every coefficient is zero at any λ)")
        lambdas = top * np.power(self.lambda_min_ratio, np.arange(self.n_lambda) / (self.n_lambda - 1))
        draws = self.posterior_draws if self.posterior == "bootstrap" else 1
        rng = np.random.default_rng(self.bootstrap_seed)
        weights = [None] if draws == 1 else [rng.dirichlet(np.ones(dataset.n_records)) for _ in range(draws)]
        standardization = [standardize_columns(X, np.full(X.shape[0], 1.0 / X.shape[0]))[:2] for X in designs]
        paths: list[list[LassoPath]] = []
        total = draws * len(levels)
        for d, w in enumerate(weights):
            per_field = []
            for j, (X, lv) in enumerate(zip(designs, levels)):
                step = d * len(levels) + j
                what = f"fitting the λ path for {lv.name}" + (
                    f" (posterior draw {d + 1} of {draws})" if draws > 1 else ""
                )

                def report(done: int, tot: int, _what: str, step: int = step, what: str = what) -> None:
                    progress(step * tot + done, total * tot, what)

                center, scale = standardization[j]
                per_field.append(
                    fit_lasso_path(
                        X,
                        lv.codes,
                        lv.n_levels,
                        lambdas=lambdas,
                        sample_weight=w,
                        center=center,
                        scale=scale,
                        progress=report,
                        what=what,
                    )
                )
            paths.append(per_field)
        return FittedGLM(
            frame=dataset.frame, fields=levels, text=text, knob=path_knob(lambdas), paths=paths, lambdas=lambdas
        )
