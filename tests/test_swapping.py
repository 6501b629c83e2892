"""Named-entity swapping (Greve & Sablica, Sections 2.1 and 2.3): pairs never join chunks of one document or of
different clusters, F categories are never touched, C categories never survive in their chunk, round(r·n / 2)
pairs at rate r while valid pairs last, r = 0 changes nothing, and a seed fixes the release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.protect.swap.swapping import swap_entities, valid_pairs

CATEGORIES = ("ORG", "PERSON", "DATE", "EVENT")
ROLES = {"ORG": "S", "PERSON": "S", "DATE": "F", "EVENT": "C"}


def chunks(n: int = 240, documents: int = 12, clusters: int = 4, seed: int = 0) -> tuple[pd.DataFrame, list, list]:
    """n chunks of ``documents`` documents in ``clusters`` clusters; each category holds 0–2 of a few entities."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        row = {}
        for c in CATEGORIES:
            k = rng.choice([0, 1, 1, 2])
            row[c] = tuple(sorted({f"{c.lower()}{v}" for v in rng.integers(0, 15, k)}))
        rows.append(row)
    return pd.DataFrame(rows), list(rng.integers(0, documents, n)), list(rng.integers(0, clusters, n))


def test_pairs_join_different_documents_of_one_cluster_and_fixed_categories_stay():
    values, docs, clusters = chunks()
    result = swap_entities(values, docs, clusters, ROLES, 0.5, np.random.default_rng(1))
    assert result.pairs and len(result.pairs) == result.requested_pairs == 60
    for i, j in result.pairs:
        assert docs[i] != docs[j] and clusters[i] == clusters[j]
        for c in ("ORG", "PERSON"):
            assert result.values.at[i, c] == values.at[j, c] and result.values.at[j, c] == values.at[i, c]
    assert result.values["DATE"].tolist() == values["DATE"].tolist()  # F: never touched
    touched = {i for pair in result.pairs for i in pair}
    assert set(np.flatnonzero(result.swapped)) == touched and len(touched) == 2 * len(result.pairs)
    untouched = sorted(set(range(len(values))) - touched)
    assert values.loc[untouched, ["ORG", "PERSON"]].equals(result.values.loc[untouched, ["ORG", "PERSON"]])


def test_must_change_categories_never_survive_in_their_chunk():
    values, docs, clusters = chunks(seed=3)
    for rate in (0.0, 0.2, 1.0):
        result = swap_entities(values, docs, clusters, ROLES, rate, np.random.default_rng(2))
        for before, after in zip(values["EVENT"], result.values["EVENT"]):
            assert not set(before) & set(after)
        assert result.suppressed["EVENT"].sum() >= (values["EVENT"].map(len) > 0).sum() - 2 * len(result.pairs)


def test_every_valid_pair_differs_in_a_swapped_and_in_an_unswapped_category():
    values, docs, clusters = chunks(seed=5)
    pairs = valid_pairs(values, docs, clusters, ["ORG", "PERSON"], ["DATE"])
    assert len(pairs)
    for i, j in pairs:
        assert all(len(values.at[k, c]) for k in (i, j) for c in ("ORG", "PERSON"))
        assert values.at[i, "DATE"] != values.at[j, "DATE"]
        assert (values.at[i, "ORG"], values.at[i, "PERSON"]) != (values.at[j, "ORG"], values.at[j, "PERSON"])
    # A pair alike in everything it keeps is no swap: with DATE the same everywhere there is none.
    alike = values.assign(DATE=[("date1",)] * len(values))
    assert len(valid_pairs(alike, docs, clusters, ["ORG", "PERSON"], ["DATE"])) == 0


def test_the_number_of_pairs_follows_the_rate_until_valid_pairs_run_out():
    values, docs, clusters = chunks(n=400, documents=30, clusters=3, seed=7)
    counts = [len(swap_entities(values, docs, clusters, ROLES, r, np.random.default_rng(0)).pairs) for r in (0.1, 0.3)]
    assert counts == [20, 60]
    every = swap_entities(values, docs, clusters, ROLES, 1.0, np.random.default_rng(0))
    assert len(every.pairs) < every.requested_pairs == 200  # not every chunk has a valid partner left
    none = swap_entities(values, docs, clusters, {"ORG": "S", "PERSON": "S"}, 0.0, np.random.default_rng(0))
    assert none.pairs == [] and none.values.equals(values)


def test_one_document_has_no_pair_and_a_seed_fixes_the_release():
    values, _, clusters = chunks(n=60)
    alone = swap_entities(values, [0] * 60, clusters, ROLES, 0.5, np.random.default_rng(0))
    assert alone.pairs == []
    _, docs, _ = chunks(n=60)
    a = swap_entities(values, docs, clusters, ROLES, 0.5, np.random.default_rng(4))
    b = swap_entities(values, docs, clusters, ROLES, 0.5, np.random.default_rng(4))
    c = swap_entities(values, docs, clusters, ROLES, 0.5, np.random.default_rng(5))
    assert a.pairs == b.pairs and a.values.equals(b.values) and a.pairs != c.pairs


def test_bad_settings_name_what_is_accepted():
    values, docs, clusters = chunks(n=20)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        swap_entities(values, docs, clusters, ROLES, 1.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="S \\(swap\\), F \\(fixed\\)"):
        swap_entities(values, docs, clusters, {"ORG": "X"}, 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="do not have"):
        swap_entities(values, docs, clusters, {"GPE": "S"}, 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least one category"):
        swap_entities(values, docs, clusters, {"ORG": "F"}, 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="leave at least one category F or U"):
        swap_entities(values, docs, clusters, dict.fromkeys(values.columns, "S"), 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="documents"):
        swap_entities(values, docs[:5], clusters, ROLES, 0.5, np.random.default_rng(0))
