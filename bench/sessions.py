"""Many concurrent sessions (people × tabs), each making one `echo` call per second, against one baseline session.

One `webhost serve` per server kind, one kind after the other:

- `http`: a shared Streamable HTTP server, `python tests/servers/basic.py --http PORT`, one process for everyone
  (started here, not by webhost);
- `stdio`: `tests/servers/basic.py` over stdio, which webhost spawns once per person.

For each kind, in order:

1. **baseline**: one probe session alone, alternating `echo` and `session/info` (which touches no MCP server)
   every 50 ms;
2. **connect**: `--people × --tabs` more WebSockets; webhost's VmRSS (`/proc/PID/status`, the webhost process
   only, not its children) is read before and after, and the `basic.py` processes in webhost's process tree are
   counted and grouped by person (each stdio server gets `BENCH_PERSON=${user.id}` in its environment);
3. **load**: every session calls `echo` once per second (each with its own random phase) for `--duration`
   seconds, while the probe goes on as in 1: its `session/info` round trip is the event-loop lag seen from
   outside;
4. **after**: the probe alone again, with the other sessions still connected but idle.

People: with `webhost.auth` in proxy mode (contract §5) each session sends `X-Forwarded-Email: personN@example.com`
on its handshake, so there are `--people` people (plus the probe, a person of its own). The script detects at start
whether this webhost has proxy mode (it exits 2 on an unknown `auth`, or ignores it and everyone is the token's
person) and otherwise falls back to token mode, where every tab is the same person, and says so.

Inside webhost: its own event-loop lag (the oversleep of a 10 ms sleep, p50/p99/max) and the collector's passes
and pauses, from `GET /api/health/loop` (admins only; the token is one), over the baseline and over the load.
`--gc off` runs the same webhost with its garbage-collector tuning (webhost/gctuning.py) switched off, `--gc both`
each kind off and then on.

Nothing is asserted: the goals (p99 under 50 ms at 200 sessions, at most 3 MB of webhost RSS per added session,
one process per (person, stdio server)) are printed beside the figures.

    .venv/bin/python bench/sessions.py [--people N] [--tabs N] [--duration S] [--kinds http,stdio]
                                       [--mode auto|proxy|token] [--webhost-root DIR] [--quick]
                                       [--no-ws-compression] [--gc on|off|both]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
import httpx
import websockets
from _common import (
    PYTHON,
    ROOT,
    SERVERS,
    Summary,
    Webhost,
    environment,
    load_average,
    parse_args,
    process_cpu_seconds,
)
from websockets.asyncio.client import ClientConnection

from webhost.testing.host import WebhostFailed, free_port, start_webhost

ECHO_TEXT = "hello, webhost"
PROBE_GAP = 0.05  # the probe sends one request every 50 ms
PROBE_PERSON = "probe@example.com"
USER_HEADER = "X-Forwarded-Email"
PROXY_AUTH = {"mode": "proxy", "userHeader": USER_HEADER, "trustedProxies": ["127.0.0.1/32"]}
CALL_TIMEOUT = 10.0  # one request's bound; a slower one counts as failed
CONNECT_TIMEOUT = 180.0  # all sessions connected (stdio: one server process per person to start)
HANDSHAKES_AT_ONCE = 20
GOAL_P99_MS = 50.0
GOAL_RSS_MB = 3.0


# `--gc off`: the same webhost with its garbage-collector tuning (webhost/gctuning.py) switched off.
UNTUNED_LAUNCHER = (
    "import runpy, sys, webhost.gctuning as t; t.tune = lambda: None; sys.argv[0] = 'webhost'; "
    "runpy.run_module('webhost', run_name='__main__', alter_sys=True)"
)


def person_email(index: int) -> str:
    return f"person{index}@example.com"


# ---- command line ---------------------------------------------------------------------------------------


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--people",
        type=int,
        default=None,
        metavar="N",
        help="people (proxy mode; in token mode they are all the same person) (default 50, --quick 2)",
    )
    parser.add_argument("--tabs", type=int, default=None, metavar="N", help="tabs per person (default 4)")
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="S",
        help="seconds of load per server kind, every session calling once a second (default 20, "
        "--quick 1); the probe's baseline before and after lasts a quarter of that each "
        "(at least 1 s)",
    )
    parser.add_argument(
        "--kinds", default="http,stdio", help="server kinds to run, comma-separated: http, stdio (default both)"
    )
    parser.add_argument(
        "--webhost-root",
        type=Path,
        default=ROOT,
        metavar="DIR",
        help="run `python -m webhost` from this checkout (default: this one), e.g. an export of "
        "a branch that has proxy mode",
    )
    parser.add_argument(
        "--gc",
        choices=["on", "off", "both"],
        default="on",
        help="webhost's garbage-collector tuning: on (as shipped, the default), off (switched off for this run), "
        "both (off, then on, for each kind: a before/after in one run)",
    )
    parser.add_argument(
        "--mode",
        choices=["auto", "proxy", "token"],
        default="auto",
        help="auth mode: auto (proxy if this webhost has it, else token: the default), proxy (fail without it), token",
    )


@dataclass
class Plan:
    people: int
    tabs: int
    duration: float
    baseline: float
    kinds: list[str]
    mode: str
    compression: bool
    webhost_root: Path
    gc: list[str]

    @classmethod
    def of(cls, args: argparse.Namespace) -> Plan:
        people = args.people if args.people is not None else (2 if args.quick else 50)
        tabs = args.tabs if args.tabs is not None else (2 if args.quick else 4)
        duration = args.duration if args.duration is not None else (1.0 if args.quick else 20.0)
        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        if people < 1 or tabs < 1 or duration <= 0 or not kinds or set(kinds) - {"http", "stdio"}:
            raise SystemExit(
                "sessions: --people and --tabs must be at least 1, --duration positive, --kinds among http,stdio"
            )
        return cls(
            people,
            tabs,
            duration,
            max(1.0, duration / 4),
            kinds,
            args.mode,
            not args.no_ws_compression,
            args.webhost_root.resolve(),
            ["off", "on"] if args.gc == "both" else [args.gc],
        )

    @property
    def sessions(self) -> int:
        return self.people * self.tabs


# ---- processes: webhost, the HTTP server, /proc ------------------------------------------------------------


@contextlib.contextmanager
def run_webhost(
    servers: dict[str, Any], options: dict[str, Any], root: Path = ROOT, *, gc_tuning: bool = True
) -> Iterator[Webhost]:
    """`webhost serve` of the checkout at `root` on free ports, with these servers and `webhost` options (the
    testing kit's `start_webhost`, as `_common.run_webhost`); `WebhostFailed` when it does not start."""
    with (
        tempfile.TemporaryDirectory(prefix="webhost-bench-") as tmp,
        start_webhost(
            {"mcpServers": servers, "webhost": options},
            directory=tmp,
            args=["--log-level", "warning"],
            launcher=(PYTHON, "-m", "webhost") if gc_tuning else (PYTHON, "-c", UNTUNED_LAUNCHER),
            cwd=root,
            start_timeout=60,
            stop_timeout=30,
        ) as host,
    ):
        yield host


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """`tests/servers/basic.py --http PORT`: one Streamable HTTP server for everyone; yields its URL."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [PYTHON, str(SERVERS / "basic.py"), "--http", str(port)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"basic.py --http exited ({proc.returncode}): {log.read().decode()[-2000:]}")
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError("basic.py --http did not listen")
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop(proc)


def rss_kib(pid: int) -> int | None:
    """VmRSS of one process in KiB (its children are not included)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, grandchildren, ...), from /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, []))
    return found


