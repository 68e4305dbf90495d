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

    def repeated_header(self, headers: Headers) -> str | None:
        """The identity or groups header when the request carries it more than once. Which copy the proxy
        wrote depends on whether it appends or replaces, so no copy is believed: the request is refused."""
        for name in (self.user_header, self.groups_header):
            if name is not None and len(headers.getlist(name)) > 1:
                return name
        return None

    def person(self, headers: Headers) -> Person | None:
        """The person the header names; the gate refused repeated headers before asking."""
        user = headers.get(self.user_header, "").strip()
        if not user:
            return None
        email = user if "@" in user else None
        raw = headers.get(self.groups_header, "") if self.groups_header else ""
        groups = tuple(g.strip() for g in raw.split(",") if g.strip())
        return Person(
            id=user,
            name=user,
            email=email,
            groups=groups,
            role=role_for(user, email, groups, self.admins, self.admin_groups),
        )
