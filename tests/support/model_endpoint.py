"""A scripted streaming model endpoint: both wire formats over real SSE on a real socket, for the chat's tests.

`POST /v1/chat/completions` (OpenAI Chat Completions) and `POST /v1/messages` (Anthropic Messages)
answer from scripts (model_script.py: rules picked by the request's newest input, per model name),
`GET /v1/models` lists the scripted models. Control routes for tests: `POST /_script`
`{"key": MODEL, "rules": [...]}` replaces one model's rules (each test uses its own model name, so
parallel tests do not collide; key "*" is every model without its own), `GET /_requests?key=MODEL`
gives the requests received for it (path, headers, JSON body). Wrong places answer as real servers
do: any path under `/site/` is a web page (200, text/html), under `/json/` a plain JSON answer, and
anything else 404 text/plain.

In a test: `with running_model_endpoint() as endpoint:` (a uvicorn server in a background thread, on
a free port). As a process: `python -m tests.support.model_endpoint --port N [--script FILE]`, which
prints `ready http://127.0.0.1:N` once it listens (`model_endpoint_process` starts and stops one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.model_script import Scripts, Step, leading_fault, newest_input
from tests.support.model_wires import ANTHROPIC_ERRORS, ScriptError, anthropic_steps, openai_steps

if TYPE_CHECKING:
    import httpx


class CutStream(Exception):
    """Raised inside a streaming answer to drop the connection mid-body (uvicorn closes the socket)."""


class _QuietCuts(logging.Filter):
    """Keeps uvicorn from logging a scripted cut as an application error."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        while error is not None:
            if isinstance(error, CutStream):
                return False
            if isinstance(error, BaseExceptionGroup):
                error = error.exceptions[0]
                continue
            error = error.__cause__ or error.__context__
        return True


logging.getLogger("uvicorn.error").addFilter(_QuietCuts())


def api_key_of(request: Request) -> str:
    bearer = request.headers.get("authorization", "")
    return bearer.removeprefix("Bearer ").strip() or request.headers.get("x-api-key", "")


def build_app(scripts: Scripts | None = None) -> Starlette:
    scripts = scripts or Scripts()

    async def answer(request: Request, wire: str) -> Response:
        body = await request.json()
        model = str(body.get("model", ""))
        scripts.received.setdefault(model, []).append(
            {"path": request.url.path, "headers": dict(request.headers), "body": body}
        )
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        rule = scripts.pick(model, newest_input(messages))
        if rule is None:
            return _error(wire, 500, f"scripted endpoint: no rule for model {model!r} matches this request")
        events = list(rule.events)
        while events and set(events[0]) == {"pause"}:  # a pause before anything: the answer's headers wait too
            if not await _hold(request, float(events.pop(0)["pause"])):
                return Response(status_code=499)  # the client has gone; nobody reads this
        key = api_key_of(request)
        fault = leading_fault(events, model, key)
        if fault is not None:
            headers = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
            return _error(wire, fault.status, fault.message, headers)
        try:
            if wire == "openai":
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                steps = openai_steps(events, model=model, key=key, include_usage=include_usage)
            else:
                steps = anthropic_steps(events, model=model, key=key)
        except (ScriptError, ValueError, KeyError) as exc:
            return _error(wire, 500, f"scripted endpoint: bad script: {exc}")
        stream = _play(steps, scripts)
        return StreamingResponse(stream, media_type="text/event-stream", headers={"cache-control": "no-cache"})

    async def chat_completions(request: Request) -> Response:
        return await answer(request, "openai")

    async def messages(request: Request) -> Response:
        return await answer(request, "anthropic")

    async def models(request: Request) -> Response:
        names = sorted(key for key in scripts.rules if key != "*")
        if "anthropic-version" in request.headers:
            data = [{"id": n, "type": "model", "display_name": n, "created_at": "2026-01-01T00:00:00Z"} for n in names]
            return JSONResponse({"data": data, "has_more": False, "first_id": None, "last_id": None})
        return JSONResponse(
            {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "scripted"} for n in names]}
        )

    async def set_script(request: Request) -> Response:
        document = await request.json()
        try:
            scripts.set(str(document.get("key", "*")), document["rules"])
        except (KeyError, TypeError, ValueError) as exc:
            return PlainTextResponse(f"bad script: {exc}", status_code=400)
        return JSONResponse({"ok": True})

    async def release(request: Request) -> Response:
        scripts.gate(str((await request.json()).get("gate"))).set()
        return JSONResponse({"ok": True})

    async def received(request: Request) -> Response:
        return JSONResponse(scripts.received.get(request.query_params.get("key", ""), []))

    async def web_page(request: Request) -> Response:
        return HTMLResponse("<!doctype html><html><body><h1>Welcome</h1></body></html>")

    async def plain_json(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/_script", set_script, methods=["POST"]),
            Route("/_requests", received, methods=["GET"]),
            Route("/_release", release, methods=["POST"]),
            Route("/site/{rest:path}", web_page, methods=["GET", "POST"]),
            Route("/json/{rest:path}", plain_json, methods=["GET", "POST"]),
        ]
    )


