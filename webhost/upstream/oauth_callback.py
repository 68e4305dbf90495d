"""`GET /oauth/callback`: where a remote server's authorization server sends the person back.

Behind the access gate, so the request is the signed-in person's; the answer is handed to the sign-in
it belongs to (`sign_ins.py`: one-time state, bound to this person and a server, expiring), and the
page says in words what happened. The code itself never reaches a page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse

from webhost.audit import AuditLog
from webhost.auth.gate import HOP
from webhost.auth.pages import NO_STORE, page_html
from webhost.people import person_of

from .sign_ins import ServerSignIns


def callback_endpoint(sign_ins: ServerSignIns, audit: AuditLog) -> Callable[[Request], Awaitable[HTMLResponse]]:
    async def oauth_callback(request: Request) -> HTMLResponse:
        params = {k: v for k, v in request.query_params.items() if k != HOP}
        person = person_of(request.scope)
        # Signed in only once the flow traded the code for tokens: the page waits for that.
        outcome = await sign_ins.outcome(sign_ins.deliver(person.id, params))
        # Who came back from which authorization server, and how (never the code or the state).
        audit.note(
            "server.sign-in",
            person=person,
            server=outcome.server,
            decision="answered" if outcome.ok else "failed",
            summary=outcome.message[:300],
        )
        title = "Signed in" if outcome.ok else "Sign-in did not complete"
        status = 200 if outcome.ok else 400
        html = page_html(status, title, outcome.message)
        return HTMLResponse(html, status_code=status, headers=NO_STORE)

    return oauth_callback
