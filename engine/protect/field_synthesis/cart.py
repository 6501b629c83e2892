"""The CART synthesizer (Reiter 2005), the comparator of Schneider, Hu, Mankad & Bale (2023) and of Guo & Hu,
knob α.

Each sensitive categorical field gets a classification tree on the text's word counts (and the fields before
it, sequentially as in `engine.protect.field_synthesis.sequential`); a synthetic value is drawn from the confidential values
in the record's leaf, as synthpop does. A count or continuous field gets a regression tree, pruned on rpart's
anova complexity (within-node sum of squares relative to the root's), and is likewise drawn from the
confidential values in its leaf — synthpop's default for numeric fields, Guo & Hu's comparator. With numeric
fields the un-synthesized key fields predict too (``predictors``), as in synthpop; with categorical fields
only, the text alone, as in Schneider et al. The knob is rpart's complexity parameter: "any split must reduce the
percentage of misclassified observations by at least α, relative to the number misclassified in the root
node" (Section 5.2), on the paper's grid of 100 values from 1e−8 to 0.09 on a log scale.

How α acts, precisely: one tree per field is grown once with rpart's defaults (Gini splits, at least 20
records to try a split, at least 7 in a leaf, depth at most 30), then pruned by weakest-link cost-complexity
pruning on the misclassification risk scaled by the root's risk — rpart's ``prune(tree, cp = α)``. rpart also
stops growing a branch early when a split improves the fit by less than α; pruning the fully grown tree
gives the same tree except where a weak split would have enabled a strong one below it, which early stopping
cannot see. The trees come from scikit-learn, so ties between equally good splits may be broken differently
from rpart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from engine.data.dataset import Dataset
from engine.errors import ConfigError
from engine.progress import Progress, no_progress
from engine.protect.base import Knob
from engine.protect.field_synthesis.sequential import (
    CATEGORICAL_FIRST,
    NUMERIC_FIRST,
    VENDOR_KEYWORDS,
    FieldLevels,
    FieldSynthesizer,
    SequentialFitted,
    design,
    field_levels,
    predictor_matrix,
    resolve_fields,
)
from engine.protect.params import Param
from engine.text.features import synthesis_counts

ALPHA_PATH = tuple(float(v) for v in np.geomspace(1e-8, 0.09, 100))
SWEEP_POINTS = 12

CART_KNOB = Knob(
    name="alpha",
    symbol="α",
    label="Complexity",
    low=1e-8,
    high=0.09,
    default=1e-4,
    scale="log",
    more_privacy="higher",
    grid=tuple(ALPHA_PATH[int(i)] for i in np.round(np.linspace(0, 99, SWEEP_POINTS)).astype(int)),
    help="rpart's complexity parameter: a split is kept only if it lowers the misclassification (for counts "
    "and amounts, the sum of squares) by at least α times the root's. Larger α = smaller trees = more "
    "privacy.",
)


def _grown_parents(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    parent = np.full(len(left), -1)
    internal = np.flatnonzero(left >= 0)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    return parent


@dataclass
class PrunableTree(ABC):
    """A grown tree with, per node, the α at and above which it is a leaf (``collapse``); subclasses hold what
    a leaf's records are, to draw from."""

    tree: DecisionTreeClassifier | DecisionTreeRegressor
    collapse: np.ndarray  # α at which each node becomes a leaf (−inf for the grown tree's leaves)
    parent: np.ndarray

    @property
    def is_leaf(self) -> np.ndarray:
        return self.tree.tree_.children_left < 0

    def n_splits(self, alpha: float) -> int:
        """Splits left after pruning at complexity ``alpha``."""
        return int(((~self.is_leaf) & (self.collapse > alpha)).sum())

    def pruned_leaf(self, X: sparse.csr_matrix, alpha: float) -> np.ndarray:
        """Per record, the node it reaches in the tree pruned at ``alpha`` (a leaf of the pruned tree)."""
        path = self.tree.decision_path(X.tocsr()).tocsr()
        stop = self.is_leaf | (self.collapse <= alpha)
        idx = path.indices
        big = np.iinfo(np.int64).max
        # Node ids grow along every root-to-leaf path, so the first stopping node has the smallest id; a node
        # collapses no later than its ancestors, so that node is a leaf of the pruned tree.
        return np.minimum.reduceat(np.where(stop[idx], idx, big), path.indptr[:-1])

    @abstractmethod
    def leaf_probabilities(self, X: sparse.csr_matrix, alpha: float) -> np.ndarray:
        """Per record, the distribution of the codes of the confidential records in the leaf it reaches in the
        tree pruned at ``alpha`` (records × codes)."""

    @classmethod
    def grow(
        cls,
        X: sparse.csr_matrix,
        y: np.ndarray,
        n_classes: int,
        seed: int = 0,
        min_split: int = 20,
        min_leaf: int = 7,
        max_depth: int = 30,
        values: np.ndarray | None = None,
    ) -> PrunableTree:
        """Grow the tree of codes ``y`` (0..n_classes−1): a classification tree, or, when ``values`` gives the
        numeric value of each code, a regression tree of those values (`RegressionTree`)."""
        if values is not None:
            return RegressionTree.grow_regression(X, y, values, seed, min_split, min_leaf, max_depth)
        return ClassificationTree.grow_classification(X, y, n_classes, seed, min_split, min_leaf, max_depth)


