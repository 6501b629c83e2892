"""The dashboard as a steward meets it on a first visit, in headless Chromium, on two clocks. Not part of the
tests.

    .venv/bin/python benchmarks/bench_dashboard.py [--cases protect:redact synthesize:glm ...] [--moves 30]
        [--json benchmarks/results_dashboard.json] [--warm-os-cache] [--pick-after-default]
        [--moves-after-plots] [--no-script]
    .venv/bin/python benchmarks/bench_dashboard.py --docs    # the table of docs/performance.md from the JSON

Each case (a page and a method) starts from nothing, on an idle machine: whatever the case before started has
ended (each server and script runs in a process group of its own, ended at its stop) and the CPU has been less
than 10% busy for two seconds running (the seconds waited are in the row), the OS page cache dropped (when run
as root), a freshly started server with an empty cache folder, a fresh browser profile. The page is at rest
when the knob's caption shows the case's knob, the server has recorded its value (the Export link names it), no
element is stale and the status widget says nothing is running.

- First view: opening the page (and picking the case's method as soon as the picker shows) until the page is
  at rest, on two clocks: from outside (the wall clock from the `page.goto` call to Playwright seeing the page
  at rest, polled at each animation frame) and in the page (from the navigation's start,
  performance.timeOrigin, to the first animation frame at rest). The server's start (launch to listening,
  which imports the engine) is beside it.
- Moves: the first right after the first view is at rest (its plots may still be being drawn), each 300–400 ms
  after the last was seen at rest, one grid step each; from outside (from the call that presses the key to
  Playwright seeing the page at rest, polled at each animation frame) and in the page (from the key event to
  the first animation frame at rest). p50/p95 over all moves and over the first ten.
- After a restart: the same page from a restarted server (the disk cache kept, and the browser's).
- Server script time of a move (AppTest in-process, its overhead included: an upper bound) and peak memory of
  the server's process tree (sampled every 0.2 s).

Targets (issue 53), from outside: a first view ≤ 30 s (Protect text; the neural generator ≤ 45 s), ≤ 45 s
(Synthesize fields, Plans), ≤ 90 s (Counts and amounts); a move's p95 ≤ 150 ms, the first ten included; after a
restart ≤ 5 s; a move's script time p95 ≤ 100 ms. The flags --warm-os-cache, --pick-after-default and
--moves-after-plots each put back one thing the bench did before issue 53 (docs/performance.md says what each
changes).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.tree_memory import rss_mb, tree_pss_mb, tree_rss_mb  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
FIRST_VIEW_TIMEOUT_MS = 1_800_000


@dataclass(frozen=True)
class Case:
    page: str  # url path of the page
    method: str
    data: str
    title: str  # the method's title, as the page's method picker shows it
    picker: str  # "select" (Protect), "radio" (Synthesize, Counts) or "" (the page's default)
    target_s: float


def cases() -> dict[str, Case]:
    from engine.protect import METHODS

    out = {}
    for method in ("redact", "md", "rnn"):
        target = 45 if method == "rnn" else 30  # the neural generator's training alone takes ~29 s
        out[f"protect:{method}"] = Case(
            "protect", method, "airline-tweets", METHODS[method].title, "" if method == "redact" else "select", target
        )
    out["protect:swap"] = Case("protect", "swap", "earnings-calls", METHODS["swap"].title, "select", 30)
    out["protect:kanon"] = Case("protect", "kanon", "airline-tweets", METHODS["kanon"].title, "select", 30)
    for method in ("glm", "cart"):
        out[f"synthesize:{method}"] = Case(
            "synthesize", method, "airline-tweets", METHODS[method].title, "" if method == "glm" else "radio", 45
        )
    for method in ("count-bayes", "cart"):
        out[f"counts:{method}"] = Case(
            "counts", method, "nyc-airbnb", METHODS[method].title, "" if method == "count-bayes" else "radio", 90
        )
    # The Plans page at its default plan: the line at redaction's default level first, the others after.
    out["plans:redact+glm"] = Case("plans", "redact+glm", "airline-tweets", "", "", 45)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TIMELINE_S = 10.0


class Server:
    """`textsdc dashboard` on a free port with its own cache folder; samples its memory while it runs."""

    def __init__(self, data: str, cache: Path, log: Path) -> None:
        self.port = free_port()
        env = dict(os.environ, TEXTSDC_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
        argv = [sys.executable, "-m", "engine.cli", "dashboard", "--port", str(self.port), "--data", data]
        self.proc = subprocess.Popen(
            argv, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
        )
        self.peak_mb, self.peak_pss_mb, self.peak_at_s = 0.0, 0.0, 0.0
        self.timeline: list[list[int]] = []  # [s since launch, MB of the tree, MB of its workers] every TIMELINE_S
        started = time.monotonic()
        self._stop = threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2):
                    self.start_s = round(time.monotonic() - started, 1)  # launch → listening (imports done)
                    return
            except OSError:
                time.sleep(0.3)
        raise SystemExit(f"the dashboard did not start; see {log}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _sample(self) -> None:
        started, last = time.monotonic(), -TIMELINE_S
        while not self._stop.is_set():
            rss = tree_rss_mb(self.proc.pid)
            self.peak_mb = max(self.peak_mb, rss)
            now = time.monotonic() - started
            if rss >= self.peak_mb:
                self.peak_at_s = round(now, 1)
            if now - last >= TIMELINE_S:  # PSS reads every page table: not at every sample
                self.peak_pss_mb = max(self.peak_pss_mb, tree_pss_mb(self.proc.pid))
                self.timeline.append([round(now), round(rss), round(rss - rss_mb(self.proc.pid))])
                last = now
            time.sleep(0.2)

    def stop(self) -> None:
        """The server stopped as a steward's Ctrl+C does, then whatever it started and left running (a worker
        busy with a piece) ended, so that nothing of this case runs into the next."""
        self._stop.set()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        end_group(self.proc.pid)


def end_group(pgid: int) -> None:
    """Every process left in the process group ``pgid`` (a server's or a script's, started in a session of its
    own) ended: asked, then killed after 5 s."""
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.1)


def cpu_busy(seconds: float) -> float:
    """The share of the machine's CPU time that was busy over the next ``seconds`` (/proc/stat)."""

    def times() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle and iowait
        return sum(fields[:8]), idle

    total0, idle0 = times()
    time.sleep(seconds)
    total1, idle1 = times()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


