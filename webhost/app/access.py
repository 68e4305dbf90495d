"""Who may come in, by the configured mode (contract §5): the access policy, oidc's sign-in and its
pages, proxy mode's trusted proxies, and the gate that enforces them in front of everything."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.types import ASGIApp

from webhost.apps.origins import derive_key
from webhost.auth import AccessPolicy, AuthGate, same_origin_path
from webhost.auth.gate import SIGN_IN_PATH, SIGN_OUT_PATH
from webhost.auth.oidc import OidcClient
from webhost.auth.proxy import TrustedProxies
from webhost.auth.refresh import GroupRefresh
from webhost.auth.signin import (
    CALLBACK_PATH,
    SESSION_COOKIE,
    SIGNED_OUT_PATH,
    STATE_COOKIE,
    OidcSettings,
    OidcSignIn,
    refresh_token_seal,
    signed_out_page,
)
from webhost.config.auth import AuthOptions
from webhost.directory import SessionDirectory
from webhost.people import Person, sign_in_key
from webhost.settings import Settings
from webhost.storage.db import Storage
from webhost.storage.people import SeenPeople
from webhost.storage.session_refresh import SessionRefreshes


@dataclass(frozen=True)
class Access:
    """The access policy and what the configured mode adds to it."""

    policy: AccessPolicy
    auth: AuthOptions
    oidc: OidcSignIn | None  # oidc mode
    proxy: TrustedProxies | None  # proxy mode
    refresher: GroupRefresh | None = None  # oidc mode: the session refresh that re-reads the groups


def build_access(
    settings: Settings,
    auth: AuthOptions,
    storage: Storage,
    secret: bytes,
    host_origins: tuple[str, ...],
    clock: Callable[[], float] = time.time,
) -> Access:
    policy = AccessPolicy(settings.token, secret, list(host_origins), secure_cookies=secure_cookies(settings))
    oidc = oidc_sign_in(auth, storage, secret, policy.secure_cookies, clock) if auth.mode == "oidc" else None
    proxy = (
        TrustedProxies(auth.trusted_proxies, auth.user_header or "", auth.groups_header, auth.admins, auth.admin_groups)
        if auth.mode == "proxy"
        else None
    )
    refresher = group_refresh(oidc, auth, storage, secret, clock) if oidc is not None else None
    return Access(policy, auth, oidc, proxy, refresher)


def oidc_sign_in(
    auth: AuthOptions, storage: Storage, secret: bytes, secure: bool, clock: Callable[[], float] = time.time
) -> OidcSignIn:
    client = OidcClient(auth.issuer or "", auth.client_id or "", auth.client_secret, auth.scopes, clock=clock)
    settings = OidcSettings(
        user_claim=auth.user_claim,
        name_claim=auth.name_claim,
        groups_claim=auth.groups_claim,
        admins=auth.admins,
        admin_groups=auth.admin_groups,
        session_hours=auth.session_hours,
    )
    sign_in = OidcSignIn(
        client,
        storage,
        derive_key(secret, "web-session/v1"),
        settings,
        secure_cookies=secure,
        id_token_key=derive_key(secret, "id-token/v1"),
        refresh_token_key=derive_key(secret, "refresh-token/v1"),
        clock=clock,  # one clock for the tokens' ends and the answers kept about them
    )
    return sign_in


def group_refresh(
    oidc: OidcSignIn, auth: AuthOptions, storage: Storage, secret: bytes, clock: Callable[[], float]
) -> GroupRefresh:
    """oidc mode: the groups follow the directory, re-read with the session's refresh token every refreshMinutes."""
    refresher = GroupRefresh(
        oidc.client,
        SessionRefreshes(storage),
        refresh_token_seal(derive_key(secret, "refresh-token/v1")),
        oidc.settings,
        seconds=auth.refresh_minutes * 60,
        clock=clock,
    )
    oidc.refresher = refresher
    return refresher


def secure_cookies(settings: Settings) -> bool:
    """The session cookie is Secure when asked, and whenever the page is served over https (a public
    origin on https, or a TLS deployment's https sandbox origins)."""
    return (
        settings.secure_cookies
        or settings.sandbox_scheme == "https"
        or any(origin.lower().startswith("https://") for origin in settings.public_origins)
    )


def add_sign_in_routes(app: FastAPI, oidc: OidcSignIn, policy: AccessPolicy, directory: SessionDirectory) -> None:
    """oidc mode's pages (the gate lets them through without a session; contract §5, docs/api.md)."""

    @app.get(SIGN_IN_PATH)
    async def sign_in(request: Request, next: str = "/") -> Response:
        return await oidc.begin(policy.origin_for(request.headers.get("host")), same_origin_path(next))

    @app.get(CALLBACK_PATH)
    async def callback(request: Request) -> Response:
        return await oidc.finish(dict(request.query_params), request.cookies.get(STATE_COOKIE))

    @app.post(SIGN_OUT_PATH)
    async def sign_out(request: Request) -> Response:
        cookie = request.cookies.get(SESSION_COOKIE)
        if cookie:
            directory.end_sign_in(sign_in_key(cookie), "signed out")
        return await oidc.sign_out(policy.origin_for(request.headers.get("host")), cookie)

    @app.get(SIGNED_OUT_PATH)
    async def signed_out() -> Response:
        return signed_out_page()


def gate(
    app: ASGIApp, access: Access, settings: Settings, people: SeenPeople, follow: Callable[[Person], None]
) -> AuthGate:
    """The gate in front of `app`, noting everyone it admits for the `people` table (written in the background),
    and telling `follow` (their groups as the request names them: app/follow.py)."""

    def seen(person: Person) -> None:
        people.seen(person)
        follow(person)

    return AuthGate(
        app,
        access.policy,
        oidc=access.oidc,
        proxy=access.proxy,
        # In oidc and proxy mode the token is an admin credential for scripts only when WEBHOST_TOKEN set it.
        admin_token=access.auth.mode == "token" or settings.token_from_env,
        seen=seen,
    )