@dataclass
class ClassificationTree(PrunableTree):
    """A classification tree of a categorical field, with per node its class counts (K is small)."""

    counts: np.ndarray  # nodes × K class counts of the confidential values

    @classmethod
    def grow_classification(
        cls,
        X: sparse.csr_matrix,
        y: np.ndarray,
        n_classes: int,
        seed: int = 0,
        min_split: int = 20,
        min_leaf: int = 7,
        max_depth: int = 30,
    ) -> ClassificationTree:
        """Gini splits, pruned on the misclassification risk (rpart's class method)."""
        tree = DecisionTreeClassifier(
            criterion="gini",
            min_samples_split=min_split,
            min_samples_leaf=min_leaf,
            max_depth=max_depth,
            random_state=seed,
        )
        tree.fit(X.tocsc(), y)
        t = tree.tree_
        value = t.value[:, 0, :]
        frac = value / np.maximum(value.sum(axis=1, keepdims=True), 1e-300)
        counts = np.zeros((t.node_count, n_classes))
        counts[:, tree.classes_] = frac * t.n_node_samples[:, None]
        collapse = weakest_link_alphas(t.children_left, t.children_right, counts)
        return cls(tree, collapse, _grown_parents(t.children_left, t.children_right), counts)

    def leaf_probabilities(self, X: sparse.csr_matrix, alpha: float) -> np.ndarray:
        counts = self.counts[self.pruned_leaf(X, alpha)]
        return counts / counts.sum(axis=1, keepdims=True)