IDLE_BUSY = 0.10


def wait_for_idle_cpu(limit_s: float = 120.0) -> float:
    """Seconds waited until the CPU was less than `IDLE_BUSY` busy over two seconds running (at most
    ``limit_s``): a steward's first visit finds the machine idle, not finishing the case before."""
    started = time.monotonic()
    calm = 0
    while calm < 2 and time.monotonic() - started < limit_s:
        calm = calm + 1 if cpu_busy(1.0) < IDLE_BUSY else 0
    return round(time.monotonic() - started, 1)


KNOB = """() => { const f = document.querySelector('iframe[title*="knob_view"]');
  const c = f && f.contentDocument && f.contentDocument.getElementById('caption');
  return c && c.textContent.startsWith('Current knob:') ? c.textContent : undefined; }"""


def rest_check(prefix: str = "Current knob:", since_before: bool = True) -> str:
    """JS: the page at rest, its knob caption returned (false otherwise): the caption starts with ``prefix`` (a
    picked method's knob, not the default's), differs from ``window.__before`` (``since_before``: a move's new
    value), the server has recorded it (the Export link names it) and no element is stale or running. Text is
    read with textContent, which asks the page for no layout (innerText would, at every frame polled)."""
    before = "if (window.__before !== undefined && caption === window.__before) return false;" if since_before else ""
    return (
        """() => {
  const caption = ("""
        + KNOB
        + f""")();
  if (!caption || !caption.startsWith({json.dumps(prefix)})) return false;
  {before}
  const link = [...document.querySelectorAll('a')].find(a => a.textContent.includes('Export the release at'));
  if (!link || !link.textContent.trim().endsWith(caption.split(' = ').pop())) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  if (document.querySelector('[data-testid^="stStatusWidgetRunning"]')) return false;
  return caption;
}}"""
    )


