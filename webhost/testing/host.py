"""Run `webhost serve` as a subprocess on free ports with a known token, and stop it with every process reaped.

The one way webhost is started as a process: by the testing kit, by webhost's own tests
(`tests/support/process.py`) and by its benchmarks (`bench/_common.py`), which add their own options.
This module drives webhost only from the outside (shared/contract.md §1-§3): the command line, a
configuration file, ``GET /healthz`` and ``/?token=``. It imports nothing else from webhost.
"""

from __future__ import annotations

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
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Config = Mapping[str, Any] | str | os.PathLike[str] | None
"""A configuration: a dict in the mcp.json format, a path to such a file, or None for the embedded demo."""

LAUNCHER: tuple[str, ...] = (sys.executable, "-m", "webhost")
"""The command `serve` and its options follow: this Python's webhost."""


class WebhostFailed(RuntimeError):
    """`webhost serve` exited (`returncode`) or did not answer /healthz in time (`returncode` None);
    the message quotes its output, which `log` holds."""

    def __init__(self, message: str, *, returncode: int | None = None, log: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.log = log


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Webhost:
    """A running `webhost serve`."""

    proc: subprocess.Popen[bytes]
    port: int
    sandbox_port: int
    token: str
    log_path: Path
    config_path: Path | None
    data_dir: Path
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        """The page's WebSocket (docs/api.md)."""
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def login_url(self) -> str:
        """Opening this once signs a browser in (the cookie is set, the token leaves the address bar)."""
        return f"{self.base_url}/?token={self.token}"

    def log(self) -> str:
        """Everything `webhost serve` printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def get_json(self, path: str, timeout: float = 10.0) -> Any:
        """GET an API route with the bearer token (e.g. ``/api/audit``) and decode its JSON."""
        request = urllib.request.Request(f"{self.base_url}{path}", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def audit(self, server: str | None = None) -> list[dict[str, Any]]:
        """The audit entries (``GET /api/audit``), oldest first."""
        query = f"?server={urllib.parse.quote(server)}" if server else ""
        entries: list[dict[str, Any]] = self.get_json(f"/api/audit{query}")["entries"]
        return sorted(entries, key=lambda e: (str(e.get("ts", "")), int(e.get("id", 0) or 0)))


def _write_config(config: Config, directory: Path, tag: str) -> Path | None:
    if config is None:
        return None
    if isinstance(config, Mapping):
        path = directory / f"webhost-config-{tag}.json"  # several may share a directory (replicas)
        path.write_text(json.dumps(config), encoding="utf-8")
        return path
    return Path(config)


@contextlib.contextmanager
def start_webhost(
    config: Config = None,
    *,
    directory: str | os.PathLike[str] | None = None,
    token: str | None = None,
    args: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    start_timeout: float = 30.0,
    port: int | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    launcher: Sequence[str] = LAUNCHER,
    cwd: str | os.PathLike[str] | None = None,
    stop_signal: signal.Signals = signal.SIGTERM,
    stop_timeout: float = 10.0,
) -> Iterator[Webhost]:
    """Start `python -m webhost serve` on free ports; yield it once /healthz answers; stop it on exit.

    ``config`` is a dict in the mcp.json format, a path to such a file, or None for the embedded demo.
    The configuration, log and data directory go to ``directory`` (a temporary one if not given); replicas
    share a ``data_dir`` (database and secret) and a ``token``. ``port`` fixes the page's port; ``args``
    are more options of `serve`; ``env`` is added to the environment (and may override WEBHOST_TOKEN).
    ``launcher`` is what runs `serve` (e.g. webhost under a profiler), from ``cwd``; it is stopped with
    ``stop_signal``, and killed with everything it started after ``stop_timeout`` seconds.
    """
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="webhost-"))
        where = Path(directory)
        where.mkdir(parents=True, exist_ok=True)
        tag = secrets.token_hex(4)
        config_path = _write_config(config, where, tag)
        port, sandbox_port = port or free_port(), free_port()
        token = token or "t-" + secrets.token_urlsafe(16)
        data = Path(data_dir) if data_dir is not None else where / f"data-{tag}"
        argv = [
            *launcher,
            "serve",
            "--port",
            str(port),
            "--sandbox-port",
            str(sandbox_port),
            "--data-dir",
            str(data),
            *(args or []),
        ]
        if config_path is not None:
            argv += ["--config", str(config_path)]
        log_path = where / f"webhost-{tag}.log"
        with open(log_path, "wb") as log:
            # Its own process group, so stopping it reaches every server process it started.
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**os.environ, "WEBHOST_TOKEN": token, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        host = Webhost(proc, port, sandbox_port, token, log_path, config_path, data)
        try:
            wait_healthy(host, start_timeout)
            yield host
        finally:
            stop_webhost(host, stop_timeout, stop_signal)


def wait_healthy(host: Webhost, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if host.proc.poll() is not None:
            log = host.log()
            code = host.proc.returncode
            raise WebhostFailed(f"webhost serve exited ({code}):\n{log}", returncode=code, log=log)
        try:
            with urllib.request.urlopen(f"{host.base_url}/healthz", timeout=0.5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    log = host.log()
    raise WebhostFailed(f"webhost serve did not answer /healthz within {timeout:.0f} s:\n{log}", log=log)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_webhost(host: Webhost, timeout: float = 10.0, stop_signal: signal.Signals = signal.SIGTERM) -> None:
    """SIGTERM webhost (it stops its servers), bounded wait, then SIGKILL whatever is left of its group."""
    pgid = host.proc.pid  # start_new_session: the group id is the leader's pid
    if host.proc.poll() is None:
        host.proc.send_signal(stop_signal)
        try:
            host.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _signal_group(pgid, signal.SIGKILL)
            host.proc.wait(timeout=5)
    # Servers that outlived webhost (ignored SIGTERM, or orphaned): terminate, then kill.
    if _group_alive(pgid):
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + 3
        while _group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        _signal_group(pgid, signal.SIGKILL)
