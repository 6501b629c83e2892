"""Utility measures: one module per family."""
