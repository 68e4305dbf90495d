"""The Docker engine scripts/test-deploy started (DOCKER_HOST: a private socket), driven through its CLI: the
commands a person types, with every wait bounded. Compose is Debian's `docker-compose` (1.29) or the
`docker compose` plugin, whichever is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tests.support.process import ROOT

IMAGE = "webhost:latest"
IMAGE_WITHOUT_NODE = "webhost:no-node"
COMMAND_SECONDS = 300.0
T = TypeVar("T")


class EngineMissing(RuntimeError):
    """No DOCKER_HOST: these tests run under scripts/test-deploy, which starts the engine."""


def docker_host() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    if not host.startswith("unix://"):
        raise EngineMissing("tests/deploy run on the private engine that scripts/test-deploy starts: run that script")
    return host


def run(
    args: Sequence[str],
    *,
    timeout: float = COMMAND_SECONDS,
    check: bool = True,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """A command with its output captured; a failure raises with the command's own words."""
    done = subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def docker(*args: str, timeout: float = COMMAND_SECONDS, check: bool = True) -> str:
    docker_host()
    return run(["docker", *args], timeout=timeout, check=check).stdout.strip()


def container_logs(container: str) -> str:
    """A container's output, stdout and stderr (where its logging goes) both: `docker logs` replays each on the
    stream it was written to, and `docker()` keeps only stdout."""
    docker_host()
    done = run(["docker", "logs", container])
    return done.stdout + done.stderr


def compose_command() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return ["docker", "compose"]


def inspect(name: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = json.loads(docker("inspect", name))
    return found[0]


def wait_for(what: str, probe: Callable[[], T | None], *, seconds: float, detail: Callable[[], str] = str) -> T:
    """Poll `probe` until it returns something other than None, for at most `seconds` (the engine gives no event
    to await for a health status; its own checks run on an interval)."""
    deadline = time.monotonic() + seconds
    while True:
        found = probe()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:.0f} s\n{detail()}")
        time.sleep(0.5)


def health(container: str) -> str:
    state = inspect(container)["State"]
    return str(state.get("Health", {}).get("Status", "none")) if state.get("Running") else "exited"


def wait_healthy(container: str, *, seconds: float = 120) -> None:
    def probe() -> bool | None:
        status = health(container)
        if status == "exited":
            raise AssertionError(f"{container} exited:\n{container_logs(container)[-6000:]}")
        return True if status == "healthy" else None

    wait_for(f"{container} healthy", probe, seconds=seconds, detail=lambda: container_logs(container)[-6000:])


def image_megabytes(image: str) -> float:
    return int(inspect(image)["Size"]) / 1_000_000
