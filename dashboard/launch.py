"""Start the dashboard's Streamlit server in this process: `python -m dashboard.launch --address A --port P
[--data NAME|PATH] [--encoding E]`, which `textsdc dashboard` becomes once it has checked the address.

Every Streamlit setting that matters for privacy is given on the command line (`streamlit_flags`), no outside
host is asked anything, and the engine's modules are imported before the server listens (`WARM_MODULES`)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
from pathlib import Path

from streamlit import delta_generator, net_util
from streamlit.web import cli as streamlit_cli

from engine.cli.dashboard import LOOPBACK_NAMES, is_loopback
from engine.errors import ConfigError
from engine.releases_on_disk import remove_orphans
from engine.workers import heap_settling


def streamlit_flags(address: str, port: int) -> list[str]:
    """Every Streamlit setting that matters for privacy, on the command line so that no config.toml (of the
    folder it is started from, or of the user) and no STREAMLIT_* variable changes them: the address, no usage
    statistics, headless, no file watcher or development mode, CORS and XSRF protection on, no static files
    or agent API, no "magic" (bare expressions written to the page); on loopback also the Host names accepted
    (against DNS rebinding). Also one for speed: no forced garbage collection after each run."""
    local = is_loopback(address)
    wildcard = address in ("0.0.0.0", "::", "")
    flags = {
        "server.address": address,
        "server.port": str(port),
        "server.headless": "true",
        "server.fileWatcherType": "none",
        "server.runOnSave": "false",
        "server.enableCORS": "true",
        "server.enableXsrfProtection": "true",
        "server.enableStaticServing": "false",
        "server.enableAgentApi": "false",
        "server.showEmailPrompt": "false",
        "server.maxUploadSize": "200",
        "browser.gatherUsageStats": "false",
        "browser.serverPort": str(port),
        "global.developmentMode": "false",
        "client.toolbarMode": "minimal",
        # Streamlit collects garbage after every run; with a fitted model in memory a full collection takes a
        # few hundred milliseconds, which a slider move would wait for. Python's own collector still runs.
        "runner.postScriptGC": "false",
        # The pages write only what they call Streamlit to write: a bare string in a page's module (an
        # attribute's docstring) is not shown to the steward.
        "runner.magicEnabled": "false",
    }
    if not wildcard:  # the address the browser uses; with a wildcard Streamlit prints this machine's addresses
        flags["browser.serverAddress"] = address.strip("[]")
    out = [item for key, value in flags.items() for item in (f"--{key}", value)]
    if local:
        for host in dict.fromkeys((*LOOPBACK_NAMES, address.strip("[]").lower())):
            out += ["--server.allowedHosts", host]
    return out


def no_outside_lookups() -> None:
    """Streamlit looks up this machine's public address at checkip.amazonaws.com to print an "External URL"
    and to judge a WebSocket from an unknown origin; the dashboard never asks an outside host anything."""
    net_util.get_external_ip = lambda: None


WARM_MODULES = (
    "engine.measures.evaluate",
    "engine.protect",
    "engine.sweep",
    "engine.cache",
    "engine.compare",
    "engine.candidates",
    "engine.figures.text",
    "engine.figures.field_synthesis",
    "engine.figures.bayes_counts",
    "engine.report.samples",
    "engine.export.bundle",
    "engine.data.load",
    "plotly.graph_objects",
    "streamlit.elements.plotly_chart",
    "streamlit.emojis",
)
"""What every page imports, imported before the dashboard's server listens (some seconds on 2 cores): the first
page a steward opens, and the first after a restart, then does not wait for them. Engine and plotting modules
only; the dashboard's own modules bind Streamlit's caches when imported, so they wait for its runtime."""


def import_engine() -> None:
    """`WARM_MODULES` imported, and Streamlit's check for an interactive shell done (see below)."""
    for name in WARM_MODULES:
        importlib.import_module(name)
    # Streamlit checks once per process, at a page's first element, whether it runs in an interactive shell (to
    # warn that apps are started with `streamlit run`): `inspect.stack()` over every loaded module, 0.3 s that
    # the first page after a start would wait for. This process is started by `streamlit run`'s own command.
    delta_generator._use_warning_has_been_displayed = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboard.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument("--data")
    parser.add_argument("--encoding")
    parser.add_argument("--delimiter")
    parser.add_argument("--bad-rows")
    args = parser.parse_args(argv)
    app = Path(__file__).resolve().parent / "app.py"
    streamlit_argv = [
        "run",
        str(app),
        *streamlit_flags(args.address, args.port),
        "--",
        *(["--data", args.data] if args.data else []),
        *(["--encoding", args.encoding] if args.encoding else []),
        *(["--delimiter", args.delimiter] if args.delimiter else []),
        *(["--bad-rows", args.bad_rows] if args.bad_rows else []),
    ]
    no_outside_lookups()
    import_engine()
    heap_settling()  # once a page's views are built, Python's collections walk only what is made after
    with contextlib.suppress(ConfigError, OSError):  # an unwritable cache is said by the page that needs it
        remove_orphans()  # a large sweep's releases left in files by a server that was killed
    # Streamlit runs in this process: SIGTERM and SIGINT reach its own handlers, which stop the server, and no
    # child process is left listening when the dashboard is stopped. It installs them only once its port
    # listens; a Ctrl+C before then ends the process as SIGTERM would (Python's KeyboardInterrupt could be lost
    # in the server's start and leave the port answering).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    streamlit_cli.main.main(args=streamlit_argv, prog_name="streamlit", standalone_mode=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
