"""The private member under webhost's stdio transport: the event loop's subprocess transport of a server."""

from __future__ import annotations

from contextlib import suppress

from anyio.abc import Process

__all__ = ["close_subprocess_transport"]


def close_subprocess_transport(process: Process) -> None:
    """Close asyncio's subprocess transport, which a descendant holding a pipe end would otherwise keep open.

    Needs: a server's pipes let go of at shutdown even when a process that outlived the kill still holds
    one, so the stdio transport's tasks end (`upstream/stdio.py`, `sdk_workarounds.py` item 1). A no-op on
    trio, and duck-typed for uvloop, whose transport is not an asyncio one.
    Private: anyio's `Process._process` and the loop's `_transport` under it (not the SDK's, but the same
    kind of reach, so it lives here).
    Public hook that would replace it: an `aclose` on anyio's `Process` that also closes the loop's
    transport, or an SDK stdio client with a linear reader and a group kill (then webhost would not need its
    own transport at all).
    """
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):  # <=3.12 can raise it re-killing a setuid child
            close()
