"""glibc's mmap threshold, pinned by `webhost serve` (webhost/malloc.py): after one large block is freed, later
blocks of up to its size still go back to the kernel when freed, so one large piece of work (an image's pixels)
does not leave the next ones resident (bench/chat.py row 8). Run in fresh interpreters: the threshold is
per process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# After an 8 MiB block is freed, eight 1 MiB blocks are made and freed: how much of them stays resident (KiB).
PROBE = """
import sys
from webhost import malloc

def rss_kib() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")

print(malloc.pin_mmap_threshold() if sys.argv[1] == "pinned" else "-")
big = b"x" * (8 * 1024 * 1024)  # mapped (over the starting threshold), then freed: glibc raises its threshold
del big
before = rss_kib()
blocks = [b"x" * (1024 * 1024) for _ in range(8)]  # written: every page touched
del blocks
print(rss_kib() - before)
"""

glibc_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None, reason="glibc's allocator"
)


def resident_after(mode: str) -> tuple[str, int]:
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_MMAP_THRESHOLD_"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True, env=env, timeout=60
    ).stdout.split()
    return out[0], int(out[1])


@glibc_only
def test_freed_blocks_after_a_large_one_go_back_to_the_kernel_once_pinned() -> None:
    pinned, kept = resident_after("pinned")
    assert pinned == "True" and kept <= 1024
    # glibc's default, for contrast: the eight blocks came from the heap and stay resident after they are freed.
    _, kept = resident_after("default")
    assert kept >= 6 * 1024


@glibc_only
def test_an_operators_threshold_wins() -> None:
    probe = "import os; os.environ['MALLOC_MMAP_THRESHOLD_'] = '65536'; from webhost import malloc; "
    probe += "print(malloc.pin_mmap_threshold())"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"
