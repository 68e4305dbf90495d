"""Settings: one field per `webhost serve` option; flag over WEBHOST_* over the config file over the default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webhost.cli import SettingsProblem, build_parser, main, settings_from, with_config_defaults
from webhost.config import Config, parse_config
from webhost.settings import Settings, env_for, flag_for


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in Settings.model_fields:
        monkeypatch.delenv(env_for(name), raising=False)


def config_with_data_dir(data_dir: str) -> Config:
    return parse_config(json.dumps({"mcpServers": {}, "webhost": {"dataDir": data_dir}}), "c.json", {})


def test_defaults_are_the_contract_ones() -> None:
    settings = settings_from(["serve"])
    assert (settings.host, settings.port, settings.sandbox_port, settings.sandbox_domain) == (
        "127.0.0.1",
        8700,
        8701,
        "localhost",
    )
    assert (settings.config, settings.data_dir, settings.allow_remote, settings.log_level) == (
        None,
        Path(".webhost-data"),
        False,
        "warning",
    )
    assert settings.public_origins == () and settings.sandbox_port_for_browsers() == 8701
    assert not settings.token_from_env and len(settings.token) >= 24


def test_a_flag_wins_over_the_environment_which_wins_over_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOST_PORT", "9000")
    monkeypatch.setenv("WEBHOST_SANDBOX_SCHEME", "https")
    monkeypatch.setenv("WEBHOST_ALLOW_REMOTE", "1")
    monkeypatch.setenv("WEBHOST_PUBLIC_ORIGINS", "https://a.example/, https://b.example")
    from_env = settings_from(["serve"])
    assert (from_env.port, from_env.sandbox_scheme, from_env.allow_remote) == (9000, "https", True)
    assert from_env.public_origins == ("https://a.example", "https://b.example")
    from_flags = settings_from(["serve", "--port", "9100", "--public-origin", "https://c.example/"])
    assert from_flags.port == 9100 and from_flags.public_origins == ("https://c.example",)


def test_data_dir_flag_over_environment_over_config_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = config_with_data_dir("/from/config")
    assert with_config_defaults(settings_from(["serve"]), config).data_dir == Path("/from/config")
    monkeypatch.setenv("WEBHOST_DATA_DIR", "/from/env")
    assert with_config_defaults(settings_from(["serve"]), config).data_dir == Path("/from/env")
    flagged = settings_from(["serve", "--data-dir", str(tmp_path)])
    assert with_config_defaults(flagged, config).data_dir == tmp_path


def test_the_token_comes_from_webhost_token_and_an_empty_one_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOST_TOKEN", "from-env")
    given = settings_from(["serve"])
    assert given.token == "from-env" and given.token_from_env
    assert with_config_defaults(given, config_with_data_dir("/d")).token_from_env
    monkeypatch.setenv("WEBHOST_TOKEN", "")
    generated = settings_from(["serve"])
    assert generated.token and not generated.token_from_env


def test_the_token_is_not_a_flag() -> None:
    assert flag_for("token") is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--token", "x"])


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["serve", "--port", "web"], {}, "webhost: bad setting --port / WEBHOST_PORT: Input should be a valid integer"),
        (["serve"], {"WEBHOST_PORT": "70000"}, "webhost: bad setting --port / WEBHOST_PORT: Input should be less"),
        (
            ["serve"],
            {"WEBHOST_SANDBOX_SCHEME": "gopher"},
            "webhost: bad setting --sandbox-scheme / WEBHOST_SANDBOX_SCHEME: Input should be 'http' or 'https'",
        ),
        (["serve"], {"WEBHOST_HOST": "0.0.0.0"}, "webhost: refusing to listen on 0.0.0.0"),
    ],
    ids=["bad-port-flag", "port-out-of-range", "bad-scheme-env", "remote-host-from-env"],
)
def test_bad_settings_get_one_line_and_status_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    env: dict[str, str],
    expected: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(expected) and len(err.strip().splitlines()) == 1


def test_a_settings_problem_names_the_flag_and_the_variable() -> None:
    with pytest.raises(SettingsProblem, match="^--sandbox-public-port / WEBHOST_SANDBOX_PUBLIC_PORT: "):
        settings_from(["serve", "--sandbox-public-port", "-1"])


def test_serve_help_shows_every_flag_with_its_variable(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for name, field in Settings.model_fields.items():
        flag = flag_for(name)
        assert field.description
        if flag is not None:
            assert flag in help_text and env_for(name) in help_text


def test_an_ipv6_loopback_host_is_served_on_bracketed_and_localhost_origins() -> None:
    """`--host ::1` used to end in a traceback ("invalid host origin 'http://::1:8700'")."""
    from sandbox_proxy.app import create_sandbox_app
    from webhost.cli import _display_host

    settings = Settings(host="::1", token="t-0123456789")
    assert settings.host_origins() == ["http://[::1]:8700", "http://localhost:8700"]
    create_sandbox_app(secret=b"s" * 32, domain="localhost", host_origins=settings.host_origins())  # no ValueError
    assert _display_host("::1") == "localhost" and _display_host("fe80::1") == "[fe80::1]"