AT_REST = rest_check()
CAPTION = KNOB

# Every plot of the view shown is drawn (what is on screen is drawn before the page is at rest; the view's
# plots below the window are drawn right after, one at a time).
COMPLETE = """() => { const f = document.querySelector('iframe[title*="knob_view"]');
  return !!(f && f.contentDocument && f.contentDocument.body.dataset.pending === '0'); }"""

# Runs in the page (top frame) from its navigation start: at every animation frame, when the page comes to rest
# (any knob's caption) and when the progress bar's text changes, in the page's own clock (ms since
# performance.timeOrigin, the navigation's start).
TRACKER = (
    """(() => {
  if (window.top !== window) return;
  window.__rests = []; window.__progress = []; window.__long = [];
  // Tasks of 50 ms or more on the page's thread (its frames' included): what a key press waited behind.
  try {
    new PerformanceObserver((list) => list.getEntries().forEach((e) => window.__long.push([e.startTime, e.duration])))
      .observe({ type: 'longtask', buffered: true });
  } catch (e) { /* no long-task timing in this browser */ }
  const atRest = """
    + rest_check(since_before=False)
    + """;
  let was = false, last = '';
  const tick = () => {
    const now = performance.now();  // not the frame's time stamp, which can be older than a long task before it
    try {
      const rest = atRest();
      if (rest && !was) window.__rests.push({ t: now, caption: rest });
      was = !!rest;
      const text = [...document.querySelectorAll('[data-testid="stProgress"]')].map(e => e.textContent).join(' | ');
      if (text && text !== last) window.__progress.push({ t: now, text });
      last = text;
    } catch (e) { /* the page is being replaced */ }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})();"""
)


def knob_prefix(case: Case) -> str:
    """The caption of the case's knob (`dashboard.knob_view.payload`), which tells its view from the default
    method's on a page with a picker."""
    from engine.protect import method_class

    return f"Current knob: {method_class(case.method).knob.symbol} = "


def first_view(page, case: Case, url: str, pick_after_default: bool = False, wait_plots: bool = False) -> dict:
    """Open the page as a steward does (and pick the case's method as soon as the picker shows, while the
    default method's sweep runs; ``pick_after_default``: once the default's view is at rest, as the bench did
    before issue 53), until the case's knob view is at rest. Two clocks: ``outside_s``, the wall clock from
    the `page.goto` call to Playwright seeing the page at rest (polled at each animation frame); ``page_s``,
    from the navigation's start (performance.timeOrigin) to the first animation frame at rest, measured in the
    page (`TRACKER`). ``wait_plots``: then until every plot of the view is drawn (``plots_drawn_s``)."""
    prefix = knob_prefix(case)
    start = time.perf_counter()
    page.goto(f"{url}/{case.page}", timeout=FIRST_VIEW_TIMEOUT_MS)
    out: dict = {}
    if case.picker:
        if pick_after_default:
            page.wait_for_function(rest_check(since_before=False), timeout=FIRST_VIEW_TIMEOUT_MS, polling="raf")
        if case.picker == "select":
            picker = page.locator('[data-testid="stSelectbox"]', has_text="Protection method")
            picker.wait_for(timeout=FIRST_VIEW_TIMEOUT_MS)
            out["picked_at_s"] = round(time.perf_counter() - start, 1)
            out["picked_at_page_ms"] = page.evaluate("() => performance.now()")
            picker.click()
            page.get_by_role("option", name=case.title, exact=True).click()
        else:
            choice = page.locator('[data-testid="stRadio"] label', has_text=case.title).first
            choice.wait_for(timeout=FIRST_VIEW_TIMEOUT_MS)
            out["picked_at_s"] = round(time.perf_counter() - start, 1)
            out["picked_at_page_ms"] = page.evaluate("() => performance.now()")
            choice.click()
    page.wait_for_function(rest_check(prefix, since_before=False), timeout=FIRST_VIEW_TIMEOUT_MS, polling="raf")
    out["outside_s"] = round(time.perf_counter() - start, 1)
    # the page's clock when Playwright's answer came back: tells its polling's delay from the driver's own
    out["seen_at_page_s"] = round(page.evaluate("() => performance.now()") / 1000, 1)
    rests = page.evaluate("() => window.__rests")
    seen = next(r["t"] for r in reversed(rests) if r["caption"].startswith(prefix))
    out["page_s"] = round(seen / 1000, 1)
    if "picked_at_s" in out:
        out["from_pick_outside_s"] = round(out["outside_s"] - out["picked_at_s"], 1)
        out["from_pick_page_s"] = round((seen - out.pop("picked_at_page_ms")) / 1000, 1)
    progress = [p["t"] / 1000 for p in page.evaluate("() => window.__progress")]
    times = [0.0] + [t for t in progress if t <= seen / 1000] + [seen / 1000]
    out["progress_updates"] = len(times) - 2
    out["longest_progress_gap_s"] = round(max(b - a for a, b in zip(times, times[1:])), 1)
    if os.environ.get("BENCH_TIMELINE"):  # where the first view's time goes, as the progress bar said it
        for p in page.evaluate("() => window.__progress"):
            print(f"  {p['t'] / 1000:6.1f} s  {' '.join(p['text'].split())[:140]}", file=sys.stderr, flush=True)
    if wait_plots:
        page.wait_for_function(COMPLETE, timeout=FIRST_VIEW_TIMEOUT_MS, polling="raf")
        out["plots_drawn_s"] = round(time.perf_counter() - start, 1)
    return out