def _error(wire: str, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    if wire == "anthropic":
        body: dict[str, Any] = {
            "type": "error",
            "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": message},
        }
    else:
        code = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}.get(status)
        body = {
            "error": {
                "message": message,
                "type": "invalid_request_error" if status < 500 else "server_error",
                "param": None,
                "code": code,
            }
        }
    return JSONResponse(body, status_code=status, headers=headers)


async def _hold(request: Request, seconds: float) -> bool:
    """Wait `seconds` before answering, unless the client goes away first (then False)."""
    gone = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal gone
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await anyio.sleep(seconds)
        group.cancel_scope.cancel()
    return not gone


async def _play(steps: list[Step], scripts: Scripts) -> AsyncIterator[bytes]:
    began = asyncio.get_running_loop().time()
    for step in steps:
        if isinstance(step, bytes):
            yield step
        elif isinstance(step, float):
            await asyncio.sleep(step)
        elif step[0] == "at":
            await asyncio.sleep(max(0.0, began + step[1] - asyncio.get_running_loop().time()))
        elif step[0] == "gate":
            await scripts.gate(step[1]).wait()  # the test opens it (POST /_release) once it saw what it waits for
        elif step[1] == "abrupt":
            raise CutStream
        else:
            return


def _control_client() -> httpx.Client:
    # Imported here: the app alone also runs inside webhost's image (tests/deploy/model_service.py), which has no
    # httpx; only a test's side of the endpoint needs it.
    import httpx

    return httpx.Client(timeout=10, trust_env=False, limits=httpx.Limits(max_keepalive_connections=0))


@dataclass
class ModelEndpointServer:
    """A running scripted endpoint, seen from a test."""

    origin: str  # http://127.0.0.1:PORT
    # One client for the control routes (a new one per call would build a TLS context each time: ~50 ms). No
    # connection is kept between calls: uvicorn closes an idle one after 5 s, and a call that reused it as it closed
    # failed with "Server disconnected without sending a response" (a test that waits on the page between two calls).
    http: httpx.Client = field(default_factory=_control_client)

    @property
    def openai_base_url(self) -> str:
        return f"{self.origin}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.origin

    def script(self, key: str, rules: list[dict[str, Any]]) -> None:
        self.http.post(f"{self.origin}/_script", json={"key": key, "rules": rules}).raise_for_status()

    def release(self, gate: str) -> None:
        """Let an answer held at `{"gate": gate}` go on."""
        self.http.post(f"{self.origin}/_release", json={"gate": gate}).raise_for_status()

    def requests(self, key: str) -> list[dict[str, Any]]:
        received: list[dict[str, Any]] = self.http.get(f"{self.origin}/_requests", params={"key": key}).json()
        return received


@contextlib.contextmanager
def running_model_endpoint(script: object = None) -> Iterator[ModelEndpointServer]:
    """The endpoint in a background thread on a free port until the block ends; `script` as a script file holds."""
    scripts = Scripts()
    if script is not None:
        scripts.load(script)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(build_app(scripts), log_level="error", lifespan="off", timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="model-endpoint", daemon=True)
    thread.start()
    try:
        for _ in range(1000):
            if server.started or not thread.is_alive():
                break
            threading.Event().wait(0.01)
        if not server.started:
            raise RuntimeError("the scripted model endpoint did not start")
        handle = ModelEndpointServer(f"http://127.0.0.1:{port}")
        with handle.http:
            yield handle
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextlib.contextmanager
def model_endpoint_process(port: int, *, script: Path | None = None, log_path: Path) -> Iterator[ModelEndpointServer]:
    """The endpoint as its own process (`python -m tests.support.model_endpoint`) on `port`, stopped at the end;
    its output goes to `log_path` (the ready line first)."""
    argv = [sys.executable, "-m", "tests.support.model_endpoint", "--port", str(port)]
    if script is not None:
        argv += ["--script", str(script)]
    root = Path(__file__).resolve().parents[2]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=root, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while not log_path.read_bytes().startswith(b"ready "):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the scripted model endpoint did not start:\n{log_path.read_text(errors='replace')}"
                )
            time.sleep(0.05)
        handle = ModelEndpointServer(f"http://127.0.0.1:{port}")
        with handle.http:
            yield handle
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


async def _serve(port: int, scripts: Scripts) -> None:
    server = uvicorn.Server(uvicorn.Config(build_app(scripts), host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started and not task.done():
        await asyncio.sleep(0.02)
    if server.started:
        print(f"ready http://127.0.0.1:{port}", flush=True)
    await task


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--script", type=Path, help="a JSON script: a list of rules, or {MODEL: [rules]}")
    args = parser.parse_args(argv)
    scripts = Scripts()
    if args.script:
        scripts.load(json.loads(args.script.read_text(encoding="utf-8")))
    asyncio.run(_serve(args.port, scripts))


if __name__ == "__main__":
    main()
