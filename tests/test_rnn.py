"""The user-conditioned recurrent generator (Ororbia, Linder & Snoke, Section 2.3, Eqs. 1–3) and its plug-in
`rnn`: training lowers the loss, a user's samples keep to the user's words at low temperature and spread at
high temperature, sampling follows softmax(logits / τ), the output layer factorised through classes is a
distribution over every symbol whose −log the training minimizes, and everything is fixed by the seeds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from engine.data.dataset import Dataset
from engine.data.schema import FieldSpec, Schema
from engine.errors import ConfigError
from engine.protect import get_protector
from engine.protect.text_synthesis.recurrent import (
    END,
    NULL,
    RESERVED,
    RecurrentWeights,
    draw,
    sample,
    symbol_classes,
    train,
)

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


def test_classes_hold_every_symbol_once_the_frequent_together():
    counts = np.array([0, 50, 3, 9, 9, 1, 7, 2, 0, 4, 30, 6, 5, 8, 1, 2, 2, 11])  # NULL (id 0) is never a target
    members = symbol_classes(counts)
    size = int(np.ceil(np.sqrt(17) / 4))  # 17 symbols → classes of 2
    assert members.shape == (9, size)
    listed = members[members >= 0]
    assert sorted(listed.tolist()) == list(range(1, 18))
    assert members[0].tolist() == [1, 10]  # the two most frequent
    assert (np.diff(counts[listed]) <= 0).all()  # in order of frequency, class after class
    assert (members[-1] == -1).sum() == 1  # only the last class is padded


def _hidden_states(weights: RecurrentWeights, sequence: np.ndarray, user: int) -> np.ndarray:
    h = np.zeros((1, weights.w_rec.shape[0]), dtype=np.float32)
    states = []
    for previous in np.concatenate([[NULL], sequence[:-1]]):
        h = weights.hidden_step(np.array([previous]), np.array([user]), h)
        states.append(h[0])
    return np.array(states)


@pytest.mark.parametrize("softmax", ["full", "classes"])
def test_training_minimizes_minus_log_of_the_networks_probabilities(softmax):
    """With a step size of 1e-12 the weights stay where they started, so the first epoch's loss is Eq. 3 of the
    returned network, computed here in numpy from its probabilities (which sum to 1 over the symbols)."""
    rng = np.random.default_rng(3)
    n_symbols, n_users = 40, 3
    sequences = [np.append(rng.integers(RESERVED, n_symbols, rng.integers(1, 12)), END) for _ in range(25)]
    users = rng.integers(0, n_users, len(sequences))
    weights, losses = train(
        sequences,
        users,
        n_symbols=n_symbols,
        n_users=n_users,
        hidden=6,
        activation="softsign",
        optimizer="sgd",
        learning_rate=1e-12,
        epochs=1,
        window=4,
        batch=7,
        seed=0,
        softmax=softmax,
    )
    assert (weights.members is None) == (softmax == "full")
    total = 0.0
    for sequence, user in zip(sequences, users):
        probabilities = weights.probabilities(_hidden_states(weights, sequence, user))
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
        total -= np.log(probabilities[np.arange(len(sequence)), sequence]).sum()
    assert losses[0] == pytest.approx(total / sum(len(s) for s in sequences), rel=1e-4)


def test_sampling_through_classes_follows_the_tempered_class_then_the_tempered_symbol():
    """Two classes, {END, word 2} and {word 3, word 4}; class scores (−∞ for the first after a hand-set bias, 0)
    and symbol scores (0, log 3) in the second: words 3 and 4 come out in the ratio 1 : 3^(1/τ); a banned word
    is never drawn and a class left with none is never chosen."""
    hidden = 2
    zeros = np.zeros
    weights = RecurrentWeights(
        w_hid=zeros((5, hidden), dtype=np.float32),
        w_user=zeros((1, hidden), dtype=np.float32),
        w_rec=zeros((hidden, hidden), dtype=np.float32),
        b_hid=zeros(hidden, dtype=np.float32),
        w_out=zeros((2, hidden, 2), dtype=np.float32),
        b_out=np.array([[0.0, 0.0], [0.0, np.log(3.0)]], dtype=np.float32),
        activation="softsign",
        w_class=zeros((hidden, 2), dtype=np.float32),
        b_class=np.array([-1e30, 0.0], dtype=np.float32),
        members=np.array([[END, 2], [3, 4]]),
    )
    for tau in (0.5, 1.0, 2.0):
        first = np.array([d[0] for d in sample(weights, np.zeros(20_000, dtype=int), tau, 1, np.random.default_rng(0))])
        assert set(first.tolist()) <= {3, 4}
        assert (first == 4).mean() / (first == 3).mean() == pytest.approx(3.0 ** (1 / tau), rel=0.05)
    even = replace(weights, b_class=np.zeros(2, dtype=np.float32))
    drawn = sample(even, np.zeros(2_000, dtype=int), 1.0, 1, np.random.default_rng(0), banned=[3, 4])
    first = np.array([d[0] if len(d) else END for d in drawn])  # END is not returned: an empty sequence
    assert set(first.tolist()) <= {END, 2} and 0.4 < (first == 2).mean() < 0.6


def test_both_output_layers_learn_the_two_authors():
    data = two_authors(20)
    for softmax in ("full", "classes"):
        fitted = get_protector("rnn", softmax=softmax, hidden=16, epochs=20, batch=10).fit(data)
        assert fitted.losses[-1] < fitted.losses[0] - 0.5
        assert own_share(fitted.release(0.25, np.random.default_rng(1)).data) > 0.95
