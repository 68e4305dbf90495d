"""What the page is told when an upstream request fails: SDK and transport exceptions → webhost's errors."""

from __future__ import annotations

import anyio
import pytest
from mcp import InputRequiredRoundsExceededError, MCPError
from pydantic import BaseModel, ValidationError

from webhost.errors import Cancelled, InvalidParams, UpstreamError
from webhost.upstream.results import map_exception

pytestmark = pytest.mark.anyio  # map_exception asks anyio which exception is a cancellation

BASE = {"server": "s", "method": "tools/call"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Strict(BaseModel):
    count: int


def validation_error() -> ValidationError:
    try:
        Strict.model_validate({"count": "many"})
    except ValidationError as exc:
        return exc
    raise AssertionError("expected a ValidationError")


async def test_a_json_rpc_error_keeps_the_servers_code_and_data() -> None:
    mapped = map_exception(MCPError(code=-32099, message="teapot", data={"why": 1}), "s", "tools/call")
    assert isinstance(mapped, UpstreamError) and mapped.code == -32000
    assert mapped.message == "s: teapot"
    assert mapped.data == {**BASE, "upstreamCode": -32099, "upstreamData": {"why": 1}}
    without_data = map_exception(MCPError(code=-32603, message="internal"), "s", "tools/call")
    assert without_data is not None and without_data.data == {**BASE, "upstreamCode": -32603}


async def test_a_server_side_cancel_is_cancelled() -> None:
    mapped = map_exception(MCPError(code=-32800, message="stop"), "s", "tools/call")
    assert isinstance(mapped, Cancelled) and mapped.code == -32800 and mapped.data == {**BASE, "upstreamCode": -32800}


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (InputRequiredRoundsExceededError(10), "s kept asking for input: gave up after too many rounds"),
        (validation_error(), "s sent an invalid result (count: Input should be a valid integer"),
        (RuntimeError("Output validation error: structured content missing"), "s: Output validation error"),
        (anyio.BrokenResourceError(), "s: the connection to the server was lost"),
        (anyio.ClosedResourceError(), "s: the connection to the server was lost"),
        (anyio.EndOfStream(), "s: the connection to the server was lost"),
        (KeyError("x"), "s: KeyError: 'x'"),
    ],
    ids=["rounds", "validation", "structured", "broken", "closed", "eof", "other"],
)
async def test_failures_become_upstream_errors_naming_the_server(exc: BaseException, message: str) -> None:
    mapped = map_exception(exc, "s", "tools/call")
    assert isinstance(mapped, UpstreamError)
    assert mapped.message.startswith(message) and mapped.data == BASE


async def test_a_group_of_one_is_its_exception_and_our_own_errors_pass_through() -> None:
    group = BaseExceptionGroup("tg", [MCPError(code=-32001, message="late")])
    mapped = map_exception(group, "s", "tools/call")
    assert mapped is not None and mapped.data is not None and mapped.data["upstreamCode"] == -32001
    own = InvalidParams("bad")
    assert map_exception(own, "s", "tools/call") is own


async def test_a_cancellation_is_re_raised_not_mapped() -> None:
    assert map_exception(anyio.get_cancelled_exc_class()(), "s", "tools/call") is None
    assert map_exception(KeyboardInterrupt(), "s", "tools/call") is None
