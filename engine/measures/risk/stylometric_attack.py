"""The stylometric author attack: an intruder who holds other texts by the people she targets (the declared
background corpus, with its author column) names the author of released texts from their style, not their
content, by Burrows' Delta (Burrows 2002; `engine.text.delta`: function-word frequencies, punctuation marks and
word lengths, z-scored over the background's authors, the nearest author profile).

Her unit is the one Burrows' Delta is made for, a body of text long enough for its word frequencies: where the
release keeps the author column (pseudonymized in the bundle), she pools the released texts of each released
author and names the author of the pool; where the release withholds it, she names the author of each released
record. The value is the share named correctly among the released authors (or records) whose author the
background holds, with its Wilson 95% interval; the chance level is one over the number of the background's
authors. Not measured without a background corpus, or where it shares no author with the data.

It differs from `background_author_attack` (a linear SVM of word and character n-grams, which reads content as
much as style) in reading only habits: which function words, which marks, how long the words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.data.background import Background
from engine.errors import DataError
from engine.measures.base import Attack, MetricResult, PrepareContext, ReleaseView
from engine.measures.risk.background_attack import BackgroundAttack, LabelIntruder, label_values
from engine.text.delta import N_FUNCTION_WORDS, DeltaProfiles


class StylometricAuthorAttack(BackgroundAttack):
    """Share of released authors (or records) whose author Burrows' Delta names from the background corpus."""

    id = "stylometric_author_attack"
    names_by = "author"
    label = "Stylometric attack: author named (Burrows' Delta)"
    card_label = "Stylometric author attack"
    meaning = (
        "Share of released authors (each one's released texts pooled, where the release keeps the author column; "
        "else each released record) whose author an intruder names from writing style alone: Burrows' Delta over "
        f"the up to {N_FUNCTION_WORDS} function words most frequent in the background corpus, the 13 punctuation "
        "marks and the word lengths, z-scored over the background's authors, the nearest author profile. Read "
        "against the chance level of guessing among the background's authors."
    )
    source = (
        "Burrows (2002), \"'Delta': a measure of stylistic difference and a guide to likely authorship\", Literary "
        "and Linguistic Computing 17(3), over function words, with punctuation and word-length features added"
    )
    attack = Attack(
        holds=("background", "other_texts"),
        names="author",
        assumptions=(
            "The intruder holds other texts by the same people (the background corpus, each text with its author) "
            "and the released texts, grouped by their (pseudonymized) author where the release keeps that column; "
            "she names each group's author as the background author whose habits (function words, punctuation, "
            "word lengths) are nearest by Burrows' Delta. Topic words play no part. She knows nothing of the "
            "confidential data."
        ),
    )

    def train(self, context: PrepareContext, background: Background, label: str) -> LabelIntruder:
        def profiles() -> DeltaProfiles:
            try:
                return DeltaProfiles.train(background.texts(), label_values(background.frame[label]))
            except ValueError as exc:
                raise DataError(f"the background corpus: {exc}") from None

        return context.shared(("delta_profiles", background.sha256, label), profiles)

    def prepare(self, context: PrepareContext) -> None:
        super().prepare(context)
        author = context.dataset.schema.author
        self.pool_by = None if author is None or author in context.withheld else author
        unit = "each released author's texts pooled" if self.pool_by else "each released record"
        self.note = f"{self.note}; Delta profiles of the background's authors; she names {unit}"

    def compute(self, view: ReleaseView) -> MetricResult:
        if self.pool_by is None or self.pool_by not in view.data.columns:
            return super().compute(view)  # one record at a time
        profiles = self.intruder
        assert isinstance(profiles, DeltaProfiles)
        texts = view.data[self.text].fillna("").astype(str).tolist()
        released = label_values(view.data[self.pool_by])
        groups, firsts = pd.factorize(released)[0], pd.Series(released).drop_duplicates().index.to_numpy()
        pooled = profiles.counts(texts).pooled(groups, len(firsts))
        named = profiles.labels[np.argmin(profiles.delta(pooled), axis=1)]
        truth = self.truth[firsts]  # a released author's records are one confidential author's
        attackable = self.attackable[firsts]
        correct = (named == truth)[attackable]
        row = {
            "unit": "authors",
            "attacked": int(attackable.sum()),
            "named": int(correct.sum()),
            "not_attackable": int((~attackable).sum()),
            "labels": len(profiles.labels),
        }
        return self._result(correct, pd.DataFrame([row]))
