"""One replica against two behind nginx, in one run: the same session load, throughput, p50, p99 and the ratio.

The deployment of docs/deploy.md on loopback (tests/support/team.py): a real PostgreSQL, two `webhost serve`
replicas sharing it and one secret, Debian's nginx with the shipped deploy/webhost.conf.template, and one
shared Streamable HTTP server (`tests/servers/basic.py --http PORT`) that both replicas call. Proxy mode
(`X-Forwarded-Email: personN@example.com` on each handshake), so nginx's sticky hash spreads the people
over the replicas the way session cookies do in oidc mode.

Two topologies, each behind the same nginx on the same port: **1 replica** (nginx lists only the first;
the second idles) and **2 replicas**. For each, the sessions of bench/sessions.py (`--people` x `--tabs`
WebSockets, its `Tab` and `load`, imported, not copied) run two phases:

1. **paced**: every session calls `echo` once a second for `--duration` s (sessions.py's load): p50 and p99
   at an ordinary load;
2. **capacity**: every session calls `echo` back to back for `--duration` s: calls/s completed (the
   throughput), p50 and p99 at saturation.

The goal (issue 10): two replicas give at least 1.7x the throughput of one, with p99 under 50 ms. On a
machine with two cores the load generator, nginx, PostgreSQL and the MCP server share those cores with
the replicas; the load average is printed before and after. Nothing is asserted.

    .venv/bin/python bench/replicas.py [--people N] [--tabs N] [--duration S] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio
from _common import Webhost, environment, load_average, median, parse_args, percentile, process_cpu_seconds
from sessions import (
    GOAL_P99_MS,
    PROXY_AUTH,
    Samples,
    Tab,
    descendants,
    http_server,
    load,
    open_tab,
    person_email,
    timed,
)

from tests.support.postgres import running_postgres
from tests.support.process import free_port
from tests.support.team import Nginx, run_nginx, start_replicas

GOAL_RATIO = 1.7
HANDSHAKES_AT_ONCE = 10


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--people", type=int, default=None, metavar="N", help="people (default 40, --quick 2)")
    parser.add_argument("--tabs", type=int, default=None, metavar="N", help="tabs per person (default 2)")
    parser.add_argument(
        "--duration", type=float, default=None, metavar="S", help="seconds per phase (default 15, --quick 1)"
    )


@dataclass
class Phase:
    name: str
    seconds: float
    samples: Samples
    cpu: list[float]  # CPU seconds each replica spent in the phase
    others: dict[str, float]  # the same for the load generator, nginx and the MCP server

    @property
    def throughput(self) -> float:
        return len(self.samples.echo) / self.seconds

    def cells(self) -> list[str]:
        echo = self.samples.echo
        if not echo:
            return [self.name, "0", "-", "-", str(len(self.samples.failures)), "-", "-"]
        cpu = " + ".join(f"{c:.1f}" for c in self.cpu)
        others = ", ".join(f"{name} {seconds:.1f}" for name, seconds in self.others.items())
        return [
            self.name,
            f"{self.throughput:.0f}",
            f"{median(echo) * 1000:.1f}",
            f"{percentile(echo, 0.99) * 1000:.1f}",
            str(len(self.samples.failures)),
            cpu,
            others,
        ]


async def capacity(tab: Tab, server: str, seconds: float, out: Samples) -> None:
    """One session calling `echo` back to back: the most it gets through."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        await timed(out.echo, out.failures, lambda: tab.echo(server))


@contextlib.asynccontextmanager
async def open_tabs(front: Webhost, people: int, tabs: int) -> AsyncIterator[list[Tab]]:
    """people x tabs WebSockets through nginx, a few handshakes at a time."""
    async with contextlib.AsyncExitStack() as stack:
        opened: list[Tab] = []
        first_tab: dict[str, Tab] = {}  # tabs open in any order: one of each person's, whose connection they share
        limit = anyio.Semaphore(HANDSHAKES_AT_ONCE)

        async def one(person: str) -> None:
            async with limit:
                tab = await stack.enter_async_context(open_tab(front, person, compression=False))
                opened.append(tab)
                first_tab.setdefault(person, tab)

        async with anyio.create_task_group() as group:
            for index in range(people):
                for _ in range(tabs):
                    group.start_soon(one, person_email(index))
        await asyncio.gather(*(tab.wait_connected("basic", 60) for tab in first_tab.values()))
        yield opened


def cpu_of(pids: Sequence[int]) -> float:
    return sum(process_cpu_seconds(pid) or 0.0 for pid in pids)


