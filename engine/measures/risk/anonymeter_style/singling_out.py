"""Singling out: the multivariate singling-out attack of Giomi et al. (2023) (the framework's singling-out
evaluation), after Cohen & Nissim (2020).

The intruder holds the released table only. She writes predicates ("airline = Delta and words ≥ 31 and has a
URL") that each match exactly one released record, and claims that each also isolates one person among the
confidential records. An attack succeeds when its predicate matches exactly one confidential record.

- **Attack.** A predicate is made from a released record drawn at random and ``n_cols`` of its columns drawn at
  random: a category must equal the record's value, a number must be at least its value when the value lies
  above the column's median and at most it otherwise (towards the rarer extreme), a missing value must be
  missing. It is kept when it matches exactly one released record and is not a predicate kept already; drawing
  stops at ``n_attacks`` predicates or after `MAX_TRIES` draws per predicate wanted.
- **Control.** The same predicates on the control records (the same number of records, so no correction for
  size is needed).
- **Baseline.** ``n_attacks`` predicates written blindly: ``n_cols`` columns drawn at random, each with a value
  drawn among the column's released values and an operator drawn at random (=, ≠ for a category; =, ≠, <, >,
  ≤, ≥ for a number); a success when it matches exactly one confidential record.

Every rate is over ``n_attacks``, as in the framework: a predicate the intruder could not find within the draws
counts as an attack that failed (the note says how many were found). Records are not merged where they are
identical (the framework's code drops duplicate rows first; a predicate matching two identical records does not
single out a person here).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np
import pandas as pd

from engine.measures.base import Attack, MetricResult, NotApplicable, PrepareContext
from engine.measures.risk.anonymeter_style.measure import AnonymeterRisk
from engine.measures.risk.anonymeter_style.table import Column, Encoded

N_COLS = 3
"""Columns in each predicate (the framework's default)."""
MAX_SUBSETS = 60
"""Sets of columns the intruder writes predicates on at most (drawn at random among all when there are more)."""
BATCH = 500
"""Predicates counted at once, and points of `_covered_in_three` checked at once."""
COUNT_CELLS = 4_000_000
"""Most (predicate, record) cells `counts` tests at once: a batch's column of values is 32 MB. Batches of `BATCH`
predicates over the 100,000 attacked records of 200,000 posts held 400 MB of values and as much again in the
tests' copies."""

EQ, NE, GE, LE, GT, LT, MISSING, PRESENT = range(8)


@dataclass(frozen=True)
class Predicates:
    """Conjunctions of conditions: for each predicate and each of its ``n_cols`` conditions the column (its
    position in the table's columns), the operator and the value (a category's code or a number)."""

    columns: np.ndarray  # predicates × n_cols, int
    operators: np.ndarray  # predicates × n_cols, int
    values: np.ndarray  # predicates × n_cols, float

    def __len__(self) -> int:
        return len(self.columns)

    def take(self, keep: np.ndarray | slice) -> Predicates:
        return Predicates(self.columns[keep], self.operators[keep], self.values[keep])


_TESTS: dict[int, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    EQ: np.equal,
    NE: np.not_equal,
    GE: np.greater_equal,
    LE: np.less_equal,
    GT: np.greater,
    LT: np.less,
    MISSING: lambda column, _value: np.isnan(column),
    PRESENT: lambda column, _value: ~np.isnan(column),
}


def matrix(table: Encoded, columns: list[Column]) -> np.ndarray:
    """The table as records × columns of floats (a category's code as a number)."""
    out = np.zeros((table.rows, len(columns)))
    for j, c in enumerate(columns):
        out[:, j] = table.values[c.name]
    return out


def counts(predicates: Predicates, data: np.ndarray) -> np.ndarray:
    """How many records of ``data`` (records × columns) each predicate matches."""
    out = np.zeros(len(predicates), dtype=np.int64)
    batch = max(1, min(BATCH, COUNT_CELLS // max(len(data), 1)))
    for start in range(0, len(predicates), batch):
        p = predicates.take(slice(start, start + batch))
        match = np.ones((len(p), len(data)), dtype=bool)
        for j in range(p.columns.shape[1]):
            column = data[:, p.columns[:, j]].T  # predicates × records
            value = p.values[:, j][:, None]
            op = p.operators[:, j]
            holds = np.empty(column.shape, dtype=bool)
            for code, test in _TESTS.items():
                which = np.flatnonzero(op == code)
                if len(which):
                    holds[which] = test(column[which], value[which])
            match &= holds
        out[start : start + len(p)] = match.sum(axis=1)
    return out


def attack_predicates(
    released: np.ndarray, numeric: np.ndarray, n_attacks: int, n_cols: int, rng: np.random.Generator
) -> tuple[Predicates, int]:
    """``n_attacks`` predicates drawn at random among all those that match exactly one released record (all of
    them when there are fewer), and how many there are (see the module); ``numeric`` says which columns are
    numbers."""
    width = released.shape[1]
    medians = np.array(
        [
            np.nanmedian(released[:, j]) if numeric[j] and np.isfinite(released[:, j]).any() else 0.0
            for j in range(width)
        ]
    )
    subsets = list(combinations(range(width), n_cols))
    if len(subsets) > MAX_SUBSETS:
        subsets = [subsets[i] for i in np.sort(rng.choice(len(subsets), MAX_SUBSETS, replace=False))]
    found = [(np.flatnonzero(singles_out(released, numeric, medians, s)), s) for s in subsets]
    total = sum(len(records) for records, _ in found)
    pairs = np.array([(r, i) for i, (records, _) in enumerate(found) for r in records], dtype=np.int64).reshape(-1, 2)
    if total > n_attacks:
        pairs = pairs[np.sort(rng.choice(total, n_attacks, replace=False))]
    columns = np.array([subsets[i] for i in pairs[:, 1]], dtype=np.int64).reshape(-1, n_cols)
    values = released[pairs[:, 0][:, None], columns]
    operators = np.where(
        np.isnan(values), MISSING, np.where(numeric[columns], np.where(values > medians[columns], GE, LE), EQ)
    )
    return Predicates(columns, operators, values), total


def _group_codes(columns: list[np.ndarray], n: int) -> np.ndarray:
    """One code per distinct combination of the values of ``columns`` (non-negative whole numbers or flags)."""
    key = np.zeros(n, dtype=np.int64)
    for column in columns:
        codes = column.astype(np.int64)
        key = key * (int(codes.max()) + 1 if len(codes) else 1) + codes
    return pd.factorize(key)[0]


def singles_out(released: np.ndarray, numeric: np.ndarray, medians: np.ndarray, subset: tuple[int, ...]) -> np.ndarray:
    """For every released record, whether its predicate on the columns ``subset`` matches it alone.

    Records agreeing on the categories (and on which numbers are missing) form a group; within it a record's
    numbers set an orthant (≥ its value above the median, ≤ below), and the predicate singles it out when no
    other record of the group lies in that orthant. Found for every record at once by sorting, without comparing
    all pairs (`_covered`)."""
    n = len(released)
    numbers = [j for j in subset if numeric[j]]
    groups = _group_codes(
        [released[:, j] for j in subset if not numeric[j]] + [np.isnan(released[:, j]) for j in numbers], n
    )
    if not numbers:
        return np.bincount(groups)[groups] == 1
    # A missing number's condition is "missing": every record of its group (same missing pattern) meets it.
    values = np.nan_to_num(released[:, numbers], nan=0.0)
    up = np.column_stack([released[:, j] > medians[j] for j in numbers])
    alone = np.zeros(n, dtype=bool)
    for pattern in product((False, True), repeat=len(numbers)):
        mine = (up == np.array(pattern)).all(axis=1)
        if mine.any():
            signs = np.where(pattern, 1.0, -1.0)
            alone[mine] = ~_covered(groups, values * signs)[mine]
    return alone


def _covered(groups: np.ndarray, points: np.ndarray) -> np.ndarray:
    """For every point, whether another point of its group is at least as large in every coordinate (1 to 3)."""
    n, d = points.shape
    order = np.lexsort([-points[:, k] for k in range(d - 1, -1, -1)] + [groups])
    g, p = groups[order], points[order]  # by group, then the coordinates from the largest
    covered = np.zeros(n, dtype=bool)
    same = np.concatenate([[False], (g[1:] == g[:-1]) & (p[1:] == p[:-1]).all(axis=1)])
    covered |= same | np.concatenate([same[1:], [False]])  # an identical point covers both
    first = np.concatenate([[True], g[1:] != g[:-1]])
    if d == 1:  # the first of its group is its largest
        covered |= ~first
    elif d == 2:  # an earlier point of the group (larger first coordinate) with a second at least as large
        ranks = np.unique(p[:, 1], return_inverse=True)[1].ravel()
        key = g * (int(ranks.max()) + 1) + ranks
        before = np.concatenate([[-1], np.maximum.accumulate(key)[:-1]])
        covered |= before >= key
    else:
        starts = np.flatnonzero(first)
        for lo, hi in zip(starts, [*starts[1:], n], strict=True):
            covered[lo:hi] |= _covered_in_three(p[lo:hi])
    out = np.empty(n, dtype=bool)
    out[order] = covered
    return out


def _covered_in_three(p: np.ndarray) -> np.ndarray:
    """`_covered` for points of one group in three coordinates, sorted from the largest first coordinate: each
    block of points is checked against the staircase (the maximal second and third coordinates) of the points
    before it, and against the points before it in the block."""
    m = len(p)
    out = np.zeros(m, dtype=bool)
    stair_y, stair_z = np.zeros(0), np.zeros(0)  # second coordinate ascending, third descending
    for lo in range(0, m, BATCH):
        block = p[lo : lo + BATCH]
        y, z = block[:, 1], block[:, 2]
        if len(stair_y):
            k = np.searchsorted(stair_y, y, side="left")  # the first step at least as far in y: the highest z
            out[lo : lo + len(block)] |= (k < len(stair_y)) & (stair_z[np.minimum(k, len(stair_y) - 1)] >= z)
        earlier = np.tri(len(block), k=-1, dtype=bool)  # [i, j]: j before i
        out[lo : lo + len(block)] |= ((y[None, :] >= y[:, None]) & (z[None, :] >= z[:, None]) & earlier).any(axis=1)
        ys, zs = np.concatenate([stair_y, y]), np.concatenate([stair_z, z])
        by = np.lexsort((-zs, -ys))
        ys, zs = ys[by], zs[by]
        keep = zs > np.concatenate([[-np.inf], np.maximum.accumulate(zs)[:-1]])
        stair_y, stair_z = ys[keep][::-1], zs[keep][::-1]
    return out


def blind_predicates(
    released: np.ndarray, numeric: np.ndarray, n_attacks: int, n_cols: int, rng: np.random.Generator
) -> Predicates:
    """The baseline's ``n_attacks`` predicates written at random (see the module)."""
    width = released.shape[1]
    columns = np.sort(np.argsort(rng.random((n_attacks, width)), axis=1)[:, :n_cols], axis=1)
    levels = [np.unique(released[:, j]) for j in range(width)]  # a missing value once among them
    values = np.array([[levels[c][rng.integers(len(levels[c]))] for c in row] for row in columns], dtype=float)
    is_number = numeric[columns]
    drawn = np.where(is_number, rng.integers(0, 6, columns.shape), rng.integers(0, 2, columns.shape))
    operators = np.where(np.isnan(values), np.where(drawn % 2 == 0, MISSING, PRESENT), drawn)
    return Predicates(columns, operators, values)


@dataclass(frozen=True)
class Outcome:
    """Successes of the attack, its control and its baseline, and the predicates the intruder found."""

    attack: int
    control: int
    baseline: int
    found: int  # the predicates that single out a released record, of which the attack drew its own


def single_out(
    released: Encoded,
    attacked: Encoded,
    control: Encoded,
    columns: list[Column],
    n_attacks: int,
    rng: np.random.Generator,
    n_cols: int = N_COLS,
) -> Outcome:
    """The singling-out attack on ``released`` (the released rows of the attacked records), scored on the
    ``attacked`` confidential records, on the ``control`` records and against the blind baseline."""
    numeric = np.array([c.numeric for c in columns])
    data = matrix(released, columns)
    k = min(n_cols, len(columns))
    found, total = attack_predicates(data, numeric, n_attacks, k, rng)
    blind = blind_predicates(data, numeric, n_attacks, k, rng)
    return Outcome(
        int((counts(found, matrix(attacked, columns)) == 1).sum()),
        int((counts(found, matrix(control, columns)) == 1).sum()),
        int((counts(blind, matrix(attacked, columns)) == 1).sum()),
        total,
    )


class SinglingOutRisk(AnonymeterRisk):
    """The singling-out risk of the release (Giomi et al. 2023, multivariate singling out; see the module)."""

    id = "singling_out_risk"
    label = "Singling-out risk (Anonymeter)"
    card_label = "Singling out"
    meaning = (
        "Singling out, in the words of the Article 29 Working Party: can someone be isolated in the release? An "
        "intruder holding the released table writes conditions on up to three of its columns that match exactly "
        "one released record, and claims each isolates one person among the confidential records. The risk is "
        "how much more often her claims hold for the people the release was made from than for control people it "
        "was not made from: (attack − control) / (1 − control). 0 = the release lets her isolate no one more than "
        "anyone else in the population; 1 = every claim holds for the release's people and none beyond chance "
        "for others. Shown with its 95% interval; the chance level is the success of conditions written blindly "
        "(shown, not subtracted: the risk is read against the control)."
    )
    source = (
        "Giomi, Boenisch, Wehmeyer & Tasnádi (2023), PoPETs, the singling-out evaluation (multivariate "
        "predicates after Cohen & Nissim 2020; risk against a control split, Wilson intervals); Article 29 "
        "Working Party, Opinion 05/2014"
    )
    attack = Attack(
        holds=("released_fields",),
        names="record",
        baseline="control",  # a risk corrected by its control already (Giomi et al. 2023), taken as it is
        assumptions=(
            "She holds the released table alone: its fields and four features of each text (its number of words, "
            "whether it holds a URL, an @handle, a digit). She claims that a condition matching one released "
            "record matches one confidential person. Half the records, drawn at random, are the control: she "
            "attacks the released rows of the other half. The methods learned from all the records, so the "
            "control is not wholly unseen and the risk may be slightly understated; among half the records people "
            "are somewhat easier to single out than among all."
        ),
    )
    intruder_use = "does not depend on the preset: she holds the released table and nothing else."
    stream = 1

    def prepare_attack(self, context: PrepareContext) -> None:
        if len(self.side.columns) < 2:
            raise NotApplicable("needs at least two columns in the released table to write conditions on")
        self.note = (
            f"Conditions on {min(N_COLS, len(self.side.columns))} columns; one that no released record alone "
            "matches cannot be written, and the attacks left without one count as failed."
        )

    def attack_result(self, released: Encoded, attacked: Encoded, control: Encoded) -> MetricResult:
        n = min(self.n_attacks, attacked.rows)
        outcome = single_out(released, attacked, control, self.side.columns, n, self.rng())
        return self.result(outcome.attack, outcome.control, outcome.baseline, n, found=outcome.found)
