"""`ui/download-file`: the files an app offers, saved only after the person's consent.

Embedded resources are saved as given; resource links are read from the frame's own server, and only after
consent. Sizes are capped per file and per request, and every outcome is audited.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Protocol

from webhost.approvals import ApprovalBroker
from webhost.apps.instances import AppInstance
from webhost.audit import AuditLog
from webhost.errors import InvalidParams, PolicyRefused
from webhost.upstream.connection import Connection

MAX_DOWNLOAD_FILES = 10
MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024  # per file
MAX_DOWNLOAD_TOTAL = 20 * 1024 * 1024  # per request


class DownloadPolicy(Protocol):
    """What of `AppPolicy` a download needs: the person's consent and the audit log."""

    approvals: ApprovalBroker
    audit: AuditLog

    def audit_base(self, instance: AppInstance) -> dict[str, Any]: ...


_UNSAFE_NAME = re.compile(r"[^\w.-]+")


def _file_name(uri: object, fallback: str) -> str:
    tail = [part for part in re.split(r"[/?#]", str(uri or "")) if part]
    name = _UNSAFE_NAME.sub("_", tail[-1] if tail else "").strip("._")[:120]
    return name or fallback


def _payload(contents: dict[str, Any]) -> bytes | None:
    """The bytes of one resource contents item (text or base64 blob); None when it has neither."""
    if isinstance(contents.get("text"), str):
        return str(contents["text"]).encode("utf-8")
    if isinstance(contents.get("blob"), str):
        try:
            return base64.b64decode(str(contents["blob"]), validate=True)
        except (binascii.Error, ValueError):
            raise InvalidParams("ui/download-file: a blob is not valid base64") from None
    return None


async def download_file(
    policy: DownloadPolicy, instance: AppInstance, connection: Connection, params: dict[str, Any]
) -> dict[str, Any]:
    """Save files the app offers, after the person's consent: embedded resources or resource links
    (read from the frame's own server). Nothing is read or saved before consent; sizes are capped."""
    items = params.get("contents")
    if not isinstance(items, list) or not items or len(items) > MAX_DOWNLOAD_FILES:
        raise InvalidParams(f"ui/download-file needs 1 to {MAX_DOWNLOAD_FILES} contents")
    planned: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidParams("ui/download-file: each content must be an object")
        if item.get("type") == "resource" and isinstance(item.get("resource"), dict):
            resource = item["resource"]
            data = _payload(resource)
            if data is None:
                raise InvalidParams("ui/download-file: an embedded resource needs text or blob")
            planned.append(
                {
                    "name": _file_name(resource.get("uri"), f"download-{index + 1}"),
                    "data": data,
                    "mimeType": str(resource.get("mimeType") or "")[:100],
                }
            )
        elif item.get("type") == "resource_link" and isinstance(item.get("uri"), str):
            planned.append(
                {
                    "name": _file_name(item.get("name") or item["uri"], f"download-{index + 1}"),
                    "uri": item["uri"][:2048],
                    "mimeType": str(item.get("mimeType") or "")[:100],
                }
            )
        else:
            raise InvalidParams("ui/download-file: contents must be embedded resources or resource links")
        data = planned[-1].get("data")
        if data is not None and len(data) > MAX_DOWNLOAD_BYTES:
            raise PolicyRefused(
                f"ui/download-file: {planned[-1]['name']} is larger than {MAX_DOWNLOAD_BYTES} bytes",
                {"limit": MAX_DOWNLOAD_BYTES},
            )
    summary = ", ".join(str(p["name"]) for p in planned)[:300]
    described = [
        {
            "name": p["name"],
            "mimeType": p["mimeType"],
            **({"size": len(p["data"])} if "data" in p else {"uri": p["uri"]}),
        }
        for p in planned
    ]
    decision, remembered = await policy.approvals.ask(
        instance.server,
        "download",
        f"The app wants to save {len(planned)} file(s): {summary}",
        {"files": described, "resourceUri": instance.resource_uri},
        frame=instance.frame_id,
    )
    base = policy.audit_base(instance)
    if decision != "allow":
        await policy.audit.record(
            "app.download-file", **base, decision="denied", summary=summary, detail={"files": described}
        )
        return {"isError": True}
    files: list[dict[str, Any]] = []
    total = 0
    for p in planned:
        data = p.get("data")
        if data is None:
            read = await connection.client.read_resource(str(p["uri"]), summary=f"{p['uri']} (download from app)")
            first = next((c for c in read.get("contents", []) if isinstance(c, dict)), None)
            data = _payload(first) if first else None
            if data is None:
                raise InvalidParams(f"ui/download-file: {p['uri']} has no text or blob contents")
        total += len(data)
        if len(data) > MAX_DOWNLOAD_BYTES or total > MAX_DOWNLOAD_TOTAL:
            await policy.audit.record(
                "app.download-file",
                **base,
                decision="refused",
                summary=f"too large: {summary}",
                detail={"files": described},
            )
            raise PolicyRefused(
                "ui/download-file: the files are too large",
                {"limit": MAX_DOWNLOAD_BYTES, "totalLimit": MAX_DOWNLOAD_TOTAL},
            )
        files.append({"name": p["name"], "size": len(data), "blob": base64.b64encode(data).decode("ascii")})
    await policy.audit.record(
        "app.download-file",
        **base,
        decision="allowed",
        summary=summary,
        detail={"files": [{"name": f["name"], "size": f["size"]} for f in files], "remembered": remembered},
    )
    return {"files": files}
