"""Sign-ins to remote servers in progress, for the whole host: one-time `state` → (person, server).

The SDK's OAuth flow makes the authorization URL (with its own random `state`) and then waits for the
authorization server to send the browser back. `open` records that state for the person and server
it belongs to; webhost's `/oauth/callback` route hands what came back to `deliver`, which checks the
state is known, unexpired, unused and the same person's, and wakes the flow (or fails it with the
reason in words). No token ever passes through here: only the one-time code, to the flow that asked.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

DEFAULT_TTL_S = 600.0
# How long the callback page waits for the code to be traded for tokens (one request to the token endpoint).
EXCHANGE_TIMEOUT_S = 60.0


class SignInFailed(Exception):
    """A sign-in did not complete; `message` says why, for the page (no secrets in it)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Answer:
    code: str
    state: str
    iss: str | None


@dataclass(frozen=True)
class Delivered:
    """What the callback page says: `server` is None when the answer could not be tied to a sign-in. A code
    handed on (`pending`) is not a sign-in yet: the page says so once the flow traded it (`ServerSignIns.outcome`)."""

    ok: bool
    message: str
    server: str | None = None
    pending: PendingSignIn | None = None


@dataclass(eq=False)
class PendingSignIn:
    person_id: str
    server: str
    state: str
    url: str
    expires_at: float
    notice: Callable[[str], None]
    _done: anyio.Event = field(default_factory=anyio.Event)
    _answer: Answer | None = None
    _failure: str | None = None
    _exchanged: anyio.Event = field(default_factory=anyio.Event)  # the flow traded the code (or failed to)
    _exchange_failure: str | None = None

    def exchanged(self, failure: str | None = None) -> None:
        """The flow's word on the code it was given: tokens stored (None), or why not."""
        if not self._exchanged.is_set():
            self._exchange_failure = failure
            self._exchanged.set()

    def _finish(self, answer: Answer | None = None, failure: str | None = None) -> None:
        if not self._done.is_set():
            self._answer, self._failure = answer, failure
            self._done.set()


class ServerSignIns:
    def __init__(self, ttl: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._by_state: dict[str, PendingSignIn] = {}

    def open(self, person_id: str, server: str, url: str, state: str, notice: Callable[[str], None]) -> PendingSignIn:
        """A new sign-in for this person and server; an earlier one of theirs for it is superseded."""
        for old in [p for p in self._by_state.values() if (p.person_id, p.server) == (person_id, server)]:
            self._drop(old, "a newer sign-in to this server was started")
        pending = PendingSignIn(person_id, server, state, url, self._clock() + self.ttl, notice)
        self._by_state[state] = pending
        return pending

    def current(self, person_id: str, server: str) -> PendingSignIn | None:
        for pending in self._by_state.values():
            if (pending.person_id, pending.server) == (person_id, server) and pending.expires_at > self._clock():
                return pending
        return None

    async def wait(self, pending: PendingSignIn) -> Answer:
        """The code, once the person has signed in; `SignInFailed` with the reason otherwise."""
        try:
            with anyio.move_on_after(max(0.0, pending.expires_at - self._clock())):
                await pending._done.wait()
            if not pending._done.is_set():
                raise SignInFailed(f"the sign-in was not completed within {self.ttl / 60:g} minutes; sign in again")
            if pending._answer is None:
                raise SignInFailed(pending._failure or "the sign-in did not complete")
            return pending._answer
        finally:
            self._drop(pending, "the sign-in was abandoned")

    def cancel(self, person_id: str, server: str, reason: str) -> None:
        for pending in [p for p in self._by_state.values() if (p.person_id, p.server) == (person_id, server)]:
            self._drop(pending, reason)

    def _drop(self, pending: PendingSignIn, reason: str) -> None:
        if self._by_state.get(pending.state) is pending:
            del self._by_state[pending.state]
        pending._finish(failure=reason)

    def deliver(self, person_id: str, params: dict[str, str]) -> Delivered:
        """What the authorization server sent back to `/oauth/callback`, for the person whose request it is."""
        state = params.get("state") or ""
        pending = next((p for key, p in self._by_state.items() if secrets.compare_digest(key, state)), None)
        if pending is None or pending.person_id != person_id:
            # Unknown, used, superseded, or someone else's: never touch another person's sign-in.
            message = (
                "This sign-in answer matches no sign-in in progress (state mismatch): it expired, was used "
                "already, or was not started from your webhost page. Start again with Sign in on the server."
            )
            for mine in [p for p in self._by_state.values() if p.person_id == person_id]:
                mine.notice(
                    "a sign-in answer arrived that matches no sign-in in progress (state mismatch); sign in again"
                )
            return Delivered(False, message)
        server = pending.server
        if pending.expires_at <= self._clock():
            self._drop(pending, "the sign-in expired before the answer came back; sign in again")
            return Delivered(False, f"The sign-in to {server} expired. Start again from the page.", server)
        del self._by_state[pending.state]
        error = params.get("error")
        if error:
            description = params.get("error_description") or ""
            if error == "access_denied":
                reason = "you declined access at the authorization server" + (
                    f" ({description})" if description else ""
                )
            else:
                reason = f"the authorization server refused the sign-in: {error}" + (
                    f" ({description})" if description else ""
                )
            pending._finish(failure=reason)
            return Delivered(False, f"Sign-in to {server} did not complete: {reason}.", server)
        code = params.get("code")
        if not code:
            pending._finish(failure="the authorization server sent no code back")
            return Delivered(False, f"Sign-in to {server} did not complete: no authorization code came back.", server)
        pending._finish(answer=Answer(code=code, state=pending.state, iss=params.get("iss") or None))
        return Delivered(True, f"Finishing the sign-in to {server}…", server, pending)

    async def outcome(self, delivered: Delivered, timeout: float = EXCHANGE_TIMEOUT_S) -> Delivered:
        """What the page says once the flow traded the code it was handed: signed in only then."""
        pending = delivered.pending
        if pending is None:
            return delivered
        server = pending.server
        with anyio.move_on_after(timeout):
            await pending._exchanged.wait()
        if not pending._exchanged.is_set():
            return Delivered(False, f"The sign-in to {server} is taking long: the page shows when it is done.", server)
        if pending._exchange_failure is not None:
            return Delivered(False, f"Sign-in to {server} did not complete: {pending._exchange_failure}.", server)
        return Delivered(True, f"Signed in to {server}. You can close this window.", server)
