"""Stopping the demo stops its model (issue 28 item 7): scripts/demo-serve (what scripts/demo runs once webhost is
installed) with the real small model, stopped the two ways a person does it: Ctrl+C in its terminal (SIGINT to
the foreground process group) and a SIGTERM to the script (a process manager, `kill`). Afterwards no process it
started is left: each carries the test's marker in its environment, so the check finds them all, by name of
nothing. At c4f1242 the model's node process outlived the demo."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.process import ROOT, marked_env, processes_with_marker, wait_for_no_processes
from tests.support.small_model import check_small_model
from webhost.testing.host import free_port

pytestmark = pytest.mark.slow_model

START_TIMEOUT = 180.0  # the model's server loads, then webhost starts: bounds a hang only


def wait_started(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"scripts/demo-serve exited ({proc.returncode}):\n{log.read_text()}"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the demo did not answer within {START_TIMEOUT:.0f} s:\n{log.read_text()}")


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "(gone)"


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_stopping_the_demo_stops_the_model_server_and_everything_else(tmp_path: Path, how: str) -> None:
    check_small_model()
    marker = secrets.token_hex(8)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    env.update(marked_env(marker))
    port, sandbox = free_port(), free_port()
    log = tmp_path / "demo.log"
    args = ["scripts/demo-serve", "--port", str(port), "--sandbox-port", str(sandbox), "--data-dir", str(tmp_path)]
    with log.open("wb") as out:
        # A session of its own: its process group stands for the terminal's foreground group (Ctrl+C's target).
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_started(proc, port, log)
        assert "the chat talks to the small local model" in log.read_text()
        running = [command_of(pid) for pid in processes_with_marker(marker)]
        assert any("server.mjs" in c for c in running), running  # the model's server is among them
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        left = wait_for_no_processes(marker, timeout=30)
        assert not left, [command_of(pid) for pid in left]
    finally:
        for pid in processes_with_marker(marker):  # only what this test started (its marker), never by name
            os.kill(pid, signal.SIGKILL)
