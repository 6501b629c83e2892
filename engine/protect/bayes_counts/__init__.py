"""Bayesian synthesis of a count and an amount (Guo & Hu): models, MCMC and the synthesizer."""
