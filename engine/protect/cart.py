"""The CART synthesizer (Reiter 2005), the comparator of Schneider, Hu, Mankad & Bale (2023) and of Guo & Hu,
knob α.

Each sensitive categorical field gets a classification tree on the text's word counts (and the fields before
it, sequentially as in `engine.protect.synthesis`); a synthetic value is drawn from the confidential values
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

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from engine.dataset import Dataset
from engine.errors import ConfigError
from engine.protect.base import Knob, Progress, no_progress
from engine.protect.synthesis import (
    FieldSynthesizer,
    SequentialFitted,
    design,
    field_levels,
    predictor_matrix,
    resolve_fields,
)
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
    help="rpart's complexity parameter: a split is kept only if it lowers the misclassification by at least α "
         "times the root's. Larger α = smaller trees = more privacy.",
)


@dataclass
class PrunableTree:
    """A grown tree with, per node, its class counts and the α at and above which it is a leaf."""

    tree: DecisionTreeClassifier
    counts: np.ndarray       # nodes × K class counts of the confidential values
    collapse: np.ndarray     # α at which each node becomes a leaf (−inf for the grown tree's leaves)
    parent: np.ndarray

    @classmethod
    def grow(cls, X: sparse.csr_matrix, y: np.ndarray, n_classes: int, seed: int = 0,
             min_split: int = 20, min_leaf: int = 7, max_depth: int = 30,
             values: np.ndarray | None = None) -> PrunableTree:
        """Grow the tree of codes ``y`` (0..n_classes−1): a classification tree, or, when ``values`` gives the
        numeric value of each code, a regression tree of those values (the leaf distribution stays one over
        codes, so draws return confidential values)."""
        params = dict(min_samples_split=min_split, min_samples_leaf=min_leaf, max_depth=max_depth, random_state=seed)
        if values is None:
            tree = DecisionTreeClassifier(criterion="gini", **params)
            tree.fit(X.tocsc(), y)
            t = tree.tree_
            value = t.value[:, 0, :]
            frac = value / np.maximum(value.sum(axis=1, keepdims=True), 1e-300)
            counts = np.zeros((t.node_count, n_classes))
            counts[:, tree.classes_] = frac * t.n_node_samples[:, None]
            risk = None
        else:
            tree = DecisionTreeRegressor(criterion="squared_error", **params)
            Xc = X.tocsc()
            tree.fit(Xc, values[y])
            t = tree.tree_
            path = tree.decision_path(X.tocsr()).tocsc()
            onehot = sparse.csr_matrix((np.ones(len(y)), (np.arange(len(y)), y)), shape=(len(y), n_classes))
            counts = np.asarray((path.T @ onehot).todense())
            total = counts.sum(axis=1)
            mean = counts @ values / np.maximum(total, 1e-300)
            risk = np.maximum(counts @ values**2 - total * mean**2, 0.0)  # within-node sum of squares (anova)
        parent = np.full(t.node_count, -1)
        for node in range(t.node_count):
            for child in (t.children_left[node], t.children_right[node]):
                if child >= 0:
                    parent[child] = node
        collapse = weakest_link_alphas(t.children_left, t.children_right, counts, risk)
        return cls(tree, counts, collapse, parent)

    @property
    def is_leaf(self) -> np.ndarray:
        return self.tree.tree_.children_left < 0

    def n_splits(self, alpha: float) -> int:
        """Splits left after pruning at complexity ``alpha``."""
        return int(((~self.is_leaf) & (self.collapse > alpha)).sum())

    def leaf_probabilities(self, X: sparse.csr_matrix, alpha: float) -> np.ndarray:
        """Per record, the class distribution of the leaf it reaches in the tree pruned at ``alpha``."""
        path = self.tree.decision_path(X.tocsr()).tocsr()
        stop = self.is_leaf | (self.collapse <= alpha)
        idx = path.indices
        big = np.iinfo(np.int64).max
        # Node ids grow along every root-to-leaf path, so the first stopping node has the smallest id.
        first = np.minimum.reduceat(np.where(stop[idx], idx, big), path.indptr[:-1])
        counts = self.counts[first]
        return counts / counts.sum(axis=1, keepdims=True)


def weakest_link_alphas(left: np.ndarray, right: np.ndarray, counts: np.ndarray,
                        risk: np.ndarray | None = None) -> np.ndarray:
    """For every node, the complexity α at and above which it is pruned to a leaf.

    Weakest-link pruning (Breiman et al. 1984) on a node risk R(t) relative to the root's: by default the
    misclassification (records in t − records of t's majority class), rpart's classification risk; ``risk``
    gives another, such as the within-node sum of squares of rpart's anova trees. Repeatedly, among the internal
    nodes of the current tree, the one(s) with the smallest g(t) = (R(t) − R(subtree of t)) / (leaves of t − 1)
    are collapsed at α = g(t); their descendants go with them. Grown leaves get −inf.
    """
    n_nodes = len(left)
    risk = counts.sum(axis=1) - counts.max(axis=1) if risk is None else np.asarray(risk, dtype=float)
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
        for node in np.flatnonzero(pruned):
            stack = [node]
            while stack:
                v = stack.pop()
                if alive[v]:
                    alive[v] = False
                    collapse[v] = alpha
                    if internal[v]:
                        stack += [left[v], right[v]]
    return collapse


@dataclass
class FittedCART(SequentialFitted):
    trees: list[PrunableTree] = field(default_factory=list)
    method: str = "cart"

    def field_probabilities(self, j: int, X: sparse.csr_matrix, value: float, draw: int) -> np.ndarray:
        return self.trees[j].leaf_probabilities(X, value)

    def path_grid(self) -> list[float]:
        """All 100 α of the paper's grid, largest first (most private first, as the λ path)."""
        return sorted(ALPHA_PATH, reverse=True)

    def complexity(self) -> pd.DataFrame:
        """Number of splits along the α grid for every field (Schneider et al. 2023, Fig. 2)."""
        rows = [
            {"knob": a, "field": lv.name, "size": tree.n_splits(a), "what": "splits"}
            for lv, tree in zip(self.fields, self.trees) for a in ALPHA_PATH
        ]
        return pd.DataFrame(rows, columns=["knob", "field", "size", "what"])


class CARTSynthesizer(FieldSynthesizer):
    """Sequential CART synthesis of sensitive fields given the text (knob α)."""

    name = "cart"
    title = "CART synthesis"
    description = (
        "Replaces the chosen fields by draws from the confidential values in the leaves of a tree of each field "
        "given the text, the predictor fields and the fields before it (a classification tree for categories, "
        "a regression tree for counts and amounts). Larger α prunes more splits: more privacy. The text is "
        "released unchanged."
    )
    knob = CART_KNOB
    field_kinds = ("categorical", "count", "continuous")

    def __init__(self, fields: Sequence[str] | None = None, vendor_keywords: Sequence[str] = (), seed: int = 0,
                 min_split: int = 20, min_leaf: int = 7, predictors: Sequence[str] | None = None) -> None:
        if min_leaf < 1 or min_split < 2 * min_leaf:
            raise ConfigError(f"need min_leaf ≥ 1 and min_split ≥ 2·min_leaf, got {min_split} and {min_leaf}")
        self.fields = None if fields is None else list(fields)
        self.vendor_keywords = tuple(vendor_keywords)
        self.seed = int(seed)
        self.min_split, self.min_leaf = int(min_split), int(min_leaf)
        self.predictors = None if predictors is None else list(predictors)

    def params(self) -> dict:
        return {"fields": self.fields, "vendor_keywords": list(self.vendor_keywords), "seed": self.seed,
                "min_split": self.min_split, "min_leaf": self.min_leaf, "predictors": self.predictors}

    def predictor_fields(self, dataset: Dataset, names: Sequence[str]) -> list:
        """The un-synthesized fields that predict: ``predictors`` checked, or by default the key fields when a
        synthesized field is a count or continuous one (synthpop's set-up) and none otherwise (the text alone,
        Schneider et al.'s)."""
        schema = dataset.schema
        if self.predictors is None:
            numeric = any(schema.field(n).kind != "categorical" for n in names)
            return [f for f in schema.fields_with_role("key") if f.name not in names] if numeric else []
        out = []
        for name in self.predictors:
            if name not in schema.field_names:
                raise ConfigError(f"no structured field named '{name}' to use as a predictor; fields are: "
                                  f"{', '.join(schema.field_names)}")
            if name in names:
                raise ConfigError(f"'{name}' is synthesized, so it cannot also be a predictor")
            out.append(schema.field(name))
        return out

    def check(self, dataset: Dataset) -> list[str]:
        names = super().check(dataset)
        self.predictor_fields(dataset, names)
        return names

    def fit(self, dataset: Dataset, progress: Progress = no_progress) -> FittedCART:
        names = resolve_fields(dataset, self.fields, self.field_kinds)
        levels = field_levels(dataset, names)
        predictors = predictor_matrix(dataset.frame, self.predictor_fields(dataset, names))
        progress(0, len(levels), "counting words")
        text = synthesis_counts(dataset.texts.tolist(), self.vendor_keywords)
        trees, previous = [], []
        for j, lv in enumerate(levels):
            progress(j, len(levels), f"growing the tree for {lv.name}")
            X = design(text.matrix, previous, predictors)
            trees.append(PrunableTree.grow(X, lv.codes, lv.n_levels, self.seed, self.min_split, self.min_leaf,
                                           values=lv.values if lv.numeric else None))
            previous.append((lv.codes, lv))
        progress(len(levels), len(levels), "growing the trees")
        return FittedCART(frame=dataset.frame, fields=levels, text=text, knob=CART_KNOB, trees=trees,
                          predictors=predictors)
