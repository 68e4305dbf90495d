"""The embedded demo server (what `webhost serve` without a configuration shows), in-process: its content tools,
resources and prompts, and its input-request tools answered through webhost in both protocol eras."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from tests.support.fast import connected_tab, text
from tests.support.inprocess import AsgiWsClient
from tests.support.process import start_tool_call
from webhost.demo.server import mcp as demo_server

pytestmark = pytest.mark.anyio

ERAS = pytest.mark.parametrize("legacy", [False, True], ids=["2026-07-28", "legacy"])


def era(legacy: bool) -> frozenset[str]:
    return frozenset({"demo"}) if legacy else frozenset()


async def call(tab: AsgiWsClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await tab.request(
        "tools/call", {"server": "demo", "name": name, "arguments": arguments, "callId": f"c-{name}"}
    )
    return result


async def test_the_content_tools_resources_and_prompts_answer(tmp_path: Path) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server}) as tab:
        image = (await call(tab, "generate_image", {"color": "#16a34a", "size": 16}))["content"][0]
        assert image["type"] == "image" and image["mimeType"] == "image/png"
        assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
        tone = (await call(tab, "play_tone", {"frequency": 660, "duration": 0.1}))["content"][0]
        assert tone["type"] == "audio" and base64.b64decode(tone["data"])[:4] == b"RIFF"
        trip = {
            "destination": "Lisbon",
            "nights": 2,
            "budget_eur": 500,
            "traveller": {"name": "Ada", "age": 36},
            "flexible_dates": True,
            "activities": ["tram 28", "pasteis", "a third day that does not fit"],
        }
        planned = text(await call(tab, "plan_trip", trip))
        assert planned.splitlines() == [
            "Trip to Lisbon for Ada (36), 2 night(s) by train.",
            "Budget €500.00 — about €250.00 per night.",
            "Dates are flexible.",
            "Plan: day 1: tram 28; day 2: pasteis",
        ]
        assert text(await call(tab, "divide", {"a": 1, "b": 4})) == "0.25"
        by_zero = await call(tab, "divide", {"a": 1, "b": 0})
        assert by_zero["isError"] is True and "Cannot divide by zero" in text(by_zero)

        def read(uri: str) -> Any:
            return tab.request("resources/read", {"server": "demo", "uri": uri})

        assert (await read("demo://readme"))["contents"][0]["mimeType"] == "text/markdown"
        greeting = (await read("demo://greeting/Grace"))["contents"][0]
        assert greeting["text"] == "Hello, Grace! Welcome to the webhost demo."
        logo = (await read("demo://logo.png"))["contents"][0]
        assert base64.b64decode(logo["blob"]).startswith(b"\x89PNG")

        plan = await tab.request(
            "prompts/get", {"server": "demo", "name": "trip_planner", "arguments": {"destination": "Oslo"}}
        )
        assert plan["messages"][0]["content"]["text"].startswith("Plan a relaxed trip to Oslo for 3 day(s).")
        explain = await tab.request(
            "prompts/get", {"server": "demo", "name": "explain_tool", "arguments": {"tool": "divide"}}
        )
        assert "`divide`" in explain["messages"][0]["content"]["text"]


async def answer(tab: AsgiWsClient, action: str, content: dict[str, Any] | None = None) -> dict[str, Any]:
    """Answer the next input request; returns it."""
    request = await tab.wait_notification("elicitation/request")
    params: dict[str, Any] = {"id": request["id"], "action": action}
    if content is not None:
        params["content"] = content
    assert await tab.request("elicitation/respond", params) == {}
    return request


@ERAS
async def test_registering_asks_twice_and_says_what_it_registered(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server}, legacy=era(legacy)) as tab:
        pending = start_tool_call(tab, "demo", "register_user", "c-reg")
        profile = {"name": "Ada", "email": "ada@example.com", "age": 36, "plan": "pro", "interests": ["apps"]}
        asked = await answer(tab, "accept", profile)
        assert asked["message"] == "Create a demo account. Nothing is stored."
        confirm = await answer(tab, "accept", {"confirm": True})
        assert confirm["message"] == "Create a Pro (€9 a month) account for Ada <ada@example.com>?"
        done = await tab.wait_response(pending)
        assert text(done["result"]) == (
            "Registered Ada <ada@example.com> on the pro plan (age 36, newsletter no, interests: apps). "
            "This is a demo: nothing was stored."
        )

        pending = start_tool_call(tab, "demo", "register_user", "c-unconfirmed")
        await answer(tab, "accept", {"name": "Bob", "email": "bob@example.com"})
        await answer(tab, "accept", {"confirm": False})
        assert text((await tab.wait_response(pending))["result"]) == "Registration not confirmed; nothing was created."

        pending = start_tool_call(tab, "demo", "register_user", "c-declined")
        await answer(tab, "decline")
        assert text((await tab.wait_response(pending))["result"]) == "Registration declined."

        pending = start_tool_call(tab, "demo", "register_user", "c-cancelled")
        await answer(tab, "cancel")
        assert text((await tab.wait_response(pending))["result"]) == "Registration cancelled."


@ERAS
async def test_a_colour_is_picked_or_not(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server}, legacy=era(legacy)) as tab:
        pending = start_tool_call(tab, "demo", "pick_color", "c-pick")
        # webhost offers app-rendered elicitation, so the question comes bound to the colour-picker App; with no
        # App open here, the page falls back to the ordinary form of the same question.
        bound = await tab.wait_notification("elicitation/request")
        assert bound["mode"] == "app"
        assert await tab.request("elicitation/fallback", {"id": bound["id"]}) == {"fellBack": True}
        await answer(tab, "accept", {"color": "#16a34a"})
        picked = (await tab.wait_response(pending))["result"]["content"]
        assert picked[0]["text"] == "You picked Fern (#16a34a)."
        assert picked[1]["type"] == "image" and base64.b64decode(picked[1]["data"]).startswith(b"\x89PNG")

        pending = start_tool_call(tab, "demo", "pick_color", "c-none")
        bound = await tab.wait_notification("elicitation/request")
        await tab.request("elicitation/fallback", {"id": bound["id"]})
        await answer(tab, "cancel")
        assert text((await tab.wait_response(pending))["result"]) == "No colour picked (cancel)."


@ERAS
async def test_connecting_an_account_asks_for_a_web_page_out_of_band(tmp_path: Path, legacy: bool) -> None:
    async with connected_tab(tmp_path, {"demo": demo_server}, legacy=era(legacy)) as tab:
        pending = start_tool_call(tab, "demo", "connect_account", "c-connect", {"service": "crm"})
        asked = await answer(tab, "accept")
        assert asked["mode"] == "url" and asked["url"].startswith("https://example.com/?connect=crm&")
        connected = text((await tab.wait_response(pending))["result"])
        assert connected.startswith("Connected the demo crm service (simulated;")

        pending = start_tool_call(tab, "demo", "connect_account", "c-no")
        await answer(tab, "decline")
        assert text((await tab.wait_response(pending))["result"]) == "Connection declined; nothing was connected."
