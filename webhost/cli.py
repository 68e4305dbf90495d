"""`webhost serve`: read the configuration, then run the host app and the sandbox proxy in one process."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import sys
from pathlib import Path

import uvicorn

from webhost import __version__
from webhost.config import Config, ConfigError, load_config
from webhost.settings import Settings

LOOPBACK_NAMES = {"localhost"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webhost", description="A self-hosted web host for MCP servers.")
    parser.add_argument("--version", action="version", version=f"webhost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the configured MCP servers to the browser")
    serve.add_argument("--config", type=Path, help="an mcpServers JSON file (default: the embedded demo)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8700, help="port of the host page (default 8700)")
    serve.add_argument("--sandbox-port", type=int, default=8701, help="port of the app sandbox (default 8701)")
    serve.add_argument("--sandbox-domain", default="localhost",
                       help="apps are served from <label>.<domain> (default localhost)")
    serve.add_argument("--sandbox-scheme", default="http", choices=["http", "https"],
                       help="scheme browsers use for the sandbox origins (https behind TLS)")
    serve.add_argument("--sandbox-public-port", type=int, default=None,
                       help="port browsers use for the sandbox when a proxy maps it (default: --sandbox-port)")
    serve.add_argument("--public-origin", action="append", default=[],
                       help="an extra origin the page is served on (e.g. https://webhost.example); repeatable")
    serve.add_argument("--data-dir", type=Path, default=None,
                       help="folder for the deployment secret and audit log (default ./.webhost-data)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="required to listen on a non-loopback interface (e.g. --host 0.0.0.0)")
    serve.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    return parser


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    if not is_loopback(args.host):
        if not args.allow_remote:
            print(f"webhost: refusing to listen on {args.host}: that exposes webhost beyond this machine. "
                  "Pass --allow-remote to confirm.", file=sys.stderr)
            return 2
        print(f"webhost: WARNING: listening on {args.host}, reachable from the network. Anyone with the "
              "token can run the configured servers' tools.", file=sys.stderr)
    try:
        config = load_config(args.config) if args.config else _demo()
    except ConfigError as exc:
        print(f"webhost: configuration error: {exc}", file=sys.stderr)
        return 2
    env_token = os.environ.get("WEBHOST_TOKEN")
    settings_kwargs: dict[str, object] = {}
    if env_token:
        settings_kwargs.update(token=env_token, token_from_env=True)
    data_dir = args.data_dir or (Path(config.options.data_dir) if config.options.data_dir else None)
    if data_dir is not None:
        settings_kwargs["data_dir"] = data_dir
    settings = Settings(
        host=args.host, port=args.port, sandbox_port=args.sandbox_port, sandbox_domain=args.sandbox_domain,
        sandbox_scheme=args.sandbox_scheme, sandbox_public_port=args.sandbox_public_port,
        public_origins=tuple(o.rstrip("/") for o in args.public_origin), **settings_kwargs,  # type: ignore[arg-type]
    )
    try:
        return asyncio.run(serve(settings, config, log_level=args.log_level))
    except KeyboardInterrupt:
        return 0


def _demo() -> Config:
    from webhost.demo.config import demo_config

    return demo_config()


async def serve(settings: Settings, config: Config, *, log_level: str = "warning") -> int:
    from sandbox_proxy.app import create_sandbox_app
    from webhost.app import create_app, load_secret

    secret = load_secret(settings.data_dir)
    host_app = create_app(settings, config, secret=secret)
    origins = settings.host_origins() + list(config.options.allowed_origins)
    sandbox_app = create_sandbox_app(secret=secret, domain=settings.sandbox_domain, host_origins=origins)
    servers = [
        uvicorn.Server(uvicorn.Config(host_app, host=settings.host, port=settings.port, log_level=log_level,
                                      ws_max_size=16 * 1024 * 1024, lifespan="on", timeout_graceful_shutdown=5,
                                      # Deflating large results costs ~20 ms of event-loop CPU per MB and
                                      # stalls every tab; on loopback it buys nothing (bench/README.md).
                                      ws_per_message_deflate=False)),
        uvicorn.Server(uvicorn.Config(sandbox_app, host=settings.host, port=settings.sandbox_port,
                                      log_level=log_level, lifespan="off")),
    ]
    login = f"http://{_display_host(settings.host)}:{settings.port}/"
    where = f"{login}  (token from WEBHOST_TOKEN)" if settings.token_from_env else f"{login}?token={settings.token}"
    print(f"webhost {__version__} serving {len(config.servers)} server(s) from {config.source}", flush=True)
    print(f"Open {where}", flush=True)
    tasks = [asyncio.create_task(server.serve()) for server in servers]
    # uvicorn's signal handling stops whichever server saw the signal; stop the other one with it.
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for server in servers:
        server.should_exit = True
    results = await asyncio.gather(*tasks, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed or any(not getattr(s, "started", True) for s in servers):
        return 1
    return 0


def _display_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::") else host
