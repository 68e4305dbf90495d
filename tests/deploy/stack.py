"""A compose stack brought up as docs/deploy.md says, and always taken down (containers, networks, volumes)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.deploy.engine import compose_command, docker, docker_host, run
from tests.support.process import ROOT

UP_SECONDS = 300.0


@dataclass
class Stack:
    project: str
    files: Sequence[Path]
    env: dict[str, str] = field(default_factory=dict)

    def compose(self, *args: str, timeout: float = UP_SECONDS, check: bool = True) -> str:
        files = [arg for path in self.files for arg in ("-f", str(path))]
        command = [*compose_command(), "--project-name", self.project, *files, *args]
        return run(command, timeout=timeout, check=check, env=self.env).stdout.strip()

    def container(self, service: str) -> str:
        """The id of the service's container."""
        found = self.compose("ps", "-q", service)
        if not found:
            raise AssertionError(f"no container for {service}:\n{self.compose('ps', check=False)}")
        return found.splitlines()[0]

    def logs(self, *services: str) -> str:
        return self.compose("logs", "--no-color", "--tail", "80", *services, check=False)


@contextlib.contextmanager
def stack_up(project: str, files: Sequence[str], env: dict[str, str]) -> Iterator[Stack]:
    """`compose up -d --no-build` (the image is built once, by scripts/test-deploy), then `down` whatever happens."""
    docker_host()
    # Compose's own HTTP timeout (60 s) is shorter than creating a container takes on vfs under load (each copies
    # the whole image): compose's calls wait as long as the whole `up` may.
    stack = Stack(project, [ROOT / name for name in files], {"COMPOSE_HTTP_TIMEOUT": f"{UP_SECONDS:.0f}", **env})
    try:
        stack.compose("up", "--detach", "--no-build")
        yield stack
    finally:
        stack.compose("down", "--volumes", "--timeout", "10", check=False)
        docker("network", "prune", "--force", check=False)
