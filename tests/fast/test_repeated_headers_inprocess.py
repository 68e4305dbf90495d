"""A header that says who or where, sent twice (issue 31 item 8): which copy counts depends on whether the proxy
in front appends or replaces, so webhost believes neither and refuses the request with 400."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import ORIGIN, in_process_host, sdk_server

pytestmark = pytest.mark.anyio

PROXY = {
    "auth": {
        "mode": "proxy",
        "userHeader": "X-Forwarded-Email",
        "groupsHeader": "X-Forwarded-Groups",
        "trustedProxies": ["127.0.0.1/32"],
        "admins": ["ada@example.com"],
        "adminGroups": ["ops"],
    }
}
OUR_HOST = ORIGIN.removeprefix("http://")


def basic_host(tmp_path: Path, options: dict[str, Any] | None = None) -> Any:
    return in_process_host(tmp_path, {"basic": sdk_server("basic")}, webhost_options=options)


@pytest.mark.parametrize(
    "repeated",
    [
        # The client's own copy first, then the one a proxy that appends adds: the last used to win.
        [("x-forwarded-email", "bob@example.com"), ("x-forwarded-email", "ada@example.com")],
        [("x-forwarded-email", "ada@example.com"), ("x-forwarded-email", "bob@example.com")],
        [("x-forwarded-email", "bob@example.com"), ("x-forwarded-groups", "staff"), ("x-forwarded-groups", "ops")],
    ],
)
async def test_proxy_mode_refuses_a_repeated_identity_or_groups_header(
    tmp_path: Path, repeated: list[tuple[str, str]]
) -> None:
    async with basic_host(tmp_path, PROXY) as host, host.http(token=None, client=("127.0.0.1", 4000)) as proxy:
        refused = await proxy.get("/api/servers", headers=repeated)
        assert refused.status_code == 400, refused.text
        assert "more than once" in refused.json()["error"] and repeated[-1][0] in refused.json()["error"]
        # The same person named once is let in, so the refusal is the repetition's.
        once = dict(repeated)
        assert (await proxy.get("/api/servers", headers=once)).status_code == 200


async def test_proxy_mode_refuses_a_repeated_identity_header_on_the_websocket_handshake(tmp_path: Path) -> None:
    async with basic_host(tmp_path, PROXY) as host:
        # Two spellings of one name are one header twice (names are case-insensitive).
        with pytest.raises(ConnectionRefusedError, match="more than once"):
            async with host.tab(
                authorization=None,
                client=("127.0.0.1", 4000),
                **{"x-forwarded-email": "bob@example.com", "X-Forwarded-Email": "ada@example.com"},
            ):
                pass


async def test_a_repeated_host_is_refused_even_when_both_are_ours(tmp_path: Path) -> None:
    async with basic_host(tmp_path) as host, host.http() as client:
        for hosts in ([OUR_HOST, OUR_HOST], [OUR_HOST, "evil.example"], ["evil.example", OUR_HOST]):
            refused = await client.get("/api/servers", headers=[("host", h) for h in hosts])
            assert refused.status_code == 400 and "more than one Host" in refused.json()["error"], hosts
        assert (await client.get("/api/servers", headers=[("host", OUR_HOST)])).status_code == 200
