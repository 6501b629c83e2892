"""Bayesian synthesis of a count field and a continuous field (Guo & Hu), with the privacy knob λ.

The count field (AvailableDays: 0–365, many zeros) is replaced by draws from a zero-inflated Poisson
regression truncated to [lower, upper] with a normal error on the log rate (Eqs. 1–5); then the continuous
field (Price) by draws from a linear regression of its logarithm on the predictors and the count field
(Eqs. 6–8), given the *synthetic* count (Eq. 9: sequential synthesis, Kinney et al. 2011). The predictors
(room type, borough, number of reviews) and the text are released unchanged. Models and samplers:
`engine.protect.bayes_counts.models`.

The truncation is the paper's (Eq. 1: Poisson(λᵢ) truncated to [0, 365], renormalized, not a draw clipped
to the bound): a record whose rate, log-normal by Eq. 3, lies above the upper bound gets a count from the last
weeks under it (a Poisson's spread is √λ, about 19 days at 365). So the synthetic counts pile up under the bound
where the confidential ones spread over the upper range: on the nyc-airbnb demo (λ = 1, 20 datasets) the share
at 300 days or more is kept (0.153 against 0.166) while the share at 360 or more is 0.112 against 0.050, and at
365 itself 0.059 against 0.027 (issue 48; `tests/test_count_bayes_acceptance.py`).

The knob λ multiplies the precision of the slopes' priors: λ = 1 is the paper's set-up; as λ grows every
slope shrinks to 0 and each record is drawn from the fitted marginal distribution of the field — the same
"privacy by design" limit as the text GLM's λmax.

Fit once, release many: the posterior is sampled (``chains`` chains, ``warmup`` + ``draws`` iterations each)
for every λ of ``lambdas`` (default `LAMBDA_GRID`); a λ between grid points is sampled when first asked for.
Synthetic dataset ℓ of M uses its own posterior draw ℓ (chain ℓ mod chains, iterations `SYNTHESIS_THIN`
apart), so the M datasets carry independent parameter draws, as in Section 2.3.

The paper leaves open which error εᵢ on the log rate a synthetic count gets (``rate_error``):
- ``"fresh"`` (default): a new εᵢ ~ Normal(0, 1/τ), as for a new listing with the same predictors — the record's
  own value enters its synthetic value only through the model's parameters (as price does in Eq. 9).
- ``"record"``: the record's own posterior εᵢ (what a JAGS node ``dpois(lam[i])`` inside the model would
  draw), which keeps more of each record's level and so more utility, and more risk. Its log rates are kept
  for `RECORD_RATE_DRAWS` draws per chain; more synthetic datasets than that reuse them.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import special

from engine import MAX_SEED
from engine.data.dataset import Dataset
from engine.data.levels import levels_by_frequency
from engine.data.schema import FieldSpec
from engine.errors import ConfigError, DataError
from engine.progress import Progress, no_progress
from engine.protect.base import Fitted, Knob, Protector, Release, ReleaseDetail
from engine.protect.bayes_counts.mcmc import diagnostics
from engine.protect.bayes_counts.models import (
    Chains,
    draw_truncated_poisson,
    sample_log_linear,
    sample_zero_inflated_poisson,
)
from engine.protect.field_synthesis.sequential import NUMERIC_FIRST
from engine.protect.params import Param
from engine.workers import Report, map_reporting

SYNTHESIS_THIN = 5
RECORD_RATE_DRAWS = 25
RATE_ERRORS = ("fresh", "record")
LAMBDA_GRID = (1.0, 10.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7)

COUNT_BAYES_KNOB = Knob(
    name="lambda",
    symbol="λ",
    label="Prior precision",
    low=1e-2,
    high=1e8,
    default=1.0,
    scale="log",
    more_privacy="higher",
    grid=LAMBDA_GRID,
    help="Multiplies the precision of the Normal priors on the slopes. λ = 1 is Guo & Hu's set-up; larger λ "
    "shrinks the slopes towards 0: more privacy, and at the top every record is drawn from the field's "
    "fitted overall distribution.",
)


@dataclass(frozen=True)
class Column:
    """One column of a design: an indicator of ``level``, or a numeric field (after ``transform``) centred
    and scaled by the confidential data."""

    field: str
    level: str | None = None
    transform: str = "identity"  # or "log1p"
    center: float = 0.0
    scale: float = 1.0

    @property
    def name(self) -> str:
        if self.level is not None:
            return f"{self.field}={self.level}"
        return f"log(1 + {self.field})" if self.transform == "log1p" else self.field

    def values(self, raw: np.ndarray) -> np.ndarray:
        if self.level is not None:
            return (raw.astype(str) == self.level).astype(float)
        x = raw.astype(float)
        if self.transform == "log1p":
            x = np.log1p(x)
        return (x - self.center) / self.scale


def design_columns(frame: pd.DataFrame, fields: Sequence[FieldSpec], count_transform: str) -> list[Column]:
    """Columns of the predictors ``fields``: categorical → indicators of every level but the most frequent;
    count → ``count_transform`` then standardized; continuous → standardized."""
    cols: list[Column] = []
    for f in fields:
        raw = frame[f.name]
        if f.kind == "categorical":
            order = levels_by_frequency(raw)
            cols += [Column(f.name, level=v) for v in order[1:]]
        else:
            transform = count_transform if f.kind == "count" else "identity"
            x = raw.to_numpy(dtype=float)
            x = np.log1p(x) if transform == "log1p" else x
            sd = float(x.std())
            cols.append(Column(f.name, transform=transform, center=float(x.mean()), scale=sd if sd > 0 else 1.0))
    return cols


def design_matrix(columns: Sequence[Column], values: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """The n × (1 + columns) design with an intercept first."""
    return np.column_stack([np.ones(n)] + [c.values(np.asarray(values[c.field])) for c in columns])


def _decimals(values: np.ndarray) -> int:
    """The fewest decimals (0–6) that write every value exactly (whole dollars → 0)."""
    for d in range(7):
        if np.allclose(values * 10**d, np.round(values * 10**d), rtol=0, atol=1e-9):
            return d
    return 6


@dataclass(frozen=True)
class PosteriorDraw(ReleaseDetail):
    """The posterior draw a release used (chain and iteration after warm-up) and the convergence diagnostics of
    the sample at its λ (split R-hat and effective sample size per parameter)."""

    chain: int
    draw: int
    diagnostics: pd.DataFrame
    section: ClassVar[str] = "counts"
    block: ClassVar[str] = "diagnostics"


@dataclass
class Posterior:
    """The posterior sample at one λ: chains of each model, diagnostics, sampling time."""

    value: float
    count: Chains | None
    continuous: Chains | None
    diagnostics: pd.DataFrame
    seconds: float


@dataclass
class FittedCountBayes(Fitted):
    """Designs, data and the posterior at every λ sampled so far."""

    frame: pd.DataFrame
    count_field: str | None
    continuous_field: str | None
    lower: int
    upper: int
    count_columns: list[Column]
    continuous_columns: list[Column]
    knob: Knob
    settings: dict
    posteriors: dict[float, Posterior] = field(default_factory=dict)
    method: str = "count-bayes"
    upper_from_data: bool = False  # no upper bound was given: it is the count's largest confidential value

    @property
    def synthesized_fields(self) -> list[str]:
        return [f for f in (self.count_field, self.continuous_field) if f is not None]

    def path_grid(self) -> list[float]:
        return sorted(self.posteriors, reverse=True) or list(self.knob.grid)

    def posterior(self, value: float, progress: Progress = no_progress) -> Posterior:
        """The posterior at λ = ``value`` (sampled now if it was not before)."""
        value = float(value)
        if value not in self.posteriors:
            self.posteriors[value] = sample_posteriors(self, [value], progress, processes=1)[value]
        return self.posteriors[value]

    def parameter_names(self) -> dict[str, list[str]]:
        names = {}
        if self.count_field is not None:
            terms = ["intercept"] + [c.name for c in self.count_columns]
            names["alpha"] = [f"rate: {t}" for t in terms]
            if self.lower == 0:
                names["beta"] = [f"zero: {t}" for t in terms]
        if self.continuous_field is not None:
            names["gamma"] = [
                f"log {self.continuous_field}: {t}" for t in ["intercept"] + [c.name for c in self.continuous_columns]
            ]
        return names

    def release(self, value: float, rng: np.random.Generator, replicate: int = 0) -> Release:
        value = self.knob.validate(value)
        post = self.posterior(value)
        n = len(self.frame)
        data = self.frame.copy()
        values = {c: self.frame[c].to_numpy() for c in self.frame.columns}
        chains = post.count or post.continuous
        assert chains is not None  # fit refuses a model with neither field
        slots = chains.n_draws // SYNTHESIS_THIN
        if post.count is not None and "log_rate" in post.count.values:
            slots = post.count.values["log_rate"].shape[1]
        c, slot = replicate % chains.n_chains, (replicate // chains.n_chains) % max(slots, 1)
        i = slot * SYNTHESIS_THIN
        warnings: list[str] = []
        if self.count_field is not None and post.count is not None:
            ch = post.count.values
            X = design_matrix(self.count_columns, values, n)
            if "log_rate" in ch:  # the record's own posterior log rate (its εᵢ included)
                rate = ch["log_rate"][c, slot].astype(float)
            else:  # a new record with the same predictors: a fresh εᵢ
                rate = X @ ch["alpha"][c, i] + rng.standard_normal(n) / np.sqrt(ch["tau"][c, i])
            y = draw_truncated_poisson(np.exp(np.minimum(rate, 50.0)), self.lower, self.upper, rng)
            if "beta" in ch:
                structural = rng.random(n) < special.expit(X @ ch["beta"][c, i])
                y = np.where(structural, 0, y)
            data[self.count_field] = pd.Series(y, index=data.index).astype(self.frame[self.count_field].dtype)
            values[self.count_field] = y
            warnings += self._at_the_largest(y)
        if self.continuous_field is not None and post.continuous is not None:
            ch = post.continuous.values
            W = design_matrix(self.continuous_columns, values, n)
            log_y = W @ ch["gamma"][c, i] + ch["sigma"][c, i] * rng.standard_normal(n)
            conf = self.frame[self.continuous_field].to_numpy(dtype=float)
            d = _decimals(conf)
            y = np.maximum(np.round(np.exp(log_y), d), 10.0**-d)
            data[self.continuous_field] = pd.Series(y, index=data.index).astype(self.frame[self.continuous_field].dtype)
        return Release(
            data=data,
            method=self.method,
            knob=float(value),
            protected_columns=tuple(self.synthesized_fields),
            changes=None,
            details=(PosteriorDraw(int(c), int(i), post.diagnostics),),
            warnings=tuple(warnings),
        )

    def _at_the_largest(self, y: np.ndarray) -> list[str]:
        """A warning when the upper bound is the count's largest confidential value and synthetic counts equal it:
        they repeat that record's value (and a rate the model puts past the bound piles up there). Counts only,
        never the value."""
        if not self.upper_from_data or self.count_field is None:
            return []
        released = int((y == self.upper).sum())
        if not released:
            return []
        held = int((self.frame[self.count_field].to_numpy() == self.upper).sum())
        return [
            f"{released:,} synthetic values of {self.count_field} equal its largest confidential value ({held:,} "
            "record(s) hold it in the data), which is the upper bound because none was given: give a public "
            "upper bound (upper, e.g. 365 for days of a year) so that the release does not repeat it"
        ]

    def complexity(self) -> pd.DataFrame:
        """Size of each model along λ: the sum of the absolute posterior means of its slopes (Σ|slope|, on
        standardized predictors), which λ shrinks towards 0."""
        rows = []
        for value, post in sorted(self.posteriors.items()):
            parts = []
            if post.count is not None:
                parts.append((f"{self.count_field}: rate", post.count.values["alpha"]))
                if "beta" in post.count.values:
                    parts.append((f"{self.count_field}: zeros", post.count.values["beta"]))
            if post.continuous is not None:
                parts.append((f"log {self.continuous_field}", post.continuous.values["gamma"]))
            for name, draws in parts:
                slopes = draws.reshape(-1, draws.shape[-1])[:, 1:].mean(axis=0)
                rows.append(
                    {
                        "knob": value,
                        "field": name,
                        "size": float(np.abs(slopes).sum()),
                        "what": "Σ|slope| (posterior mean)",
                    }
                )
        return pd.DataFrame(rows, columns=["knob", "field", "size", "what"])

    def diagnostics(self, grid: Sequence[float]) -> pd.DataFrame:
        """Split R-hat and effective sample size of every parameter at every λ of ``grid``."""
        return pd.concat([self.posterior(v).diagnostics.assign(knob=v) for v in grid], ignore_index=True)

    def coefficients(self, value: float) -> pd.DataFrame:
        """Posterior mean and central 95% interval of every parameter at λ = ``value``."""
        post = self.posterior(self.snap(value))
        rows = []
        for key, names in self.parameter_names().items():
            chains = post.count if key in ("alpha", "beta") else post.continuous
            assert chains is not None  # parameter_names lists only the fitted models' parameters
            draws = chains.values[key].reshape(-1, len(names))
            for j, name in enumerate(names):
                lo, hi = np.quantile(draws[:, j], [0.025, 0.975])
                rows.append({"parameter": name, "mean": float(draws[:, j].mean()), "lo": float(lo), "hi": float(hi)})
        return pd.DataFrame(rows, columns=["parameter", "mean", "lo", "hi"])


def _chain_seed(seed: int, value: float) -> np.random.SeedSequence:
    """A stream per (fit seed, λ), so a λ sampled late gives the same draws as when sampled in the fit."""
    bits = struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    return np.random.SeedSequence([int(seed), bits & 0xFFFFFFFF, bits >> 32])


def sample_posterior(fitted: FittedCountBayes, value: float, progress: Progress = no_progress) -> Posterior:
    """Run both samplers at λ = ``value`` (`sample_posteriors` runs this for several λ, in worker processes)."""
    s = fitted.settings
    rng = np.random.default_rng(_chain_seed(s["seed"], value))
    n = len(fitted.frame)
    values = {c: fitted.frame[c].to_numpy() for c in fitted.frame.columns}
    per = s["chains"] * (s["warmup"] + s["draws"])
    models = int(fitted.count_field is not None) + int(fitted.continuous_field is not None)
    total = models * per
    done = [0]
    what = f"sampling the posterior at λ = {fitted.knob.format(value)}"

    def tick(k: int) -> None:
        done[0] += k
        if done[0] % 50 == 0:
            progress(done[0], total, what)

    start = time.perf_counter()
    count = continuous = None
    samples: dict[str, np.ndarray] = {}
    names = fitted.parameter_names()
    if fitted.count_field is not None:
        X = design_matrix(fitted.count_columns, values, n)
        y = fitted.frame[fitted.count_field].to_numpy(dtype=float)
        keep = (
            [SYNTHESIS_THIN * k for k in range(min(RECORD_RATE_DRAWS, s["draws"] // SYNTHESIS_THIN))]
            if s.get("rate_error") == "record"
            else []
        )
        count = sample_zero_inflated_poisson(
            X, y, fitted.lower, fitted.upper, value, s["chains"], s["warmup"], s["draws"], rng, tick, keep_rates=keep
        )
        for key in ("alpha", "beta"):
            if key in count.values:
                samples.update({nm: count.values[key][:, :, j] for j, nm in enumerate(names[key])})
        samples[f"{fitted.count_field}: log τ"] = np.log(count.values["tau"])
    if fitted.continuous_field is not None:
        W = design_matrix(fitted.continuous_columns, values, n)
        log_y = np.log(fitted.frame[fitted.continuous_field].to_numpy(dtype=float))
        continuous = sample_log_linear(W, log_y, value, s["chains"], s["warmup"], s["draws"], rng, tick)
        samples.update({nm: continuous.values["gamma"][:, :, j] for j, nm in enumerate(names["gamma"])})
        samples[f"log {fitted.continuous_field}: log σ"] = np.log(continuous.values["sigma"])
    progress(done[0], total, what)
    return Posterior(value, count, continuous, diagnostics(samples), time.perf_counter() - start)


FIT_PROCESSES = 2
"""Processes the posteriors at the grid's λ values are sampled in when fitting (`engine.workers`). Each λ has
its own random stream (`_chain_seed`), so the draws do not depend on how many."""


def _sample_piece(item: tuple[FittedCountBayes, float], report: Report) -> Posterior:
    fitted, value = item
    return sample_posterior(fitted, value, lambda done, _total, _what: report(done))


def sample_posteriors(
    fitted: FittedCountBayes, values: Sequence[float], progress: Progress = no_progress, processes: int | None = None
) -> dict[float, Posterior]:
    """The posterior at every λ of ``values``, sampled in ``processes`` worker processes (default
    `FIT_PROCESSES`, at most one per core)."""
    values = [float(v) for v in values]
    s = fitted.settings
    models = int(fitted.count_field is not None) + int(fitted.continuous_field is not None)
    if processes is None:
        processes = min(FIT_PROCESSES, os.cpu_count() or 1)
    what = f"sampling the posterior at {len(values)} λ values" + (f" in {processes} processes" if processes > 1 else "")
    posteriors = map_reporting(
        _sample_piece,
        [(fitted, v) for v in values],
        models * s["chains"] * (s["warmup"] + s["draws"]),
        progress,
        what,
        processes,
    )
    return dict(zip(values, posteriors, strict=True))


class CountBayesSynthesizer(Protector):
    """Sequential Bayesian synthesis of a count field (zero-inflated truncated Poisson) and a continuous field
    (log-linear regression) given un-synthesized predictors (knob λ)."""

    protects_by = "synthesized"
    name = "count-bayes"
    title = "Bayesian count and amount synthesis"
    description = (
        "Replaces a count field (e.g. days available, 0–365, many zeros) by draws from a zero-inflated, "
        "truncated Poisson regression, then an amount (e.g. price) by draws from a regression of its logarithm "
        "on the same predictors and the synthetic count (Guo & Hu). λ multiplies the precision of the priors "
        "on the slopes: larger λ = more privacy; at the top every record is drawn from the field's overall "
        "distribution. The text and the predictors are released as they are, but for the identifiers the release "
        "guard takes out."
    )
    knob = COUNT_BAYES_KNOB
    changes = "fields"
    field_kinds = ("count", "continuous")
    shown_first = NUMERIC_FIRST

    count_field: str | None
    continuous_field: str | None
    predictors: tuple[str, ...] | None
    lower: int
    upper: int | None
    chains: int
    warmup: int
    draws: int
    chain_seed: int
    lambdas: tuple[float, ...]
    rate_error: str
    parameters = (
        Param(
            "count_field",
            str,
            None,
            "the count field to synthesize (default: the first sensitive count field)",
            fields=("count",),
            synthesized=True,
            suggest="sensitive",
            label="Count field (synthesized first)",
        ),
        Param(
            "continuous_field",
            str,
            None,
            "the amount to synthesize after the count, by a log-linear model "
            "(default: the first sensitive continuous field)",
            fields=("continuous",),
            synthesized=True,
            suggest="sensitive",
            label="Amount (synthesized given the count)",
        ),
        Param(
            "predictors",
            str,
            None,
            "structured fields that predict the synthesized ones (default: the key fields)",
            many=True,
            fields=("categorical", "count", "continuous"),
            suggest="key",
            label="Predictor fields (released unchanged)",
        ),
        Param("lower", int, 0, "lower bound of the count", low=0, high=10**9),
        Param(
            "upper",
            int,
            None,
            "upper bound of the count, a public one such as 365 days (default: its largest value in the data, which "
            "synthetic counts may then repeat)",
            low=1,
            high=10**9,
        ),
        Param("chains", int, 2, "MCMC chains per λ", low=1, high=8, expert=True),
        Param("warmup", int, 300, "MCMC warm-up iterations per chain", low=0, high=100_000, expert=True),
        Param("draws", int, 500, "MCMC draws per chain after warm-up", low=10, high=100_000, expert=True),
        Param("chain_seed", int, 0, "seed of the MCMC chains", low=0, high=MAX_SEED, expert=True),
        Param(
            "lambdas",
            float,
            LAMBDA_GRID,
            "the λ values whose posteriors are sampled when fitting (a λ between them is sampled when first asked for)",
            many=True,
            low=COUNT_BAYES_KNOB.low,
            high=COUNT_BAYES_KNOB.high,
            expert=True,
            label="λ values sampled when fitting",
        ),
        Param(
            "rate_error",
            str,
            "fresh",
            "a synthetic count's log-rate error is drawn fresh, or is the record's "
            "own posterior error (more utility, more risk)",
            choices=RATE_ERRORS,
            expert=True,
        ),
    )

    def validate(self) -> None:
        if self.upper is not None and self.upper <= self.lower:
            raise ConfigError(
                f"count bounds must satisfy 0 ≤ lower < upper, got lower={self.lower}, upper={self.upper}"
            )
        if not self.lambdas:
            raise ConfigError("lambdas needs at least one λ value")
        self.lambdas = tuple(sorted(set(self.lambdas)))

    def resolve(self, dataset: Dataset) -> tuple[str | None, str | None, list[FieldSpec], int]:
        """The count field, the continuous field, the predictor fields and the upper bound, checked against
        the data; ConfigError / DataError say what is wrong and what is accepted."""
        schema = dataset.schema
        counts = [f.name for f in schema.fields if f.kind == "count"]
        amounts = [f.name for f in schema.fields if f.kind == "continuous"]
        count, amount = self.count_field, self.continuous_field
        if count is None and amount is None:
            sensitive = {f.name for f in schema.fields_with_role("sensitive")}
            count = next((f for f in counts if f in sensitive), None)
            amount = next((f for f in amounts if f in sensitive), None)
            if count is None and amount is None:
                raise ConfigError(
                    "no sensitive count or continuous field to synthesize; name them "
                    f"(count fields: {', '.join(counts) or 'none'}; continuous fields: "
                    f"{', '.join(amounts) or 'none'})"
                )
        for name, kinds, what in ((count, counts, "count"), (amount, amounts, "continuous")):
            if name is not None and name not in kinds:
                raise ConfigError(f"'{name}' is not a {what} field; {what} fields are: {', '.join(kinds) or 'none'}")
        chosen = {name for name in (count, amount) if name is not None}
        predictors = schema.predictors(self.predictors, chosen)
        if dataset.n_records < 10:
            raise DataError(f"Bayesian synthesis needs at least 10 records, the dataset has {dataset.n_records}")
        frame = dataset.frame
        for name in [*chosen, *(p.name for p in predictors)]:
            missing = int(frame[name].isna().sum())
            if missing:
                raise DataError(f"field '{name}' has {missing} missing value(s); fill or drop those rows first")
        for name in [*chosen, *(p.name for p in predictors if p.kind != "categorical")]:
            if not pd.api.types.is_numeric_dtype(frame[name]):
                raise DataError(f"field '{name}' must hold numbers (it is declared {schema.field(name).kind})")
        upper = self.upper
        if count is not None:
            y = frame[count].to_numpy(dtype=float)
            if np.any(y != np.round(y)) or np.any(y < 0):
                raise DataError(f"count field '{count}' must hold whole numbers ≥ 0")
            upper = int(y.max()) if upper is None else upper
            outside = int(((y < self.lower) | (y > upper)).sum())
            if outside:
                raise DataError(
                    f"count field '{count}' has {outside} value(s) outside its bounds "
                    f"[{self.lower}, {upper}]; widen the bounds"
                )
            if np.unique(y).size < 2:
                raise DataError(f"count field '{count}' takes a single value; there is nothing to synthesize")
        if amount is not None:
            y = frame[amount].to_numpy(dtype=float)
            bad = int((y <= 0).sum())
            if bad:
                raise DataError(
                    f"continuous field '{amount}' (the amount) has {bad:,} value(s) ≤ 0; the log-linear model "
                    "(Guo & Hu, Eq. 6) needs positive amounts: correct or leave out those records, choose another "
                    "amount, or synthesize with cart, which takes any number"
                )
            if np.unique(y).size < 2:
                raise DataError(f"continuous field '{amount}' takes a single value; there is nothing to synthesize")
        return count, amount, predictors, upper if upper is not None else 0

    def check(self, dataset: Dataset) -> list[str]:
        count, amount, _, _ = self.resolve(dataset)
        return [f for f in (count, amount) if f is not None]

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedCountBayes:
        count, amount, predictors, upper = self.resolve(dataset)
        frame = dataset.frame
        count_cols = design_columns(frame, predictors, "log1p") if count is not None else []
        amount_preds = predictors + ([dataset.schema.field(count)] if count is not None else [])
        amount_cols = design_columns(frame, amount_preds, "identity") if amount is not None else []
        fitted = FittedCountBayes(
            frame=frame,
            count_field=count,
            continuous_field=amount,
            lower=self.lower,
            upper=upper,
            upper_from_data=self.upper is None and count is not None,
            count_columns=count_cols,
            continuous_columns=amount_cols,
            knob=replace(
                COUNT_BAYES_KNOB,
                grid=self.lambdas,
                default=COUNT_BAYES_KNOB.default if COUNT_BAYES_KNOB.default in self.lambdas else self.lambdas[0],
            ),
            settings={
                "chains": self.chains,
                "warmup": self.warmup,
                "draws": self.draws,
                "seed": self.chain_seed,
                "rate_error": self.rate_error,
            },
        )
        fitted.posteriors.update(sample_posteriors(fitted, self.lambdas, progress))
        return fitted
