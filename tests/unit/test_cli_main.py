"""`webhost serve` as `main([...])` in-process: a bad flag, variable or configuration is exit 2 and one line."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
import uvloop

from webhost import __version__, cli
from webhost.config import Config
from webhost.demo.config import demo_config
from webhost.settings import Settings
from webhost.storage.db import StorageUnavailable


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.fixture(autouse=True)
def no_webhost_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "WEBHOST_PORT",
        "WEBHOST_HOST",
        "WEBHOST_CONFIG",
        "WEBHOST_DATA_DIR",
        "WEBHOST_TOKEN",
        "WEBHOST_EVENT_LOOP",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Settings, Config]]:
    """Replace the servers (uvicorn) with a record of what main would serve."""
    calls: list[tuple[Settings, Config]] = []

    async def fake_serve(
        settings: Settings, config: Config, *, log_level: str = "warning", log_format: str = "text"
    ) -> int:
        calls.append((settings, config))
        return 0

    monkeypatch.setattr(cli, "serve", fake_serve)
    return calls


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "webhost.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def test_a_bad_flag_value_names_the_flag_and_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--port", "eighty"]) == 2
    line = one_line(capsys)
    assert line.startswith("webhost: bad setting --port / WEBHOST_PORT: ")


def test_a_bad_environment_variable_is_the_same_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBHOST_PORT", "99999")
    assert cli.main(["serve"]) == 2
    assert one_line(capsys).startswith("webhost: bad setting --port / WEBHOST_PORT: ")


def test_an_unknown_flag_is_argparse_usage_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--bogus"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith("unrecognized arguments: --bogus")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"webhost {__version__}"


def test_a_non_loopback_host_needs_allow_remote(
    capsys: pytest.CaptureFixture[str], served: list[tuple[Settings, Config]], tmp_path: Path
) -> None:
    assert cli.main(["serve", "--host", "0.0.0.0"]) == 2
    assert "refusing to listen on 0.0.0.0" in one_line(capsys)
    assert served == []
    config = write(tmp_path, {"mcpServers": {}})
    assert cli.main(["serve", "--host", "0.0.0.0", "--allow-remote", "--config", str(config)]) == 0
    assert "WARNING: listening on 0.0.0.0" in one_line(capsys)
    assert len(served) == 1


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "invalid JSON at line 1"),
        ({"servers": {}}, 'missing "mcpServers"'),
        (
            {"mcpServers": {"a": {"command": "x"}}, "webhost": {"timeouts": {"call": -1}}},
            "webhost.timeouts.call: must be a positive number of seconds",
        ),
        (
            {"mcpServers": {"a": {"command": "x"}}, "webhost": {"servers": {"b": {}}}},
            "webhost.servers.b: names a server that is not in mcpServers",
        ),
    ],
    ids=["not-json", "no-mcpServers", "bad-timeout", "unknown-policy-server"],
)
def test_a_bad_configuration_is_exit_2_and_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    served: list[tuple[Settings, Config]],
    document: Any,
    message: str,
) -> None:
    path = write(tmp_path, document)
    assert cli.main(["serve", "--config", str(path)]) == 2
    line = one_line(capsys)
    assert line.startswith(f"webhost: configuration error: {path}: ") and message in line
    assert served == []


def test_a_missing_configuration_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--config", str(tmp_path / "nope.json")]) == 2
    assert one_line(capsys).endswith("nope.json: file not found")


def test_the_configurations_data_dir_applies_unless_a_flag_gives_one(
    tmp_path: Path, served: list[tuple[Settings, Config]]
) -> None:
    path = write(tmp_path, {"mcpServers": {"a": {"command": "x"}}, "webhost": {"dataDir": str(tmp_path / "cfg")}})
    assert cli.main(["serve", "--config", str(path)]) == 0
    assert served[-1][0].data_dir == tmp_path / "cfg"
    assert list(served[-1][1].servers) == ["a"]
    assert cli.main(["serve", "--config", str(path), "--data-dir", str(tmp_path / "flag")]) == 0
    assert served[-1][0].data_dir == tmp_path / "flag"


def test_without_a_configuration_the_demo_is_served(served: list[tuple[Settings, Config]]) -> None:
    assert cli.main(["serve"]) == 0
    assert list(served[-1][1].servers) == ["demo"]


def test_serve_runs_on_uvloop_by_default_and_on_asyncio_when_asked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def fake_serve(
        settings: Settings, config: Config, *, log_level: str = "warning", log_format: str = "text"
    ) -> int:
        loops.append(asyncio.get_running_loop())
        return 0

    monkeypatch.setattr(cli, "serve", fake_serve)
    data = ["--data-dir", str(tmp_path / "data")]
    assert cli.main(["serve", *data]) == 0
    assert cli.main(["serve", "--event-loop", "asyncio", *data]) == 0
    monkeypatch.setenv("WEBHOST_EVENT_LOOP", "uvloop")
    assert cli.main(["serve", *data]) == 0
    assert [isinstance(loop, uvloop.Loop) for loop in loops] == [True, False, True]


def test_without_uvloop_auto_falls_back_and_uvloop_is_one_line(
    capsys: pytest.CaptureFixture[str],
    served: list[tuple[Settings, Config]],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    data = ["--data-dir", str(tmp_path / "data")]
    assert cli.main(["serve", *data]) == 0 and len(served) == 1
    assert cli.main(["serve", "--event-loop", "uvloop", *data]) == 2
    assert one_line(capsys) == (
        "webhost: bad setting --event-loop / WEBHOST_EVENT_LOOP: "
        "uvloop is not installed (pip install uvloop; it does not run on Windows)"
    )
    assert len(served) == 1


def test_a_data_directory_that_is_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: list[tuple[Settings, Config]]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("a file", encoding="utf-8")
    assert cli.main(["serve", "--data-dir", str(taken)]) == 2
    assert one_line(capsys) == f"webhost: data directory {taken}: not a directory"
    assert served == []


@pytest.mark.parametrize(
    ("raised", "status", "line"),
    [
        (StorageUnavailable("cannot reach the database at postgresql://w:***@db/w"), 2, "webhost: cannot reach"),
        (KeyboardInterrupt(), 0, None),
    ],
    ids=["database-unavailable", "ctrl-c"],
)
def test_what_stops_serve_is_a_status_and_at_most_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
    status: int,
    line: str | None,
) -> None:
    async def failing_serve(
        settings: Settings, config: Config, *, log_level: str = "warning", log_format: str = "text"
    ) -> int:
        raise raised

    monkeypatch.setattr(cli, "serve", failing_serve)
    assert cli.main(["serve", "--data-dir", str(tmp_path / "data")]) == status
    if line is None:
        assert capsys.readouterr().err == ""
    else:
        assert one_line(capsys).startswith(line)


@pytest.mark.anyio
async def test_the_database_is_migrated_before_listening(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    await cli.prepare_database(settings, demo_config())
    assert (tmp_path / "webhost.sqlite3").exists()
    await cli.prepare_database(settings, demo_config())  # at head already: nothing to do, no error


def test_the_login_token_and_oauth_codes_are_masked_in_uvicorns_log_lines() -> None:
    cli.hide_login_tokens()
    cli.hide_login_tokens()  # once is enough: the filter is not added twice
    for name in ("uvicorn.access", "uvicorn.error"):
        assert sum(isinstance(f, cli._HideToken) for f in logging.getLogger(name).filters) == 1
    hide = cli._HideToken()
    line = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/1.1" %d', None, None)
    line.args = ("127.0.0.1:5000", "GET", "/oauth/callback?code=abc&state=xyz&x=1", 200)
    assert hide.filter(line)  # masked, never dropped
    assert line.getMessage() == '127.0.0.1:5000 - "GET /oauth/callback?code=***&state=***&x=1 HTTP/1.1" 200'
    plain = logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1, "GET /?token=t-secret&view=tools", None, None)
    assert hide.filter(plain) and plain.getMessage() == "GET /?token=***&view=tools"


def test_the_token_is_masked_whatever_spelling_of_its_name_reaches_the_log() -> None:
    """A name is masked as starlette reads it (decoded: `?tok%65n=` logs in), and in any case (`?TOKEN=` is
    refused, but carries the real token to the log all the same)."""
    hide = cli._HideToken()
    spellings = ["tok%65n", "TOKEN", "Token", "%54OKEN", "c%6Fde", "STATE", "tok%65n"]
    for name in spellings:
        line = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/1.1" %d', None, None)
        line.args = ("127.0.0.1:5000", "GET", f"/?view=tools&{name}=t-secret&x=token", 200)
        assert hide.filter(line)
        assert "t-secret" not in line.getMessage(), name
        assert f"/?view=tools&{name}=***&x=token HTTP" in line.getMessage()  # other names and values untouched
    message = logging.LogRecord(
        "uvicorn.error", logging.INFO, __file__, 1, "GET /?tokens=kept&tok%65n=t-secret", None, None
    )
    assert hide.filter(message) and message.getMessage() == "GET /?tokens=kept&tok%65n=***"


def test_the_login_url_names_a_reachable_host() -> None:
    assert cli._display_host("0.0.0.0") == cli._display_host("::") == "127.0.0.1"
    assert cli._display_host("127.0.0.2") == "127.0.0.2"
