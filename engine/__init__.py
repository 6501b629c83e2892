"""textsdc engine: everything that computes. No Streamlit import anywhere below this package."""

__version__ = "0.1.0"
