"""The textsdc dashboard: `streamlit run dashboard/app.py -- --data NAME_OR_PATH` (or `textsdc dashboard`).

Six pages read top to bottom: Data (load and map columns), Protect text (the text methods: knob, frontier,
samples), Synthesize fields (the GLM λ and CART α synthesizers of categorical fields), Counts and amounts (the
Bayesian λ and CART α synthesizers of a count and an amount), Compare methods (several methods on one frontier)
and Export (write the chosen release with its report).

The page scripts live in ``views/``, not ``pages/``: Streamlit treats a ``pages/`` folder beside the entry script
as an old-style multipage app, and a bookmarked address such as ``/protect`` would then run the page without
this script's navigation and session set-up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:  # `streamlit run dashboard/app.py` puts dashboard/, not the project, on the path
    sys.path.insert(0, str(_ROOT))

import streamlit as st  # noqa: E402

from dashboard import display, pages, session, sweep_backend  # noqa: E402
from engine.workers import interacting  # noqa: E402


def data_argument(argv: list[str]) -> tuple[str, str | None, str | None, str]:
    """``--data NAME_OR_PATH`` (default: the airline-tweets demo) and how that file is read, ``--encoding``,
    ``--delimiter`` and ``--bad-rows``, from the arguments after ``--``."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--data", default=session.DEFAULT_SOURCE)
    parser.add_argument("--encoding")
    parser.add_argument("--delimiter")
    parser.add_argument("--bad-rows", default="error")
    args, _ = parser.parse_known_args(argv)
    return args.data or session.DEFAULT_SOURCE, args.encoding or None, args.delimiter or None, args.bad_rows


def main() -> None:
    # A sweep made in the background pauses while the steward acts (`engine.workers.giving_way`): from a run's
    # start, and again from its end, when the steward starts looking at what it drew.
    interacting()
    try:
        _draw()
    finally:
        interacting()


def _draw() -> None:
    # An emoji tab icon (drawn by the browser): without one Streamlit shows the open page's ":material/...:"
    # icon, which its frontend fetches from fonts.gstatic.com; the dashboard asks no outside host anything.
    st.set_page_config(page_title="textsdc", page_icon="🔒", layout="wide")
    st.html(display.PAGE_CSS)
    session.init_session(*data_argument(sys.argv[1:]))
    page = st.navigation(pages.all_pages())
    dataset = session.current_dataset()
    with st.sidebar:
        if dataset is not None:
            st.caption(
                f"Dataset in use: **{display.md_escape(dataset.name)}** · {display.counted(dataset.n_records, 'record')}"
            )
        else:
            st.caption("No dataset loaded yet")
        sweep_backend.backend_setting()
    page.run()


if __name__ == "__main__":  # Streamlit runs the entry script as __main__; importing it draws nothing
    main()
