"""Configuration without a restart and groups that follow the directory (issue 29 items 2 and 5), the pure parts:
what a reload says it changes, the pid and outcome files `webhost reload` talks through, the `access.changed` row
of a person whose groups changed, the refresh token's seal, and `refreshMinutes` in the file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

import pytest

from webhost.app.follow import Follow, refresh_tick
from webhost.app.pidfile import PidFile, outcome_path, pid_path, read_outcome, read_pid
from webhost.app.reload import Reloader, describe
from webhost.app.state import HostState
from webhost.auth.signin import IdTokenSeal, refresh_token_seal
from webhost.config import Config, ConfigError, parse_config
from webhost.people import Person


def config(servers: dict[str, Any], webhost: dict[str, Any] | None = None) -> Config:
    document: dict[str, Any] = {"mcpServers": servers}
    if webhost is not None:
        document["webhost"] = webhost
    return parse_config(json.dumps(document), "f.json", {})


BASE = {"a": {"command": "a"}, "b": {"command": "b"}}


def test_describe_names_what_was_added_removed_changed_and_what_needs_a_restart() -> None:
    before = config(BASE)
    after = config(
        {"a": {"command": "a2"}, "c": {"url": "http://127.0.0.1:9/mcp"}},
        {
            "access": {"servers": {"c": {"groups": ["x"]}}},
            "auth": {"mode": "proxy", "userHeader": "X-U", "trustedProxies": ["127.0.0.1/32"]},
        },
    )
    assert describe(before, after) == (
        "2 server(s); added c; removed b; changed a; access rules changed; needs a restart to apply: auth"
    )
    assert describe(before, config(BASE)) == "2 server(s)"


class StubAudit:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def note(self, kind: str, **row: Any) -> None:
        self.rows.append({"kind": kind, **row})


class StubHost:
    def __init__(self, running: Config) -> None:
        self.config = running
        self.audit = StubAudit()
        self.workspaces: dict[str, Any] = {}
        self.task_group = None


RULES = {
    "access": {"servers": {"payroll": {"groups": ["finance"]}}, "models": {"big": {"groups": ["finance"]}}},
    "chat": {"models": [{"id": "big", "api": "openai", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"}]},
}


def test_access_changed_names_the_groups_servers_and_models_gained_and_lost() -> None:
    host = StubHost(config({"basic": {"command": "b"}, "payroll": {"command": "p"}}, RULES))
    follow = Follow(cast(HostState, host), record_seen=True)
    fay = Person(id="fay", name="Fay", groups=("staff", "finance"))
    follow.record(fay, Person(id="fay", name="Fay", groups=("staff", "sre")))
    [row] = host.audit.rows
    assert row["kind"] == "access.changed" and row["person"].id == "fay" and row["decision"] == "changed"
    assert row["detail"] == {
        "gained": {"groups": ["sre"], "servers": [], "models": []},
        "lost": {"groups": ["finance"], "servers": ["payroll"], "models": ["big"]},
    }
    assert row["summary"] == "gained groups sre; lost groups finance; lost servers payroll; lost models big"
    follow.record(fay, Person(id="fay", name="Fay", groups=("finance", "staff")))  # the same groups: no row
    assert len(host.audit.rows) == 1


def test_proxy_mode_records_a_change_of_the_groups_header_between_two_requests() -> None:
    host = StubHost(config({"payroll": {"command": "p"}}, RULES))
    follow = Follow(cast(HostState, host), record_seen=True)
    follow.seen(Person(id="fay", name="fay", groups=("finance",)))  # no task group yet: nothing to follow
    host.task_group = cast(Any, object())
    follow.seen(Person(id="fay", name="fay", groups=("finance",)))
    follow.seen(Person(id="fay", name="fay", groups=()))
    assert [r["detail"]["lost"]["servers"] for r in host.audit.rows] == [["payroll"]]


@pytest.mark.anyio
async def test_a_bad_file_is_refused_in_one_line_and_the_running_configuration_stays(tmp_path: Path) -> None:
    path = tmp_path / "webhost.json"
    path.write_text('{"mcpServers": {"a": {"command": 7}}}')
    running = config(BASE)
    host = StubHost(running)
    applied, line = await Reloader(path, Follow(cast(HostState, host), record_seen=False)).reload()
    assert not applied and "\n" not in line and line.startswith("refused, the running configuration is kept: ")
    with pytest.raises(ConfigError) as error:
        parse_config(path.read_text(), str(path), {})
    assert " ".join(str(error.value).split()) in line
    assert host.config is running
    applied, line = await Reloader(None, Follow(cast(HostState, host), record_seen=False)).reload()
    assert not applied and "embedded demo" in line


def test_the_pid_file_and_the_outcomes(tmp_path: Path) -> None:
    pid_file = PidFile(tmp_path, 8700)
    pid_file.write()
    assert read_pid(pid_path(tmp_path, 8700)) == os.getpid() and read_outcome(outcome_path(tmp_path, 8700)) is None
    pid_file.reloaded(True, "reloaded x: 1 server(s)")
    pid_file.reloaded(False, "refused, the running configuration is kept: x")
    outcome = read_outcome(outcome_path(tmp_path, 8700))
    assert outcome is not None and (outcome.pid, outcome.count, outcome.applied) == (os.getpid(), 2, False)
    assert read_pid(pid_path(tmp_path, 8701)) is None  # another port: another file
    pid_path(tmp_path, 8700).write_text("1\n")  # another process started on the port since: its file stays
    pid_file.remove()
    assert read_pid(pid_path(tmp_path, 8700)) == 1
    assert list(tmp_path.glob("*.tmp")) == []


def test_the_refresh_token_seal_is_bound_and_apart_from_the_id_tokens() -> None:
    key = os.urandom(32)
    seal = refresh_token_seal(key)
    sealed = seal.seal("session-1", "bob", "rt-secret")
    assert b"rt-secret" not in sealed
    assert seal.open("session-1", "bob", sealed) == "rt-secret"
    assert seal.open("session-2", "bob", sealed) is None and seal.open("session-1", "ada", sealed) is None
    assert IdTokenSeal(key).open("session-1", "bob", sealed) is None  # not an ID token, even under the same key


def test_refresh_minutes_in_the_file_and_the_refresh_tick() -> None:
    assert config({}).options.auth.refresh_minutes == 5.0
    assert config({}, {"auth": {"refreshMinutes": 0.5}}).options.auth.refresh_minutes == 0.5
    for bad in (0, -1, "soon", 24 * 60 + 1):
        with pytest.raises(ConfigError, match="refreshMinutes"):
            config({}, {"auth": {"refreshMinutes": bad}})
    assert refresh_tick(300.0) == 60.0 and refresh_tick(20.0) == 5.0 and refresh_tick(0.01) == 0.05
