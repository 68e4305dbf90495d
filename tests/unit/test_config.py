"""The configuration file: formats other tools write, ${VAR} expansion, and one clear error per bad file."""

from __future__ import annotations

import json
import os
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
    config = parse(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"K": "V"}, "cwd": "/srv"},
                "weather": {
                    "type": "http",
                    "url": "https://weather.example.com/mcp",
                    "headers": {"Authorization": "B"},
                },
                "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
                "plain": {"url": "http://127.0.0.1:9001/mcp"},
                "camel": {"type": "streamableHttp", "url": "http://127.0.0.1:9002/mcp"},
                "dashed": {"type": "streamable-http", "url": "http://127.0.0.1:9003/mcp"},
                "typed": {"type": "stdio", "command": "srv"},
            }
        }
    )
    servers = config.servers  # type: ignore[attr-defined]
    assert servers["files"].transport == "stdio" and servers["files"].args == ("-y", "some-server")
    assert servers["files"].env == {"K": "V"} and servers["files"].cwd == "/srv"
    assert servers["weather"].transport == "http" and servers["weather"].headers == {"Authorization": "B"}
    assert servers["legacy"].transport == "sse"
    assert {servers[n].transport for n in ("plain", "camel", "dashed")} == {"http"}
    assert servers["typed"].transport == "stdio"


def test_expands_environment_variables_in_env_and_headers_only_from_the_environment() -> None:
    config = parse(
        {
            "mcpServers": {
                "a": {
                    "command": "x",
                    "env": {"TOKEN": "${SECRET}", "MIXED": "pre-${SECRET}-post", "D": "${NOPE:-dflt}"},
                },
                "b": {"url": "https://h.example/mcp", "headers": {"Authorization": "Bearer ${SECRET}"}},
            }
        },
        {"SECRET": "s3"},
    )
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
        ({}, 'missing "mcpServers"'),
        ({"mcpServers": []}, '"mcpServers" must be an object'),
        ({"mcpServers": {"a": "npx"}}, "mcpServers.a: each server entry must be an object"),
        ({"mcpServers": {"a": {}}}, 'mcpServers.a: needs either "command" (stdio) or "url" (HTTP)'),
        ({"mcpServers": {"a": {"command": ""}}}, "mcpServers.a.command: must be a non-empty string"),
        ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, "mcpServers.a.args: must be a list of strings"),
        ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, "mcpServers.a.env.K: must be a string"),
        ({"mcpServers": {"a": {"type": "carrier-pigeon", "url": "http://x"}}}, "mcpServers.a.type: unknown transport"),
        ({"mcpServers": {"a": {"url": "ftp://x/mcp"}}}, "mcpServers.a.url: must be an absolute http"),
        ({"mcpServers": {"a b": {"command": "x"}}}, "mcpServers.a b: server names may use"),
        ({"mcpServers": {}, "webhost": {"timeouts": {"call": -1}}}, "webhost.timeouts.call: must be a positive"),
        ({"mcpServers": {}, "webhost": {"allowedOrigins": ["nope"]}}, "webhost.allowedOrigins: must be a list"),
        ({"mcpServers": {}, "webhost": {"servers": {"ghost": {}}}}, "webhost.servers.ghost: names a server"),
        (
            {"mcpServers": {"a": {"command": "x"}}, "webhost": {"servers": {"a": {"appToolCalls": "maybe"}}}},
            "webhost.servers.a.appToolCalls",
        ),
        ({"mcpServers": {}, "webhost": {"roots": [{"uri": "http://x"}]}}, "webhost.roots[0].uri: must be a file://"),
    ],
)
def test_every_bad_file_gets_one_message_naming_the_place(document: object, expected: str) -> None:
    message = error_of(json.dumps(document))
    assert message.startswith("servers.json: ")
    assert expected in message


