"""Why a server's connection failed, in one line for the page: the spawn's error, the HTTP status, or the
stderr line that best says it."""

from __future__ import annotations

import re

from mcp import MCPError

from .client_factory import EraRefused

# Lines of a crash report that say nothing about the cause: Node's version banner, stack frames,
# the caret under a source line, the braces of an error object's dump.
_NOISE = re.compile(r"^(?:Node\.js v\d[\w.-]*|at .*|File \".*|\^+|[{}()\[\],;]+|\w+: .*,|\w+: \[\]|throw \w+;?)$")
_ERROR_LINE = re.compile(r"^(?:[\w.]*(?:Error|Exception|Exit)\b|error\b|fatal\b|panic\b)", re.IGNORECASE)


def useful_stderr_line(tail: list[str]) -> str | None:
    """The stderr line that best says why a server failed: the last error line ("Error: Cannot find module
    …", a Python traceback's last line), else the last line that is not noise, else the last line."""
    lines = [line.strip() for line in tail if line.strip()]
    meaningful = [line for line in lines if not _NOISE.match(line)]
    errors = [line for line in meaningful if _ERROR_LINE.match(line)]
    if errors:
        return errors[-1]
    if meaningful:
        return meaningful[-1]
    return lines[-1] if lines else None


def tail_suffix(tail: list[str]) -> str:
    """` (stderr: …)` with the useful line of `tail`, or nothing."""
    line = useful_stderr_line(tail)
    return f" (stderr: {line})" if line else ""


def describe_connect_failure(
    exc: BaseException, tail: list[str], url: str | None = None, *, exit_code: int | None = None, cwd: str | None = None
) -> str:
    """One line for the page; `url` is the redacted URL, `exit_code` the stdio server's if it exited."""
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, OSError) and cwd is not None and leaf.filename == cwd:
        if isinstance(leaf, FileNotFoundError):
            return f"working directory not found: {cwd}"
        if isinstance(leaf, NotADirectoryError):
            return f"working directory is not a directory: {cwd}"
        return f"working directory not accessible: {cwd}"
    if isinstance(leaf, EraRefused):
        return str(leaf)
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename}"
    if isinstance(leaf, PermissionError):
        return f"command not executable: {leaf.filename}"
    if exit_code is not None:
        return f"the server exited with status {exit_code}" + tail_suffix(tail)
    kind = type(leaf).__name__
    if url and kind in ("ConnectError", "ConnectTimeout"):
        return f"cannot reach {url} ({leaf or 'connection refused'})"
    response = getattr(leaf, "response", None)
    status = getattr(response, "status_code", None)
    if url and isinstance(status, int):
        hint = " (check the entry's headers)" if status in (401, 403) else ""
        return f"{url} answered HTTP {status}{hint}"
    if isinstance(leaf, MCPError):
        text = f"the server refused the connection: {leaf.error.message} (code {leaf.code})"
    else:
        text = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
    return text + tail_suffix(tail)
