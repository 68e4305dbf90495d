"""glibc's allocator: freed memory given back to the kernel after a large, rare piece of work (issue 28).

glibc keeps what a thread frees in that thread's arena, and once a big block has been freed it serves blocks up to
that size from the arenas instead of mapping them, so the buffers of a rare large task (an attached image decoded
in a worker thread) stay resident after they are freed, where the event loop's thread cannot reuse them.
`give_back()` (`malloc_trim(0)`) returns the free pages of every arena. It took up to 15 ms on webhost's heap
(bench/chat.py row 8), so it follows work of that size, never each request. A no-op without glibc (musl, macOS).

`webhost serve` also pins glibc's mmap threshold (`pin_mmap_threshold`, once at start). By default glibc raises it
to the size of each large block freed (up to 32 MiB), so after one large piece of work (an image's pixels, a big
result) every later block of up to that size is served from the arenas and stays resident once freed: sending a
5 MB image after attaching it raised webhost's peak by 2.5x the file where the attach alone took 1.9x (bench/chat.py
row 8). Pinned at glibc's own starting value (128 KiB), a block that large is mapped and unmapped as it is made
and freed, whatever came before. An operator's `MALLOC_MMAP_THRESHOLD_` wins (glibc read it already).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

M_MMAP_THRESHOLD = -3  # mallopt's parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024  # glibc's default starting value


@functools.cache
def _libc(name: str) -> Callable[..., int] | None:
    import ctypes  # here: tests and tools that import webhost never call into the C library

    try:
        found: Any = getattr(ctypes.CDLL(None), name)  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return None
    return found  # type: ignore[no-any-return]


def give_back() -> None:
    trim = _libc("malloc_trim")
    if trim is not None:
        trim(0)


def pin_mmap_threshold() -> bool:
    """Blocks of 128 KiB and more mapped on their own, whatever was freed before; whether it was set."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    mallopt = _libc("mallopt")
    return mallopt is not None and mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
