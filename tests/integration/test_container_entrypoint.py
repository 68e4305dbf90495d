"""The Docker image's entry point, run without Docker: what docker-compose.yml starts must work here too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from tests.support.process import ROOT, free_port


def entrypoint() -> list[str]:
    text = (ROOT / "Dockerfile").read_text()
    match = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M)
    assert match, "Dockerfile has an exec-form ENTRYPOINT"
    return list(json.loads(match.group(1)))


def test_compose_publishes_both_ports_on_loopback_only_with_a_health_check() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    service = compose["services"]["webhost"]
    assert sorted(service["ports"]) == ["127.0.0.1:8700:8700", "127.0.0.1:8701:8701"]
    assert "WEBHOST_TOKEN" in service["environment"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    # The health check is the image's own (no curl in the image), so compose must not replace it with one that fails.
    assert "healthcheck" not in service
    healthcheck = re.search(r"^HEALTHCHECK .*?CMD (\[.*\])$", dockerfile, re.M | re.S)
    assert healthcheck and "/healthz" in healthcheck.group(1), "the image checks /healthz"
    assert re.search(r"^USER webhost$", dockerfile, re.M), "the image runs as a non-root user"


def test_the_entry_point_serves_healthz_and_still_checks_hosts(tmp_path: Path) -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    command = list(compose["services"]["webhost"]["command"])
    port, sandbox = free_port(), free_port()
    command[command.index("--port") + 1] = str(port)
    command[command.index("--sandbox-port") + 1] = str(sandbox)
    argv = entrypoint() + command
    assert argv[:2] == ["webhost", "serve"]
    argv[argv.index("--data-dir") + 1] = str(tmp_path / "data")
    process = subprocess.Popen(
        [sys.executable, "-m", "webhost", *argv[1:]],
        cwd=tmp_path,
        # PYTHONPATH: this checkout, not whichever one the venv has installed in editable mode.
        env={"WEBHOST_TOKEN": "compose-token", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        while True:  # until it answers, or it ended (a busy machine only makes the start-up slower)
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
                break
            except httpx.HTTPError:
                assert process.poll() is None, process.communicate()[0].decode(errors="replace")
                time.sleep(0.05)
        assert health.json() == {"status": "ok"}
        foreign = httpx.get(
            f"http://127.0.0.1:{port}/api/servers",
            headers={"Host": f"rebound.example:{port}", "Authorization": "Bearer compose-token"},
        )
        assert foreign.status_code == 421
        ours = httpx.get(f"http://127.0.0.1:{port}/api/servers", headers={"Authorization": "Bearer compose-token"})
        assert ours.status_code == 200
        assert httpx.get(f"http://127.0.0.1:{sandbox}/healthz").status_code == 200
    finally:
        process.terminate()
        output = process.communicate(timeout=15)[0].decode()
    assert "WARNING: listening on 0.0.0.0" in output
