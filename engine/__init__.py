"""textsdc engine: everything that computes. No Streamlit import anywhere below this package."""

__version__ = "0.1.0"

MAX_SEED = 2**63 - 1
"""The largest seed accepted anywhere (a run's, a schema's hold-out, a method's own): seeds stay within a
signed 64-bit integer so that JSON, SQLite and the replay command carry them exactly."""
