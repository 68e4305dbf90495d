"""The event loop `webhost serve` runs on: uvloop's when it is installed (`--event-loop`), else asyncio's.

On uvloop each tool call's hop through webhost costs less (bench/README.md). Nothing in webhost depends on
which loop runs, with one exception made here: host names are resolved as asyncio resolves them, by the C
library's `getaddrinfo` in a worker thread (`loop.getaddrinfo`, which anyio and so httpx call, and a
connection opened by name, as asyncpg opens one). uvloop's own resolver (libuv's) failed now and then to resolve
`localhost` ("Name or service not known") while webhost connected to a remote server on this machine, where
the C library in a thread never did; a connection that fails for no reason costs more than the lookup saves.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from collections.abc import Callable
from typing import Any


class LoopUnavailable(Exception):
    """The event loop asked for cannot be had here; the message says why."""


def event_loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes the loop for `choice` (`auto`, `uvloop`, `asyncio`); None: asyncio's own."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise LoopUnavailable("uvloop is not installed (pip install uvloop; it does not run on Windows)") from None
        return None

    class Loop(uvloop.Loop):
        async def getaddrinfo(
            self, host: Any, port: Any, *, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0
        ) -> list[Any]:
            lookup = functools.partial(socket.getaddrinfo, host, port, family, type, proto, flags)
            return await self.run_in_executor(None, lookup)

        async def create_connection(
            self, protocol_factory: Any, host: Any = None, port: Any = None, **options: Any
        ) -> Any:
            """A connection by name (asyncpg's to PostgreSQL) resolves the name as above, then connects to each
            address in turn as asyncio does (without its "happy eyeballs" racing, which nothing here asks for)."""
            if host is None or options.get("sock") is not None or _is_address(host):
                return await super().create_connection(protocol_factory, host, port, **options)
            family, proto, flags = options.pop("family", 0), options.pop("proto", 0), options.pop("flags", 0)
            infos = await self.getaddrinfo(host, port, family=family, type=socket.SOCK_STREAM, proto=proto, flags=flags)
            if options.get("ssl") and options.get("server_hostname") is None:
                options["server_hostname"] = host  # the certificate is checked against the name, not the address
            if not infos:
                raise OSError(f"getaddrinfo() found no address for {host!r}")
            errors: list[OSError] = []
            for info_family, _, info_proto, _, address in infos:
                try:
                    return await super().create_connection(
                        protocol_factory, address[0], address[1], family=info_family, proto=info_proto, **options
                    )
                except OSError as exc:
                    errors.append(exc)
            if len(errors) == 1:
                raise errors[0]
            raise OSError(f"Multiple exceptions: {', '.join(str(exc) for exc in errors)}")

    return Loop


def _is_address(host: Any) -> bool:
    try:
        ipaddress.ip_address(host.decode() if isinstance(host, bytes) else host)
    except ValueError:
        return False
    return True
