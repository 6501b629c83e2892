"""Disclosure-risk measures: one module per family."""
