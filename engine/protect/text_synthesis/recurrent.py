"""The user-conditioned recurrent generator of Ororbia, Linder & Snoke, Section 2.3 (Eqs. 1–3): the network,
its training by truncated back-propagation through time, and sampling from it.

    h_t = φ_hid(W_hid c_{t−1} + W_user e_y + W_rec h_{t−1} + b_hid)        (Eq. 1)
    o_t = softmax(W_out h_t + b_out)                                         (Eq. 2)
    L(c) = − Σ_{t=1..m} log o_t[c_t]                                        (Eq. 3)

The output layer comes in two forms. ``softmax="full"`` is Eq. 2 as written: one softmax over every symbol.
``softmax="classes"`` (the default of the `rnn` plug-in) is a stated departure that keeps o_t a probability
distribution over the same symbols but factorises it through classes of symbols (Goodman 2001; Mikolov et al.
2011): o_t[w] = softmax(W_cls h_t + b_cls)[k(w)] · softmax(W_k h_t + b_k)[w], where k(w) is w's class and W_k,
b_k score only the symbols of class k. Symbols are sorted by how often they occur and cut into classes of
⌈√V / 4⌉ symbols (`symbol_classes`), so a step scores a few hundred classes and symbols instead of V (268
instead of 4,265 on the airline demo), and the output layer is where training and generation spent their time.
Eq. 3 is unchanged: −log o_t[c_t], now a sum of two logs.

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
from typing import Any, Literal

import numpy as np

Activation = Literal["softsign", "sigmoid", "relu"]
Optimizer = Literal["sgd", "rmsprop"]
Softmax = Literal["full", "classes"]

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
    """Θ = (W_user, W_hid, W_rec, W_out) and the biases, as numpy arrays (rows = inputs: h = c·W_hid + …).

    With one softmax over every symbol (Eq. 2) ``w_out`` is hidden × symbols and the class fields are None.
    Factorised through classes, ``w_class``/``b_class`` score the classes, ``members`` lists each class's
    symbols (−1 pads the last class), and ``w_out``/``b_out`` are classes × hidden × size and classes × size,
    slot j of class k scoring symbol members[k, j]."""

    w_hid: np.ndarray  # symbols × hidden (row NULL is zero)
    w_user: np.ndarray  # users × hidden
    w_rec: np.ndarray  # hidden × hidden
    b_hid: np.ndarray  # hidden
    w_out: np.ndarray
    b_out: np.ndarray
    activation: Activation
    w_class: np.ndarray | None = None  # hidden × classes
    b_class: np.ndarray | None = None  # classes
    members: np.ndarray | None = None  # classes × size, symbol ids, −1 = no symbol

    def hidden_step(self, symbols: np.ndarray, users: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        """One step of Eq. 1 for a batch: the new hidden states."""
        phi = _np_activation(self.activation)
        return phi(self.w_hid[symbols] + self.w_user[users] + hidden @ self.w_rec + self.b_hid)

    def tempered(self, temperature: float) -> RecurrentWeights:
        """The same network with every output score divided by ``temperature`` (once, not at every step)."""
        t = float(temperature)
        if self.members is None:
            return replace(self, w_out=self.w_out / t, b_out=self.b_out / t)
        assert self.w_class is not None and self.b_class is not None
        return replace(
            self, w_out=self.w_out / t, b_out=self.b_out / t, w_class=self.w_class / t, b_class=self.b_class / t
        )

    def probabilities(self, h: np.ndarray) -> np.ndarray:
        """o_t for each row of hidden states ``h``: the probability of every symbol (NULL's is 0 with classes)."""
        if self.members is None:
            return _softmax(h @ self.w_out + self.b_out)
        assert self.w_class is not None and self.b_class is not None
        out = np.zeros((len(h), self.w_hid.shape[0]))
        of_class = _softmax(h @ self.w_class + self.b_class)
        for k, row in enumerate(self.members):
            slots = np.flatnonzero(row >= 0)
            within = _softmax(h @ self.w_out[k][:, slots] + self.b_out[k, slots])
            out[:, row[slots]] = of_class[:, k : k + 1] * within
        return out


def _softmax(v: np.ndarray) -> np.ndarray:
    e = np.exp(v - v.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def symbol_classes(counts: np.ndarray) -> np.ndarray:
    """The classes of the factorised output layer: symbols 1… (every symbol but NULL) sorted by ``counts``
    (how often each occurs as a target; ties by id), cut into classes of ⌈√V / 4⌉ symbols, the last padded
    with −1. Frequent symbols share classes with each other, rare ones with rare ones.

    The textbook choice is √V classes of √V symbols (the fewest scores per step); more, smaller classes cost
    more scores but each step gathers only its target class's weights, and that gather is what took the time
    (measured, one window of 50 × 10 steps on 4,265 words: 66 classes of 65 symbols 4.8 ms, 130 of 33 2.8 ms,
    260 of 17 2.3–2.6 ms, 600 of 8 2.6 ms)."""
    ids = np.arange(1, len(counts))
    ordered = ids[np.argsort(-np.asarray(counts)[1:], kind="stable")]
    size = max(1, int(np.ceil(np.sqrt(len(ordered)) / 4)))
    n_classes = -(-len(ordered) // size)
    flat = np.full(n_classes * size, -1, dtype=np.int64)
    flat[: len(ordered)] = ordered
    return flat.reshape(n_classes, size)


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
    softmax: Softmax = "full",
    progress: Callable[[int, int, float | None], None] = lambda done, total, loss: None,
) -> tuple[RecurrentWeights, list[float]]:
    """Fit Θ by minimizing Eq. 3 with truncated back-propagation through time; returns the weights and the
    mean loss per symbol of each epoch. ``sequences`` are symbol ids ending with END; ``users`` their users;
    ``softmax`` the form of the output layer (module docstring). ``progress`` hears once JAX is loaded and
    after every mini-batch: (mini-batches done, of all epochs, the last epoch's loss or None during the first).
    """
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
    }
    members = None
    if softmax == "full":
        params["w_out"] = jnp.asarray(rng.normal(0.0, sd, (hidden, n_symbols)), dtype=jnp.float32)
        params["b_out"] = jnp.zeros(n_symbols, dtype=jnp.float32)
    else:
        members = symbol_classes(np.bincount(np.concatenate(list(sequences)), minlength=n_symbols))
        n_classes, size = members.shape
        params["w_class"] = jnp.asarray(rng.normal(0.0, sd, (hidden, n_classes)), dtype=jnp.float32)
        params["b_class"] = jnp.zeros(n_classes, dtype=jnp.float32)
        params["w_out"] = jnp.asarray(rng.normal(0.0, sd, (n_classes, hidden, size)), dtype=jnp.float32)
        params["b_out"] = jnp.zeros((n_classes, size), dtype=jnp.float32)
        where = np.zeros((2, n_symbols), dtype=np.int32)  # class and slot of every symbol (NULL: unused 0, 0)
        k, j = np.nonzero(members >= 0)
        where[0, members[k, j]], where[1, members[k, j]] = k, j
        symbol_class, symbol_slot = jnp.asarray(where[0]), jnp.asarray(where[1])
        no_symbol = jnp.asarray(np.where(members >= 0, 0.0, -1e9), dtype=jnp.float32)  # padding never scores

    def output_nll(p: dict[str, jax.Array], h: jax.Array, yt: jax.Array) -> jax.Array:
        """−log o_t[y_t] for each row (Eq. 3's term), with one softmax or through the target's class."""
        if members is None:
            logp = jax.nn.log_softmax(h @ p["w_out"] + p["b_out"])
            return -jnp.take_along_axis(logp, yt[:, None], axis=1)[:, 0]
        k, j = symbol_class[yt], symbol_slot[yt]
        log_class = jax.nn.log_softmax(h @ p["w_class"] + p["b_class"])
        scores = jnp.einsum("bh,bhs->bs", h, p["w_out"][k]) + p["b_out"][k] + no_symbol[k]
        log_within = jax.nn.log_softmax(scores)
        return -(
            jnp.take_along_axis(log_class, k[:, None], axis=1)[:, 0]
            + jnp.take_along_axis(log_within, j[:, None], axis=1)[:, 0]
        )

    phi = {"softsign": jax.nn.soft_sign, "sigmoid": jax.nn.sigmoid, "relu": jax.nn.relu}[activation]
    update = optax.sgd(learning_rate) if optimizer == "sgd" else optax.rmsprop(learning_rate, decay=RMSPROP_DECAY)
    opt = optax.chain(optax.clip(CLIP), update)
    opt_state = opt.init(params)
    null_row = jnp.ones((n_symbols, 1), dtype=jnp.float32).at[NULL].set(0.0)

    def window_loss(
        p: dict[str, jax.Array], h0: jax.Array, x: jax.Array, y: jax.Array, mask: jax.Array, u: jax.Array
    ) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
        # Only the recurrence runs step by step; the input lookups before it and the output layer after it run
        # once over the whole window (same sums, but their gradients are not accumulated step by step).
        inputs = p["w_hid"][x.T] + p["w_user"][u] + p["b_hid"]  # steps × batch × hidden

        def cell(h: jax.Array, a: jax.Array) -> tuple[jax.Array, jax.Array]:
            h = phi(a + h @ p["w_rec"])
            return h, h

        h, states = jax.lax.scan(cell, h0, inputs, unroll=True)
        nll = output_nll(p, states.reshape(-1, hidden), y.T.reshape(-1))
        summed = jnp.sum(nll * mask.T.reshape(-1))
        return summed / x.shape[0], (h, summed)  # Eq. 3 per sequence, averaged over the batch

    @jax.jit
    def train_window(
        p: dict[str, jax.Array], state: Any, h0: jax.Array, x: jax.Array, y: jax.Array, mask: jax.Array, u: jax.Array
    ) -> tuple[dict[str, jax.Array], Any, jax.Array, jax.Array]:
        (_, (h, summed)), grads = jax.value_and_grad(window_loss, has_aux=True)(p, h0, x, y, mask, u)
        grads["w_hid"] = grads["w_hid"] * null_row  # the null input stays the zero vector
        updates, state = opt.update(grads, state, p)
        return optax.apply_updates(p, updates), state, jax.lax.stop_gradient(h), summed

    history: list[float] = []
    n_symbols_total = float(sum(len(s) for s in sequences))
    per_epoch = -(-len(sequences) // batch)
    done = 0
    progress(0, epochs * per_epoch, None)  # JAX is loaded; the first mini-batch compiles the step (some seconds)
    for _epoch in range(epochs):
        order = rng.permutation(len(sequences))
        sums = []  # kept on the device: reading each window's loss would wait for it before sending the next
        for x, y, mask, u in sequences_to_windows(sequences, users, order, batch, window):
            h = jnp.zeros((batch, hidden), dtype=jnp.float32)
            for start in range(0, x.shape[1], window):
                part = slice(start, start + window)
                params, opt_state, h, s = train_window(params, opt_state, h, x[:, part], y[:, part], mask[:, part], u)
                sums.append(s)
            done += 1
            progress(done, epochs * per_epoch, history[-1] if history else None)
        history.append(float(jnp.sum(jnp.stack(sums))) / n_symbols_total)
    progress(epochs * per_epoch, epochs * per_epoch, history[-1] if history else None)
    weights = RecurrentWeights(
        **{k: np.asarray(v, dtype=np.float32) for k, v in params.items()}, activation=activation, members=members
    )
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
    softmax of the scores divided by ``temperature`` and feed it back, until END or ``max_length`` symbols
    (Section 2.3's generation); ``banned`` symbols (and the null input) are never drawn. Returns the symbols
    drawn, without END.

    Factorised through classes, the class is drawn from its tempered softmax, then the symbol from the tempered
    softmax within the class — at τ = 1 exactly o_t, at other τ not exactly o_t^(1/τ) renormalised (that needs
    every symbol's score, the work the classes avoid), but with the same limits: τ → 0 the likeliest class's
    likeliest symbol, τ → ∞ uniform over classes of equal size, so nearly uniform over symbols."""
    out: list[np.ndarray] = []
    hidden = weights.w_rec.shape[0]
    never = np.asarray([NULL, *banned], dtype=np.int64)
    tempered = weights.tempered(temperature)
    next_symbol = _full_draw(tempered, never) if weights.members is None else _class_draw(tempered, never)
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
            h_rows = tempered.hidden_step(symbols[rows], u[rows], h[rows])
            h[rows] = h_rows
            pick = next_symbol(h_rows, rng)
            drawn[rows, t] = pick
            symbols[rows] = pick
            alive[rows[pick == END]] = False
        for row in drawn:
            end = np.flatnonzero(row == END)
            out.append(row[: end[0]] if len(end) else row)
    return out


def _exp_shifted(scores: np.ndarray) -> np.ndarray:
    scores -= scores.max(axis=1, keepdims=True)
    return np.exp(scores, out=scores)


def _full_draw(w: RecurrentWeights, never: np.ndarray) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """Draw from one softmax over every symbol (Eq. 2, scores already tempered)."""

    def next_symbol(h: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        scores = h @ w.w_out + w.b_out
        scores[:, never] = -np.inf
        return draw(_exp_shifted(scores), rng.random(len(h)))

    return next_symbol


def _class_draw(w: RecurrentWeights, never: np.ndarray) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """Draw a class, then a symbol of it (scores already tempered); a class with no symbol that may be drawn is
    never drawn, nor are padding slots."""
    assert w.members is not None and w.w_class is not None and w.b_class is not None
    members, w_class, b_class = w.members, w.w_class, w.b_class
    allowed = (members >= 0) & ~np.isin(members, never)
    closed = ~allowed.any(axis=1)
    slot_bias = np.where(allowed, w.b_out, -np.inf)

    def next_symbol(h: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        scores = h @ w_class + b_class
        scores[:, closed] = -np.inf
        k = draw(_exp_shifted(scores), rng.random(len(h)))
        within = np.einsum("nh,nhs->ns", h, w.w_out[k]) + slot_bias[k]
        j = draw(_exp_shifted(within), rng.random(len(h)))
        return members[k, j]

    return next_symbol
