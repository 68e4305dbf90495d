"""glibc's allocator: freed memory given back to the kernel after a large, rare piece of work (issue 28).

glibc keeps what a thread frees in that thread's arena, and once a big block has been freed it serves blocks up to
that size from the arenas instead of mapping them, so the buffers of a rare large task (an attached image decoded
in a worker thread) stay resident after they are freed, where the event loop's thread cannot reuse them.
`give_back()` (`malloc_trim(0)`) returns the free pages of every arena. It took up to 15 ms on webhost's heap
(bench/chat.py row 8), so it follows work of that size, never each request. A no-op without glibc (musl, macOS).

glibc's mmap threshold is left as it is: pinning it (`mallopt(M_MMAP_THRESHOLD, 128 KiB)`, tried at stop 36) made
every later large buffer go back to the kernel and attaching and sending an image about 0.1x lighter, but relaying
each 30 MB result 40-60 % slower (its buffers mapped and faulted in anew each time; bench/big_stall.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes  # here: most processes never give anything back

    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return None
    return trim


def give_back() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
