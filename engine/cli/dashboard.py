"""`textsdc dashboard`: the address checked (this machine only, unless told otherwise), then this process
becomes the dashboard's server (`dashboard.launch`, started by `os.execv`: the engine never imports Streamlit,
and the server is this process, so Ctrl+C and SIGTERM reach it and no child is left listening)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys

from engine.errors import ConfigError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(address: str) -> bool:
    """Whether ``address`` reaches this machine only: ``localhost`` or a loopback IP (127.0.0.0/8, ::1)."""
    if address.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_dashboard(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise ConfigError(f"--port must be a port number from 1 to 65535, got {args.port}")
    if not is_loopback(args.address):
        if not args.allow_remote:
            raise ConfigError(
                f"--address {args.address} can be reached from other machines, and the dashboard shows the "
                "confidential data it loads to whoever opens it; give --allow-remote to do so anyway, or an "
                "address of this machine only (127.0.0.1, ::1, localhost)"
            )
        print(
            f"textsdc: warning: the dashboard listens on {args.address}: the confidential data loaded in it can "
            f"be read by anyone who reaches this machine on port {args.port} (no password, no encryption)",
            file=sys.stderr,
        )
    host = f"[{args.address}]" if ":" in args.address else args.address
    print(f"textsdc dashboard on http://{host}:{args.port}  (Ctrl+C stops it)", flush=True)
    argv = [sys.executable, "-m", "dashboard.launch", "--address", args.address, "--port", str(args.port)]
    argv += [*(["--data", args.data] if args.data else []), *(["--encoding", args.encoding] if args.encoding else [])]
    argv += [*(["--delimiter", args.delimiter] if args.delimiter else []), "--bad-rows", args.bad_rows]
    sys.stderr.flush()
    os.execv(sys.executable, argv)
    return 0  # not reached: this process is the server now
