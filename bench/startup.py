"""Start-up: what `webhost` costs before it answers, against `python -c pass` measured in the same run.

Rows, each a fresh process, interleaved with the baseline (ABBA), wall time and the child's CPU time:

- `webhost --help`, `webhost check --help`;
- a configuration error (a file that is not JSON): one line on stderr, status 2;
- `webhost serve` (the embedded demo, a data directory made in the warm-up) until `GET /healthz` answers 200:
  every import, the database opened and migrated to head, both servers listening. Its CPU is the process's
  own up to that moment (/proc), then it is stopped.

The first three answer before the SDK, FastAPI, SQLAlchemy and uvicorn are imported (webhost/cli.py;
tests/unit/test_startup_imports.py checks which modules they load). Nothing is asserted.

    .venv/bin/python bench/startup.py [--quick] [--iterations N] [--warmup N]
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from _common import PYTHON, ROOT, environment, free_port, load_average, median, process_cpu_seconds

Run = Callable[[], tuple[float, float]]
"""One timed run: (wall seconds, CPU seconds of the child)."""

ENV = {name: value for name, value in os.environ.items() if not name.startswith("WEBHOST_")}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def command(args: list[str], status: int) -> Run:
    """A command that answers and exits with `status`."""

    def run() -> tuple[float, float]:
        cpu0, started = children_cpu(), time.perf_counter()
        done = subprocess.run(args, cwd=ROOT, env=ENV, capture_output=True, check=False)
        wall = time.perf_counter() - started
        if done.returncode != status:
            raise SystemExit(f"{' '.join(args)}: status {done.returncode}, not {status}:\n{done.stderr.decode()}")
        return wall, children_cpu() - cpu0

    return run


def serve(data_dir: Path) -> Run:
    """`webhost serve` until /healthz answers (polled every 5 ms), then stopped."""

    def run() -> tuple[float, float]:
        port = free_port()
        args = [PYTHON, "-m", "webhost", "serve", "--port", str(port), "--sandbox-port", str(free_port())]
        args += ["--data-dir", str(data_dir), "--log-level", "warning"]
        env = {**ENV, "WEBHOST_TOKEN": "t-" + secrets.token_urlsafe(16)}
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            with httpx.Client(timeout=5) as http:
                while True:
                    if proc.poll() is not None:
                        raise SystemExit(f"webhost serve exited ({proc.returncode}):\n{proc.stderr.read().decode()}")  # type: ignore[union-attr]
                    try:
                        if http.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                            break
                    except httpx.HTTPError:
                        pass
                    time.sleep(0.005)
            wall = time.perf_counter() - started
            cpu = process_cpu_seconds(proc.pid) or 0.0
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        return wall, cpu

    return run


def measure(name: str, row: Run, baseline: Run, *, iterations: int, warmup: int) -> list[str]:
    """`row` and the baseline interleaved ABBA; one printed line."""
    for _ in range(warmup):
        row()
        baseline()
    samples: dict[str, list[tuple[float, float]]] = {"row": [], "base": []}
    for index in range(iterations):
        order = ("row", "base") if index % 2 else ("base", "row")
        for side in order:
            samples[side].append((row if side == "row" else baseline)())
    wall, cpu = (median([s[i] for s in samples["row"]]) for i in (0, 1))
    base_wall, base_cpu = (median([s[i] for s in samples["base"]]) for i in (0, 1))
    return [
        name,
        str(iterations),
        f"{wall * 1000:.0f} ms",
        f"{cpu * 1000:.0f} ms",
        f"{base_wall * 1000:.0f} ms",
        f"{base_cpu * 1000:.0f} ms",
        f"{wall / base_wall:.1f}x",
        f"{cpu / base_cpu:.1f}x" if base_cpu > 0 else "n/a",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "startup").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: one run per side and row, no warm-up")
    parser.add_argument("--iterations", type=int, default=None, metavar="N", help="timed runs per side and row")
    parser.add_argument("--warmup", type=int, default=1, metavar="N", help="untimed runs per side first (default 1)")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.warmup = args.iterations or 1, 0
    print(f"startup: {environment()}")
    baseline = command([PYTHON, "-c", "pass"], 0)
    with tempfile.TemporaryDirectory(prefix="webhost-bench-") as tmp:
        bad = Path(tmp) / "bad.json"
        bad.write_text("{not json", encoding="utf-8")
        rows: list[tuple[str, Run, int]] = [
            ("webhost --help", command([PYTHON, "-m", "webhost", "--help"], 0), 20),
            ("webhost check --help", command([PYTHON, "-m", "webhost", "check", "--help"], 0), 20),
            ("a configuration error", command([PYTHON, "-m", "webhost", "serve", "--config", str(bad)], 2), 20),
            ("webhost serve to /healthz", serve(Path(tmp) / "data"), 8),
        ]
        table = []
        for name, run, default in rows:
            n = args.iterations or (max(3, default // 4) if args.quick else default)
            table.append(measure(name, run, baseline, iterations=n, warmup=args.warmup))
    headers = ["row", "n", "wall", "CPU", "python -c pass", "its CPU", "wall ratio", "CPU ratio"]
    widths = [max(len(line[i]) for line in [headers, *table]) for i in range(len(headers))]
    print()
    for line in [headers, ["-" * w for w in widths], *table]:
        print(
            "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
        )
    print("medians; CPU = the child's user + system time (serve: its own up to the first /healthz answer)")
    print(f"{load_average()} at the end of the run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
