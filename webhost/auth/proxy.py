"""Proxy mode: a reverse proxy that already signed the person in names them in a header.

The header is believed only from the configured proxies (the ASGI `client` address, which is the
TCP peer: webhost serves with uvicorn's own X-Forwarded-For rewriting off); anyone else sending it
is refused with 403, as it can only be an attempt to pose as someone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from starlette.datastructures import Headers

from webhost.people import Person


def role_for(
    person_id: str, email: str | None, groups: Iterable[str], admins: Iterable[str], admin_groups: Iterable[str]
) -> Any:
    """`admin` when the id or email is one of `admins` (emails match case-insensitively) or a group
    is one of `admin_groups`; every other signed-in person is a `member`."""
    names = {a.lower() for a in admins}
    if person_id.lower() in names or (email is not None and email.lower() in names):
        return "admin"
    return "admin" if set(groups) & set(admin_groups) else "member"


class TrustedProxies:
    def __init__(
        self,
        networks: Iterable[str],
        user_header: str,
        groups_header: str | None,
        admins: Iterable[str],
        admin_groups: Iterable[str],
    ) -> None:
        self.networks = tuple(ipaddress.ip_network(n, strict=False) for n in networks)
        self.user_header = user_header.lower()
        self.groups_header = groups_header.lower() if groups_header else None
        self.admins = frozenset(admins)
        self.admin_groups = frozenset(admin_groups)

    def trusted(self, client: Any) -> bool:
        if not client:
            return False
        try:
            address = ipaddress.ip_address(str(client[0]))
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)

    def carries_person(self, headers: Headers) -> bool:
        return self.user_header in headers

    def person(self, headers: Headers) -> Person | None:
        user = _last(headers, self.user_header).strip()
        if not user:
            return None
        email = user if "@" in user else None
        raw = _last(headers, self.groups_header) if self.groups_header else ""
        groups = tuple(g.strip() for g in raw.split(",") if g.strip())
        return Person(
            id=user,
            name=user,
            email=email,
            groups=groups,
            role=role_for(user, email, groups, self.admins, self.admin_groups),
        )


def _last(headers: Headers, name: str) -> str:
    """A header's last value: a proxy that adds its header after one the client sent names the person."""
    values = headers.getlist(name)
    return values[-1] if values else ""
