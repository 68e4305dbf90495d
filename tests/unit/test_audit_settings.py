"""The audit options in the configuration file, and the deployment secret beside the audit log."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from webhost.app import SecretProblem, load_secret
from webhost.audit import AuditLimits
from webhost.config import ConfigError, parse_config
from webhost.config.limits import AuditOptions


def parse(audit: Any) -> AuditOptions:
    text = json.dumps({"mcpServers": {}, "webhost": {"audit": audit}})
    return parse_config(text, "webhost.json", {}).options.audit


def test_the_audit_options_are_read_from_the_webhost_key() -> None:
    options = parse(
        {
            "retentionDays": 7,
            "maxRows": None,
            "maxRowBytes": 4096,
            "frameRowsPerSecond": 1.5,
            "frameBurst": 3,
            "personRowsPerSecond": 4,
            "personBurst": 8,
            "personBytesPerSecond": 1000,
            "personBurstBytes": 2_000_000,
        }
    )
    assert options == AuditOptions(
        retention_days=7,
        max_rows=None,
        max_row_bytes=4096,
        frame_rows_per_second=1.5,
        frame_burst=3,
        person_rows_per_second=4,
        person_burst=8,
        person_bytes_per_second=1000,
        person_burst_bytes=2_000_000,
    )
    # The log's own limits are built from them, field by field.
    assert AuditLimits(**options.model_dump()).max_row_bytes == 4096


def test_without_audit_options_the_defaults_apply() -> None:
    defaults = parse_config('{"mcpServers": {}}', "webhost.json", {}).options.audit
    assert AuditLimits(**defaults.model_dump()) == AuditLimits()
    assert defaults.retention_days == 90


@pytest.mark.parametrize(
    ("audit", "message"),
    [
        ([], "webhost.audit: must be an object"),
        ({"retentionDays": "90"}, "webhost.audit.retentionDays: must be a positive number of days"),
        ({"retentionDays": 0}, "webhost.audit.retentionDays: must be a positive number of days"),
        ({"maxRows": 10}, "webhost.audit.maxRows: must be an integer of at least 1000"),
        ({"maxRowBytes": 10_000_000}, "webhost.audit.maxRowBytes: must be an integer from 1024 to 1048576"),
        ({"frameRowsPerSecond": True}, "webhost.audit.frameRowsPerSecond: must be a positive number"),
        ({"frameBurst": 0}, "webhost.audit.frameBurst: must be a positive integer"),
        ({"personBytesPerSecond": -1}, "webhost.audit.personBytesPerSecond: must be a positive number"),
    ],
)
def test_bad_audit_options_are_one_clear_error(audit: Any, message: str) -> None:
    with pytest.raises(ConfigError) as failed:
        parse(audit)
    assert str(failed.value).startswith(f"webhost.json: {message}")


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_a_new_secret_is_created_owner_only_with_no_chmod_afterwards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_umask: None
) -> None:
    # With umask 0 and chmod unavailable, only a file created 0600 ends up 0600.
    def no_chmod(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the secret must be created with its mode, not chmod-ed afterwards")

    monkeypatch.setattr(Path, "chmod", no_chmod)
    monkeypatch.setattr(os, "chmod", no_chmod)
    secret = load_secret(tmp_path / "data")
    path = tmp_path / "data" / "secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes() == secret and len(secret) == 64
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret"]  # no temporary file left behind


def test_an_existing_secret_is_kept_and_a_short_one_replaced_whole_when_told_to_rotate(tmp_path: Path) -> None:
    (tmp_path / "secret").write_bytes(b"k" * 40 + b"\n")
    assert load_secret(tmp_path) == b"k" * 40
    (tmp_path / "secret").write_bytes(b"short")
    with pytest.raises(SecretProblem, match="fewer than the 32 of a secret.*--rotate-secret"):
        load_secret(tmp_path)  # not replaced by itself: that would make everything sealed with it unreadable
    assert (tmp_path / "secret").read_bytes() == b"short"
    replaced = load_secret(tmp_path, rotate=True)
    assert len(replaced) == 64 and (tmp_path / "secret").read_bytes() == replaced
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600
    assert load_secret(tmp_path) == replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret"]


def test_a_secret_another_process_wrote_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_link = os.link

    def racing_link(source: Any, target: Any) -> None:
        Path(target).write_bytes(b"w" * 64)  # the other process got there between our check and our link
        real_link(source, target)

    monkeypatch.setattr(os, "link", racing_link)
    assert load_secret(tmp_path) == b"w" * 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret"]
