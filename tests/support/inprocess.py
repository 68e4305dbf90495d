"""webhost in-process: `create_app` driven over ASGI, its servers reached over in-memory streams.

No subprocess and no socket: the host app runs in the test's event loop, the page's WebSocket is
an ASGI WebSocket driven directly, HTTP routes go through httpx's ASGI transport, and each
configured server is an SDK `MCPServer` object connected through the SDK's in-memory transport.
This is what makes the session, handlers, policy and brokers fast to test; the subprocess suites
stay for what crosses a process or a browser.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client._memory import InMemoryTransport
from mcp.server import MCPServer
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, JSONRPCRequest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.support.chat_options import scripted_chat
from tests.support.process import SERVERS, WsClient, notifications_of
from webhost.app import create_app
from webhost.auth import AuthGate
from webhost.config import ServerConfig, load_config
from webhost.people import Person, attach
from webhost.settings import Settings
from webhost.upstream.client_factory import MAX_MESSAGE, Transport, TransportFactory, default_transport
from webhost.upstream.stderr import StderrPipe

TOKEN = "t-in-process-token"
HOST = "127.0.0.1:8700"
ORIGIN = f"http://{HOST}"
SECRET = b"in-process-secret-0123456789abcdef0123456789abcdef"
PERSON_HEADER = "x-test-person"


def person_header(person: Person) -> dict[str, str]:
    """The test-only header `ChosenPeople` reads: `id|name|role`."""
    return {PERSON_HEADER: f"{person.id}|{person.name}|{person.role}"}


class ChosenPeople:
    """Tests only, never in webhost: behind the gate (so the token is still required), a request carrying
    `x-test-person: id|name|role` belongs to that person instead of the token's. Lets two people share
    one in-process host before a sign-in mode does it for real."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            raw = dict(scope.get("headers", [])).get(PERSON_HEADER.encode())
            if raw is not None:
                person_id, name, role = raw.decode().split("|")
                attach(scope, Person(id=person_id, name=name, role="admin" if role == "admin" else "member"))
        await self.app(scope, receive, send)


def sdk_server(name: str) -> MCPServer:
    """The `mcp` object of one of our test servers (`tests/servers/NAME.py`), imported, not spawned."""
    if str(SERVERS) not in sys.path:
        sys.path.insert(0, str(SERVERS))
    module = __import__(name)
    server: MCPServer = module.mcp
    return server


def memory_transports(servers: Mapping[str, MCPServer], *, legacy: frozenset[str] = frozenset()) -> TransportFactory:
    """A transport factory: each configured server name is served by the given in-process server.

    Servers named in `legacy` are reached as a pre-2026 server is: `server/discover` is answered
    "method not found", so the client falls back to the `initialize` handshake (the SDK's servers
    speak both eras and pick by what the client opens with).
    """

    def factory(config: ServerConfig, stderr: StderrPipe, on_exit: Any, *, max_message: int = MAX_MESSAGE) -> Transport:
        if config.name not in servers:  # an entry with no in-process server: its real transport
            return default_transport(config, stderr, on_exit, max_message=max_message)
        inner = InMemoryTransport(servers[config.name])
        transport: Transport = _without_discover(inner) if config.name in legacy else inner
        return transport

    return factory


@asynccontextmanager
async def _without_discover(inner: InMemoryTransport) -> AsyncIterator[Any]:
    async with inner as (server_out, server_in):
        to_client, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](math.inf)

        async def pump() -> None:
            async with to_client:
                async for item in server_out:
                    await to_client.send(item)

        class Write:
            async def send(self, item: SessionMessage) -> None:
                message = item.message
                if isinstance(message, JSONRPCRequest) and message.method == "server/discover":
                    error = ErrorData(code=-32601, message="Method not found")
                    await to_client.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=message.id, error=error)))
                    return
                await server_in.send(item)

            async def aclose(self) -> None:
                await server_in.aclose()

            async def __aenter__(self) -> Write:
                return self

            async def __aexit__(self, *exc: object) -> None:
                await self.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            yield from_server, Write()
            tg.cancel_scope.cancel()