def test_webhost_settings_live_beside_mcp_servers() -> None:
    config = parse(
        {
            "mcpServers": {"a": {"command": "x"}},
            "webhost": {
                "timeouts": {"call": 5, "human": 60},
                "roots": [{"uri": "file:///srv", "name": "srv"}],
                "servers": {"a": {"appToolCalls": "ask", "tools": {"rm": "deny"}, "permissions": ["camera"]}},
            },
        }
    )
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


def _server_policy(policy: dict[str, object]) -> str:
    return json.dumps({"mcpServers": {"a": {"command": "x"}}, "webhost": {"servers": {"a": policy}}})


def _timeout(literal: str) -> str:
    return '{"mcpServers": {}, "webhost": {"timeouts": {"call": ' + literal + "}}}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000, "servers.json: invalid JSON: nested too deeply"),
        (
            '{"mcpServers": {}, "webhost": {"maxInputRounds": ' + "9" * 5000 + "}}",
            "servers.json: invalid JSON: a number has too many digits",
        ),
        (
            _server_policy({"permissions": [{"camera": True}]}),
            "servers.json: webhost.servers.a.permissions: "
            "must be a list drawn from ['camera', 'clipboardWrite', 'geolocation', 'microphone']",
        ),
        (
            _server_policy({"cspCompat": [["eval"]]}),
            "servers.json: webhost.servers.a.cspCompat: must be a list drawn from "
            "['blobWorkers', 'dataModules', 'eval', 'wasm', 'workers']",
        ),
        (
            _server_policy({"tools": {"rm": []}}),
            'servers.json: webhost.servers.a.tools: must map tool names to "allow", "ask" or "deny"',
        ),
        (_timeout("NaN"), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (_timeout("Infinity"), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (_timeout("1e400"), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (_timeout("0"), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (_timeout("-0.5"), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (_timeout('"5"'), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (_timeout("true"), "servers.json: webhost.timeouts.call: must be a positive number of seconds"),
        (
            json.dumps({"mcpServers": {"a": {"command": "x", "env": {"K": "${UNCLOSED"}}}}),
            'servers.json: mcpServers.a.env.K: unclosed "${" (write ${NAME} or ${NAME:-default})',
        ),
        (
            json.dumps({"mcpServers": {"a": {"url": "https://h.example/${1BAD}"}}}),
            'servers.json: mcpServers.a.url: "${1BAD}" is not a variable reference (names use letters, digits '
            "and '_' and do not start with a digit)",
        ),
        (
            json.dumps({"mcpServers": {"a": {"url": "https://h.example/", "headers": {"H": "${}"}}}}),
            'servers.json: mcpServers.a.headers.H: "${}" is not a variable reference (names use letters, digits '
            "and '_' and do not start with a digit)",
        ),
        (
            json.dumps({"mcpServers": {"a": {"type": "stdio"}}}),
            "servers.json: mcpServers.a.command: must be a non-empty string",
        ),
        (
            json.dumps({"mcpServers": {"a": {"type": 5, "command": "x"}}}),
            'servers.json: mcpServers.a.type: must be a string: "stdio", "http" or "sse"',
        ),
        (
            json.dumps({"mcpServers": {}, "webhost": {"maxInputRounds": 1.5}}),
            "servers.json: webhost.maxInputRounds: must be an integer from 1 to 100",
        ),
        (json.dumps({"mcpServers": {}, "webhost": []}), "servers.json: webhost: must be an object"),
    ],
    ids=[
        "deep-nesting",
        "huge-integer",
        "unhashable-permission",
        "unhashable-compat",
        "list-decision",
        "nan",
        "infinity",
        "overflowing-float",
        "zero",
        "negative",
        "string-seconds",
        "boolean-seconds",
        "unclosed-var",
        "bad-var-name",
        "empty-var",
        "stdio-without-command",
        "non-string-type",
        "fractional-rounds",
        "webhost-not-object",
    ],
)
def test_hostile_or_malformed_files_get_one_exact_message(text: str, expected: str) -> None:
    assert error_of(text) == expected


def test_per_person_placeholders_are_left_for_connect_time() -> None:
    config = parse(
        {
            "inputs": [{"type": "promptString", "id": "api_key"}],
            "mcpServers": {
                "a": {"url": "https://h.example/${user.id}", "headers": {"X": "${user.email} ${input:api_key}"}}
            },
        }
    )
    server = config.servers["a"]  # type: ignore[attr-defined]
    assert server.url == "https://h.example/${user.id}"
    assert server.headers == {"X": "${user.email} ${input:api_key}"}


def test_inputs_are_declared_in_a_top_level_list_and_every_use_names_one() -> None:
    config = parse(
        {
            "inputs": [
                {"type": "promptString", "id": "api_key", "description": "Key", "password": True},
                {"type": "promptString", "id": "region", "default": "eu"},
            ],
            "mcpServers": {
                "a": {"command": "x", "env": {"K": "${input:api_key}", "R": "${input:region}"}},
                "b": {"url": "https://h.example/${input:region}/mcp"},
            },
        }
    )
    assert config.servers["a"].input_ids == ("api_key", "region")  # type: ignore[attr-defined]
    assert config.servers["b"].input_ids == ("region",)  # type: ignore[attr-defined]
    assert [spec.public() for spec in config.inputs] == [  # type: ignore[attr-defined]
        {"id": "api_key", "description": "Key", "password": True, "default": None},
        {"id": "region", "description": "region", "password": False, "default": "eu"},
    ]


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            {"mcpServers": {"a": {"command": "x", "env": {"K": "${input:key}"}}}},
            "servers.json: mcpServers.a: uses ${input:key}, but no entry of the top-level "
            '"inputs" list has "id": "key"',
        ),
        (
            {"inputs": {"id": "k"}, "mcpServers": {}},
            'servers.json: inputs: must be a list of {"type": "promptString", "id": "...", "description": "..."}',
        ),
        (
            {"inputs": [{"type": "pickString", "id": "k"}], "mcpServers": {}},
            'servers.json: inputs[0].type: only "promptString" inputs are supported',
        ),
        (
            {"inputs": [{"description": "no id"}], "mcpServers": {}},
            "servers.json: inputs[0].id: must be a string of letters, digits, '.', '_' and '-' (at most 64)",
        ),
        (
            {"inputs": [{"id": "k", "password": "yes"}], "mcpServers": {}},
            "servers.json: inputs[0].password: must be true or false",
        ),
        (
            {"inputs": [{"id": "k"}, {"id": "k"}], "mcpServers": {}},
            "servers.json: inputs[1]: the id 'k' is declared twice",
        ),
    ],
    ids=["undeclared", "not-a-list", "type", "no-id", "password", "twice"],
)
def test_bad_inputs_get_one_message(document: object, expected: str) -> None:
    assert error_of(json.dumps(document)) == expected


def test_keys_of_the_other_transport_are_ignored_as_other_tools_do() -> None:
    config = parse(
        {
            "mcpServers": {
                "s": {"command": "x", "url": 5, "headers": 3},
                "h": {"type": "http", "url": "http://h.example/mcp", "env": 4, "args": 5},
            }
        }
    )
    servers = config.servers  # type: ignore[attr-defined]
    assert (servers["s"].transport, servers["s"].url, servers["s"].headers) == ("stdio", None, {})
    assert (servers["h"].transport, servers["h"].command, servers["h"].env) == ("http", None, {})


def test_server_descriptions_and_reprs_leave_secrets_out() -> None:
    config = parse(
        {
            "mcpServers": {
                "a": {"command": "/usr/bin/srv", "env": {"K": "s3cret"}},
                "b": {"url": "https://h.example/mcp", "headers": {"Authorization": "s3cret"}},
            }
        }
    )
    servers = config.servers  # type: ignore[attr-defined]
    assert servers["a"].describe() == "stdio: srv" and servers["b"].describe() == "http: https://h.example/mcp"
    assert "s3cret" not in repr(config)


def test_options_default_and_read_every_webhost_key() -> None:
    defaults = parse({"mcpServers": {}}).options  # type: ignore[attr-defined]
    assert (
        defaults.connect_timeout,
        defaults.call_timeout,
        defaults.human_timeout,
        defaults.app_handshake_timeout,
        defaults.max_input_rounds,
    ) == (30.0, 120.0, 1800.0, 15.0, 10)
    assert (defaults.allowed_origins, defaults.roots, defaults.data_dir) == ((), (), None)
    options = parse(
        {
            "mcpServers": {"a": {"command": "x"}},
            "webhost": {
                "timeouts": {"connect": 1, "appHandshake": 2.5},
                "maxInputRounds": 3,
                "dataDir": "/d",
                "allowedOrigins": ["https://a.example/"],
                "servers": {"a": {"permissions": ["camera", "camera"], "cspCompat": ["wasm"], "openLinks": "allow"}},
            },
        }
    ).options  # type: ignore[attr-defined]
    assert (options.connect_timeout, options.app_handshake_timeout, options.max_input_rounds) == (1.0, 2.5, 3)
    assert options.data_dir == "/d" and options.allowed_origins == ("https://a.example",)
    policy = options.policy("a")
    assert policy.permissions == {"camera"} and policy.compat == {"wasm"} and policy.open_links == "allow"


def test_special_files_are_refused_without_reading_them(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as info:
        load_config(fifo)
    assert str(info.value) == f"{fifo}: cannot read the file (not a regular file)"
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == f"{tmp_path}: cannot read the file (a directory)"


def test_per_person_placeholders_load_against_the_real_environment() -> None:
    """os.environ refuses a None key (a crash once, when a placeholder was looked up as a variable)."""
    text = json.dumps({"mcpServers": {"s": {"command": "x", "env": {"WHO": "${user.id}"}}}})
    assert dict(parse_config(text, "servers.json", os.environ).servers["s"].env) == {"WHO": "${user.id}"}


def test_a_remote_entry_may_name_its_oauth_client_and_the_secret_is_a_secret() -> None:
    config = parse(
        {
            "mcpServers": {
                "tracker": {
                    "url": "https://tracker.example/mcp",
                    "oauth": {"clientId": "webhost", "clientSecret": "${CS}", "scopes": ["issues:read"]},
                },
                "robot": {
                    "url": "https://robot.example/mcp",
                    "oauth": {"grantType": "client_credentials", "clientId": "bot", "privateKey": "${PEM}"},
                },
                "local": {"command": "x", "oauth": {"clientId": "ignored"}},
            }
        },
        {"CS": "cs-s3cret", "PEM": "pem-s3cret"},
    )
    servers = config.servers  # type: ignore[attr-defined]
    tracker, robot = servers["tracker"].oauth, servers["robot"].oauth
    assert (tracker.client_id, tracker.client_secret, tracker.scopes) == ("webhost", "cs-s3cret", ("issues:read",))
    assert tracker.grant == "authorization_code" and robot.grant == "client_credentials"
    assert robot.private_key == "pem-s3cret" and robot.signing_algorithm == "RS256"
    assert servers["local"].oauth is None  # a stdio entry has no sign-in
    assert {"cs-s3cret"} <= servers["tracker"].secret_values and {"pem-s3cret"} <= servers["robot"].secret_values
    assert "s3cret" not in repr(config)


def _webhost(options: object) -> str:
    return json.dumps({"mcpServers": {"a": {"command": "x"}}, "webhost": options})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            _webhost({"limits": {"maxResultBytes": 2**70}}),
            "servers.json: webhost.limits.maxResultBytes: must be an integer number of bytes from 65536 to "
            "1073741824 (1 GiB)",
        ),
        (
            _webhost({"limits": {"maxQueuedBytes": "big"}}),
            "servers.json: webhost.limits.maxQueuedBytes: must be an integer number of bytes from 1048576 to "
            "4294967296 (4 GiB)",
        ),
        (_webhost({"limits": 5}), 'servers.json: webhost.limits: must be an object, like {"maxResultBytes": 33554432}'),
        (
            _webhost({"appPolicies": {}}),
            "servers.json: webhost.appPolicies: unknown key (known here: access, allowedOrigins, audit, auth, chat, "
            "dataDir, database, limits, maxInputRounds, roots, servers, timeouts)",
        ),
        (
            _webhost({"timeouts": {"conect": 5}}),
            "servers.json: webhost.timeouts.conect: unknown key "
            "(known here: appHandshake, call, connect, human, idle, maxTotal)",
        ),
        (
            _webhost({"servers": {"a": {"appToolCall": "ask"}}}),
            "servers.json: webhost.servers.a.appToolCall: unknown key (known here: appToolCalls, cspCompat, "
            "modelSeesStructuredContent, modelToolCalls, modelTools, openLinks, permissions, protocol, tools)",
        ),
        (
            _webhost({"limits": {"maxResultByte": 1}}),
            "servers.json: webhost.limits.maxResultByte: unknown key (known here: maxQueuedBytes, maxResultBytes)",
        ),
        (
            json.dumps({"mcpServers": {"a": {"command": "${input:key}"}}, "inputs": [{"id": "key"}]}),
            "servers.json: mcpServers.a.command: ${user.*} and ${input:*} are each person's values: use them in "
            "env, not in command",
        ),
        (
            json.dumps({"mcpServers": {"a": {"command": "${NOT_SET_ANYWHERE}"}}}),
            "servers.json: mcpServers.a.command: environment variable NOT_SET_ANYWHERE is not set",
        ),
    ],
    ids=[
        "limit-past-any-use",
        "limit-not-a-number",
        "limits-not-an-object",
        "unknown-webhost-key",
        "unknown-timeout",
        "unknown-server-policy-key",
        "unknown-limit",
        "person-value-in-command",
        "unset-variable-in-command",
    ],
)
def test_webhost_keys_are_checked_by_name_and_rule(text: str, expected: str) -> None:
    """`webhost.limits` used to fail as "webhost: must be an object", 2**70 bytes passed, and a misspelt key under
    `webhost` was ignored without a word (issue 24)."""
    assert error_of(text) == expected