def others(nginx: Nginx) -> dict[str, list[int]]:
    """Where the rest of the CPU goes: this process (the pages), nginx (master and worker), the MCP server."""
    mcp = [pid for pid in descendants(os.getpid()) if "basic.py --http" in _cmdline(pid)]
    return {"client": [os.getpid()], "nginx": [nginx.proc.pid, *descendants(nginx.proc.pid)], "MCP server": mcp}


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


async def measure(
    front: Webhost, pids: Sequence[int], rest: dict[str, list[int]], people: int, tabs: int, seconds: float
) -> list[Phase]:
    phases = []
    async with open_tabs(front, people, tabs) as opened:
        for tab in opened[:people]:  # warm: one call from as many tabs as there are people
            await tab.echo("basic")
        for name, run in (("paced (1 call/s each)", load), ("capacity (back to back)", capacity)):
            out = Samples()
            before = [process_cpu_seconds(pid) or 0.0 for pid in pids]
            before_rest = {name: cpu_of(group) for name, group in rest.items()}
            started = time.perf_counter()
            async with anyio.create_task_group() as group:
                for tab in opened:
                    group.start_soon(run, tab, "basic", seconds, out)
            elapsed = time.perf_counter() - started
            after = [process_cpu_seconds(pid) or 0.0 for pid in pids]
            spent = {name: cpu_of(group) - before_rest[name] for name, group in rest.items()}
            phases.append(Phase(name, elapsed, out, [b - a for a, b in zip(before, after, strict=True)], spent))
    return phases


def table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in [headers, *body]) for i in range(len(headers))]
    for row in [headers, ["-" * w for w in widths], *body]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def spread(nginx: Nginx, ports: Sequence[int]) -> str:
    counts = nginx.upstreams("/ws")
    return ", ".join(f"replica {i + 1}: {counts.get(f'127.0.0.1:{port}', 0)} sockets" for i, port in enumerate(ports))


async def main() -> int:
    args = parse_args(__doc__.splitlines()[0] if __doc__ else "replicas", extra=add_args)
    people = args.people if args.people is not None else (2 if args.quick else 40)
    tabs = args.tabs if args.tabs is not None else 2
    seconds = args.duration if args.duration is not None else (1.0 if args.quick else 15.0)
    print(f"replicas: {environment()}")
    print(f"plan: {people} people x {tabs} tabs = {people * tabs} sessions through nginx, {seconds:g} s per phase")
    results: dict[str, list[Phase]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="webhost-bench-replicas-") as tmp,
        running_postgres() as postgres,
        http_server() as url,
    ):
        port = free_port()
        servers = {"basic": {"type": "http", "url": url}}
        with start_replicas(
            Path(tmp), postgres.new_database(), servers, port, webhost_options={"auth": PROXY_AUTH}, log_level="warning"
        ) as (replicas, token, _secret):
            front = dataclasses.replace(replicas[0], port=port, token=token)  # nginx's address
            pids = [replica.proc.pid for replica in replicas]
            for label, members in (("1 replica", replicas[:1]), ("2 replicas", replicas)):
                pages = [r.port for r in members]
                with run_nginx(pages, [r.sandbox_port for r in members], port=port) as nginx:
                    results[label] = await measure(front, pids, others(nginx), people, tabs, seconds)
                    print(f"{label}: {spread(nginx, pages)}")
    headers = ["phase", "calls/s", "p50 ms", "p99 ms", "failed", "replica CPU s", "other CPU s"]
    for label, phases in results.items():
        print(f"\n{label}")
        table(headers, [phase.cells() for phase in phases])
    one, two = results["1 replica"][1], results["2 replicas"][1]
    ratio = two.throughput / one.throughput if one.throughput else float("nan")
    p99 = percentile(two.samples.echo, 0.99) * 1000 if two.samples.echo else float("nan")
    paced_p99 = percentile(results["2 replicas"][0].samples.echo, 0.99) * 1000
    print(
        f"\nthroughput 1 -> 2 replicas: {one.throughput:.0f} -> {two.throughput:.0f} calls/s = {ratio:.2f}x "
        f"(goal >= {GOAL_RATIO}x); 2 replicas p99 paced {paced_p99:.1f} ms, at capacity {p99:.1f} ms "
        f"(goal < {GOAL_P99_MS:.0f} ms)"
    )
    print(f"{load_average()} at the end of the run, {os.cpu_count()} core(s) shared by everything above")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