@dataclass
class RegressionTree(PrunableTree):
    """A regression tree of a count or continuous field, pruned on rpart's anova risk.

    A numeric field may take as many distinct values as there are records, so no node × value table is kept:
    the confidential records' codes are laid out in ``members`` so that every node's records are the
    contiguous run ``members[start[t] : start[t] + size[t]]`` (leaves in depth-first order, left first), and a
    release draws a member of the record's pruned leaf — O(records) memory at fit and at release.
    """

    members: np.ndarray  # codes of the confidential records, laid out by node
    start: np.ndarray  # per node, where its records begin in ``members``
    size: np.ndarray  # per node, how many records it holds
    risk: np.ndarray  # per node, the within-node sum of squares of the values
    n_codes: int  # distinct values of the field

    @classmethod
    def grow_regression(
        cls,
        X: sparse.csr_matrix,
        codes: np.ndarray,
        values: np.ndarray,
        seed: int = 0,
        min_split: int = 20,
        min_leaf: int = 7,
        max_depth: int = 30,
    ) -> RegressionTree:
        """Squared-error splits on the values ``values[codes]``, pruned on the within-node sum of squares
        relative to the root's (rpart's anova method, so ``prune(cp = α)`` means the same as for classes)."""
        tree = DecisionTreeRegressor(
            criterion="squared_error",
            min_samples_split=min_split,
            min_samples_leaf=min_leaf,
            max_depth=max_depth,
            random_state=seed,
        )
        y = values[codes]
        X = X.tocsr()
        tree.fit(X.tocsc(), y)
        t = tree.tree_
        left, right, n_nodes = t.children_left, t.children_right, t.node_count
        # Sums of squares about each node's own mean, from its records (not Σy² − n·ȳ², which cancels badly
        # for large amounts in nearly pure nodes).
        path = tree.decision_path(X).tocsr()
        rows = np.repeat(np.arange(len(y)), np.diff(path.indptr))
        nodes = path.indices
        size = np.bincount(nodes, minlength=n_nodes).astype(np.int64)
        mean = np.bincount(nodes, weights=y[rows], minlength=n_nodes) / np.maximum(size, 1)
        risk = np.bincount(nodes, weights=(y[rows] - mean[nodes]) ** 2, minlength=n_nodes)
        # Depth-first order, left subtree first: every subtree's leaves are consecutive in it.
        order, stack = [], [0]
        while stack:
            v = stack.pop()
            order.append(v)
            if left[v] >= 0:
                stack += [right[v], left[v]]
        rank = np.empty(n_nodes, dtype=np.int64)
        rank[np.asarray(order)] = np.arange(n_nodes)
        leaf = tree.apply(X)
        layout = np.argsort(rank[leaf], kind="stable")
        start = np.zeros(n_nodes, dtype=np.int64)
        grown_leaves, first = np.unique(leaf[layout], return_index=True)
        start[grown_leaves] = first
        for v in reversed(order):  # children before parents
            if left[v] >= 0:
                start[v] = start[left[v]]
        collapse = weakest_link_alphas(left, right, risk=risk)
        return cls(
            tree,
            collapse,
            _grown_parents(left, right),
            members=codes[layout].astype(np.int64),
            start=start,
            size=size,
            risk=risk,
            n_codes=len(values),
        )

    def _pools(self, node: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For the records' pruned leaves ``node``: each record's leaf index, the leaves' sizes and offsets,
        and ``pool`` — the members of every leaf reached, leaf after leaf, sorted by code within a leaf and
        stored as leaf index × K + code. Leaves of one pruned tree are disjoint, so the pool has at most one
        entry per confidential record."""
        used, leaf_of = np.unique(node, return_inverse=True)
        lengths = self.size[used]
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        which = np.repeat(np.arange(len(used)), lengths)
        positions = np.arange(int(lengths.sum())) - offsets[which] + self.start[used][which]
        pool = np.sort(which * self.n_codes + self.members[positions])
        return leaf_of, lengths, offsets, pool

    def leaf_probabilities(self, X: sparse.csr_matrix, alpha: float) -> np.ndarray:
        """Dense records × distinct values: for inspection and tests on small data; releases use `draw`."""
        leaf_of, lengths, _, pool = self._pools(self.pruned_leaf(X, alpha))
        counts = np.zeros((len(lengths), self.n_codes))
        np.add.at(counts, (pool // self.n_codes, pool % self.n_codes), 1.0)
        return counts[leaf_of] / lengths[leaf_of, None]

    def draw(
        self, X: sparse.csr_matrix, alpha: float, codes: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per record, the code of a confidential record drawn uniformly from its leaf in the tree pruned at
        ``alpha``, and the probability of drawing its own code ``codes`` (the share of its leaf with that value).

        One uniform u per record picks the ⌈u·n⌉-th smallest of the leaf's n values: the same draw as the
        inverse CDF over codes (`draw_categorical`) with the same generator, without a records × values matrix.
        """
        leaf_of, lengths, offsets, pool = self._pools(self.pruned_leaf(X, alpha))
        n_leaf = lengths[leaf_of]
        u = rng.random(len(leaf_of))
        rank = np.clip(np.ceil(u * n_leaf).astype(np.int64) - 1, 0, n_leaf - 1)
        drawn = pool[offsets[leaf_of] + rank] - leaf_of * self.n_codes
        key = leaf_of * self.n_codes + codes
        same = np.searchsorted(pool, key, side="right") - np.searchsorted(pool, key, side="left")
        return drawn, same / n_leaf


def weakest_link_alphas(
    left: np.ndarray, right: np.ndarray, counts: np.ndarray | None = None, risk: np.ndarray | None = None
) -> np.ndarray:
    """For every node, the complexity α at and above which it is pruned to a leaf.

    Weakest-link pruning (Breiman et al. 1984, Section 3.3) on a node risk R(t) relative to the root's, as
    rpart scales its complexity parameter (Therneau & Atkinson, "An Introduction to Recursive Partitioning
    Using the RPART Routines"): from ``counts`` (nodes × classes) the misclassification, records in t − records
    of t's majority class (rpart's class method); or any per-node ``risk``, such as the within-node sum of
    squares of rpart's anova method. Repeatedly, among the internal nodes of the current tree, the one(s) with
    the smallest g(t) = (R(t) − R(subtree of t)) / (leaves of t − 1) are collapsed at α = g(t); their
    descendants go with them. Grown leaves get −inf.
    """
    n_nodes = len(left)
    if risk is None:
        if counts is None:
            raise ValueError("weakest_link_alphas needs the class counts or the risk of every node")
        risk = counts.sum(axis=1) - counts.max(axis=1)
    risk = np.asarray(risk, dtype=float)
    root = risk[0] if risk[0] > 0 else 1.0
    risk = risk / root
    internal = left >= 0
    collapse = np.where(internal, np.inf, -np.inf)
    depth = np.zeros(n_nodes, dtype=int)
    for node in range(n_nodes):  # children have larger ids than their parent
        if internal[node]:
            depth[left[node]] = depth[right[node]] = depth[node] + 1
    by_depth = [np.flatnonzero(internal & (depth == d)) for d in range(depth.max(initial=0), -1, -1)]
    alive = internal.copy()
    level = -np.inf
    while alive.any():
        sub_risk = risk.copy()
        leaves = np.ones(n_nodes)
        for nodes in by_depth:  # bottom-up over the current tree
            nodes = nodes[alive[nodes]]
            sub_risk[nodes] = sub_risk[left[nodes]] + sub_risk[right[nodes]]
            leaves[nodes] = leaves[left[nodes]] + leaves[right[nodes]]
        g = np.where(alive, (risk - sub_risk) / np.maximum(leaves - 1, 1), np.inf)
        # The sequence of α is non-decreasing (rpart prints it that way); rounding can make g dip below it.
        alpha = max(float(g.min()), level)
        level = alpha
        pruned = alive & (g <= alpha + 1e-12)
        for top in np.flatnonzero(pruned):
            stack = [int(top)]
            while stack:
                v = stack.pop()
                if alive[v]:
                    alive[v] = False
                    collapse[v] = alpha
                    if internal[v]:
                        stack += [int(left[v]), int(right[v])]
    return collapse


@dataclass
class FittedCART(SequentialFitted):
    trees: list[PrunableTree] = field(default_factory=list)
    method: str = "cart"

    def field_probabilities(self, j: int, X: sparse.csr_matrix, value: float, draw: int) -> np.ndarray:
        return self.trees[j].leaf_probabilities(X, value)

    def draw_field(
        self, j: int, X: sparse.csr_matrix, value: float, draw: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        tree = self.trees[j]
        if isinstance(tree, RegressionTree):
            return tree.draw(X, value, self.fields[j].codes, rng)
        return super().draw_field(j, X, value, draw, rng)

    def path_grid(self) -> list[float]:
        """All 100 α of the paper's grid, largest first (most private first, as the λ path)."""
        return sorted(ALPHA_PATH, reverse=True)

    def complexity(self) -> pd.DataFrame:
        """Number of splits along the α grid for every field (Schneider et al. 2023, Fig. 2)."""
        rows = [
            {"knob": a, "field": lv.name, "size": tree.n_splits(a), "what": "splits"}
            for lv, tree in zip(self.fields, self.trees)
            for a in ALPHA_PATH
        ]
        return pd.DataFrame(rows, columns=["knob", "field", "size", "what"])


class CARTSynthesizer(FieldSynthesizer):
    """Sequential CART synthesis of sensitive fields given the text (knob α).

    Parameters
    ----------
    fields : the structured fields to synthesize, in order: categorical, count or continuous. By default the
        sensitive categorical fields if there are any, else the sensitive count and continuous fields, in
        schema order.
    vendor_keywords : words the text counts leave out (as in `engine.text.features.synthesis_counts`).
    tree_seed : the trees' random state (ties between equally good splits).
    min_split, min_leaf : rpart's minsplit and minbucket (20 and 7, its defaults).
    predictors : un-synthesized structured fields that predict besides the text and the fields before: a
        categorical one as indicators of its levels, a count or continuous one as its value. By default (None)
        the key fields that are not synthesized when any synthesized field is a count or continuous one
        (synthpop's set-up), and none when all are categorical (the text alone, Schneider et al.'s set-up).
    """

    name = "cart"
    title = "CART synthesis"
    description = (
        "Replaces the chosen fields by draws from the confidential values in the leaves of a tree of each field "
        "given the text, the predictor fields and the fields before it (a classification tree for categories, "
        "a regression tree for counts and amounts). Larger α prunes more splits: more privacy. The text is "
        "released as it is, but for the identifiers the release guard takes out."
    )
    knob = CART_KNOB
    field_kinds = ("categorical", "count", "continuous")
    shown_first = (*CATEGORICAL_FIRST, *NUMERIC_FIRST)

    fields: tuple[str, ...] | None
    vendor_keywords: tuple[str, ...]
    predictors: tuple[str, ...] | None
    tree_seed: int
    min_split: int
    min_leaf: int
    parameters = (
        Param(
            "fields",
            str,
            None,
            "the fields to synthesize, in order: categorical, count or continuous "
            "(default: the sensitive categorical fields, else the sensitive count and continuous ones)",
            many=True,
            fields=("categorical", "count", "continuous"),
            synthesized=True,
            suggest="sensitive",
            label="Fields to synthesize, in order",
        ),
        VENDOR_KEYWORDS,
        Param(
            "predictors",
            str,
            None,
            "un-synthesized structured fields that predict besides the text and the "
            "fields before (default: the key fields when a count or continuous field is synthesized, else "
            "none)",
            many=True,
            fields=("categorical", "count", "continuous"),
            suggest="key",
            label="Predictor fields (released unchanged)",
        ),
        Param(
            "tree_seed",
            int,
            0,
            "the trees' random state (ties between equally good splits)",
            low=0,
            high=2**32 - 1,
            expert=True,
        ),
        Param(
            "min_split",
            int,
            20,
            "rpart's minsplit: records a node needs before a split is tried",
            low=2,
            high=100_000,
            expert=True,
        ),
        Param(
            "min_leaf", int, 7, "rpart's minbucket: records a leaf keeps at the least", low=1, high=50_000, expert=True
        ),
    )

    def validate(self) -> None:
        if self.min_split < 2 * self.min_leaf:
            raise ConfigError(
                f"need min_split ≥ 2·min_leaf, got min_split = {self.min_split} and min_leaf = {self.min_leaf}"
            )

    def predictor_fields(self, dataset: Dataset, names: Sequence[str]) -> list:
        """The un-synthesized fields that predict: ``predictors`` checked, or by default the key fields when a
        synthesized field is a count or continuous one (synthpop's set-up) and none otherwise (the text alone,
        Schneider et al.'s)."""
        schema = dataset.schema
        if self.predictors is None and all(schema.field(n).kind == "categorical" for n in names):
            return []
        return schema.predictors(self.predictors, names)

    def check(self, dataset: Dataset) -> list[str]:
        names = super().check(dataset)
        predictor_matrix(dataset.frame, self.predictor_fields(dataset, names))  # their columns hold numbers
        return names

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedCART:
        names = resolve_fields(dataset, self.fields, self.field_kinds)
        levels = field_levels(dataset, names)
        predictors = predictor_matrix(dataset.frame, self.predictor_fields(dataset, names))
        progress(0, len(levels), "counting words")
        text = synthesis_counts(dataset.texts.tolist(), self.vendor_keywords)
        trees: list[PrunableTree] = []
        previous: list[tuple[np.ndarray, FieldLevels]] = []
        for j, lv in enumerate(levels):
            progress(j, len(levels), f"growing the tree for {lv.name}")
            X = design(text.matrix, previous, predictors)
            trees.append(
                PrunableTree.grow(
                    X,
                    lv.codes,
                    lv.n_levels,
                    self.tree_seed,
                    self.min_split,
                    self.min_leaf,
                    values=lv.values if lv.numeric else None,
                )
            )
            previous.append((lv.codes, lv))
        progress(len(levels), len(levels), "growing the trees")
        return FittedCART(
            frame=dataset.frame, fields=levels, text=text, knob=CART_KNOB, trees=trees, predictors=predictors
        )