def server_processes(pid: int) -> dict[str, int]:
    """`basic.py` processes in webhost's tree, counted by the BENCH_PERSON of their environment."""
    by_person: dict[str, int] = {}
    for child in descendants(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        # `python basic.py`; not webhost's supervisor shim (`python -I -S shim.py ... python basic.py`)
        if len(cmdline) < 2 or not cmdline[1].endswith(b"basic.py"):
            continue
        person = next((e[len(b"BENCH_PERSON=") :].decode() for e in environ if e.startswith(b"BENCH_PERSON=")), "?")
        by_person[person] = by_person.get(person, 0) + 1
    return by_person


# ---- a tab: a WebSocket with a reader task ------------------------------------------------------------------


class RpcFailed(Exception):
    pass


@dataclass
class Tab:
    """The page's side of /ws: one reader task resolves the responses; notifications are parsed and counted."""

    ws: ClientConnection
    frames: int = 0
    notifications: int = 0
    _next_id: int = 0
    _waiting: dict[int, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    async def read(self) -> None:
        try:
            async for raw in self.ws:
                message: dict[str, Any] = json.loads(raw)
                self.frames += 1
                waiter = self._waiting.pop(message.get("id", -1), None) if "method" not in message else None
                if waiter is not None and not waiter.done():
                    waiter.set_result(message)
                else:
                    self.notifications += 1
        finally:
            for waiter in self._waiting.values():
                if not waiter.done():
                    waiter.set_exception(RpcFailed("the WebSocket closed"))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next_id += 1
        request_id = self._next_id
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiter
        try:
            await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
            with anyio.fail_after(CALL_TIMEOUT):
                answer = await waiter
        finally:
            self._waiting.pop(request_id, None)
        if "error" in answer:
            raise RpcFailed(f"{answer['error'].get('code')}: {answer['error'].get('message')}")
        return answer["result"]

    async def echo(self, server: str) -> None:
        result = await self.request(
            "tools/call",
            {"server": server, "name": "echo", "arguments": {"text": ECHO_TEXT}, "callId": f"c{secrets.token_hex(6)}"},
        )
        text = "".join(str(block.get("text", "")) for block in result.get("content", []))
        if result.get("isError") or ECHO_TEXT not in text:
            raise RpcFailed(f"echo failed: {str(result)[:300]}")

    async def wait_connected(self, server: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = (await self.request("servers/list", {}))["servers"]
            state: dict[str, Any] = next(s for s in states if s["name"] == server)
            if state["status"] == "connected":
                return
            if state["status"] == "error":
                raise RpcFailed(f"{server} failed to connect: {state.get('error')}")
            await anyio.sleep(0.1 + random.random() * 0.2)
        raise TimeoutError(f"{server} did not connect within {timeout:.0f} s")


@contextlib.asynccontextmanager
async def open_tab(host: Webhost, person: str | None, *, compression: bool) -> AsyncIterator[Tab]:
    """One tab; `person` goes in the proxy's user header (None: token mode, the Bearer alone)."""
    headers = {"Authorization": f"Bearer {host.token}"}
    if person is not None:
        headers[USER_HEADER] = person
    async with websockets.connect(
        host.ws_url,
        additional_headers=headers,
        origin=host.base_url,  # type: ignore[arg-type]
        max_size=None,
        open_timeout=30,
        compression="deflate" if compression else None,
    ) as ws:
        tab = Tab(ws)
        reader = asyncio.create_task(tab.read())
        try:
            yield tab
        finally:
            await ws.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(reader, 5)


# ---- timing -------------------------------------------------------------------------------------------------


@dataclass
class Samples:
    echo: list[float] = field(default_factory=list)
    info: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


async def timed(samples: list[float], failures: list[str], run: Any) -> None:
    started = time.perf_counter()
    try:
        await run()
    except (RpcFailed, TimeoutError, websockets.ConnectionClosed) as exc:
        failures.append(f"{type(exc).__name__}: {exc}"[:200])
        return
    samples.append(time.perf_counter() - started)


async def probe(tab: Tab, server: str, seconds: float) -> Samples:
    """The baseline session: `echo` and `session/info` alternately, one request every PROBE_GAP seconds."""
    out = Samples()
    start = time.perf_counter()
    index = 0
    while time.perf_counter() - start < seconds:
        due = start + index * PROBE_GAP
        await anyio.sleep(max(0.0, due - time.perf_counter()))
        if index % 2 == 0:
            await timed(out.echo, out.failures, lambda: tab.echo(server))
        else:
            await timed(out.info, out.failures, lambda: tab.request("session/info", {}))
        index += 1
    return out


async def load(tab: Tab, server: str, seconds: float, out: Samples) -> None:
    """One session: `echo` once a second from a random phase; a late call moves the schedule, never bursts."""
    start = time.perf_counter()
    due = start + random.random()
    while due < start + seconds:
        await anyio.sleep(max(0.0, due - time.perf_counter()))
        await timed(out.echo, out.failures, lambda: tab.echo(server))
        due = max(due + 1.0, time.perf_counter())


async def webhost_loop(host: Webhost, seconds: float) -> dict[str, Any] | None:
    """webhost's own event-loop lag over `seconds` (GET /api/health/loop, admins only: the token is one);
    None when this webhost has no such route."""
    async with httpx.AsyncClient(timeout=seconds + 30) as client:
        try:
            answer = await client.get(
                f"{host.base_url}/api/health/loop",
                params={"seconds": seconds},
                headers={"Authorization": f"Bearer {host.token}"},
            )
        except httpx.HTTPError:
            return None
    if answer.status_code != 200:
        return None
    measured: dict[str, Any] = answer.json()
    return measured


async def loop_lag(seconds: float, out: list[float], tick: float = 0.01) -> None:
    """This process's own event-loop lag (oversleep of a 10 ms sleep): the client's share of the noise."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        await asyncio.sleep(tick)
        out.append(max(0.0, time.perf_counter() - started - tick))


# ---- one server kind ----------------------------------------------------------------------------------------


@dataclass
class KindResult:
    kind: str
    gc: str
    load_average: str
    loop_before: dict[str, Any] | None  # webhost's own loop lag (GET /api/health/loop), probe alone
    loop_during: dict[str, Any] | None  # ... and during the load
    mode: str
    sessions: int
    people: int
    before: Samples
    during: Samples
    after: Samples
    load: Samples
    client_lag: list[float]
    rss_before: int | None
    rss_connected: int | None
    rss_loaded: int | None
    processes_connected: dict[str, int]
    processes_loaded: dict[str, int]
    connect_seconds: float
    frames_per_call: float
    calls_per_second: float
    webhost_cpu: float | None  # CPU seconds per second of load (1.0 = one core busy)
    client_cpu: float


def server_entry(kind: str, url: str | None, person_env: bool) -> dict[str, Any]:
    if kind == "http":
        return {"type": "http", "url": url}
    entry: dict[str, Any] = {"command": PYTHON, "args": [str(SERVERS / "basic.py")]}
    if person_env:  # so that the process count can be grouped by person
        entry["env"] = {"BENCH_PERSON": "${user.id}"}
    return entry


def last_line(log: str) -> str:
    lines = log.strip().splitlines()
    return lines[-1][:200] if lines else "(no output)"


async def detect_proxy(host: Webhost, plan: Plan) -> str | None:
    """None if this webhost believes the proxy's header (two headers, two people); else why not."""
    try:
        async with (
            open_tab(host, PROBE_PERSON, compression=plan.compression) as one,
            open_tab(host, person_email(0), compression=plan.compression) as two,
        ):
            first = (await one.request("session/info", {}))["user"]
            second = (await two.request("session/info", {}))["user"]
    except (OSError, websockets.InvalidStatus, RpcFailed) as exc:
        return f"a tab with {USER_HEADER} was refused ({exc})"
    if first.get("id") == PROBE_PERSON and second.get("id") == person_email(0):
        return None
    return f'webhost started but ignored "auth" (every tab is {first.get("id")!r})'


@dataclass
class Choice:
    """What this webhost supports, learnt on the first kind and kept for the next."""

    mode: str  # "proxy" (try it) or "token"
    person_env: bool | None = None  # ${user.id} in a stdio entry's env; None: not tried yet


@contextlib.asynccontextmanager
async def start(
    kind: str, url: str | None, options: dict[str, Any], plan: Plan, choice: Choice, gc_tuning: bool
) -> AsyncIterator[Webhost]:
    """webhost with this kind's server; in stdio, without the BENCH_PERSON env if this webhost cannot expand it."""
    server = f"basic_{kind}"
    person_env = kind == "stdio" and choice.person_env is not False
    try:
        host_cm = run_webhost(
            {server: server_entry(kind, url, person_env)}, options, plan.webhost_root, gc_tuning=gc_tuning
        )
        host = host_cm.__enter__()
    except WebhostFailed as exc:
        if exc.returncode is None or not person_env or (exc.returncode == 2 and "auth" in exc.log):
            raise
        print(
            "*** webhost does not start with BENCH_PERSON=${user.id} in the stdio entry's env "
            f"(exit {exc.returncode}: {last_line(exc.log)}): "
            "server processes are counted without grouping them by person ***"
        )
        choice.person_env = False
        host_cm = run_webhost({server: server_entry(kind, url, False)}, options, plan.webhost_root, gc_tuning=gc_tuning)
        host = host_cm.__enter__()
    else:
        if kind == "stdio":
            choice.person_env = person_env
    try:
        yield host
    finally:
        host_cm.__exit__(None, None, None)


async def run_kind(kind: str, plan: Plan, choice: Choice, url: str | None, gc: str) -> KindResult:
    """Run one kind; proxy detection may fall back to token mode (and `choice` remembers it)."""
    server = f"basic_{kind}"
    if choice.mode == "proxy":
        try:
            async with start(kind, url, {"auth": PROXY_AUTH}, plan, choice, gc == "on") as host:
                why = await detect_proxy(host, plan)
                if why is None:
                    return await measure(host, kind, server, plan, "proxy", gc)
        except WebhostFailed as exc:
            if exc.returncode != 2:
                raise
            why = f'webhost exits 2 on "auth": {last_line(exc.log)}'
        if plan.mode == "proxy":
            raise SystemExit(f"sessions: proxy mode is not available: {why}")
        print(
            f"*** proxy mode not available ({why}): falling back to token mode, where every tab is the same "
            f"person: {plan.people} people x {plan.tabs} tabs become 1 person x {plan.sessions} tabs ***"
        )
        choice.mode = "token"
    async with start(kind, url, {}, plan, choice, gc == "on") as host:
        return await measure(host, kind, server, plan, "token", gc)


async def measure(host: Webhost, kind: str, server: str, plan: Plan, mode: str, gc: str) -> KindResult:
    pid = host.proc.pid
    compression = plan.compression

    def who(index: int) -> str | None:
        return person_email(index // plan.tabs) if mode == "proxy" else None

    print(f"[{kind}] webhost pid {pid}, {mode} mode, gc tuning {gc}, {load_average()}", flush=True)
    async with contextlib.AsyncExitStack() as stack:
        probe_tab = await stack.enter_async_context(
            open_tab(host, PROBE_PERSON if mode == "proxy" else None, compression=compression)
        )
        await probe_tab.wait_connected(server, CONNECT_TIMEOUT)
        await probe(probe_tab, server, 0.5)  # warm-up: imports, schemas, the connection's first calls
        loop_before: dict[str, Any] | None = None

        async def run_baseline() -> None:
            nonlocal before
            before = await probe(probe_tab, server, plan.baseline)

        async def baseline_loop() -> None:
            nonlocal loop_before
            loop_before = await webhost_loop(host, plan.baseline)

        before = Samples()
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_baseline)
            tg.start_soon(baseline_loop)
        await anyio.sleep(0.5)
        rss_before = rss_kib(pid)
        print(f"[{kind}] baseline done; connecting {plan.sessions} sessions", flush=True)

        started = time.perf_counter()
        tabs: list[Tab] = [None] * plan.sessions  # type: ignore[list-item]
        gate = anyio.Semaphore(HANDSHAKES_AT_ONCE)

        async def connect_one(index: int) -> None:
            async with gate:
                tabs[index] = await stack.enter_async_context(open_tab(host, who(index), compression=compression))

        with anyio.fail_after(CONNECT_TIMEOUT):
            async with anyio.create_task_group() as tg:
                for index in range(plan.sessions):
                    tg.start_soon(connect_one, index)
            deadline_left = CONNECT_TIMEOUT - (time.perf_counter() - started)
            async with anyio.create_task_group() as tg:
                for tab in tabs:
                    tg.start_soon(tab.wait_connected, server, deadline_left)
        connect_seconds = time.perf_counter() - started
        async with anyio.create_task_group() as tg:  # one untimed call each: every connection's first call
            for tab in tabs:
                tg.start_soon(timed, [], [], lambda tab=tab: tab.echo(server))
        await anyio.sleep(1.0)
        rss_connected = rss_kib(pid)
        processes_connected = server_processes(pid)
        print(
            f"[{kind}] {plan.sessions} sessions connected in {connect_seconds:.1f} s; load for {plan.duration:g} s",
            flush=True,
        )

        loaded = Samples()
        frames0 = sum(t.frames for t in tabs)
        client_lag: list[float] = []
        during = Samples()
        cpu_webhost, cpu_client, wall = process_cpu_seconds(pid), time.process_time(), time.perf_counter()

        loop_during: dict[str, Any] | None = None
        load_average_during = ""

        async def run_probe() -> None:
            nonlocal during
            during = await probe(probe_tab, server, plan.duration)

        async def run_loop() -> None:
            nonlocal loop_during, load_average_during
            loop_during = await webhost_loop(host, plan.duration)
            load_average_during = load_average()

        async with anyio.create_task_group() as tg:
            for tab in tabs:
                tg.start_soon(load, tab, server, plan.duration, loaded)
            tg.start_soon(run_probe)
            tg.start_soon(run_loop)
            tg.start_soon(loop_lag, plan.duration, client_lag)
        wall = time.perf_counter() - wall
        cpu_end = process_cpu_seconds(pid)
        webhost_cpu = None if cpu_end is None or cpu_webhost is None else (cpu_end - cpu_webhost) / wall
        client_cpu = (time.process_time() - cpu_client) / wall
        calls = len(loaded.echo) + len(loaded.failures)
        frames_per_call = (sum(t.frames for t in tabs) - frames0) / max(1, calls)
        processes_loaded = server_processes(pid)
        after = await probe(probe_tab, server, plan.baseline)
        rss_loaded = rss_kib(pid)
        print(f"[{kind}] done; closing the sessions", flush=True)
    people = plan.people + 1 if mode == "proxy" else 1
    return KindResult(
        kind,
        gc,
        load_average_during,
        loop_before,
        loop_during,
        mode,
        plan.sessions,
        people,
        before,
        during,
        after,
        loaded,
        client_lag,
        rss_before,
        rss_connected,
        rss_loaded,
        processes_connected,
        processes_loaded,
        connect_seconds,
        frames_per_call,
        calls / wall,
        webhost_cpu,
        client_cpu,
    )


# ---- printing -------------------------------------------------------------------------------------------------


def table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> None:
    widths = [max(len(line[i]) for line in [headers, *body]) for i in range(len(headers))]

    def fmt(cells: Sequence[str]) -> str:
        padded = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded)

    print(fmt(headers))
    print("  ".join("-" * w for w in widths))
    for line in body:
        print(fmt(line))


def describe_processes(by_person: dict[str, int]) -> str:
    if not by_person:
        return "0 basic.py processes in webhost's tree"
    if "?" in by_person:
        return f"{sum(by_person.values())} basic.py process(es), not grouped by person (no BENCH_PERSON)"
    counts = sorted(by_person.values())
    return f"{sum(counts)} basic.py process(es) for {len(by_person)} person(s): {counts[0]}-{counts[-1]} per person"


def report(result: KindResult) -> None:
    base_echo = Summary.of(result.before.echo) if result.before.echo else None
    base_info = Summary.of(result.before.info) if result.before.info else None
    rows: list[list[str]] = []

    def row(name: str, samples: list[float], failures: int, base: Summary | None) -> None:
        if not samples:
            rows.append([name, "0", "-", "-", "-", "-", "-", str(failures)])
            return
        s = Summary.of(samples)
        worst = max(samples) * 1000
        ratio = (
            "1.00x / 1.00x"
            if base is None or base is s
            else f"{s.median_ms / base.median_ms:.2f}x / {s.p99_ms / base.p99_ms:.2f}x"
        )
        rows.append(
            [
                name,
                str(s.n),
                f"{s.median_ms:.2f} ms",
                f"{s.p99_ms:.2f} ms",
                f"{worst:.2f} ms",
                ratio,
                f"{s.p99_ms - (base.p99_ms if base else 0):+.2f} ms",
                str(failures),
            ]
        )

    n = result.sessions
    row("echo, 1 session (baseline)", result.before.echo, 0, None)
    rows[-1][5], rows[-1][6] = "1.00x / 1.00x", "-"
    row(f"echo, {n} sessions at 1/s each", result.load.echo, len(result.load.failures), base_echo)
    row(f"echo, probe during the {n}", result.during.echo, 0, base_echo)
    row(f"echo, 1 session, {n} idle", result.after.echo, 0, base_echo)
    row("session/info, 1 session (baseline)", result.before.info, 0, None)
    rows[-1][5], rows[-1][6] = "1.00x / 1.00x", "-"
    row(f"session/info, probe during the {n}", result.during.info, 0, base_info)
    row(f"session/info, 1 session, {n} idle", result.after.info, 0, base_info)
    probe_failures = result.before.failures + result.during.failures + result.after.failures

    people = f"{result.people} people" if result.mode == "proxy" else "1 person (token mode)"
    print(
        f"\n{result.kind}, gc tuning {result.gc}: {n} sessions + 1 probe, {people}, connected in "
        f"{result.connect_seconds:.1f} s; {result.load_average or load_average()} at the end of the load"
    )
    table(["row", "n", "p50", "p99", "max", "ratio p50 / p99", "p99 - base p99", "failed"], rows)
    if probe_failures:
        print(f"probe failures: {len(probe_failures)} (first: {probe_failures[0]})")
    if result.load.failures:
        print(f"load failures: {len(result.load.failures)} (first: {result.load.failures[0]})")
    if result.load.echo:
        p99 = Summary.of(result.load.echo).p99_ms
        print(
            f"goal p99 < {GOAL_P99_MS:.0f} ms at {n} sessions: {p99:.1f} ms "
            f"({'met' if p99 < GOAL_P99_MS else 'not met'})"
        )
    if result.rss_before and result.rss_connected:
        per = (result.rss_connected - result.rss_before) / 1024 / n
        loaded = f", {result.rss_loaded / 1024:.1f} MB after the load" if result.rss_loaded else ""
        print(
            f"webhost RSS: {result.rss_before / 1024:.1f} MB with the probe, {result.rss_connected / 1024:.1f} MB "
            f"with {n} more sessions connected{loaded}: {per * 1024:.0f} KiB per added session "
            f"(goal <= {GOAL_RSS_MB:g} MB: {'met' if per <= GOAL_RSS_MB else 'not met'})"
        )
    print(
        f"server processes: connected: {describe_processes(result.processes_connected)}; "
        f"after the load: {describe_processes(result.processes_loaded)}"
    )
    for label, loop in (("probe alone", result.loop_before), (f"during the {n}", result.loop_during)):
        if loop is None:
            print(f"webhost event-loop lag, {label}: not measured (no GET /api/health/loop)")
            continue
        full = loop["gc"].get("2", {})
        young = sum(v["passes"] for k, v in loop["gc"].items() if k != "2")
        print(
            f"webhost event-loop lag, {label} ({loop['samples']} {loop['tickMs']:g} ms sleeps): p50 "
            f"{loop['p50Ms']:.2f} ms, p99 {loop['p99Ms']:.2f} ms, max {loop['maxMs']:.1f} ms; full gc passes: "
            f"{full.get('passes', 0)} (max {full.get('maxMs', 0):.1f} ms, total {full.get('totalMs', 0):.0f} ms), "
            f"young passes {young}; threshold {loop['gcThreshold']}, {loop['gcFrozen']} objects frozen"
        )
    if result.loop_during is not None:
        p99 = result.loop_during["p99Ms"]
        print(f"goal loop-lag p99 < {GOAL_P99_MS:.0f} ms: {p99:.1f} ms ({'met' if p99 < GOAL_P99_MS else 'not met'})")
    if result.client_lag:
        lag = Summary.of(result.client_lag)
        print(
            f"this process's own loop lag during the load (10 ms sleeps): p50 {lag.median_ms:.2f} ms, "
            f"p99 {lag.p99_ms:.2f} ms, max {max(result.client_lag) * 1000:.1f} ms"
        )
    webhost_cpu = "n/a" if result.webhost_cpu is None else f"{100 * result.webhost_cpu:.0f} %"
    print(
        f"during the load: {result.calls_per_second:.0f} calls/s completed (asked: {n}/s); CPU of one core: "
        f"webhost {webhost_cpu}, this process (the {n + 1} pages) {100 * result.client_cpu:.0f} %; "
        f"frames received per call: {result.frames_per_call:.1f} "
        "(a call's activity goes to its own tab)"
    )
    sys.stdout.flush()


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "sessions", extra=add_args)
    plan = Plan.of(args)
    print(f"sessions: {environment()}")
    print(
        f"plan: {plan.people} people x {plan.tabs} tabs = {plan.sessions} sessions (+1 probe), {plan.duration:g} s "
        f"of load per kind, baseline {plan.baseline:g} s before and after, kinds {','.join(plan.kinds)}"
    )
    choice = Choice("token" if plan.mode == "token" else "proxy")
    results: list[KindResult] = []
    for kind in plan.kinds:
        for gc in plan.gc:
            with contextlib.ExitStack() as stack:
                url = stack.enter_context(http_server()) if kind == "http" else None
                results.append(await run_kind(kind, plan, choice, url, gc))
    for result in results:
        report(result)
    print(f"\n{load_average()} at the end of the run")
    print(
        "ratio = this row's p50 / the baseline's p50, and p99 / p99 (the baseline is the probe alone, before "
        "the other sessions connect); p99 is nearest rank; session/info touches no MCP server, so its round "
        "trip under load is webhost's event-loop lag seen from outside"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except RpcFailed as exc:
        print(f"sessions: webhost refused a request: {exc}", file=sys.stderr)
        sys.exit(1)
