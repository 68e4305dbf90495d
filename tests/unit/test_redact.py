"""What counts as a secret in the configuration, and how it is masked (webhost/redact.py)."""

from __future__ import annotations

import json

import pytest

from webhost.config import ServerConfig, parse_config
from webhost.redact import Redactor, mask_query_parameters, redact_url
from webhost.upstream.connection import useful_stderr_line

ENVIRON = {"PASS": "pa55-word", "KEY": "k3y-value", "TOK": "tok-en-value", "SEG": "path-secret"}


def _server(entry: dict[str, object]) -> ServerConfig:
    config = parse_config(json.dumps({"mcpServers": {"s": entry}}), "test.json", ENVIRON)
    return config.servers["s"]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://host/mcp", "https://host/mcp"),
        ("https://u:pw@host/mcp", "https://***@host/mcp"),
        ("https://host/mcp?key=abc&flag", "https://host/mcp?key=***&***"),
        ("https://host/mcp#frag", "https://host/mcp#***"),
    ],
)
def test_urls_are_masked_by_shape(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_every_expansion_header_and_url_secret_is_a_secret_and_a_literal_env_value_is_not() -> None:
    http = _server(
        {
            "url": "https://user:${PASS}@host/${SEG}/mcp?key=${KEY}&literal=plainvalue",
            "headers": {"Authorization": "Bearer ${TOK}", "X-Fixed": "fixed-header"},
        }
    )
    assert {
        "pa55-word",
        "k3y-value",
        "tok-en-value",
        "path-secret",
        "plainvalue",
        "fixed-header",
        "Bearer tok-en-value",
    } <= http.secret_values
    assert http.describe() == "http: https://***@host/***/mcp?key=***&literal=***"
    stdio = _server({"command": "x", "env": {"A": "${MISSING:-default-value}", "B": "literal-env"}})
    # A literal env value is configuration, not a secret (issue 24 item 1): write `${VAR}` for one.
    assert "default-value" in stdio.secret_values and "literal-env" not in stdio.secret_values
    assert stdio.describe() == "stdio: x"


def test_redactor_masks_every_form_and_keeps_json_structure() -> None:
    redactor = Redactor(["s3cret-value\n", "Bearer tok-en-value", "a b/c", "ab"])
    assert redactor.text("header b's3cret-value\\n'") == "header b'***\\n'"
    assert redactor.text("token tok-en-value") == "token ***"
    assert redactor.text("quoted a%20b%2Fc") == "quoted ***"
    assert redactor.text("ab is too short to be a secret") == "ab is too short to be a secret"
    frame = json.dumps({"id": 1, "result": {"text": "x s3cret-value\n y", "n": 4}})
    assert json.loads(redactor.json_text(frame)) == {"id": 1, "result": {"text": "x *** y", "n": 4}}
    untouched = json.dumps({"id": 2, "result": "nothing here"})
    assert redactor.json_text(untouched) is untouched
    assert not Redactor([]) and not Redactor(["ab"])


@pytest.mark.parametrize(
    ("tail", "line"),
    [
        (
            [
                "node:internal/modules/cjs/loader:1228",
                "  throw err;",
                "  ^",
                "Error: Cannot find module '/x/y.js'",
                "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {",
                "  code: 'MODULE_NOT_FOUND',",
                "  requireStack: []",
                "}",
                "Node.js v20.20.2",
            ],
            "Error: Cannot find module '/x/y.js'",
        ),
        (
            [
                "Traceback (most recent call last):",
                '  File "/srv/x.py", line 1, in <module>',
                "    import nope",
                "ModuleNotFoundError: No module named 'nope'",
            ],
            "ModuleNotFoundError: No module named 'nope'",
        ),
        (["starting", "listening on stdio", "Node.js v20.20.2"], "listening on stdio"),
        (["only line"], "only line"),
        ([], None),
    ],
)
def test_the_useful_stderr_line(tail: list[str], line: str | None) -> None:
    assert useful_stderr_line(tail) == line


LOGIN = frozenset({"token", "code", "state"})


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("GET /?token=s3cr3t&view=tools HTTP/1.1", "GET /?token=***&view=tools HTTP/1.1"),
        ("GET /?tok%65n=s3cr3t HTTP/1.1", "GET /?tok%65n=*** HTTP/1.1"),
        ("GET /?TOKEN=s3cr3t HTTP/1.1", "GET /?TOKEN=*** HTTP/1.1"),
        # Issue 31 item 9: the `=` encoded is no login (a 401), but the line carries the token all the same.
        ("GET /?token%3Ds3cr3t HTTP/1.1", "GET /?token%3D*** HTTP/1.1"),
        ("GET /?token%3ds3cr3t&view=tools HTTP/1.1", "GET /?token%3d***&view=tools HTTP/1.1"),
        ("GET /?%74%6F%6B%65%6E%3Ds3cr3t HTTP/1.1", "GET /?%74%6F%6B%65%6E%3D*** HTTP/1.1"),
        ("GET /?token%253Ds3cr3t HTTP/1.1", "GET /?token%253D*** HTTP/1.1"),  # encoded twice
        ("GET /?token+=s3cr3t HTTP/1.1", "GET /?token+=*** HTTP/1.1"),
        ("GET /%3Ftoken%3Ds3cr3t HTTP/1.1", "GET /%3Ftoken%3D*** HTTP/1.1"),  # the `?` encoded into the path
        ("GET /?view=a%26token%3Ds3cr3t HTTP/1.1", "GET /?view=*** HTTP/1.1"),  # inside another value
        ("GET /?x%26token%3Ds3cr3t=1 HTTP/1.1", "GET /?x%26token%3D*** HTTP/1.1"),  # inside another name
        ("GET /?a=b?code=s3cr3t HTTP/1.1", "GET /?a=*** HTTP/1.1"),
        ("GET /?%2574oken%25253Ds3cr3t HTTP/1.1", "GET /?%2574oken%25253D*** HTTP/1.1"),
        # What carries no login parameter is left as it is.
        ("GET /?tokens=abc&token HTTP/1.1", "GET /?tokens=abc&token HTTP/1.1"),
        ("GET /tools%3Fview HTTP/1.1", "GET /tools%3Fview HTTP/1.1"),
    ],
)
def test_login_parameters_are_masked_however_the_query_is_encoded(line: str, shown: str) -> None:
    assert mask_query_parameters(line, LOGIN) == shown
    assert "s3cr3t" not in mask_query_parameters(line, LOGIN)
