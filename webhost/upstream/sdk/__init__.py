"""The seam: the only modules of webhost that name a private member of the `mcp` SDK.

Each item is one small named function or class here, whose docstring says the behaviour webhost needs,
the private member it uses, and the public hook that would let it go (docs/architecture.md, "What would
let each SDK workaround go"; `upstream/sdk_workarounds.py` lists every workaround, these among them).
The rest of webhost calls these names. `tests/unit/test_sdk_seam.py` fails when a private SDK name
appears anywhere else, and an import-linter contract (pyproject.toml) when a private SDK module is
imported anywhere else.

`TESTED_MCP` is the minor release of `mcp` this seam was written and tested against: pyproject.toml pins
`mcp` to it, and `tests/unit/test_sdk_seam.py` fails when another release is installed, since a minor
release may rename or reshape any private member named here.
"""

from .client import (
    RoundObservingClient,
    TransportStreams,
    absorb_tool_listing,
    advertised_capabilities,
    round_observer,
    send_unchecked,
)
from .http_responses import streamable_http_client
from .oauth import ProviderHooks, keep_time, share_lock
from .process import close_subprocess_transport

TESTED_MCP = "2.3"

__all__ = [
    "TESTED_MCP",
    "ProviderHooks",
    "RoundObservingClient",
    "TransportStreams",
    "absorb_tool_listing",
    "advertised_capabilities",
    "close_subprocess_transport",
    "keep_time",
    "round_observer",
    "send_unchecked",
    "share_lock",
    "streamable_http_client",
]