# Times each move in the page's own clock: from the key event's time stamp (when the browser received the press)
# to the first animation frame at which the page is at rest, and to the first at which every plot of the view
# shown is drawn (the same frame when the view was drawn ahead before the press). A move pressed before the last
# one's plots were drawn leaves that one's ``complete`` unset.
MONITOR = (
    """() => {
  window.__moves = [];
  const f = document.querySelector('iframe[title*="knob_view"]');
  const shift = f.contentWindow.performance.timeOrigin - performance.timeOrigin;
  f.contentDocument.addEventListener('keydown', (e) => { window.__moves.push({ start: e.timeStamp + shift }); }, true);
  const atRest = """
    + AT_REST
    + """, complete = """
    + COMPLETE
    + """;
  const tick = () => {
    const now = performance.now();  // not the frame's time stamp, which can be older than a long task before it
    const p = window.__moves[window.__moves.length - 1];
    if (p && p.rest === undefined && atRest()) p.rest = now;
    if (p && p.rest !== undefined && p.complete === undefined && complete()) p.complete = now;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}"""
)

SLIDER = """() => { const s = document.querySelector('iframe[title*="knob_view"]').contentDocument.getElementById('slider');
  return [Number(s.value), Number(s.max)]; }"""

FIRST_MOVES = 10
GAP_MS = (300, 400)


