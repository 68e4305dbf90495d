"""Append-only audit log of what apps did and what people decided (`log.py` says how it is written and read).

`log.py`: the log (record, note, reads, permissions); `writer.py`: the writer task and its outage retries;
`budgets.py`: the per-frame and per-person write budgets; `rows.py`: a row's values as stored and shown.
"""

from webhost.audit.budgets import RATE_LIMITED, AuditLimits
from webhost.audit.log import LEGACY_FILE, AuditLog, open_audit_log
from webhost.audit.rows import fit_detail, visible_user
from webhost.audit.writer import AuditUnavailable
from webhost.storage.audit import COLUMNS

__all__ = [
    "COLUMNS",
    "LEGACY_FILE",
    "RATE_LIMITED",
    "AuditLimits",
    "AuditLog",
    "AuditUnavailable",
    "fit_detail",
    "open_audit_log",
    "visible_user",
]
