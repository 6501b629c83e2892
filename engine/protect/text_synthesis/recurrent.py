"""The user-conditioned recurrent generator of Ororbia, Linder & Snoke, Section 2.3 (Eqs. 1–3): the network,
its training by truncated back-propagation through time, and sampling from it.

    h_t = φ_hid(W_hid c_{t−1} + W_user e_y + W_rec h_{t−1} + b_hid)        (Eq. 1)
    o_t = softmax(W_out h_t + b_out)                                         (Eq. 2)
    L(c) = − Σ_{t=1..m} log o_t[c_t]                                        (Eq. 3)

c_{t−1} is the previous symbol (one-hot, so W_hid c is a column lookup; the first step's input is the null
vector), e_y the user's one-hot (W_user is the skip connection from the user input to the hidden layer), and
the biases the paper omits for clarity are kept. The paper writes the softmax as exp(−v)/Σexp(−v); that is the
ordinary softmax of −v, and since W_out is learned the sign is immaterial: we use exp(v)/Σexp(v).

Training (the paper's Section 5): mini-batches of 50 sequences, truncated back-propagation through time over
windows of m = 10 steps (the hidden state carries over between windows, its gradient does not), every gradient
clipped element-wise to [−1, 1], SGD or RMSProp (decay 0.95), weights from centred Gaussians of variance 0.1
except the recurrent matrix of softsign and ReLU units, a scaled identity (Le, Jaitly & Hinton). Departures,
stated: sequences are padded to a common length and the padding is masked out of the loss (the paper uses no
padding; the masked loss and its gradient are the same sums), and every sequence ends with an end symbol, so
generation stops where a text of the data would end rather than at the first punctuation mark.

Training uses JAX and optax (automatic differentiation, no hand-written gradients); sampling is plain numpy on
the trained weights, so a release needs neither JAX nor a compiled function, and every random draw comes from
the numpy generator it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

Activation = Literal["softsign", "sigmoid", "relu"]
Optimizer = Literal["sgd", "rmsprop"]

NULL = 0
"""Symbol 0 is the null input of the first step (its row of W_hid is zero and never trained)."""
END = 1
"""Symbol 1 ends a sequence."""
RESERVED = 2

INIT_VARIANCE = 0.1
"""Variance of the centred Gaussians the weights start from (the smallest of the paper's candidates)."""
IDENTITY_SCALE = 0.5
"""Scale of the identity the recurrent weights of softsign and ReLU units start from."""
RMSPROP_DECAY = 0.95
CLIP = 1.0


def _np_activation(name: Activation) -> Callable[[np.ndarray], np.ndarray]:
    if name == "softsign":
        return lambda v: v / (1.0 + np.abs(v))
    if name == "sigmoid":
        return lambda v: 0.5 * (1.0 + np.tanh(0.5 * v))  # 1 / (1 + e^−v) without overflow
    return lambda v: np.maximum(v, 0.0)


@dataclass
class RecurrentWeights:
    """Θ = (W_user, W_hid, W_rec, W_out) and the biases, as numpy arrays (rows = inputs: h = c·W_hid + …)."""

    w_hid: np.ndarray  # symbols × hidden (row NULL is zero)
    w_user: np.ndarray  # users × hidden
    w_rec: np.ndarray  # hidden × hidden
    b_hid: np.ndarray  # hidden
    w_out: np.ndarray  # hidden × symbols
    b_out: np.ndarray  # symbols
    activation: Activation

    def step(self, symbols: np.ndarray, users: np.ndarray, hidden: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One step of Eqs. 1–2 for a batch: the new hidden states and the output logits (before the softmax)."""
        phi = _np_activation(self.activation)
        h = phi(self.w_hid[symbols] + self.w_user[users] + hidden @ self.w_rec + self.b_hid)
        return h, h @ self.w_out + self.b_out


def sequences_to_windows(
    sequences: Sequence[np.ndarray], users: np.ndarray, order: np.ndarray, batch: int, window: int
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The mini-batches of one epoch: for each group of ``batch`` sequences (in ``order``), the inputs
    (previous symbols, NULL first), targets, mask and users, padded to whole windows of ``window`` steps."""
    out = []
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        longest = max(len(sequences[i]) for i in idx)
        steps = -(-longest // window) * window
        x = np.zeros((batch, steps), dtype=np.int32)
        y = np.zeros((batch, steps), dtype=np.int32)
        mask = np.zeros((batch, steps), dtype=np.float32)
        u = np.zeros(batch, dtype=np.int32)
        for row, i in enumerate(idx):
            s = sequences[i]
            x[row, 1 : len(s)] = s[:-1]
            y[row, : len(s)] = s
            mask[row, : len(s)] = 1.0
            u[row] = users[i]
        out.append((x, y, mask, u))
    return out


def train(
    sequences: Sequence[np.ndarray],
    users: np.ndarray,
    *,
    n_symbols: int,
    n_users: int,
    hidden: int,
    activation: Activation,
    optimizer: Optimizer,
    learning_rate: float,
    epochs: int,
    window: int,
    batch: int,
    seed: int,
    progress: Callable[[int, int, float | None], None] = lambda done, total, loss: None,
) -> tuple[RecurrentWeights, list[float]]:
    """Fit Θ by minimizing Eq. 3 with truncated back-propagation through time; returns the weights and the
    mean loss per symbol of each epoch. ``sequences`` are symbol ids ending with END; ``users`` their users.
    ``progress`` hears after every mini-batch: (mini-batches done, of all epochs, the last epoch's loss or None
    during the first)."""
    import jax
    import jax.numpy as jnp
    import optax

    rng = np.random.default_rng(seed)
    sd = float(np.sqrt(INIT_VARIANCE))
    w_hid = rng.normal(0.0, sd, (n_symbols, hidden))
    w_hid[NULL] = 0.0
    recurrent = (
        IDENTITY_SCALE * np.eye(hidden) if activation in ("softsign", "relu") else rng.normal(0.0, sd, (hidden, hidden))
    )
    params = {
        "w_hid": jnp.asarray(w_hid, dtype=jnp.float32),
        "w_user": jnp.asarray(rng.normal(0.0, sd, (n_users, hidden)), dtype=jnp.float32),
        "w_rec": jnp.asarray(recurrent, dtype=jnp.float32),
        "b_hid": jnp.zeros(hidden, dtype=jnp.float32),
        "w_out": jnp.asarray(rng.normal(0.0, sd, (hidden, n_symbols)), dtype=jnp.float32),
        "b_out": jnp.zeros(n_symbols, dtype=jnp.float32),
    }
    phi = {"softsign": jax.nn.soft_sign, "sigmoid": jax.nn.sigmoid, "relu": jax.nn.relu}[activation]
    update = optax.sgd(learning_rate) if optimizer == "sgd" else optax.rmsprop(learning_rate, decay=RMSPROP_DECAY)
    opt = optax.chain(optax.clip(CLIP), update)
    opt_state = opt.init(params)
    null_row = jnp.ones((n_symbols, 1), dtype=jnp.float32).at[NULL].set(0.0)

    def window_loss(p, h0, x, y, mask, u):
        user_in = p["w_user"][u]

        def cell(h, inputs):
            xt, yt, mt = inputs
            h = phi(p["w_hid"][xt] + user_in + h @ p["w_rec"] + p["b_hid"])
            logp = jax.nn.log_softmax(h @ p["w_out"] + p["b_out"])
            nll = -jnp.take_along_axis(logp, yt[:, None], axis=1)[:, 0]
            return h, jnp.sum(nll * mt)

        h, losses = jax.lax.scan(cell, h0, (x.T, y.T, mask.T))
        return jnp.sum(losses) / x.shape[0], (h, jnp.sum(losses))  # Eq. 3 per sequence, averaged over the batch

    @jax.jit
    def train_window(p, state, h0, x, y, mask, u):
        (_, (h, summed)), grads = jax.value_and_grad(window_loss, has_aux=True)(p, h0, x, y, mask, u)
        grads["w_hid"] = grads["w_hid"] * null_row  # the null input stays the zero vector
        updates, state = opt.update(grads, state, p)
        return optax.apply_updates(p, updates), state, jax.lax.stop_gradient(h), summed

    history: list[float] = []
    n_symbols_total = float(sum(len(s) for s in sequences))
    per_epoch = -(-len(sequences) // batch)
    done = 0
    for _epoch in range(epochs):
        order = rng.permutation(len(sequences))
        summed = 0.0
        for x, y, mask, u in sequences_to_windows(sequences, users, order, batch, window):
            h = jnp.zeros((batch, hidden), dtype=jnp.float32)
            for start in range(0, x.shape[1], window):
                part = slice(start, start + window)
                params, opt_state, h, s = train_window(params, opt_state, h, x[:, part], y[:, part], mask[:, part], u)
                summed += float(s)
            done += 1
            progress(done, epochs * per_epoch, history[-1] if history else None)
        history.append(summed / n_symbols_total)
    progress(epochs * per_epoch, epochs * per_epoch, history[-1] if history else None)
    weights = RecurrentWeights(**{k: np.asarray(v, dtype=np.float32) for k, v in params.items()}, activation=activation)
    return weights, history


BLOCK = 64
"""Symbols per block of the two-stage draw in `sample`."""


def draw(weights: np.ndarray, u: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """For each row of ``weights`` (non-negative, not all zero), the first index whose cumulative sum reaches
    u · (the row's sum): a draw with probabilities proportional to the row for ``u`` uniform on [0, 1). In two
    stages, the block of ``block`` symbols, then the symbol within it, so only the block sums and one block per
    row are summed cumulatively (a cumulative sum over thousands of symbols was a third of a step)."""
    n, width = weights.shape
    blocks = -(-width // block)
    padded = np.zeros((n, blocks * block), dtype=weights.dtype)
    padded[:, :width] = weights
    padded = padded.reshape(n, blocks, block)
    sums = np.cumsum(padded.sum(axis=2), axis=1)
    target = u * sums[:, -1]
    chosen = np.minimum((sums < target[:, None]).sum(axis=1), blocks - 1)
    rows = np.arange(n)
    before = np.where(chosen > 0, sums[rows, chosen - 1], 0.0)
    inside = padded[rows, chosen]
    offset = np.minimum((np.cumsum(inside, axis=1) < (target - before)[:, None]).sum(axis=1), block - 1)
    pick = chosen * block + offset
    # Rounding (or u = 0) can land on a symbol of weight 0: take the row's likeliest instead (probability ~1e-7).
    void = inside[rows, offset] <= 0
    pick[void] = np.argmax(weights[void], axis=1)
    return pick


def sample(
    weights: RecurrentWeights,
    users: np.ndarray,
    temperature: float,
    max_length: int,
    rng: np.random.Generator,
    banned: Sequence[int] = (),
    chunk: int = 512,
) -> list[np.ndarray]:
    """One sequence per entry of ``users``: clamp the user, feed the null input, draw each symbol from the
    softmax of the logits divided by ``temperature`` and feed it back, until END or ``max_length`` symbols
    (Section 2.3's generation); ``banned`` symbols (and the null input) are never drawn. Returns the symbols
    drawn, without END."""
    out: list[np.ndarray] = []
    hidden = weights.w_rec.shape[0]
    never = [NULL, *banned]
    # logits / τ computed as h · (W_out / τ) + b_out / τ: the division once, not at every step
    tempered = replace(weights, w_out=weights.w_out / temperature, b_out=weights.b_out / temperature)
    for start in range(0, len(users), chunk):
        u = np.asarray(users[start : start + chunk])
        n = len(u)
        h = np.zeros((n, hidden), dtype=np.float32)
        symbols = np.full(n, NULL)
        drawn = np.full((n, max_length), END)
        alive = np.ones(n, dtype=bool)
        for t in range(max_length):
            rows = np.flatnonzero(alive)
            if not len(rows):
                break
            h_rows, logits = tempered.step(symbols[rows], u[rows], h[rows])
            h[rows] = h_rows
            logits[:, never] = -np.inf
            logits -= logits.max(axis=1, keepdims=True)
            pick = draw(np.exp(logits, out=logits), rng.random(len(rows)))
            drawn[rows, t] = pick
            symbols[rows] = pick
            alive[rows[pick == END]] = False
        for row in drawn:
            end = np.flatnonzero(row == END)
            out.append(row[: end[0]] if len(end) else row)
    return out