class AsgiWsClient(WsClient):
    """The same JSON-RPC client as the subprocess suites use, over an ASGI WebSocket in this process."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        headers: Mapping[str, str | None] | None = None,
        buffer: float = math.inf,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        query: str = "",
    ) -> None:
        super().__init__(url="ws://" + HOST + "/ws", token=TOKEN, origin=ORIGIN)
        self._query = query
        base = {"host": HOST, "origin": ORIGIN, "authorization": f"Bearer {TOKEN}"}
        self._headers = {**base, **(headers or {})}
        self._app = app
        self._client = client
        self._to_app: MemoryObjectSendStream[Message]
        self._from_client: MemoryObjectReceiveStream[Message]
        self._to_app, self._from_client = anyio.create_memory_object_stream[Message](math.inf)
        self._to_client: MemoryObjectSendStream[Message]
        self._from_app: MemoryObjectReceiveStream[Message]
        self._to_client, self._from_app = anyio.create_memory_object_stream[Message](buffer)
        self.accepted: bool | None = None
        self.close_code: int | None = None
        self.close_reason: str | None = None
        self.app_done = anyio.Event()
        self.closed = anyio.Event()  # webhost closed the socket (close_code and close_reason say how)
        self.reading = anyio.Event()  # cleared by pause(): a tab that stops reading (with buffer=0, webhost blocks)
        self.reading.set()
        self.received: list[str] = []  # every text frame webhost sent this tab, as sent

    async def __aenter__(self) -> AsgiWsClient:
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "scheme": "ws",
            "path": "/ws",
            "raw_path": b"/ws",
            "query_string": self._query.encode(),
            "root_path": "",
            "client": self._client,
            "server": ("127.0.0.1", 8700),
            "subprotocols": [],
            "state": {},
            "headers": [(k.lower().encode(), v.encode()) for k, v in self._headers.items() if v is not None],
        }
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._run_app, scope)
        await self._to_app.send({"type": "websocket.connect"})
        first = await self._from_app.receive()
        if first["type"] != "websocket.accept":
            self.accepted = False
            self.close_code = first.get("code") or first.get("status")
            await self.__aexit__()
            raise ConnectionRefusedError(f"the WebSocket was refused: {first}")
        self.accepted = True
        self._tg.start_soon(self._reader)
        return self

    async def _run_app(self, scope: dict[str, Any]) -> None:
        try:
            await self._app(scope, self._from_client.receive, self._to_client.send)
        finally:
            self.app_done.set()
            self._to_client.close()

    async def __aexit__(self, *exc: object) -> None:
        self.resume()  # a paused tab reads again: what webhost still sends does not hold its shutdown up
        try:
            await self._to_app.send({"type": "websocket.disconnect", "code": 1000})
        except anyio.BrokenResourceError:
            pass
        # Until webhost has ended the socket's session, however long a busy machine takes: cut short, the session's
        # shielded clean-up would wait forever for the tasks cancelled under it (a hang at the event loop's close).
        await self.app_done.wait()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    def pause(self) -> None:
        self.reading = anyio.Event()

    def resume(self) -> None:
        self.reading.set()

    async def _reader(self) -> None:
        while True:
            await self.reading.wait()
            try:
                message = await self._from_app.receive()
            except anyio.EndOfStream:
                break
            if message["type"] == "websocket.close":
                self.close_code = message.get("code")
                self.close_reason = message.get("reason")
                self.closed.set()
                break
            text = message.get("text")
            if text is None:
                continue
            self.received.append(text)
            self._deliver(json.loads(text))

    def _deliver(self, message: dict[str, Any]) -> None:
        if "id" in message and ("result" in message or "error" in message):
            self._responses[message["id"]] = message
        else:
            self.notifications.extend(notifications_of(message))
        self._changed.set()
        self._changed = anyio.Event()

    async def send_raw(self, text: str) -> None:
        await self._to_app.send({"type": "websocket.receive", "text": text})

    async def send_bytes(self, data: bytes) -> None:
        """A binary frame (the page never sends one; the backend must still answer it sanely)."""
        await self._to_app.send({"type": "websocket.receive", "bytes": data})


class InProcessHost:
    """One `create_app` with its configuration, HTTP client and as many tabs as a test opens."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    def http(
        self,
        *,
        token: str | None = TOKEN,
        headers: Mapping[str, str] | None = None,
        person: Person | None = None,
        client: tuple[str, int] = ("127.0.0.1", 123),
    ) -> httpx.AsyncClient:
        """An HTTP client; `person` (with `in_process_host(..., people=True)`) makes its requests that person's;
        `client` is the address webhost sees the request come from (proxy mode)."""
        auth = {"authorization": f"Bearer {token}"} if token else {}
        chosen = person_header(person) if person else {}
        return httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app, client=client),
            base_url=ORIGIN,
            headers={**auth, **chosen, **(headers or {})},
        )

    def tab(
        self,
        *,
        buffer: float = math.inf,
        person: Person | None = None,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        query: str = "",
        **headers: str | None,
    ) -> AsgiWsClient:
        """A page's WebSocket; `person` (with `people=True`) makes it that person's; a header given as None is
        left out (e.g. `authorization=None`); `query` is the URL's query (`parts=1`, as the page opens it)."""
        chosen: dict[str, str | None] = dict(person_header(person)) if person else {}
        return AsgiWsClient(self.app, headers={**chosen, **headers}, buffer=buffer, client=client, query=query)


