"""A toy measure written the way a contributor would add one: a module with a `Measure` that declares one
setting, registered in one line (by the tests that use it). It is the share of released texts of at least
``min_words`` words."""

from __future__ import annotations

from engine.measures.base import Measure, MetricResult, PrepareContext, ReleaseView
from engine.protect.params import Param

MIN_WORDS = Param(
    "min_words",
    int,
    3,
    "toy measure: the words a released text needs to count as long",
    low=1,
    high=50,
    label="Words of a long text",
)


class LongTextShare(Measure):
    id = "toy_long_texts"
    kind = "utility"
    better = "higher"
    label = "Long texts (toy)"
    meaning = "The share of released texts that keep at least the chosen number of words."
    source = "a test of the plug-in contract"
    applies_to = "release"
    settings = (MIN_WORDS,)

    def prepare(self, context: PrepareContext) -> None:
        self.min_words = context.settings[MIN_WORDS.name]
        self.note = f"Long: {self.min_words} words or more."

    def compute(self, view: ReleaseView) -> MetricResult:
        texts = view.data[view.dataset.schema.text].astype(str)
        return MetricResult(self.id, float((texts.str.split().str.len() >= self.min_words).mean()))
