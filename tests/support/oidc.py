"""A real OpenID provider for the sign-in tests (tests/peers/oidc-provider.mjs, npm `oidc-provider`),
and a headless sign-in through its own pages for the in-process tests."""

from __future__ import annotations

import contextlib
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from tests.support.inprocess import ORIGIN
from tests.support.process import PEERS, free_port

CLIENT_ID = "webhost"
CLIENT_SECRET = "webhost-secret"
PEOPLE = {"ada": ("Ada Lovelace", "admin"), "bob": ("Bob Builder", "member"), "carol": ("Carol Danvers", "member")}


@dataclass
class Provider:
    issuer: str
    proc: subprocess.Popen[bytes]

    def options(self, **overrides: Any) -> dict[str, Any]:
        """`webhost` options for oidc mode against this provider (ada is the admin by group)."""
        auth = {
            "mode": "oidc",
            "issuer": self.issuer,
            "clientId": CLIENT_ID,
            "clientSecret": CLIENT_SECRET,
            "scopes": ["openid", "email", "profile", "groups"],
            "adminGroups": ["webhost-admins"],
            **overrides,
        }
        return {"auth": auth}


async def set_groups(issuer: str, login: str, groups: list[str]) -> None:
    """Change a person's groups at the provider, as a directory admin would (the test provider's own endpoint)."""
    async with httpx.AsyncClient(timeout=10) as op:
        response = await op.post(f"{issuer}/test/groups/{login}", content=",".join(groups))
    assert response.status_code == 204, response.text


async def remove_person(issuer: str, login: str) -> None:
    """Remove a person from the provider's directory (the test provider's own endpoint)."""
    async with httpx.AsyncClient(timeout=10) as op:
        response = await op.post(f"{issuer}/test/remove/{login}")
    assert response.status_code == 204, response.text


@contextlib.contextmanager
def run_provider(origins: list[str]) -> Iterator[Provider]:
    """The provider on a free port, with `ORIGIN/auth/callback` registered for each origin."""
    port = free_port()
    args = ["node", str(PEERS / "oidc-provider.mjs"), "--port", str(port)]
    for origin in origins:
        args += ["--redirect", f"{origin}/auth/callback", "--post-logout", f"{origin}/auth/signed-out"]
    proc = subprocess.Popen(args, cwd=PEERS, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        # Until it says it is ready, or it ended (the pipe's end): a busy machine only makes it later.
        while proc.stdout.readline().strip() != b"ready":
            if proc.poll() is not None:
                raise RuntimeError("the test OpenID provider did not start")
        yield Provider(f"http://localhost:{port}", proc)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def through_provider(
    location: str, login: str, *, deny: bool = False, password: str | None = None, origin: str = ORIGIN
) -> str:
    """Follow the provider's pages from its authorization URL, sign in as `login` (or deny), and
    return the redirect back to webhost (a path on `origin`, the in-process one by default, with the query)."""
    async with httpx.AsyncClient(follow_redirects=False, timeout=10) as op:
        url = location
        for _ in range(12):
            response = await op.get(url)
            if response.status_code == 200 and "/interaction/" in str(response.url):
                ending = "abort" if deny else "login"
                action = re.search(rf'action="([^"]+/{ending})"', response.text)
                assert action is not None, response.text
                form = {} if deny else {"login": login, "password": password or f"{login}-pw"}
                response = await op.post(httpx.URL(str(response.url)).join(action.group(1)), data=form)
            assert response.status_code in (302, 303), (response.status_code, response.text[:500])
            url = str(httpx.URL(str(response.url)).join(response.headers["location"]))
            if url.startswith(origin):
                return url[len(origin) :]
    raise AssertionError("the provider did not send the browser back to webhost")
