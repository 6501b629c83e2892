"""`textsdc dashboard` as a server (issue 10): loopback unless asked, its privacy settings whatever folder it
starts from, and SIGTERM or SIGINT stop it with nothing left listening."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dashboard.launch import streamlit_flags
from engine.cli import is_loopback, main

ROOT = Path(__file__).resolve().parents[1]


def flag_values(flags: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in zip(flags[::2], flags[1::2]):
        out.setdefault(key, []).append(value)
    return out


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "192.168.1.10", "example.org"])
def test_an_address_others_can_reach_is_refused_without_allow_remote(capsys, address):
    code = main(["dashboard", "--address", address])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"textsdc: error: --address {address} can be reached from other machines")
    assert "--allow-remote" in err and "127.0.0.1" in err


def test_port_out_of_range_is_a_one_line_error(capsys):
    assert main(["dashboard", "--port", "70000"]) == 2
    assert "--port must be a port number from 1 to 65535" in capsys.readouterr().err


def test_loopback_addresses():
    assert all(is_loopback(a) for a in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(is_loopback(a) for a in ("0.0.0.0", "::", "10.0.0.1", "example.org", ""))


def test_every_privacy_setting_is_on_the_command_line():
    """Given on Streamlit's command line, they win over any .streamlit/config.toml and STREAMLIT_* variable."""
    flags = flag_values(streamlit_flags("127.0.0.1", 8600))
    assert flags["--server.address"] == ["127.0.0.1"] and flags["--server.port"] == ["8600"]
    for key, value in {
        "--browser.gatherUsageStats": "false",
        "--server.headless": "true",
        "--global.developmentMode": "false",
        "--server.fileWatcherType": "none",
        "--server.enableCORS": "true",
        "--server.enableXsrfProtection": "true",
        "--server.enableStaticServing": "false",
        "--server.enableAgentApi": "false",
        "--browser.serverAddress": "127.0.0.1",
        "--runner.magicEnabled": "false",  # nothing on a page but what the page writes
    }.items():
        assert flags[key] == [value], key
    assert set(flags["--server.allowedHosts"]) == {"localhost", "127.0.0.1", "::1"}  # against DNS rebinding
    remote = flag_values(streamlit_flags("0.0.0.0", 8600))
    assert remote["--browser.gatherUsageStats"] == ["false"] and "--server.allowedHosts" not in remote


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) == 0


def descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        children = {p for p, pp in parents.items() if pp == parent}
        todo += list(children - found)
        found |= children
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def textsdc_command() -> list[str]:
    script = Path(sys.executable).parent / "textsdc"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "engine.cli"]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_server_and_leaves_no_process(tiny_files, tmp_path, sig):
    """Started from a folder whose .streamlit/config.toml asks for the opposite of every privacy setting:
    the command line of `textsdc dashboard` wins, and a signal stops the server it started."""
    folder = tmp_path / "elsewhere"
    (folder / ".streamlit").mkdir(parents=True)
    (folder / ".streamlit" / "config.toml").write_text(
        '[server]\naddress = "0.0.0.0"\nheadless = false\nfileWatcherType = "auto"\n\n'
        "[browser]\ngatherUsageStats = true\n"
    )
    port = free_port()
    log = tmp_path / "dashboard.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("STREAMLIT_SERVER_ADDRESS", None)
    data = str(tiny_files.parent / "data.csv")
    with log.open("wb") as out:
        server = subprocess.Popen(
            [*textsdc_command(), "dashboard", "--data", data, "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while not listening(port):
            assert server.poll() is None, f"the dashboard exited with {server.returncode}:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"the dashboard did not listen within 60 s:\n{log.read_text()}"
            time.sleep(0.2)
        text = log.read_text()
        assert "Network URL" not in text and "External URL" not in text, text
        assert "usage statistics" not in text.lower(), text
        family = descendants(server.pid) | {server.pid}

        server.send_signal(sig)
        deadline = time.monotonic() + 10
        while listening(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not listening(port), "the port still answers 10 s after the signal"
        assert server.wait(timeout=10) is not None
        time.sleep(0.2)
        assert not [p for p in family if alive(p)], "a process of the dashboard is still running"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
