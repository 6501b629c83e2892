"""Singling out, linkability and inference: the three risks of the Article 29 Working Party's Opinion 05/2014 on
anonymisation techniques, measured as Giomi, Boenisch, Wehmeyer & Tasnádi (2023), "A Unified Framework for
Quantifying Privacy Risk in Synthetic Data" (PoPETs 2023(2), the Anonymeter framework) define them: each attack
is made against the release and scored on the confidential records it was made from, against a control split
of confidential records it was not made from, and beside a baseline attacker who guesses at random.

- `table`: the released table the attacks read (the structured fields and declared features of the text) and
  the control split;
- `rates`: the success rates with their Wilson intervals and the risk corrected by the control rate;
- `singling_out`, `linkability`, `inference`: the three attacks and their measures.

Written here from the paper (the `anonymeter` package pins an older numpy); `benchmarks/anonymeter_crosscheck.py`
compares the numbers with the package's on the same data and splits.
"""