def test_other_tools_keys_stay_allowed_and_every_model_field_is_a_known_key() -> None:
    """Only `webhost` is checked: keys of other tools (and of server entries) stay; and each field of the models,
    new ones included, is a key the check knows, by its JSON name."""
    text = json.dumps(
        {
            "mcpServers": {"a": {"command": "x", "disabled": False, "autoApprove": []}},
            "globalShortcut": "Ctrl+Space",
            "webhost": {
                "timeouts": {"connect": 5, "call": 5, "human": 5, "appHandshake": 5, "idle": 5},
                "limits": {"maxResultBytes": 65536, "maxQueuedBytes": 1048576},
                "servers": {"a": {"modelToolCalls": "ask", "modelTools": {"t": "deny"}}},
                "chat": {"models": [{"id": "m", "api": "openai", "model": "x"}]},
            },
        }
    )
    assert parse_config(text, "servers.json", {}).options.limits.max_result_bytes == 65536


def test_command_expands_variables_as_env_headers_and_url_do() -> None:
    text = json.dumps({"mcpServers": {"a": {"command": "${TOOLS:-/opt}/bin/server", "args": ["${KEPT}"]}}})
    server = parse_config(text, "servers.json", {"TOOLS": "/srv/tools"}).servers["a"]
    assert server.command == "/srv/tools/bin/server" and server.args == ("${KEPT}",)
