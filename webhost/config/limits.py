"""How much, in the configuration file: what one tab may be sent (`webhost.limits`) and how long and how fast the
audit log keeps and takes rows (`webhost.audit`).

Read with the rest of the file by `file.py`; docs/deploy.md and docs/security.md document the keys.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class AuditOptions(_Model):
    """`webhost.audit`: how long the audit log keeps rows and how fast apps and people may add them."""

    retention_days: float | None = Field(
        default=90.0, validation_alias="retentionDays", strict=True, gt=0, allow_inf_nan=False
    )
    max_rows: int | None = Field(default=1_000_000, validation_alias="maxRows", strict=True, ge=1000)
    max_row_bytes: int = Field(default=16 * 1024, validation_alias="maxRowBytes", strict=True, ge=1024, le=1024 * 1024)
    frame_rows_per_second: float = Field(
        default=10.0, validation_alias="frameRowsPerSecond", strict=True, gt=0, allow_inf_nan=False
    )
    frame_burst: int = Field(default=100, validation_alias="frameBurst", strict=True, ge=1)
    person_rows_per_second: float = Field(
        default=20.0, validation_alias="personRowsPerSecond", strict=True, gt=0, allow_inf_nan=False
    )
    person_burst: int = Field(default=300, validation_alias="personBurst", strict=True, ge=1)
    person_bytes_per_second: float = Field(
        default=64 * 1024, validation_alias="personBytesPerSecond", strict=True, gt=0, allow_inf_nan=False
    )
    person_burst_bytes: int = Field(
        default=4 * 1024 * 1024, validation_alias="personBurstBytes", strict=True, ge=1024 * 1024
    )


MiB = 1024 * 1024
GiB = 1024 * MiB
MAX_RESULT_BYTES = 32 * MiB  # `maxResultBytes`' default


class Limits(_Model):
    """How much one tab may be sent: a result's encoded size, and what may queue for a tab that reads slowly."""

    max_result_bytes: int = Field(
        default=MAX_RESULT_BYTES, validation_alias="maxResultBytes", strict=True, ge=64 * 1024, le=GiB
    )
    max_queued_bytes: int = Field(default=64 * MiB, validation_alias="maxQueuedBytes", strict=True, ge=MiB, le=4 * GiB)


# Messages for pydantic's own errors under `webhost.audit` and `webhost.limits` (file.py's table).
LIMITS_MESSAGES = {
    "webhost.audit": "must be an object",
    "webhost.audit.retentionDays": "must be a positive number of days, or null to keep rows forever",
    "webhost.audit.maxRows": "must be an integer of at least 1000, or null for no limit",
    "webhost.audit.maxRowBytes": "must be an integer from 1024 to 1048576",
    "webhost.audit.frameRowsPerSecond": "must be a positive number",
    "webhost.audit.frameBurst": "must be a positive integer",
    "webhost.audit.personRowsPerSecond": "must be a positive number",
    "webhost.audit.personBurst": "must be a positive integer",
    "webhost.audit.personBytesPerSecond": "must be a positive number",
    "webhost.audit.personBurstBytes": "must be an integer of at least 1048576",
    "webhost.limits": 'must be an object, like {"maxResultBytes": 33554432}',
    "webhost.limits.maxResultBytes": f"must be an integer number of bytes from 65536 to {GiB} (1 GiB)",
    "webhost.limits.maxQueuedBytes": f"must be an integer number of bytes from 1048576 to {4 * GiB} (4 GiB)",
}
