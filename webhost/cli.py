"""`webhost serve`: read the configuration, then run the host app and the sandbox proxy in one process.

What `--help` and a bad setting or configuration need is imported here; the app, the proxy, uvicorn and the
storage (the SDK's types, FastAPI, SQLAlchemy: seconds of CPU) only once `serve` runs, so those answers come
at once (bench/startup.py; tests/unit/test_startup_imports.py).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import ValidationError
from pydantic_core import PydanticUndefined
from pydantic_settings import SettingsError

from webhost import __version__
from webhost.config import Config, ConfigError, load_config
from webhost.demo.config import demo_config
from webhost.event_loop import LoopUnavailable, event_loop_factory
from webhost.observability.logs import LOG_FORMATS, LogFormat, configure_logging, start_line
from webhost.redact import mask_query_parameters
from webhost.settings import Settings, env_for, flag_for, url_host
from webhost.storage.urls import database_url

LOOPBACK_NAMES = {"localhost"}
# In a logged request line (uvicorn's access log): the login URL's token (`GET /?token=...`), and the
# one-time code and state an authorization server sends to /oauth/callback. Matched by the name as a
# query parser reads it (`?tok%65n=` is `token`), in any case (`?TOKEN=` is refused, but its value may be the token).
_SECRET_PARAMETERS = frozenset({"token", "code", "state"})


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="webhost", description="A self-hosted web host for MCP servers.")
    parser.add_argument("--version", action="version", version=f"webhost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the configured MCP servers to the browser")
    add_settings_arguments(serve)
    serve.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="text",
        help="text: lines for people; json: one JSON object per line (time, level, logger, message, and the "
        "request's ids where known) for a log pipeline. Default: text.",
    )
    commands.add_parser(
        "check",
        add_help=False,
        help="open every MCP App of a configuration in headless Chromium and report (webhost check --help)",
    )
    reload = commands.add_parser(
        "reload",
        help="make a running `webhost serve` re-read its configuration file (as SIGHUP does)",
        description="Make the `webhost serve` on this port (found by its pid file in the data folder) re-read its "
        "configuration file: new and changed servers, models and access rules apply to new requests, removed "
        "servers stop for everyone, and a bad file is refused with one line while the running configuration "
        "stays. Prints the outcome; exit status 0 when applied, 1 when refused, 2 when no webhost runs there.",
        epilog="Several replicas: run it on (or for) each one; each re-reads its own file (docs/admin.md).",
    )
    add_settings_arguments(reload, only=("config", "data_dir", "port"))
    for name, explained in BACKUP_COMMANDS.items():
        command = commands.add_parser(
            name,
            help=explained,
            description=f"{explained[0].upper()}{explained[1:]}.",
            epilog="The database: WEBHOST_DATABASE_URL, else the configuration's, else SQLite in the data folder. "
            "The deployment secret: WEBHOST_SECRET, else the data folder's `secret` file (docs/deploy.md).",
        )
        command.add_argument("path", type=Path, help="the backup file")
        add_settings_arguments(command, only=("config", "data_dir"))
    return parser


# `webhost backup PATH` and `webhost restore PATH` (webhost/storage/backup.py): the database and secret of the
# configuration, the data folder and WEBHOST_DATABASE_URL / WEBHOST_SECRET, as `serve` finds them.
BACKUP_COMMANDS = {
    "backup": "write the whole database to one file (sealed rows stay sealed: keep the deployment secret too)",
    "restore": "fill an empty database from a backup (made under this deployment's secret), then migrate it",
}


def add_settings_arguments(parser: argparse.ArgumentParser, only: tuple[str, ...] | None = None) -> None:
    """One flag per settings field (or per field in `only`), named, typed and explained by the field itself.

    Flags that are not given stay unset (SUPPRESS), so the environment and then the default apply.
    """
    for name, field in Settings.model_fields.items():
        flag = flag_for(name)
        if flag is None or (only is not None and name not in only):
            continue
        shown = field.default not in (None, (), PydanticUndefined) and field.default is not False
        default = f" Default: {field.default}." if shown else ""
        options: dict[str, Any] = {
            "dest": name,
            "default": argparse.SUPPRESS,
            "help": f"{field.description}{default} Environment: {env_for(name)}.",
        }
        if field.annotation is bool:
            options["action"] = "store_true"
        elif get_origin(field.annotation) is Literal:
            options["choices"] = get_args(field.annotation)
        else:
            options["metavar"] = flag.removeprefix("--").upper().replace("-", "_")
            if get_origin(field.annotation) is tuple:
                options["action"] = "append"
        parser.add_argument(flag, **options)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class SettingsProblem(Exception):
    """A flag or WEBHOST_* variable with a bad value; the message names both."""


def settings_from(argv: list[str] | None = None) -> Settings:
    """Settings from flags (which win) and WEBHOST_* variables, before the configuration file is read."""
    args = vars(build_parser().parse_args(argv))
    args.pop("command")
    args.pop("log_format", None)  # serve's: how to log, not a setting of the host
    args.pop("path", None)  # backup and restore's
    try:
        return Settings(**args)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else ""
        where = " / ".join(filter(None, [flag_for(name), env_for(name)])) if name in Settings.model_fields else name
        raise SettingsProblem(f"{where}: {error['msg']}") from None
    except SettingsError as exc:
        raise SettingsProblem(str(exc)) from None


def with_config_defaults(settings: Settings, config: Config) -> Settings:
    """The configuration file's `webhost` values for settings no flag or variable gave."""
    if "data_dir" not in settings.model_fields_set and config.options.data_dir:
        return settings.model_copy(update={"data_dir": Path(config.options.data_dir)})
    return settings


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["check"]:
        from webhost.check import main as check_main

        return check_main(args[1:])
    try:
        settings = settings_from(argv)
    except SettingsProblem as exc:
        print(f"webhost: bad setting {exc}", file=sys.stderr)
        return 2
    parsed = build_parser().parse_args(argv)  # parsed once already: it is valid
    log_format: LogFormat = getattr(parsed, "log_format", "text")  # serve's flag
    configure_logging(settings.log_level, log_format)
    if parsed.command in BACKUP_COMMANDS:
        return backup_or_restore(parsed.command, parsed.path, settings)
    if parsed.command == "reload":
        return reload_running(settings)
    if not is_loopback(settings.host):
        if not settings.allow_remote:
            print(
                f"webhost: refusing to listen on {settings.host}: that exposes webhost beyond this machine. "
                "Pass --allow-remote to confirm.",
                file=sys.stderr,
            )
            return 2
        print(
            f"webhost: WARNING: listening on {settings.host}, reachable from the network. Anyone with the "
            "token can run the configured servers' tools.",
            file=sys.stderr,
        )
    try:
        config = load_config(settings.config) if settings.config else _demo()
    except ConfigError as exc:
        print(f"webhost: configuration error: {exc}", file=sys.stderr)
        return 2
    settings = with_config_defaults(settings, config)
    try:
        loop_factory = event_loop_factory(settings.event_loop)
    except LoopUnavailable as exc:
        print(f"webhost: bad setting --event-loop / {env_for('event_loop')}: {exc}", file=sys.stderr)
        return 2
    from webhost.observability.otel import TracingUnavailable
    from webhost.storage.db import StorageUnavailable  # the first heavy import: the configuration is good

    try:
        check_data_dir(settings.data_dir)
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            return runner.run(serve(settings, config, log_level=settings.log_level, log_format=log_format))
    except DataDirProblem as exc:
        print(f"webhost: data directory {settings.data_dir}: {exc}", file=sys.stderr)
        return 2
    except (StorageUnavailable, TracingUnavailable) as exc:
        print(f"webhost: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


class DataDirProblem(Exception):
    """The data directory cannot hold the secret and the audit log; the message says why."""


def _reason(exc: OSError | sqlite3.Error) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    return str(exc)


def check_data_dir(path: Path) -> None:
    """Fail at start, with one line, when the data directory is not a writable directory with room."""
    if path.exists() and not path.is_dir():
        raise DataDirProblem("not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".webhost-write-test-{os.getpid()}"
        try:
            with open(probe, "wb") as file:
                file.write(b"\0" * 65536)
                file.flush()
                os.fsync(file.fileno())
        finally:
            probe.unlink(missing_ok=True)
    except OSError as exc:
        raise DataDirProblem(f"cannot write there ({_reason(exc)})") from None


def _demo() -> Config:
    return demo_config()


async def prepare_database(settings: Settings, config: Config) -> None:
    """Open the database and apply the migrations before listening, so that a database that cannot be
    reached is one line and status 2, not a traceback from the app's start (which then finds it at head)."""
    from webhost.storage.db import Storage

    storage = Storage(database_url(settings.database_url or config.options.database, settings.data_dir))
    try:
        await storage.start()
    finally:
        await storage.close()


async def serve(
    settings: Settings, config: Config, *, log_level: str = "warning", log_format: LogFormat = "text"
) -> int:
    from webhost.observability.otel import Tracing, tracing_wanted

    # Before the app is built: its routes are instrumented as it is (TracingUnavailable: one line, from main).
    tracing = Tracing(__version__) if tracing_wanted(os.environ) else None
    try:
        return await _serve(settings, config, log_level=log_level, log_format=log_format)
    finally:
        if tracing is not None:
            tracing.shutdown()  # the spans still batched are sent


async def _serve(settings: Settings, config: Config, *, log_level: str, log_format: LogFormat) -> int:
    import uvicorn

    from sandbox_proxy.app import create_sandbox_app
    from webhost import gctuning
    from webhost.app import SecretProblem, Server, create_app, deployment_secret

    # The database first: one a newer release migrated is refused before a first start makes the secret.
    await prepare_database(settings, config)
    try:
        secret = deployment_secret(settings)
    except SecretProblem as exc:
        raise DataDirProblem(str(exc)) from None
    except OSError as exc:
        raise DataDirProblem(f"cannot keep the secret there ({_reason(exc)})") from None
    try:
        host_app = create_app(settings, config, secret=secret)
    except (OSError, sqlite3.Error) as exc:
        raise DataDirProblem(f"cannot keep the secret and the audit log there ({_reason(exc)})") from None
    origins = settings.host_origins() + list(config.options.allowed_origins)
    sandbox_app = create_sandbox_app(secret=secret, domain=settings.sandbox_domain, host_origins=origins)
    # JSON: uvicorn's loggers keep no formatter of their own and hand every line to the root's (observability/logs.py).
    logging_options: dict[str, Any] = {"log_config": None} if log_format == "json" else {}
    servers = [
        Server(
            uvicorn.Config(
                host_app,
                host=settings.host,
                port=settings.port,
                log_level=log_level,
                # The ASGI client is the TCP peer: proxy mode's trustedProxies check it.
                proxy_headers=False,
                ws_max_size=16 * 1024 * 1024,
                lifespan="on",
                timeout_graceful_shutdown=5,
                # Deflating large results costs ~20 ms of event-loop CPU per MB and
                # stalls every tab; on loopback it buys nothing (bench/README.md).
                ws_per_message_deflate=False,
                **logging_options,
            )
        ),
        Server(
            uvicorn.Config(
                sandbox_app,
                host=settings.host,
                port=settings.sandbox_port,
                log_level=log_level,
                lifespan="off",
                **logging_options,
            )
        ),
    ]
    hide_login_tokens()  # after uvicorn.Config, which (re)configures uvicorn's loggers
    gctuning.tune()  # everything imported and built: what start-up made lives as long as the process
    login = f"http://{_display_host(settings.host)}:{settings.port}/"
    where = f"{login}  (token from WEBHOST_TOKEN)" if settings.token_from_env else f"{login}?token={settings.token}"
    print(start_line(f"webhost {__version__} serving {len(config.servers)} server(s) from {config.source}", log_format))
    print(start_line(f"Open {where}", log_format), flush=True)
    from webhost.app.pidfile import PidFile

    pid_file = PidFile(settings.data_dir, settings.port)  # for `webhost reload` (SIGHUP) to find this process
    servers[0].pid_file = pid_file
    pid_file.write()
    try:
        tasks = [asyncio.create_task(server.serve()) for server in servers]
        # uvicorn's signal handling stops whichever server saw the signal; stop the other one with it.
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for server in servers:
            server.should_exit = True
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        pid_file.remove()
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed or any(not getattr(s, "started", True) for s in servers):
        return 1
    return 0


RELOAD_WAIT_SECONDS = 60.0


def reload_running(settings: Settings) -> int:
    """`webhost reload`: SIGHUP to the serve of this port, then its outcome (app/pidfile.py)."""
    import signal
    import time

    from webhost.app.pidfile import outcome_path, pid_path, read_outcome, read_pid

    if settings.config is not None and "data_dir" not in settings.model_fields_set:
        try:  # the data folder the file names, as `serve` finds it
            settings = with_config_defaults(settings, load_config(settings.config))
        except ConfigError:
            pass  # the running process says what is wrong with the file
    pid_file, outcome_file = pid_path(settings.data_dir, settings.port), outcome_path(settings.data_dir, settings.port)
    pid = read_pid(pid_file)
    if pid is None:
        print(
            f"webhost: no webhost serves port {settings.port} from {settings.data_dir} (no {pid_file})", file=sys.stderr
        )
        return 2
    before = read_outcome(outcome_file)
    seen = before.count if before is not None and before.pid == pid else 0
    try:
        os.kill(pid, signal.SIGHUP)
    except ProcessLookupError:
        print(f"webhost: the webhost of {pid_file} (pid {pid}) is not running", file=sys.stderr)
        return 2
    except PermissionError:
        print(f"webhost: not allowed to signal pid {pid} (of {pid_file}): run as its user", file=sys.stderr)
        return 2
    deadline = time.monotonic() + RELOAD_WAIT_SECONDS
    while time.monotonic() < deadline:  # the reload stops the removed servers' processes: it can take seconds
        outcome = read_outcome(outcome_file)
        if outcome is not None and outcome.pid == pid and outcome.count > seen:
            print(f"webhost: {outcome.line}", file=sys.stdout if outcome.applied else sys.stderr)
            return 0 if outcome.applied else 1
        time.sleep(0.05)
    print(f"webhost: pid {pid} did not report a reload within {RELOAD_WAIT_SECONDS:.0f} s", file=sys.stderr)
    return 1


def _display_host(host: str) -> str:
    """Where the login URL points: an address a browser opens, and frames Apps from (CSP has no IPv6 literal)."""
    if host in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return "localhost" if host == "::1" else url_host(host)


class _HideToken(logging.Filter):
    """Replaces the `token` (and `code`, `state`) query values of a logged request line with `***`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = mask_query_parameters(record.msg, _SECRET_PARAMETERS)
        if isinstance(record.args, tuple):
            record.args = tuple(
                mask_query_parameters(arg, _SECRET_PARAMETERS) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


def hide_login_tokens() -> None:
    """Keep the login token out of uvicorn's logs (its access log writes `GET /?token=...`)."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _HideToken) for f in logger.filters):
            logger.addFilter(_HideToken())


def backup_or_restore(command: str, path: Path, settings: Settings) -> int:
    """`webhost backup PATH` / `webhost restore PATH`; one line and status 2 when it cannot be done."""
    from webhost.storage.backup import BackupProblem
    from webhost.storage.db import StorageUnavailable

    try:
        config = load_config(settings.config) if settings.config else _demo()
        settings = with_config_defaults(settings, config)
        secret = existing_secret(settings)
        url = database_url(settings.database_url or config.options.database, settings.data_dir)
        done = asyncio.run(_backup_or_restore(command, path.resolve(), url, secret))
    except ConfigError as exc:
        print(f"webhost: configuration error: {exc}", file=sys.stderr)
        return 2
    except (BackupProblem, StorageUnavailable, ValueError) as exc:  # ValueError: an unusable secret or URL
        print(f"webhost {command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"webhost {command}: {path}: {_reason(exc)}", file=sys.stderr)
        return 2
    print(done, flush=True)
    return 0


def existing_secret(settings: Settings) -> bytes:
    """The deployment secret as `serve` reads it, never a new one (a backup is made and restored under it)."""
    from webhost.apps.origins import secret_from_text
    from webhost.storage.backup import BackupProblem

    if settings.secret:
        return secret_from_text(settings.secret)
    path = settings.data_dir / "secret"
    try:
        value = path.read_text().strip()
    except FileNotFoundError:
        value = ""
    if not value:
        raise BackupProblem(
            f"no deployment secret (WEBHOST_SECRET, or {path}): the sealed rows are sealed under it; give the one "
            "the deployment runs with"
        )
    return secret_from_text(value)


async def _backup_or_restore(command: str, path: Path, url: str, secret: bytes) -> str:
    from webhost.storage import backup
    from webhost.storage.db import Storage

    storage = Storage(url)
    try:
        if command == "backup":
            made = await backup.backup(storage, path, secret=secret, webhost_version=__version__)
            rows = sum(made.rows.values())
            return (
                f"webhost backup: {rows} rows of {len(made.rows)} tables (schema {made.revision}) written to {path}. "
                "Sealed rows open only under this deployment's secret, which is not in the backup: keep it too."
            )
        restored = await backup.restore(storage, path, secret=secret)
        rows = sum(restored.rows.values())
        return f"webhost restore: {rows} rows of {len(restored.rows)} tables from {path} into {storage.shown_url}."
    finally:
        await storage.close()