def moves(page, n: int, after_plots: bool = False, seed: int = 0) -> list[dict]:
    """``n`` moves of the knob by one grid step, the first right after the first view is at rest (the view's
    plots may still be being drawn, as for a steward who moves at once), each pressed 300–400 ms after the last
    was seen at rest. Each is timed from outside (the wall clock from the call that presses the key on the
    focused slider to Playwright seeing the page at rest, polled at each animation frame) and in the page
    (`MONITOR`). The knob goes one way to its end, then back. ``after_plots``: each move waits first until
    every plot of the view is drawn (what the bench did before issue 53)."""
    rng = random.Random(seed)
    thumb = page.frame_locator('iframe[title*="knob_view"]').get_by_role("slider")
    page.evaluate(MONITOR)
    outside: list[float] = []
    direction = "ArrowRight"
    next_at = time.perf_counter()
    while len(outside) < n:
        if after_plots:
            page.wait_for_function(COMPLETE, timeout=FIRST_VIEW_TIMEOUT_MS, polling="raf")
        value, top = page.evaluate(SLIDER)
        if value >= top:
            direction = "ArrowLeft"
        elif value <= 0:
            direction = "ArrowRight"
        page.evaluate("b => { window.__before = b; }", page.evaluate(CAPTION))
        thumb.focus()
        time.sleep(max(0.0, next_at - time.perf_counter()))
        start = time.perf_counter()
        # The key goes to the focused slider as a steward's does; a locator's press would first wait for the
        # slider to be stable over animation frames, which times Playwright's checks as much as the page.
        page.keyboard.press(direction)
        page.wait_for_function(AT_REST, timeout=120_000, polling="raf")
        seen = time.perf_counter()
        outside.append((seen - start) * 1000)
        next_at = seen + rng.uniform(*GAP_MS) / 1000
    page.wait_for_function(
        f"() => window.__moves.length >= {n} && window.__moves[{n - 1}].rest !== undefined", timeout=10_000
    )
    timed = page.evaluate("() => window.__moves")
    if len(timed) != n:
        raise SystemExit(f"the page saw {len(timed)} key presses for {n} moves")
    long = page.evaluate("() => window.__long")
    return [
        {
            "outside": o,
            "page": m["rest"] - m["start"],
            "complete": None if m.get("complete") is None else m["complete"] - m["start"],
            "blocked": blocked(long, m["start"], m["rest"]),
        }
        for o, m in zip(outside, timed)
    ]


def blocked(long: list[list[float]], start: float, end: float) -> float:
    """ms of the page's long tasks (`TRACKER`) between ``start`` and ``end``: the part of a move the page's one
    thread was busy in tasks of 50 ms or more (the rest: the server's answer, short tasks, frames)."""
    return sum(max(0.0, min(t + d, end) - max(t, start)) for t, d in long)


def spread(values: list[float]) -> dict:
    """p50, p95 and max of ``values`` in whole ms, and how many."""
    return {
        "p50": round(statistics.median(values)),
        "p95": round(p95(values)),
        "max": round(max(values)),
        "n": len(values),
    }


def move_summary(timed: list[dict]) -> dict:
    """Both clocks' p50/p95 over every move and over the first ten; the page's time until every plot of the
    view shown was drawn, over the moves whose plots were drawn before the next press."""
    first = timed[:FIRST_MOVES]
    complete = [m["complete"] for m in timed if m["complete"] is not None]
    return {
        "outside": spread([m["outside"] for m in timed]),
        "page": spread([m["page"] for m in timed]),
        "first_ten_outside": spread([m["outside"] for m in first]),
        "first_ten_page": spread([m["page"] for m in first]),
        "page_plots_drawn": spread(complete) if complete else None,
        # outside, in the page, of which in long tasks on the page's thread
        "first_ten_each": [[round(m["outside"]), round(m["page"]), round(m["blocked"])] for m in first],
        "gap_ms": list(GAP_MS),
    }


def script_ms(case: Case, cache: Path, n: int) -> list[float]:
    """Server script time of ``n`` fragment reruns on the page (AppTest, the persisted sweep)."""
    code = f"""
import json, sys, time
sys.argv = ["app.py", "--data", {case.data!r}]
sys.path.insert(0, {str(ROOT)!r})
from streamlit.testing.v1 import AppTest
from tests.test_dashboard import fragment_run
from dashboard import session
at = AppTest.from_file({str(ROOT / "dashboard" / "app.py")!r}, default_timeout=1800)
at.run()
if {case.picker!r}:
    at.session_state[{{"protect": session.METHOD_KEY, "synthesize": "synth_method", "counts": "counts_method"}}[{case.page!r}]] = {case.method!r}
at.switch_page("views/{case.page}.py").run()
grid = at.session_state[session.CHOICE].sweep.grid
key = next(str(k)[:-6] for k in at.session_state if str(k).endswith("::view"))
times = []
for i in range({n}):
    at.session_state[key] = grid[i % len(grid)]
    t = time.perf_counter(); fragment_run(at, "_knob_fragment"); times.append((time.perf_counter() - t) * 1000)
print("TIMES", json.dumps(times[len(grid):] or times))
"""
    env = dict(os.environ, TEXTSDC_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
    )
    stdout, stderr = proc.communicate()
    end_group(proc.pid)  # the workers its page started
    run = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    line = next((x for x in run.stdout.splitlines() if x.startswith("TIMES ")), None)
    if line is None:
        raise SystemExit(f"script timing failed for {case}:\n{run.stderr[-3000:]}")
    return json.loads(line[6:])


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


