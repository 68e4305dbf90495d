"""What the stdio supervisor (webhost/upstream/shim.py) costs in memory, against a bare `python -I -S` in the same run.

Each stdio server runs under one shim process (issue 24 item 21: no orphan after a SIGKILLed webhost). The shim
is an interpreter started with `-I -S`, so most of what it maps is the interpreter's own shared pages. Its own
cost is its private memory: RssAnon, and PSS (shared pages divided among the processes mapping them). The
baseline is the floor any Python supervisor pays: `python -I -S -c "sleep"`; the difference is the shim's
modules and state. Linux only (/proc). Nothing is asserted.

    .venv/bin/python bench/shim_memory.py [--samples N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

SHIM = Path(__file__).resolve().parent.parent / "webhost" / "upstream" / "shim.py"
SETTLE_SECONDS = 0.5  # for the interpreter to finish starting (what is mapped then stays)


def private_kib(pid: int) -> tuple[int, int]:
    """RssAnon and PSS of one process, in KiB."""
    anon = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            anon = int(line.split()[1])
    pss = 0
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            pss = int(line.split()[1])
    return anon, pss


def measure_baseline() -> tuple[int, int]:
    process = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(SETTLE_SECONDS)
        return private_kib(process.pid)
    finally:
        process.kill()
        process.wait()


def measure_shim() -> tuple[int, int]:
    status_read, status_write = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", str(SHIM), str(status_write), str(os.getpid()), "1", "sleep", "60"],
        pass_fds=(status_write,),
    )
    os.close(status_write)
    try:
        report = os.read(status_read, 64).decode()  # "0 PID": the server started, the shim is settled in its loop
        if not report.startswith("0 "):
            raise SystemExit(f"the shim could not start sleep: {report}")
        time.sleep(SETTLE_SECONDS)
        return private_kib(process.pid)
    finally:
        os.close(status_read)
        process.terminate()
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: one sample each")
    args = parser.parse_args()
    if args.quick:
        args.samples = 1
    rows: list[tuple[str, tuple[int, int]]] = []
    for _ in range(args.samples):  # interleaved, so both see the same machine
        rows.append(("baseline", measure_baseline()))
        rows.append(("shim", measure_shim()))

    def median(name: str, index: int) -> int:
        values = sorted(value[index] for label, value in rows if label == name)
        return values[len(values) // 2]

    base_anon, base_pss = median("baseline", 0), median("baseline", 1)
    shim_anon, shim_pss = median("shim", 0), median("shim", 1)
    print(f"{'':28}{'RssAnon':>12}{'PSS':>12}")
    print(f"{'python -I -S (baseline)':28}{base_anon:>9} KiB{base_pss:>9} KiB")
    print(f"{'shim.py (supervising sleep)':28}{shim_anon:>9} KiB{shim_pss:>9} KiB")
    print(f"{'ratio shim / baseline':28}{shim_anon / base_anon:>12.2f}{shim_pss / base_pss:>12.2f}")
    print(f"{'shim above the floor':28}{shim_anon - base_anon:>9} KiB{shim_pss - base_pss:>9} KiB")


if __name__ == "__main__":
    main()
