"""Who is asking: the person a request belongs to, as the access gate established it.

Every WebSocket, connection, call, input request, approval, app frame and audit row belongs to one
`Person`. The gate puts the person of each request in the ASGI scope (`scope["state"]["person"]`);
everything below reads it from there and never from anything the browser sends.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["admin", "member"]
SCOPE_KEY = "person"
SIGN_IN_KEY = "sign_in"

# The one person of a deployment in token mode (the token is the credential, not an identity).
TOKEN_PERSON_ID = "token"


@dataclass(frozen=True)
class Person:
    id: str
    name: str
    email: str | None = None
    role: Role = "member"
    groups: tuple[str, ...] = field(default_factory=tuple)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def public(self) -> dict[str, Any]:
        """What the page is told about the signed-in person."""
        return {"id": self.id, "name": self.name, "email": self.email, "role": self.role}

    def expansions(self) -> dict[str, str]:
        """The values of `${user.id}`, `${user.email}` and `${user.name}` in a server entry."""
        return {"user.id": self.id, "user.email": self.email or "", "user.name": self.name}


TOKEN_PERSON = Person(id=TOKEN_PERSON_ID, name="webhost", role="admin")


def person_of(scope: Any) -> Person:
    """The person the gate attached to this request; no person means no gate ran, which is a bug, not a guest."""
    state = scope.get("state")
    person = state.get(SCOPE_KEY) if isinstance(state, dict) else None
    if not isinstance(person, Person):
        raise LookupError("no person on this request: the access gate did not run")
    return person


def attach(scope: Any, person: Person, *, sign_in: str | None = None) -> None:
    """The gate's side: this request is this person's (`sign_in`: a key of the web session it came with)."""
    state = scope.setdefault("state", {})
    state[SCOPE_KEY] = person
    if sign_in is not None:
        state[SIGN_IN_KEY] = sign_in


def sign_in_of(scope: Any) -> str | None:
    """The key of the web session a request came with (oidc mode), so signing out can end its tabs."""
    state = scope.get("state")
    value = state.get(SIGN_IN_KEY) if isinstance(state, dict) else None
    return value if isinstance(value, str) else None


def sign_in_key(cookie: str) -> str:
    """What identifies one web session among the tabs: a digest of its cookie, never the cookie itself."""
    return hashlib.sha256(cookie.encode("utf-8")).hexdigest()
