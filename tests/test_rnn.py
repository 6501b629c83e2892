"""The user-conditioned recurrent generator (Ororbia, Linder & Snoke, Section 2.3, Eqs. 1–3) and its plug-in
`rnn`: training lowers the loss, a user's samples keep to the user's words at low temperature and spread at
high temperature, sampling follows softmax(logits / τ), and everything is fixed by the seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.text_synthesis.recurrent import END, NULL, RESERVED, RecurrentWeights, draw, sample

VOCAB = {"ann": [f"apple{i}" for i in range(6)], "bob": [f"bravo{i}" for i in range(6)]}


def two_authors(n_per_author: int = 40, seed: int = 0) -> Dataset:
    """Two authors with disjoint vocabularies, each text 3–6 of the author's words."""
    rng = np.random.default_rng(seed)
    rows = []
    for author, words in VOCAB.items():
        for _ in range(n_per_author):
            rows.append({"who": author, "text": " ".join(rng.choice(words, size=rng.integers(3, 7)))})
    frame = pd.DataFrame(rows)
    schema = Schema(text="text", author="who")
    return Dataset(frame=frame, schema=schema, name="two-authors")


FAST = dict(hidden=16, epochs=30, learning_rate=0.3, batch=10)


@pytest.fixture(scope="module")
def fitted():
    return get_protector("rnn", **FAST).fit(two_authors())


def own_share(release_frame: pd.DataFrame) -> float:
    """Share of generated words that belong to the record's author's vocabulary."""
    own = total = 0
    for who, text in zip(release_frame["who"], release_frame["text"]):
        words = text.split()
        own += sum(w in VOCAB[who] for w in words)
        total += len(words)
    return own / max(total, 1)


def test_training_lowers_the_loss(fitted):
    assert len(fitted.losses) == FAST["epochs"]
    uniform = np.log(len(fitted.symbols) + RESERVED)  # the loss of a network that knows nothing (≈ 2.64)
    assert fitted.losses[0] < uniform
    assert fitted.losses[-1] < fitted.losses[0] - 0.5
    # Each author's next word is uniform over their 6: no model does much better than log 6 per word.
    assert fitted.losses[-1] < np.log(6) + 0.1
    assert "30 epochs" in fitted.training_summary()


def test_low_temperature_keeps_each_author_in_their_vocabulary(fitted):
    release = fitted.release(0.25, np.random.default_rng(1))
    texts = release.data["text"]
    assert (texts.str.len() > 0).mean() > 0.9
    assert own_share(release.data) == 1.0


def test_higher_temperature_mixes_the_authors(fitted):
    shares = [own_share(fitted.release(t, np.random.default_rng(2)).data) for t in (0.25, 1.0, 5.0)]
    assert shares[0] >= shares[1] >= shares[2]
    assert shares[2] < 0.8  # at τ = 5 the network writes nearly uniformly over 12 words


def test_same_seeds_same_release_and_training():
    data = two_authors(10)
    a = get_protector("rnn", hidden=8, epochs=2).fit(data)
    b = get_protector("rnn", hidden=8, epochs=2).fit(data)
    c = get_protector("rnn", hidden=8, epochs=2, training_seed=1).fit(data)
    np.testing.assert_array_equal(a.weights.w_out, b.weights.w_out)
    assert not np.array_equal(a.weights.w_out, c.weights.w_out)
    ra = a.release(1.0, np.random.default_rng(5)).data["text"]
    rb = b.release(1.0, np.random.default_rng(5)).data["text"]
    rc = a.release(1.0, np.random.default_rng(6)).data["text"]
    assert ra.tolist() == rb.tolist()
    assert ra.tolist() != rc.tolist()


def test_sampling_follows_the_tempered_softmax():
    """One step from the null input with logits (0, 0, log 1, log 3) over END, two words: the words come out
    in the ratio 1 : 3^(1/τ) and END never (its logit is −∞ after a hand-set bias)."""
    hidden = 2
    weights = RecurrentWeights(
        w_hid=np.zeros((4, hidden), dtype=np.float32),
        w_user=np.zeros((1, hidden), dtype=np.float32),
        w_rec=np.zeros((hidden, hidden), dtype=np.float32),
        b_hid=np.zeros(hidden, dtype=np.float32),
        w_out=np.zeros((hidden, 4), dtype=np.float32),
        b_out=np.array([0.0, -1e30, 0.0, np.log(3.0)], dtype=np.float32),
        activation="softsign",
    )
    for tau in (0.5, 1.0, 2.0):
        drawn = sample(weights, np.zeros(20_000, dtype=int), tau, 1, np.random.default_rng(0))
        first = np.array([d[0] for d in drawn])
        assert NULL not in first and END not in first
        ratio = (first == 3).mean() / (first == 2).mean()
        assert ratio == pytest.approx(3.0 ** (1 / tau), rel=0.05)


@pytest.mark.parametrize("width", [4, 63, 64, 65, 1000])
def test_the_two_stage_draw_is_the_inverse_of_the_cumulative_sum(width):
    rng = np.random.default_rng(width)
    weights = (rng.random((500, width)) ** 4).astype(np.float32)
    weights[:, [0, width // 2]] = 0.0  # symbols that may never be drawn
    u = rng.random(500)
    cumulative = np.cumsum(weights, axis=1)
    expected = (cumulative < u[:, None] * cumulative[:, -1:]).sum(axis=1)
    picked = draw(weights, u)
    np.testing.assert_array_equal(picked, expected)
    assert (weights[np.arange(500), draw(weights, np.zeros(500))] > 0).all()  # u = 0 never draws a void symbol


def test_rare_words_are_never_written():
    data = two_authors(20)
    frame = data.frame.copy()
    frame.loc[0, "text"] = frame.loc[0, "text"] + " zyzzyva"
    data = Dataset(frame=frame, schema=data.schema, name="with-a-rare-word")
    fitted = get_protector("rnn", hidden=8, epochs=2).fit(data)
    assert fitted.rare and fitted.symbols[0] == "<rare>" and "zyzzyva" not in fitted.symbols
    text = " ".join(fitted.release(5.0, np.random.default_rng(0)).data["text"])
    assert "<rare>" not in text and "zyzzyva" not in text
    kept = get_protector("rnn", hidden=8, epochs=1, min_count=1).fit(data)
    assert "zyzzyva" in kept.symbols and not kept.rare


def test_characters_as_symbols():
    fitted = get_protector("rnn", symbols="characters", hidden=8, epochs=2).fit(two_authors(10))
    assert all(len(s) == 1 for s in fitted.symbols)
    release = fitted.release(1.0, np.random.default_rng(0))
    longest = two_authors(10).frame["text"].str.len().max()
    assert release.data["text"].str.len().max() <= longest


def test_bad_settings_are_refused_with_what_is_accepted():
    with pytest.raises(ConfigError, match="activation.*softsign, sigmoid, relu"):
        get_protector("rnn", activation="tanh")
    with pytest.raises(ConfigError, match="temperature|τ"):
        get_protector("rnn", hidden=8, epochs=1).fit(two_authors(5)).release(0.0, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="min_count"):
        get_protector("rnn", hidden=8, epochs=1, min_count=1000).fit(two_authors(5))


def test_without_an_author_each_record_is_its_own_user():
    data = two_authors(5)
    schema = Schema(text="text", author=None, fields=(FieldSpec(name="who", kind="categorical", role="key"),))
    fitted = get_protector("rnn", hidden=8, epochs=1).fit(Dataset(frame=data.frame, schema=schema, name="x"))
    assert fitted.weights.w_user.shape[0] == len(data.frame)
