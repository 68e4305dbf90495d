"""A conformance-suite client: drives one scenario server through webhost (as the page does) or the bare SDK.

    python tools/conformance/client.py --via webhost|sdk URL

The suite (`conformance client --command ...`) appends the scenario server's URL as the last argument and
sets MCP_CONFORMANCE_SCENARIO and, for some scenarios, MCP_CONFORMANCE_CONTEXT (JSON, maybe `toolCalls`).
Both sides do the same work: list tools and call each (with the context's arguments, else arguments built
from the input schema), list and read resources, list and get prompts, and accept every elicitation with the
defaults its schema shows. Exit 0 when the walk finished, 1 with the error on stderr otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent.parent
STEP_TIMEOUT = 20.0
ECHO_TOOL = "json_schema_echo"


def log(text: str) -> None:
    print(f"[driver] {text}", file=sys.stderr, flush=True)


# ---- what both sides do ---------------------------------------------------------------------------------


def value_for(prop: dict[str, Any]) -> Any:
    """A value a JSON schema property accepts: its default, else its first enum/const, else one of its type."""
    if "default" in prop:
        return prop["default"]
    if "const" in prop:
        return prop["const"]
    if prop.get("enum"):
        return prop["enum"][0]
    for key in ("oneOf", "anyOf"):
        if prop.get(key):
            first = prop[key][0]
            return first["const"] if "const" in first else value_for(first)
    kind = prop.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return arguments_for(prop)
    return {"string": "test", "integer": 1, "number": 1.5, "boolean": True, "array": [], "null": None}.get(kind, "test")


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool's input schema: every required property, and every one with a default."""
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {name: value_for(prop) for name, prop in props.items() if name in required or "default" in prop}


def elicitation_content(schema: dict[str, Any]) -> dict[str, Any]:
    """Accept with what the form shows: each property's default (required ones get a value of their type)."""
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {name: value_for(prop) for name, prop in props.items() if "default" in prop or name in required}


class Side(Protocol):
    async def list_tools(self) -> list[dict[str, Any]]: ...
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any: ...
    async def list_resources(self) -> list[dict[str, Any]]: ...
    async def read_resource(self, uri: str) -> Any: ...
    async def list_prompts(self) -> list[dict[str, Any]]: ...
    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any: ...
    def capabilities(self) -> dict[str, Any]: ...
    def server_refused(self, exc: Exception) -> bool: ...


async def step(what: str, run: Awaitable[Any]) -> Any:
    try:
        return await asyncio.wait_for(run, STEP_TIMEOUT)
    except TimeoutError as exc:
        raise RuntimeError(f"{what}: no answer in {STEP_TIMEOUT:.0f} s") from exc


async def walk(side: Side) -> list[str]:
    """Exercise what the server offers; return the errors met (a failed call does not stop the walk)."""
    errors: list[str] = []
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    caps = side.capabilities()
    tools = await step("tools/list", side.list_tools()) if "tools" in caps or not caps else []
    log(f"tools: {[t['name'] for t in tools]}")
    calls: list[tuple[str, dict[str, Any]]]
    if context.get("toolCalls"):
        calls = [(c["name"], c.get("arguments") or {}) for c in context["toolCalls"]]
    else:
        calls = [(t["name"], arguments_for(t.get("inputSchema") or {})) for t in tools]
    names = [t["name"] for t in tools]
    if ECHO_TOOL in names and len(names) > 1:
        # json-schema-2020-12-preservation: pass the focal tool's inputSchema, as listed, back through the echo tool.
        focal = next(t for t in tools if t["name"] != ECHO_TOOL)
        calls = [
            (name, {"schema": focal.get("inputSchema") or {}} if name == ECHO_TOOL else arguments)
            for name, arguments in calls
        ]
    for name, arguments in calls:
        try:
            result = await step(f"tools/call {name}", side.call_tool(name, arguments))
            log(f"tools/call {name} {json.dumps(arguments)[:200]} -> {json.dumps(result, default=str)[:300]}")
        except Exception as exc:
            text = f"tools/call {name}: {type(exc).__name__}: {exc}"
            if side.server_refused(exc):
                # The server answered with a JSON-RPC error or an invalid result (sep-2322's
                # test_mrtr_no_result_type sends one on purpose): the client's part was done; noted, not failed.
                log(f"noted (the server's answer): {text}")
            else:
                errors.append(text)
                log(errors[-1])
    if "resources" in caps:
        try:
            for resource in await step("resources/list", side.list_resources()):
                await step(f"resources/read {resource['uri']}", side.read_resource(resource["uri"]))
        except Exception as exc:
            errors.append(f"resources: {type(exc).__name__}: {exc}")
    if "prompts" in caps:
        try:
            for prompt in await step("prompts/list", side.list_prompts()):
                arguments = {a["name"]: "test" for a in prompt.get("arguments") or [] if a.get("required")}
                await step(f"prompts/get {prompt['name']}", side.get_prompt(prompt["name"], arguments))
        except Exception as exc:
            errors.append(f"prompts: {type(exc).__name__}: {exc}")
    return errors