@asynccontextmanager
async def in_process_host(
    tmp_path: Path,
    servers: Mapping[str, MCPServer],
    *,
    entries: Mapping[str, dict[str, Any]] | None = None,
    webhost_options: dict[str, Any] | None = None,
    legacy: frozenset[str] = frozenset(),
    broken: Mapping[str, Callable[[], Transport]] | None = None,
    connects: list[ServerConfig] | None = None,
    people: bool = False,
    inputs: list[dict[str, Any]] | None = None,
    clock: Callable[[], float] | None = None,
    database_url: str | None = None,
) -> AsyncIterator[InProcessHost]:
    """A host whose configured servers are the given in-process servers (entries default to stdio stubs).

    `broken` adds servers reached through a transport the test builds (one that fails, hangs or ends).
    An entry named in `entries` but not in `servers` is reached over its real transport (an HTTP URL).
    `connects`, when given, receives the entry of every connection opened (as the person's connection sees it).
    `people=True` lets each tab and HTTP client choose its person (`host.tab(person=...)`, `ChosenPeople`).
    `inputs` is the configuration's top-level "inputs" list (values each person provides).
    `database_url` is WEBHOST_DATABASE_URL (tests/conftest.py's `database_url` gives one per engine); without
    it, SQLite in the data folder.
    """
    names = [
        *servers,
        *(broken or {}),
        *(name for name in entries or {} if name not in servers and name not in (broken or {})),
    ]
    document: dict[str, Any] = {
        "mcpServers": {name: (entries or {}).get(name, {"command": "in-process"}) for name in names}
    }
    if webhost_options:
        document["webhost"] = scripted_chat(webhost_options)
    if inputs is not None:
        document["inputs"] = inputs
    path = tmp_path / "webhost.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    config = load_config(path)
    settings = Settings(token=TOKEN, data_dir=tmp_path / "data", database_url=database_url)
    memory = memory_transports(servers, legacy=legacy)

    def factory(config: ServerConfig, stderr: StderrPipe, on_exit: Any, *, max_message: int = MAX_MESSAGE) -> Transport:
        if connects is not None:
            connects.append(config)
        if broken and config.name in broken:
            return broken[config.name]()
        return memory(config, stderr, on_exit, max_message=max_message)

    app = create_app(
        settings, config, secret=SECRET, transport_factory=factory, **({"clock": clock} if clock is not None else {})
    )
    if people:
        gate = _gate_of(app)
        gate.app = ChosenPeople(gate.app)
    host = InProcessHost(app, settings)
    async with _lifespan(app):
        yield host


def _gate_of(app: Any) -> AuthGate:
    """The access gate inside the host app's wrappers (the chosen person goes right behind it)."""
    layer = app
    for _ in range(5):
        if isinstance(layer, AuthGate):
            return layer
        layer = getattr(layer, "app", None)
    raise AssertionError("no AuthGate found in the host app")


@asynccontextmanager
async def _lifespan(app: ASGIApp) -> AsyncIterator[None]:
    """Run the app's ASGI lifespan (startup before the test, shutdown after: sessions closed, audit closed)."""
    to_app, from_test = anyio.create_memory_object_stream[Message](math.inf)
    to_test, from_app = anyio.create_memory_object_stream[Message](math.inf)
    async with anyio.create_task_group() as tg:
        scope: dict[str, Any] = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}

        async def run() -> None:
            await app(scope, from_test.receive, to_test.send)

        tg.start_soon(run)
        await to_app.send({"type": "lifespan.startup"})
        started = await from_app.receive()
        assert started["type"] == "lifespan.startup.complete", started
        try:
            yield
        finally:
            await to_app.send({"type": "lifespan.shutdown"})
            await from_app.receive()  # the whole shutdown, however long it takes (the reason is above, in __aexit__)
            tg.cancel_scope.cancel()
