"""The dashboard's pages, declared once: the navigation (`dashboard/app.py`) and the links between pages use the
same `st.Page` objects, so a link drawn inside a fragment rerun (which does not run the navigation) still
finds its page."""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage

PAGES: dict[str, tuple[str, str]] = {
    "data": ("Data", ":material/table:"),
    "protect": ("Protect text", ":material/tune:"),
    "synthesize": ("Synthesize fields", ":material/casino:"),
    "counts": ("Counts and amounts", ":material/bar_chart:"),
    "plans": ("Plans", ":material/account_tree:"),
    "compare": ("Compare methods", ":material/compare_arrows:"),
    "export": ("Export", ":material/download:"),
}


def page(name: str) -> StreamlitPage:
    """The page ``name`` (a key of `PAGES`), served at ``/name``."""
    title, icon = PAGES[name]
    return st.Page(f"views/{name}.py", title=title, icon=icon, url_path=name)


def _start() -> None:
    """The app's own address opens the Data page at ``/data``: Streamlit serves its default page at the root
    only, so a Data page that was the default had no address of its own and a bookmarked ``/data`` was not
    found."""
    st.switch_page(page("data"))


def all_pages() -> list[StreamlitPage]:
    """Every page at its own address, and the root address that opens Data (not in the menu)."""
    start = st.Page(_start, title=PAGES["data"][0], url_path="start", default=True, visibility="hidden")
    return [start, *(page(name) for name in PAGES)]


def export_link(setting: str) -> None:
    """The link from a protection page to Export, naming the knob ``setting`` the release will be made at."""
    st.page_link(page("export"), label=f"Export the release at {setting}", icon=":material/download:")