def drop_os_cache() -> bool:
    """Empty the OS page cache (root only), so that the models, packages and data are read from disk as on a
    machine's first visit; False where it cannot be done."""
    subprocess.run(["sync"], check=False)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Variant:
    """What a case's run does beyond a steward's first visit (all False: the visit as issue 53 defines it)."""

    warm_os_cache: bool = False  # the OS page cache is not dropped before the server starts
    pick_after_default: bool = False  # a picked method is picked once the default method's view is at rest
    moves_after_plots: bool = False  # each move waits until every plot of the view is drawn

    def label(self) -> str:
        return ", ".join(k.replace("_", " ") for k, v in self.__dict__.items() if v) or "a steward's first visit"


def bench(name: str, case: Case, n_moves: int, work: Path, variant: Variant = Variant(), script: bool = True) -> dict:
    from playwright.sync_api import sync_playwright

    cache, log = work / name.replace(":", "-"), work / "server.log"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    row: dict = {"case": name, "page": case.page, "method": case.method, "data": case.data, "commit": commit.strip()}
    row["variant"] = variant.label()
    row["waited_for_idle_cpu_s"] = wait_for_idle_cpu()
    row["os_cache"] = "warm" if variant.warm_os_cache or not drop_os_cache() else "dropped"
    row["load_average"] = [round(x, 2) for x in os.getloadavg()]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        context = browser.new_context(viewport={"width": 1500, "height": 1100})  # a fresh profile: nothing cached
        context.add_init_script(TRACKER)
        page = context.new_page()
        server = Server(case.data, cache, log)
        try:
            row["first_view"] = first_view(page, case, server.url, variant.pick_after_default)
            row["first_view"]["server_start_s"] = server.start_s
            row["moves"] = move_summary(moves(page, n_moves, variant.moves_after_plots))
        finally:
            server.stop()
        row["peak_rss_mb"] = round(server.peak_mb)
        # A restart: the process's memory is gone, the disk cache is not (nor the browser's, a page opened before).
        server = Server(case.data, cache, log)
        try:
            row["after_restart"] = first_view(page, case, server.url, variant.pick_after_default, wait_plots=True)
            row["after_restart"]["server_start_s"] = server.start_s
        finally:
            server.stop()
        browser.close()
    if script:
        times = script_ms(case, cache, n_moves + 12)
        row["script_ms"] = {"p50": round(statistics.median(times)), "p95": round(p95(times)), "n": len(times)}
    row["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    row["targets"] = {
        "first_view_s": case.target_s,
        "after_restart_s": 5,
        "move_p95_ms": MOVE_P95_TARGET_MS,
        "script_p95_ms": 100,
    }
    return row


MOVE_P95_TARGET_MS = 150  # seen from outside, the first ten moves included (issue 53)


RESULTS = ROOT / "benchmarks" / "results_dashboard.json"
PAGE = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- dashboard-table:begin -->", "<!-- dashboard-table:end -->"
PAGE_TITLES = {
    "protect": "Protect text",
    "synthesize": "Synthesize fields",
    "counts": "Counts and amounts",
    "plans": "Plans",
}


def _ms(d: dict | None, *keys: str) -> str:
    return " / ".join(f"{d[k]:,}" for k in keys) + " ms" if d else "—"


