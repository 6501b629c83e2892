"""k-anonymity by full-domain generalization and suppression (issue 14): the least-loss node on hand-built
tables, DM and LM by hand, monotone trends in k, ℓ-diversity and t-closeness, and pycanon's confirmation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pycanon import anonymity

from engine.protect.kanon.lattice import ANY, Hierarchy, discernibility, k_anonymize, loss_metric


def age_band(value: str, level: int) -> str:
    """Levels 1, 2: 10- and 20-year bands."""
    width = (10, 20)[level - 1]
    low = int(value) // width * width
    return f"{low}-{low + width - 1}"


AGE = Hierarchy(3, age_band)
GENDER = Hierarchy(1, lambda v, level: v)


def table(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame({"age": [r[0] for r in rows], "gender": [r[1] for r in rows]})


def flat(release: pd.DataFrame) -> pd.DataFrame:
    """Cells as strings, as pycanon reads them."""
    return release.apply(lambda col: col.map(lambda cell: "|".join(cell) if cell else "-"))


ROWS = [(("23",), ("f",)), (("27",), ("f",)), (("31",), ("m",)), (("36",), ("m",)), (("38",), ("f",))]
ROWS += [((), ("m",)), ((), ("m",))]  # two posts that state no age: "not stated" is a value of its own


def test_the_least_loss_node_on_a_hand_table():
    qi = table(ROWS)
    out = k_anonymize(qi, {"age": AGE, "gender": GENDER}, k=2, max_suppressed=0.0)
    # minimal 2-anonymous nodes: (age 20-year bands, gender kept) — every stated age becomes 20-39, which
    # covers all 5 ages: LM = (5 · 1 + 2 · 0 + 7 · 0) / 14 — and (10-year bands, gender *): ages 20-29 cover 2
    # of 5 leaves, 30-39 3 of them, every gender is '*': LM = (2 · 1/4 + 3 · 2/4 + 7 · 1) / 14. The first wins.
    assert out.levels == {"age": 2, "gender": 0}
    assert out.loss == pytest.approx(5 / 14)
    assert flat(out.table).value_counts().min() >= 2
    assert not out.suppressed.any()
    assert anonymity.k_anonymity(flat(out.table), ["age", "gender"]) >= 2
    # k = 1 releases the table as it is
    same = k_anonymize(qi, {"age": AGE, "gender": GENDER}, k=1)
    assert same.levels == {"age": 0, "gender": 0} and same.table.equals(qi) and same.loss == 0.0


def test_suppression_keeps_the_generalization_low_when_allowed():
    qi = table(ROWS)
    strict = k_anonymize(qi, {"age": AGE, "gender": GENDER}, k=2, max_suppressed=0.0)
    loose = k_anonymize(qi, {"age": AGE, "gender": GENDER}, k=2, max_suppressed=0.34)
    assert sum(loose.levels.values()) <= sum(strict.levels.values())
    assert loose.suppressed.sum() <= 2
    kept = flat(loose.table[~loose.suppressed])
    assert anonymity.k_anonymity(kept, ["age", "gender"]) >= 2
    assert all(cell == (ANY,) for col in loose.table.columns for cell in loose.table.loc[loose.suppressed, col])


def test_dm_and_lm_by_hand():
    # classes of 2, 2 and 1 suppressed record in a table of 5: DM = 2·2 + 2·2 + 1·5 = 13
    sizes = np.array([2, 2, 2, 2, 0])
    suppressed = np.array([False, False, False, False, True])
    assert discernibility(sizes, suppressed) == 13
    # one column, leaves {23, 27, 31}: 23 and 27 released as 20-29 cover 2 leaves → (2−1)/(3−1) = 0.5 each,
    # 31 kept as itself → 0, suppressed → 1: LM = (0.5 + 0.5 + 0 + 1) / 4
    original = pd.DataFrame({"age": [("23",), ("27",), ("31",), ("31",)]})
    released = pd.DataFrame({"age": [("20-29",), ("20-29",), ("31",), (ANY,)]})
    assert loss_metric(original, released, np.array([False, False, False, True])) == pytest.approx(0.5)


def test_loss_and_discernibility_rise_with_k_and_every_release_is_k_anonymous():
    rng = np.random.default_rng(0)
    ages = rng.integers(18, 80, 300)
    genders = rng.choice(["f", "m", "x"], 300, p=[0.48, 0.48, 0.04])
    qi = pd.DataFrame({"age": [(str(a),) for a in ages], "gender": [(g,) for g in genders]})
    h = {"age": AGE, "gender": GENDER}
    lms, dms = [], []
    for k in (2, 5, 10, 20, 50):
        out = k_anonymize(qi, h, k=k, max_suppressed=0.02)
        kept = flat(out.table[~out.suppressed])
        assert anonymity.k_anonymity(kept, ["age", "gender"]) >= k
        assert out.suppressed.mean() <= 0.02
        lms.append(out.loss)
        dms.append(discernibility(out.class_sizes, out.suppressed))
    assert lms == sorted(lms) and dms == sorted(dms) and dms[-1] > dms[0]


def test_l_diversity_and_t_closeness_are_met_when_asked():
    rng = np.random.default_rng(1)
    n = 200
    qi = pd.DataFrame(
        {"age": [(str(a),) for a in rng.integers(18, 80, n)], "gender": [(g,) for g in rng.choice(["f", "m"], n)]}
    )
    sensitive = rng.choice(["cancer", "none", "diabetes"], n, p=[0.2, 0.6, 0.2])
    h = {"age": AGE, "gender": GENDER}
    out = k_anonymize(qi, h, k=3, max_suppressed=0.05, sensitive=sensitive, ell=2)
    kept = flat(out.table[~out.suppressed]).assign(sa=sensitive[~out.suppressed])
    assert anonymity.l_diversity(kept, ["age", "gender"], ["sa"]) >= 2
    out = k_anonymize(qi, h, k=3, max_suppressed=0.05, sensitive=sensitive, t=0.3)
    kept = flat(out.table[~out.suppressed]).assign(sa=sensitive[~out.suppressed])
    assert anonymity.t_closeness(kept, ["age", "gender"], ["sa"]) <= 0.3 + 1e-9


def test_bad_settings_are_refused_and_k_above_n_suppresses_everything_and_says_so():
    qi = table(ROWS)
    with pytest.raises(ValueError, match="k must be at least 1"):
        k_anonymize(qi, {"age": AGE, "gender": GENDER}, k=0)
    with pytest.raises(ValueError, match="no generalization hierarchy for \\['gender'\\]"):
        k_anonymize(qi, {"age": AGE}, k=2)
    out = k_anonymize(qi, {"age": AGE, "gender": GENDER}, k=50)
    assert out.suppressed.all() and out.over_limit
