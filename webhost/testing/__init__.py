"""A kit for testing MCP servers and apps with webhost: ``pip install "webhost[testing]"``.

- ``start_webhost``: run `webhost serve` on free ports from a configuration, stopped with every process reaped;
- ``WebhostPage``: a typed page object over the stable data attributes (shared/contract.md §4);
- ``launch_chromium`` / ``chromium_launch_kwargs``: the Chromium and flags MCP Apps need;
- the pytest plugin (``webhost.testing.plugin``): fixtures ``webhost``, ``webhost_factory``, ``webhost_page``,
  ``webhost_browser``, ``webhost_context`` and the marker ``@pytest.mark.webhost(CONFIG)``.

The kit drives webhost only from the outside: the command line, the configuration file, the login URL,
``/healthz``, ``/api/audit`` and the page's data attributes.
"""

from webhost.testing.browser import OFFLINE_ARGS, NoChromium, chromium_launch_kwargs, launch_chromium
from webhost.testing.host import Webhost, WebhostFailed, free_port, start_webhost, stop_webhost
from webhost.testing.page import App, Approvals, Elicitation, LogEntry, ToolResult, WebhostPage

__all__ = [
    "OFFLINE_ARGS",
    "App",
    "Approvals",
    "Elicitation",
    "LogEntry",
    "NoChromium",
    "ToolResult",
    "Webhost",
    "WebhostFailed",
    "WebhostPage",
    "chromium_launch_kwargs",
    "free_port",
    "launch_chromium",
    "start_webhost",
    "stop_webhost",
]
