"""Train the privacy-attribute tagger on the gold set and ship it beside it (``assets/gold/privacy-attributes/
tagger/``): the CRF trained on every post, and Table 5 of one trained on 70% and scored on the other 30%, with
the digest of what both were trained on (`engine.protect.kanon.tagger`), and the share of the held-out posts'
attributes the second finds (`engine.protect.kanon.found`). Run it after changing the gold set,
the tagger's features or word lists, or its settings; ``tests/test_kanon_tagger.py`` fails until it is run.

    .venv/bin/python scripts/train_tagger.py
"""

from __future__ import annotations

import time

from engine.protect.kanon.found import held_out_found, write_shipped_found
from engine.protect.kanon.tagger import SHIPPED, gold_texts, train_all, training_items, write_shipped


def main() -> None:
    start = time.perf_counter()
    ids, texts, spans = gold_texts()
    items = training_items(texts, spans)
    done = train_all(items, ids)
    write_shipped(done)
    write_shipped_found(done.digest, *held_out_found(items, ids, texts))
    macro = done.held_out.set_index("label").loc["macro", "f1"]
    print(f"{SHIPPED}: held-out macro F1 {macro:.3f}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
