"""Measures of risk and utility: the registry, the evaluator, and the risk/ and utility/ families."""