# ---- the bare SDK ---------------------------------------------------------------------------------------


class SdkSide:
    def __init__(self, client: Any) -> None:
        self.client = client

    def server_refused(self, exc: Exception) -> bool:
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError

        return isinstance(exc, MCPError | ValidationError)

    def capabilities(self) -> dict[str, Any]:
        caps = self.client.server_capabilities
        return {} if caps is None else dict(caps.model_dump(by_alias=True, exclude_none=True))

    async def list_tools(self) -> list[dict[str, Any]]:
        result = await self.client.list_tools()
        return [t.model_dump(by_alias=True, exclude_none=True) for t in result.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        result = await self.client.call_tool(name, arguments)
        return result.model_dump(by_alias=True, exclude_none=True)

    async def list_resources(self) -> list[dict[str, Any]]:
        result = await self.client.list_resources()
        return [r.model_dump(by_alias=True, exclude_none=True, mode="json") for r in result.resources]

    async def read_resource(self, uri: str) -> Any:
        return (await self.client.read_resource(uri)).model_dump(by_alias=True, exclude_none=True, mode="json")

    async def list_prompts(self) -> list[dict[str, Any]]:
        result = await self.client.list_prompts()
        return [p.model_dump(by_alias=True, exclude_none=True) for p in result.prompts]

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        return (await self.client.get_prompt(name, arguments)).model_dump(by_alias=True, exclude_none=True)


async def run_sdk(url: str) -> list[str]:
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        schema = getattr(params, "requested_schema", None) or {}
        content = elicitation_content(dict(schema))
        log(f"elicitation: accept {content}")
        return types.ElicitResult(action="accept", content=content)

    async with sdk_http(url) as http:
        client = Client(
            streamable_http_client(url, http_client=http),
            mode="auto",
            client_info=types.Implementation(name="webhost-conformance-sdk", version="0"),
            elicitation_callback=on_elicit,
        )
        async with client:
            log(f"connected: protocol {client.protocol_version}")
            return await walk(SdkSide(client))


CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://localhost:3000/callback"


@contextlib.asynccontextmanager
async def sdk_http(url: str) -> AsyncIterator[Any]:
    """The SDK's HTTP client with its OAuth provider: authorization code + PKCE, the consent auto-approved
    (the scenario's authorization server redirects at once; the code is read from the Location header)."""
    import httpx2
    from mcp.client.auth import OAuthClientProvider, TokenStorage
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

    class Memory(TokenStorage):
        def __init__(self) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    storage = Memory()
    if context.get("client_id"):
        storage.client = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic" if context.get("client_secret") else "none",
        )
    codes: asyncio.Queue[AuthorizationCodeResult] = asyncio.Queue()

    async def redirect(authorization_url: str) -> None:
        from urllib.parse import parse_qs, urlparse

        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as plain:
            answer = await plain.get(authorization_url)
        query = parse_qs(urlparse(answer.headers.get("location", "")).query)
        if "code" not in query:
            raise RuntimeError(f"no code in the authorization redirect ({answer.status_code})")
        await codes.put(
            AuthorizationCodeResult(
                code=query["code"][0], state=query.get("state", [""])[0] or None, iss=query.get("iss", [""])[0] or None
            )
        )

    async def callback() -> AuthorizationCodeResult:
        return await codes.get()

    metadata = OAuthClientMetadata(
        client_name="webhost-conformance-sdk",
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    provider: OAuthClientProvider
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario == "auth/client-credentials-basic" and context.get("client_secret"):
        from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

        provider = ClientCredentialsOAuthProvider(url, Memory(), context["client_id"], context["client_secret"])
    elif scenario == "auth/client-credentials-jwt" and context.get("private_key_pem"):
        from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider, SignedJWTParameters

        signer = SignedJWTParameters(
            issuer=context["client_id"],
            subject=context["client_id"],
            signing_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm") or "ES256",
        )
        provider = PrivateKeyJWTOAuthProvider(url, Memory(), context["client_id"], signer.create_assertion_provider())
    else:
        provider = OAuthClientProvider(
            url, metadata, storage, redirect_handler=redirect, callback_handler=callback, client_metadata_url=CIMD_URL
        )
    async with httpx2.AsyncClient(auth=provider, follow_redirects=True, timeout=30) as http:
        yield http


# ---- through webhost, as the page does ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_webhost(
    port: int, sandbox_port: int, work: Path, config: Path, log_path: Path, token: str
) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "webhost",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--sandbox-port",
        str(sandbox_port),
        "--data-dir",
        str(work / "data"),
        "--log-level",
        "warning",
        "--config",
        str(config),
    ]
    with open(log_path, "wb") as out:
        return subprocess.Popen(
            args,
            cwd=ROOT,
            env={**os.environ, "WEBHOST_TOKEN": token},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def wait_healthy(proc: subprocess.Popen[bytes], port: int, log_path: Path, token: str, *, last: bool) -> bool:
    """True once this webhost answers on the port; False when it lost its port to another process (try again).

    With scenarios side by side, another scenario's webhost may have taken the port first and answer /healthz
    while this one is failing to bind: a webhost is this one only if it takes this run's token."""
    import httpx

    deadline = time.monotonic() + 30
    while True:
        if proc.poll() is not None:
            text = log_path.read_text(errors="replace")
            if "address already in use" in text.lower() and not last:
                return False
            raise RuntimeError(f"webhost exited ({proc.returncode}): {text[-2000:]}")
        try:
            mine = httpx.get(
                f"http://127.0.0.1:{port}/api/servers", headers={"Authorization": f"Bearer {token}"}, timeout=0.5
            )
            if mine.status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("webhost did not become healthy")
        time.sleep(0.1)


def authorization_server_of(url: str) -> str:
    """The authorization server a protected MCP server names (RFC 9728): from its 401's `resource_metadata`, else
    the well-known locations."""
    import re
    from urllib.parse import urlsplit

    import httpx

    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    candidates: list[str] = []
    with httpx.Client(timeout=10) as http:
        challenge = http.post(url, json={}).headers.get("www-authenticate", "")
        found = re.search(r'resource_metadata="([^"]+)"', challenge)
        if found:
            candidates.append(found.group(1))
        candidates += [
            f"{origin}/.well-known/oauth-protected-resource{parts.path}",
            f"{origin}/.well-known/oauth-protected-resource",
        ]
        for candidate in candidates:
            answer = http.get(candidate)
            if answer.status_code == 200 and answer.json().get("authorization_servers"):
                return str(answer.json()["authorization_servers"][0])
    raise RuntimeError(f"{url} names no authorization server")


@contextlib.contextmanager
def webhost_process(url: str, work: Path) -> Iterator[tuple[int, str, Path]]:
    token = "t-" + secrets.token_urlsafe(16)
    config = work / "config.json"
    entry: dict[str, Any] = {"type": "http", "url": url}
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    # The client identity the SDK side uses too: pre-registered credentials from the scenario, else the CIMD URL.
    oauth: dict[str, Any] = {"clientMetadataUrl": CIMD_URL}
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario.startswith("auth/client-credentials") and context.get("client_id"):
        # Machine-to-machine, as the SDK side uses ClientCredentials/PrivateKeyJWT providers for these.
        oauth = {"grantType": "client_credentials", "clientId": context["client_id"]}
        if context.get("private_key_pem"):
            oauth |= {
                "privateKey": context["private_key_pem"],
                "signingAlgorithm": context.get("signing_algorithm") or "ES256",
            }
        else:
            oauth["clientSecret"] = context.get("client_secret")
    elif scenario == "auth/cross-app-access-complete-flow" and context.get("idp_id_token"):
        # Enterprise-managed authorization (SEP-990): the authorization server's issuer is configuration (an admin
        # looks it up once: here from the server's protected resource metadata); the person's ID token is the
        # scenario's (webhost runs in token mode here, so the entry names it, from the environment).
        os.environ["CONFORMANCE_IDP_ID_TOKEN"] = context["idp_id_token"]
        oauth = {
            "grantType": "identity_assertion",
            "clientId": context.get("client_id"),
            "clientSecret": context.get("client_secret"),
            "issuer": authorization_server_of(url),
            "identityProvider": {
                "tokenEndpoint": context.get("idp_token_endpoint"),
                "clientId": context.get("idp_client_id"),
                "subjectToken": "${CONFORMANCE_IDP_ID_TOKEN}",
            },
        }
    elif context.get("client_id"):
        oauth |= {"clientId": context["client_id"], "clientSecret": context.get("client_secret")}
    entry["oauth"] = {k: v for k, v in oauth.items() if v is not None}
    config.write_text(json.dumps({"mcpServers": {"scenario": entry}}), encoding="utf-8")
    log_path = work / "webhost.log"
    # Free ports are picked before webhost binds them: with scenarios running side by side another process
    # may take one first. Webhost then exits at start ("address already in use"), and we try other ports.
    proc: subprocess.Popen[bytes] | None = None
    try:
        for attempt in range(3):
            port, sandbox_port = free_port(), free_port()
            proc = start_webhost(port, sandbox_port, work, config, log_path, token)
            if wait_healthy(proc, port, log_path, token, last=attempt == 2):
                break
        yield port, token, log_path
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


class RpcError(RuntimeError):
    """webhost answered a /ws request with a JSON-RPC error."""


class PageSocket:
    """The page's /ws: requests by id, a reader task, and every `elicitation/request` accepted with defaults."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.statuses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.sign_in: Callable[[PageSocket], Awaitable[None]] | None = None
        self.signing = False
        self.sign_ins = 0

    def maybe_sign_in(self, state: dict[str, Any]) -> None:
        """The page's person signs in whenever the server asks (at connect, or a step-up mid-call)."""
        waiting = state.get("status") == "auth-required" and (state.get("signIn") or {}).get("waiting")
        if waiting and self.sign_in is not None and not self.signing:
            self.signing = True
            task = asyncio.create_task(self._sign_in(self.sign_in))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _sign_in(self, sign_in: Callable[[PageSocket], Awaitable[None]]) -> None:
        try:
            self.sign_ins += 1
            await sign_in(self)
        except Exception as exc:
            log(f"sign-in failed: {exc}")
        finally:
            self.signing = False

    async def reader(self) -> None:
        async for raw in self.ws:
            message = json.loads(raw)
            if "id" in message and ("result" in message or "error" in message):
                future = self.pending.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result(message)
            elif message.get("method") == "servers/status":
                state = message["params"]["server"]
                await self.statuses.put(state)
                self.maybe_sign_in(state)
            elif message.get("method") == "elicitation/request":
                task = asyncio.create_task(self.answer(message["params"]))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the WebSocket closed"))

    async def answer(self, request: dict[str, Any]) -> None:
        mode = request.get("mode")
        content = elicitation_content(request.get("requestedSchema") or {}) if mode == "form" else None
        params: dict[str, Any] = {"id": request["id"], "action": "accept"}
        if content is not None:
            params["content"] = content
        log(f"elicitation/request {mode} {request.get('message')!r}: accept {content}")
        try:
            await self.request("elicitation/respond", params)
        except Exception as exc:
            log(f"elicitation/respond failed: {exc}")

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        answer = await future
        if "error" in answer:
            error = answer["error"]
            raise RpcError(
                f"{method}: {error.get('code')} {error.get('message')}"
                + (f" {json.dumps(error['data'])[:500]}" if error.get("data") else "")
            )
        return answer["result"]


class WebhostSide:
    def __init__(self, page: PageSocket, state: dict[str, Any]) -> None:
        self.page, self.state = page, state
        self.calls = 0

    def server_refused(self, exc: Exception) -> bool:
        # webhost answers -32000 with data.upstreamCode for the server's error, and "sent an invalid result"
        # for a result it could not parse.
        text = str(exc)
        return isinstance(exc, RpcError) and ('"upstreamCode"' in text or "sent an invalid result" in text)

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = self.state.get("capabilities") or self.state.get("serverCapabilities") or {}
        return caps

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = (await self.page.request("tools/list", {"server": "scenario"}))["tools"]
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls += 1
        return await self.page.request(
            "tools/call", {"server": "scenario", "name": name, "arguments": arguments, "callId": f"c-{self.calls}"}
        )

    async def list_resources(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await self.page.request("resources/list", {"server": "scenario"}))["resources"]
        return found

    async def read_resource(self, uri: str) -> Any:
        return await self.page.request("resources/read", {"server": "scenario", "uri": uri})

    async def list_prompts(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (await self.page.request("prompts/list", {"server": "scenario"}))["prompts"]
        return found

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        return await self.page.request("prompts/get", {"server": "scenario", "name": name, "arguments": arguments})


@contextlib.asynccontextmanager
async def page(port: int, token: str) -> AsyncIterator[PageSocket]:
    import websockets

    origin = f"http://127.0.0.1:{port}"
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/ws",
        additional_headers={"Authorization": f"Bearer {token}"},
        origin=origin,
        max_size=None,
        open_timeout=10,
    ) as ws:  # type: ignore[arg-type]
        socket_ = PageSocket(ws)
        reader = asyncio.create_task(socket_.reader())
        try:
            yield socket_
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader


async def sign_in(page_: PageSocket, port: int, token: str) -> None:
    """What a person does on `auth-required`: open the authorization URL (the scenario's authorization server
    approves at once), follow its redirects to webhost's /oauth/callback, and open that as the same person."""
    import httpx

    answer = await page_.request("servers/signIn", {"server": "scenario"})
    url = answer.get("url")
    if not url:
        return
    callback = f"http://127.0.0.1:{port}/oauth/callback"
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as browser:
        for _ in range(10):
            if url.startswith(callback):
                done = await browser.get(url, headers={"Authorization": f"Bearer {token}"})
                log(f"sign-in: the callback answered {done.status_code}")
                return
            response = await browser.get(url)
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                raise RuntimeError(f"the authorization server answered {response.status_code}, not a redirect back")
            url = str(httpx.URL(url).join(location))
    raise RuntimeError("the authorization server did not send the browser back to webhost")


async def wait_connected(page_: PageSocket, timeout: float = STEP_TIMEOUT) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        servers = (await page_.request("servers/list", {}))["servers"]
        state: dict[str, Any] = next(s for s in servers if s["name"] == "scenario")
        if state["status"] == "connected":
            return state
        if state["status"] == "error":
            raise RuntimeError(f"the server did not connect: {state.get('error')}")
        page_.maybe_sign_in(state)
        if state["status"] == "auth-required" and not (state.get("signIn") or {}).get("waiting"):
            raise RuntimeError(f"the sign-in did not complete: {state.get('error')}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(page_.statuses.get(), 0.2)
    raise TimeoutError(f"the server was not connected after {timeout:.0f} s")


async def run_webhost(url: str) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="webhost-conformance-") as tmp:
        with webhost_process(url, Path(tmp)) as (port, token, log_path):
            try:
                async with page(port, token) as page_:
                    page_.sign_in = lambda p: sign_in(p, port, token)
                    state = await wait_connected(page_)
                    log(f"connected: {json.dumps({k: state.get(k) for k in ('status', 'protocolVersion')})}")
                    return await walk(WebhostSide(page_, state))
            finally:
                tail = log_path.read_text(errors="replace").strip()
                if tail:
                    log("webhost log (tail):\n" + tail[-3000:])


def describe(exc: BaseException) -> str:
    """The innermost errors of an exception group (anyio task groups wrap the one that matters)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


RUNNERS: dict[str, Callable[[str], Coroutine[Any, Any, list[str]]]] = {"sdk": run_sdk, "webhost": run_webhost}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=sorted(RUNNERS), required=True)
    parser.add_argument("url")
    args = parser.parse_args()
    log(f"scenario {os.environ.get('MCP_CONFORMANCE_SCENARIO')} via {args.via}: {args.url}")
    try:
        errors = asyncio.run(RUNNERS[args.via](args.url))
    except Exception as exc:
        log(f"FAILED: {describe(exc)}")
        return 1
    for error in errors:
        log(f"error: {error}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
