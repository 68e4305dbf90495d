"""A stdio server that cannot be started names what was wrong, on either event loop webhost runs on.

asyncio's loop names the working directory or the command in its `OSError`; uvloop's names nothing, and the
page's one line (`upstream/connection.py`) tells "working directory not found" from "command not found" by it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import uvloop
from mcp import StdioServerParameters

from webhost.upstream import stdio

LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop] | None] = {"asyncio": None, "uvloop": uvloop.new_event_loop}


def spawn_error(server: StdioServerParameters, loop: str) -> OSError:
    async def spawn() -> OSError:
        try:
            with open(os.devnull, "w") as errlog:  # a real file: the child's stderr
                process = await stdio._spawn(server, errlog)
        except OSError as exc:
            return exc
        await process.aclose()
        raise AssertionError("the server started")

    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        return runner.run(spawn())


@pytest.fixture(params=[True, False], ids=["supervised", "direct"])
def supervised(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    monkeypatch.setattr(stdio, "SUPERVISE", request.param)
    return bool(request.param)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_missing_working_directory_is_named(loop: str, supervised: bool, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder"
    exc = spawn_error(StdioServerParameters(command=sys.executable, args=["-c", "pass"], cwd=missing), loop)
    assert isinstance(exc, FileNotFoundError) and str(exc.filename) == str(missing)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_missing_command_is_named(loop: str, supervised: bool, tmp_path: Path) -> None:
    exc = spawn_error(StdioServerParameters(command="definitely-not-a-command-here", cwd=tmp_path), loop)
    assert isinstance(exc, FileNotFoundError) and exc.filename == "definitely-not-a-command-here"
