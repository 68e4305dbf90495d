"""The configuration file: formats other tools write, ${VAR} expansion, and one clear error per bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webhost.config import ConfigError, load_config, parse_config


def parse(document: object, environ: dict[str, str] | None = None) -> object:
    return parse_config(json.dumps(document), "servers.json", environ or {})


def error_of(text: str, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "servers.json", environ or {})
    return str(info.value)


def test_reads_the_three_transports_in_the_shared_format() -> None:
    config = parse({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"K": "V"}, "cwd": "/srv"},
        "weather": {"type": "http", "url": "https://weather.example.com/mcp", "headers": {"Authorization": "B"}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
        "plain": {"url": "http://127.0.0.1:9001/mcp"},
        "camel": {"type": "streamableHttp", "url": "http://127.0.0.1:9002/mcp"},
        "dashed": {"type": "streamable-http", "url": "http://127.0.0.1:9003/mcp"},
        "typed": {"type": "stdio", "command": "srv"},
    }})
    servers = config.servers  # type: ignore[attr-defined]
    assert servers["files"].transport == "stdio" and servers["files"].args == ("-y", "some-server")
    assert servers["files"].env == {"K": "V"} and servers["files"].cwd == "/srv"
    assert servers["weather"].transport == "http" and servers["weather"].headers == {"Authorization": "B"}
    assert servers["legacy"].transport == "sse"
    assert {servers[n].transport for n in ("plain", "camel", "dashed")} == {"http"}
    assert servers["typed"].transport == "stdio"


def test_expands_environment_variables_in_env_and_headers_only_from_the_environment() -> None:
    config = parse({"mcpServers": {
        "a": {"command": "x", "env": {"TOKEN": "${SECRET}", "MIXED": "pre-${SECRET}-post", "D": "${NOPE:-dflt}"}},
        "b": {"url": "https://h.example/mcp", "headers": {"Authorization": "Bearer ${SECRET}"}},
    }}, {"SECRET": "s3"})
    servers = config.servers  # type: ignore[attr-defined]
    assert servers["a"].env == {"TOKEN": "s3", "MIXED": "pre-s3-post", "D": "dflt"}
    assert servers["b"].headers == {"Authorization": "Bearer s3"}


def test_an_unset_variable_names_the_entry_and_the_field() -> None:
    message = error_of(json.dumps({"mcpServers": {"b": {"url": "https://h/mcp", "headers": {"X": "${MISSING}"}}}}))
    assert message == "servers.json: mcpServers.b.headers.X: environment variable MISSING is not set"


def test_bad_json_names_line_and_column() -> None:
    message = error_of('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}')
    assert message.startswith("servers.json: invalid JSON at line 3, column")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([], "the top level must be a JSON object"),
        ({}, "missing \"mcpServers\""),
        ({"mcpServers": []}, "\"mcpServers\" must be an object"),
        ({"mcpServers": {"a": "npx"}}, "mcpServers.a: each server entry must be an object"),
        ({"mcpServers": {"a": {}}}, "mcpServers.a: needs either \"command\" (stdio) or \"url\" (HTTP)"),
        ({"mcpServers": {"a": {"command": ""}}}, "mcpServers.a.command: must be a non-empty string"),
        ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "mcpServers.a.args: must be a list of strings"),
        ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, "mcpServers.a.env.K: must be a string"),
        ({"mcpServers": {"a": {"type": "carrier-pigeon", "url": "http://x"}}}, "mcpServers.a.type: unknown transport"),
        ({"mcpServers": {"a": {"url": "ftp://x/mcp"}}}, "mcpServers.a.url: must be an absolute http"),
        ({"mcpServers": {"a b": {"command": "x"}}}, "mcpServers.a b: server names may use"),
        ({"mcpServers": {}, "webhost": {"timeouts": {"call": -1}}}, "webhost.timeouts.call: must be a positive"),
        ({"mcpServers": {}, "webhost": {"allowedOrigins": ["nope"]}}, "webhost.allowedOrigins: must be a list"),
        ({"mcpServers": {}, "webhost": {"servers": {"ghost": {}}}}, "webhost.servers.ghost: names a server"),
        ({"mcpServers": {"a": {"command": "x"}}, "webhost": {"servers": {"a": {"appToolCalls": "maybe"}}}},
         "webhost.servers.a.appToolCalls"),
        ({"mcpServers": {}, "webhost": {"roots": [{"uri": "http://x"}]}}, "webhost.roots[0].uri: must be a file://"),
    ],
)
def test_every_bad_file_gets_one_message_naming_the_place(document: object, expected: str) -> None:
    message = error_of(json.dumps(document))
    assert message.startswith("servers.json: ")
    assert expected in message


def test_webhost_settings_live_beside_mcp_servers() -> None:
    config = parse({"mcpServers": {"a": {"command": "x"}}, "webhost": {
        "timeouts": {"call": 5, "human": 60}, "roots": [{"uri": "file:///srv", "name": "srv"}],
        "servers": {"a": {"appToolCalls": "ask", "tools": {"rm": "deny"}, "permissions": ["camera"]}},
    }})
    options = config.options  # type: ignore[attr-defined]
    assert options.call_timeout == 5 and options.human_timeout == 60
    assert options.roots[0].uri == "file:///srv"
    assert options.policy("a").decision_for("rm") == "deny"
    assert options.policy("a").decision_for("other") == "ask"
    assert options.policy("unconfigured").decision_for("x") == "allow"


def test_missing_and_unreadable_files_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.json")
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(binary)
