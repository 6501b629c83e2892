"""The textsdc dashboard: a thin Streamlit app over the engine (pages, widgets, session state, caching)."""
