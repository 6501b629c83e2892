"""Measures of risk and utility: `base` (the `Measure` class, results and metadata), `registry` (every measure,
one line each, in the default order), `evaluate` (the `Evaluator`), and the risk/ and utility/ families."""
