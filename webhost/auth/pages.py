"""The HTML pages of getting in: why a sign-in failed (with the reason, never a traceback), and
the short pages of the OIDC flow (finishing a sign-in, signed out)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

_TEMPLATES = Environment(
    loader=FileSystemLoader(str(Path(__file__).parent.parent / "templates")),
    autoescape=select_autoescape(default=True, default_for_string=True),
)
NO_STORE = {"cache-control": "no-store", "referrer-policy": "no-referrer"}


def page_html(
    status: int,
    title: str,
    message: str,
    *,
    sign_in: bool = False,
    next_url: str | None = None,
    token_form: bool = False,
) -> str:
    """`token_form`: token mode's 401, which says where the login URL is and takes the token (GET /?token=)."""
    return _TEMPLATES.get_template("sign-in.html").render(
        status=status, title=title, message=message, sign_in=sign_in, next_url=next_url, token_form=token_form
    )


def problem_page(status: int, title: str, message: str, *, sign_in: bool = True) -> HTMLResponse:
    """A sign-in problem: status, a one-line reason, and a way to try again."""
    return HTMLResponse(page_html(status, title, message, sign_in=sign_in), status_code=status, headers=NO_STORE)
