"""Test MCP server for `webhost check`: one well-behaved app and apps that break the rules.

- `good_app` (ui://check/good.html): initializes, waits for its input and result; declares no CSP and needs none.
- `bad_app` (ui://check/bad.html): sends `resources/list` before initializing, loads an image from an origin its
  `_meta.ui.csp` does not declare (http://127.0.0.1:9, never reachable anyway) and calls `model_only`, a tool whose
  visibility lacks "app" (webhost must refuse it).
- `silent_app` (ui://check/silent.html, only with `--with-silent`): never initializes, so it never reaches ready.
- `early_app` (ui://check/early.html, only with `--early-only`, which serves it alone): asks for its data before
  `ui/initialize` (webhost refuses that), says so in the console and draws nothing; no CSP or visibility problem.

Run it with `python tests/servers/check_apps.py` (stdio) or `--http PORT`.
"""

from __future__ import annotations

import argparse

from _support import add_common_args, advertise_extensions_on_initialize, serve
from apps import UI_EXTENSION, page
from mcp.server import MCPServer
from mcp.server.apps import Apps

UNDECLARED_IMAGE = "http://127.0.0.1:9/pixel.png"

GOOD_JS = r"""
(async () => {
  log("initialize " + describe(await outcome(initialize({}))));
  log("tool-result " + fmt(await waitFor("ui/notifications/tool-result", 5000)));
  finish();
})();
"""

BAD_JS = r"""
(async () => {
  log("early resources/list " + describe(await outcome(request("resources/list", {}, 5000))));
  log("initialize " + describe(await outcome(initialize({}))));
  const img = document.createElement("img");
  img.src = CONFIG.image;
  document.body.appendChild(img);
  log("model_only " + describe(await outcome(request("tools/call", { name: "model_only", arguments: {} }, 5000))));
  finish();
})();
"""

SILENT_JS = r"""
log("not initializing");
"""

EARLY_JS = r"""
(async () => {
  const data = outcome(request("tools/call", { name: "early_app", arguments: {} }, 5000));
  log("initialize " + describe(await outcome(initialize({}))));
  const answer = await data;
  log("data " + describe(answer));
  if (!answer.ok) console.error("early_app: could not load its data: " + fmt(answer.value));
  finish();
})();
"""


def build_server(with_silent: bool, early_only: bool = False) -> MCPServer:
    apps = Apps()
    if early_only:

        @apps.tool(resource_uri="ui://check/early.html", title="Early app", description="Asks before initializing.")
        def early_app() -> str:
            return "early app: its data"

        apps.add_html_resource("ui://check/early.html", page("early-app", EARLY_JS))
        return _server(apps)

    @apps.tool(resource_uri="ui://check/good.html", title="Good app", description="Follows the rules.")
    def good_app(greeting: str = "hello") -> str:
        return f"good app: {greeting}"

    apps.add_html_resource("ui://check/good.html", page("good-app", GOOD_JS, config={"uri": "ui://check/good.html"}))

    @apps.tool(resource_uri="ui://check/bad.html", title="Bad app", description="Breaks the rules.")
    def bad_app() -> str:
        return "bad app: see what webhost check says"

    apps.add_html_resource(
        "ui://check/bad.html", page("bad-app", BAD_JS, config={"uri": "ui://check/bad.html", "image": UNDECLARED_IMAGE})
    )

    if with_silent:

        @apps.tool(resource_uri="ui://check/silent.html", title="Silent app", description="Never initializes.")
        def silent_app() -> str:
            return "silent app"

        apps.add_html_resource("ui://check/silent.html", page("silent-app", SILENT_JS))

    mcp = _server(apps)

    # No app of its own, and not visible to apps: webhost must refuse bad_app's call.
    @mcp.tool(title="Model only", description="Apps must not call it.", meta={"ui": {"visibility": ["model"]}})
    def model_only() -> str:
        return "model_only: should never run for an app"

    return mcp


def _server(apps: Apps) -> MCPServer:
    return MCPServer(
        "check-apps",
        title="webhost check fixtures",
        version="1.0.0",
        extensions=[apps],
        middleware=[advertise_extensions_on_initialize({UI_EXTENSION: {}})],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_common_args(parser)
    parser.add_argument("--with-silent", action="store_true", help="add an app that never initializes")
    parser.add_argument("--early-only", action="store_true", help="serve only an app that asks before initializing")
    args = parser.parse_args()
    serve(build_server(args.with_silent, args.early_only), args)


if __name__ == "__main__":
    main()
