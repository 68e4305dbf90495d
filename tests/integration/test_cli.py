"""`webhost serve` as a user runs it: clear refusals, no tracebacks, the demo with no configuration."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.process import ROOT, free_port, run_webhost


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webhost", "serve", *args], cwd=ROOT, capture_output=True, text=True, timeout=30
    )


def test_a_bad_configuration_file_exits_non_zero_with_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"w": {"type": "http", "url": 5}}}))
    result = serve("--config", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip() == f"webhost: configuration error: {bad}: mcpServers.w.url: must be a string "
        "(an http:// or https:// URL)"
    )


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {\n "a": {"command": "x"\n}')
    result = serve("--config", str(bad))
    assert result.returncode == 2 and "line 3, column" in result.stderr and "Traceback" not in result.stderr


def test_binding_to_every_interface_needs_an_explicit_flag() -> None:
    result = serve("--host", "0.0.0.0")
    assert result.returncode == 2
    assert "--allow-remote" in result.stderr


def test_python_dash_m_and_the_console_script_are_the_same_program() -> None:
    module = subprocess.run([sys.executable, "-m", "webhost", "--help"], capture_output=True, text=True, timeout=30)
    script = Path(sys.executable).with_name("webhost")
    console = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert module.returncode == console.returncode == 0
    assert "serve" in module.stdout and "serve" in console.stdout


def test_serve_without_config_runs_the_embedded_demo(tmp_path: Path) -> None:
    with run_webhost(tmp_path, None) as host:
        with host.http() as client:
            servers = client.get("/api/servers").json()["servers"]
    assert [s["name"] for s in servers] == ["demo"]


def test_a_generated_token_is_printed_as_a_login_url(tmp_path: Path) -> None:
    with run_webhost(tmp_path, {}, env={"WEBHOST_TOKEN": ""}) as host:
        log = host.log()
    assert "?token=" in log and f"http://127.0.0.1:{host.port}/?token=" in log


def _write(name: str, text: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_text(text)
        return path

    return make


def _fifo(folder: Path) -> Path:
    path = folder / "fifo.json"
    os.mkfifo(path)  # opening it for reading would block until a writer came
    return path


def _server_policy(policy: dict[str, object]) -> str:
    return json.dumps({"mcpServers": {"a": {"command": "x"}}, "webhost": {"servers": {"a": policy}}})


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_write("deep.json", "[" * 100_000), "invalid JSON: nested too deeply"),
        (
            _write("int.json", '{"mcpServers": {}, "webhost": {"maxInputRounds": ' + "9" * 5000 + "}}"),
            "invalid JSON: a number has too many digits",
        ),
        (_write("perm.json", _server_policy({"permissions": [{}]})), "webhost.servers.a.permissions: must be a list"),
        (_write("compat.json", _server_policy({"cspCompat": [[]]})), "webhost.servers.a.cspCompat: must be a list"),
        (
            _write("nan.json", '{"mcpServers": {}, "webhost": {"timeouts": {"call": NaN}}}'),
            "webhost.timeouts.call: must be a positive number of seconds",
        ),
        (
            _write("inf.json", '{"mcpServers": {}, "webhost": {"timeouts": {"human": Infinity}}}'),
            "webhost.timeouts.human: must be a positive number of seconds",
        ),
        (
            _write("neg.json", '{"mcpServers": {}, "webhost": {"timeouts": {"connect": -1}}}'),
            "webhost.timeouts.connect: must be a positive number of seconds",
        ),
        (
            _write("zero.json", '{"mcpServers": {}, "webhost": {"timeouts": {"appHandshake": 0}}}'),
            "webhost.timeouts.appHandshake: must be a positive number of seconds",
        ),
        (
            _write("unclosed.json", json.dumps({"mcpServers": {"a": {"command": "x", "env": {"K": "${UNCLOSED"}}}})),
            'mcpServers.a.env.K: unclosed "${"',
        ),
        (
            _write("badvar.json", json.dumps({"mcpServers": {"a": {"url": "https://h.example/${1BAD}"}}})),
            'mcpServers.a.url: "${1BAD}" is not a variable reference',
        ),
        (_fifo, "cannot read the file (not a regular file)"),
        (lambda folder: folder, "cannot read the file (a directory)"),
        (lambda folder: folder / "missing.json", "file not found"),
    ],
    ids=[
        "deep-nesting",
        "huge-integer",
        "unhashable-permission",
        "unhashable-compat",
        "nan",
        "infinity",
        "negative",
        "zero",
        "unclosed-var",
        "bad-var-name",
        "fifo",
        "directory",
        "missing",
    ],
)
def test_hostile_configuration_files_get_one_line_and_status_2(
    tmp_path: Path, make: Callable[[Path], Path], expected: str
) -> None:
    path = make(tmp_path)
    result = serve("--config", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(f"webhost: configuration error: {path}: ")
    assert expected in result.stderr


def _mount_tmpfs(folder: Path, options: str) -> bool:
    """As root, a small tmpfs at `folder` (root ignores file modes, so only a mount makes a folder read-only)."""
    folder.mkdir()
    return (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True, timeout=10
        ).returncode
        == 0
    )


def _can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def _bad_data_dir(kind: str, tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / kind
    if kind == "file":
        folder.write_text("not a folder")
        yield folder
        return
    mounted = False
    try:
        if os.geteuid() != 0:
            folder.mkdir()
            folder.chmod(0o555)
        else:
            mounted = _mount_tmpfs(folder, "ro,size=64k" if kind == "read-only" else "size=64k")
            assert mounted, "could not mount a tmpfs as root"
            if kind == "full":
                with contextlib.suppress(OSError), open(folder / "filler", "wb", buffering=0) as filler:
                    while True:
                        filler.write(b"\0" * 4096)
        yield folder
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=10)
        elif folder.is_dir():
            folder.chmod(0o755)


@pytest.mark.parametrize("kind", ["file", "read-only", *(["full"] if _can_mount() else [])])
def test_a_bad_data_directory_gets_one_line_and_status_2(tmp_path: Path, kind: str) -> None:
    with _bad_data_dir(kind, tmp_path) as folder:
        result = serve("--data-dir", str(folder), "--port", str(free_port()), "--sandbox-port", str(free_port()))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"webhost: data directory {folder}: ")
    reason = {"file": "not a directory", "read-only": "cannot write there (", "full": "No space left on device"}
    assert reason[kind] in result.stderr
