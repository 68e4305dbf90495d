"""The small local model (tools/small-model/server.mjs, SmolLM2-135M on node-llama-cpp) as a running
OpenAI-compatible server on loopback, for the tests that need a real model."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import BinaryIO

import httpx

from tests.support.process import ROOT, free_port
from webhost.demo.model_choice import SMALL_MODEL_ID, SmallModel, small_model_command

__all__ = [
    "SMALL_MODEL",
    "SMALL_MODEL_ID",
    "SmallModel",
    "SmallModelMissing",
    "check_small_model",
    "running_small_model",
]

SMALL_MODEL = SmallModel(ROOT)
# Loading takes seconds; the bound is for a machine busy with the rest of the suite.
START_TIMEOUT = 120.0


class SmallModelMissing(RuntimeError):
    pass


def check_small_model(small: SmallModel = SMALL_MODEL) -> None:
    """Raise, saying how to install it, unless the model file and its runtime are in place."""
    missing = small.missing()
    if missing:
        listed = ", ".join(str(path.relative_to(small.root)) for path in missing)
        raise SmallModelMissing(f"the small model is not installed ({listed} missing): run scripts/install-small-model")


@contextlib.contextmanager
def running_small_model(small: SmallModel = SMALL_MODEL) -> Iterator[str]:
    """Serve the small model on a free loopback port; yields its base URL (http://127.0.0.1:PORT/v1)."""
    check_small_model(small)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    # NODE_LLAMA_CPP_SKIP_DOWNLOAD: should the prebuilt binary not load, fail rather than reach for the network.
    env = {**os.environ, "NODE_LLAMA_CPP_SKIP_DOWNLOAD": "true"}
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            small_model_command(small, port), cwd=small.root, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            _wait_ready(proc, base_url, log)
            yield base_url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _wait_ready(proc: subprocess.Popen[bytes], base_url: str, log: BinaryIO) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the small model's server exited ({proc.returncode}):\n{_output(log)}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"the small model's server did not answer within {START_TIMEOUT:.0f} s:\n{_output(log)}")
        time.sleep(0.2)


def _output(log: BinaryIO) -> str:
    log.seek(0)
    return log.read().decode("utf-8", errors="replace")