def _row(r: dict) -> str:
    """One row of the table: both clocks of a run of this bench; a row the bench measured before it had two
    clocks keeps its figures in the last column only."""
    name = f"{PAGE_TITLES.get(r['page'], r['page'])} · {r['method']}"
    targets = r["targets"]
    if "moves" not in r:
        fv, mv = r["first_view"], r["move_ms"]
        old = f"{fv['seconds']} s; {mv['p50']:,} / {mv['p95']:,} ms"
        return f"| {name} | — | — | — | — | — | — | {old} | {r['commit']} |"
    fv, mv, ar = r["first_view"], r["moves"], r["after_restart"]
    ok = fv["outside_s"] <= targets["first_view_s"]
    first = f"{fv['outside_s']} s ({targets['first_view_s']:g} s){' ✓' if ok else ''}"
    if "picked_at_s" in fv:
        first += f", picked at {fv['picked_at_s']} s"
    worst = max(mv["outside"]["p95"], mv["first_ten_outside"]["p95"])
    outside = _ms(mv["outside"], "p50", "p95") + (" ✓" if worst <= targets["move_p95_ms"] else "")
    restart = f"{ar['outside_s']} / {ar['page_s']} s"
    load = f"{r['load_average'][0]:.1f}"
    cells = [
        name,
        first,
        f"{fv['page_s']} s",
        outside,
        _ms(mv["first_ten_outside"], "p50", "p95"),
        f"{_ms(mv['page'], 'p50', 'p95')}; first ten {_ms(mv['first_ten_page'], 'p95')}",
        f"{restart}; server {_ms(r.get('script_ms'), 'p95')}; {r['peak_rss_mb']:,} MB",
        f"— (load {load}, OS cache {r['os_cache']})",
        r["commit"],
    ]
    return "| " + " | ".join(cells) + " |"


def table(results: dict) -> str:
    """The docs table of ``results`` (the JSON this bench writes), outside figures first."""
    rows = [_row(r) for r in results["rows"]]
    head = [
        "page · method",
        "first view, outside (target)",
        "first view, in the page",
        "moves, outside p50 / p95 (≤ 150 ms)",
        "first ten moves, outside p50 / p95",
        "moves in the page p50 / p95",
        "after a restart outside / in the page; server p95 (≤ 100 ms); peak memory",
        "bench before issue 53: first view; moves p50 / p95 in the page",
        "commit",
    ]
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *rows]) + "\n"


def with_table(page: str, results: dict) -> str:
    """``page`` with the table of ``results`` between its dashboard-table markers."""
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{table(results)}{END}{tail}"


def main() -> None:
    known = cases()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(known), choices=list(known))
    parser.add_argument("--moves", type=int, default=30, help="moves per case (the first ten counted apart too)")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("--warm-os-cache", action="store_true", help="do not drop the OS page cache")
    parser.add_argument(
        "--pick-after-default", action="store_true", help="pick the method once the default's view is at rest"
    )
    parser.add_argument("--moves-after-plots", action="store_true", help="wait for every plot before each move")
    parser.add_argument("--no-script", action="store_true", help="skip the server script time (AppTest)")
    parser.add_argument(
        "--docs", action="store_true", help=f"rewrite the table of {PAGE.relative_to(ROOT)} from the JSON"
    )
    args = parser.parse_args()
    if args.docs:
        results = json.loads(args.json.read_text(encoding="utf-8"))
        PAGE.write_text(with_table(PAGE.read_text(encoding="utf-8"), results), encoding="utf-8")
        return
    if args.moves < FIRST_MOVES:
        parser.error(f"--moves must be at least {FIRST_MOVES} (the first ten are reported apart)")
    variant = Variant(args.warm_os_cache, args.pick_after_default, args.moves_after_plots)
    previous = json.loads(args.json.read_text()) if args.json.exists() else {"rows": []}
    rows = {r["case"]: r for r in previous.get("rows", [])}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases:
            rows[name] = bench(name, known[name], args.moves, Path(tmp), variant, not args.no_script)
            print(json.dumps(rows[name]), flush=True)
            payload = {  # written after every case: a long run that stops keeps what it measured
                "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
                "settings": "the pages' defaults on the demo datasets; per case an idle machine (what the case "
                "before started ended, the CPU under 10% busy for two seconds running), a freshly started server "
                "with an empty cache folder, the OS page cache dropped where the bench runs as root, a fresh "
                "browser profile",
                "rows": [rows[k] for k in known if k in rows],
            }
            args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
