"""The demo MCP server that ships with webhost: every feature the host shows, in one friendly server.

webhost's embedded demo configuration starts it as `[sys.executable, "-m", "webhost.demo.server"]`
over stdio; `--http PORT` serves Streamable HTTP on 127.0.0.1:PORT/mcp instead. It is dual-era: a
client that opens with `server/discover` gets the 2026-07-28 protocol (input requests travel as
`InputRequiredResult` rounds), one that opens with `initialize` gets the legacy protocol (server→client
`elicitation/create` requests).

What it offers:

- tools with text and structured output (`get_weather`), progress (`count_slowly`), an image
  (`generate_image`), audio (`play_tone`), a form with many argument types (`plan_trip`) and an error
  result (`divide`);
- a resource (`demo://readme`), a template (`demo://greeting/{name}`) and a binary resource
  (`demo://logo.png`), and prompts with arguments;
- an MCP App (`show_dashboard` → `ui://demo/dashboard.html`) with an app-only tool (`dashboard_refresh`);
- input requests: a form (`register_user`), URL mode (`connect_account`) and an app-rendered form
  (`pick_color` → `ui://demo/picker.html`, SEP-3118). The server advertises
  `extensions["io.modelcontextprotocol/ui"] = {"elicitation": {}}`.

This module builds the server and holds the plain tools, resources and prompts. The rest lives beside it:
`ui_apps` (the app pages from `apps/` and the dashboard tools), `input_tools` and `elicitation` (the input
requests), `media` (PNG and WAV made in code) and `sdk_fixes` (middleware for two gaps in the `mcp` 2.3.0
wire models, so the app hint and the UI extension reach clients of both eras).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import time
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Audio, Context, Image
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from webhost.demo import media
from webhost.demo.input_tools import register_input_tools
from webhost.demo.sdk_fixes import DemoApps, advertise_extensions_on_initialize, restore_exact_input_requests
from webhost.demo.ui_apps import register_apps

Ctx = Context[Any, Any]

# The MCP Apps go on `apps` before MCPServer consumes the extension.
apps = DemoApps()
register_apps(apps)

mcp: MCPServer[Any] = MCPServer(
    "webhost-demo",
    title="webhost demo",
    description="A tour of MCP: tools, resources, prompts, an MCP App and every kind of input request.",
    version="1.0.0",
    instructions=(
        "A demo server. Try get_weather for structured output, count_slowly for progress, show_dashboard "
        "for an interactive app, and register_user, connect_account or pick_color for input requests."
    ),
    extensions=[apps],
    middleware=[advertise_extensions_on_initialize, restore_exact_input_requests],
)

# --------------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------------


class Weather(BaseModel):
    """Current (made-up) weather for a city."""

    city: str
    temperature: float = Field(description="In the requested unit")
    unit: Literal["celsius", "fahrenheit"]
    conditions: str
    humidity_percent: int
    wind_kmh: int


_CONDITIONS = ("sunny", "partly cloudy", "cloudy", "light rain", "showers", "windy", "foggy", "snow flurries")


@mcp.tool(
    title="Get the weather",
    description="Current weather for a city (made up, but stable for a few minutes). "
    "Returns a sentence and the same data as structured content.",
)
def get_weather(
    city: Annotated[str, Field(min_length=1, max_length=100, description="City name, e.g. Berlin")],
    unit: Annotated[Literal["celsius", "fahrenheit"], Field(description="Temperature unit")] = "celsius",
) -> Annotated[CallToolResult, Weather]:
    name = city.strip().title()
    seed = hashlib.sha256(f"{name.lower()}:{int(time.time() // 300)}".encode()).digest()
    rng = random.Random(seed)
    celsius = round(rng.uniform(-8, 34), 1)
    temperature = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32, 1)
    weather = Weather(
        city=name,
        temperature=temperature,
        unit=unit,
        conditions=rng.choice(_CONDITIONS),
        humidity_percent=rng.randint(20, 95),
        wind_kmh=rng.randint(0, 60),
    )
    symbol = "°C" if unit == "celsius" else "°F"
    text = (
        f"{weather.city}: {weather.temperature}{symbol}, {weather.conditions}, "
        f"humidity {weather.humidity_percent} %, wind {weather.wind_kmh} km/h."
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=weather.model_dump(mode="json")
    )


@mcp.tool(
    title="Count slowly",
    description="Count to `steps`, waiting `delay` seconds per step and reporting progress. Cancel it any time.",
)
async def count_slowly(
    ctx: Ctx,
    steps: Annotated[int, Field(ge=1, le=100, description="How far to count")] = 5,
    delay: Annotated[float, Field(ge=0, le=5, description="Seconds per step")] = 0.3,
) -> str:
    for step in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, steps, f"Counted {step} of {steps}")
    return f"Counted to {steps}."


@mcp.tool(
    title="Generate an image",
    description="A small gradient PNG drawn in code, in the colour you choose.",
)
def generate_image(
    color: Annotated[
        Literal["#e11d48", "#f97316", "#eab308", "#16a34a", "#0891b2", "#2563eb", "#7c3aed", "#334155"],
        Field(description="Base colour"),
    ] = "#2563eb",
    size: Annotated[int, Field(ge=8, le=256, description="Width and height in pixels")] = 96,
) -> Image:
    red, green, blue = media.hex_rgb(color)

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        t = (x + y) / (2 * size)
        ring = 0.5 + 0.5 * math.cos(math.hypot(x - size / 2, y - size / 2) / 4)
        mix = 0.55 + 0.45 * (1 - t) * ring
        return (
            int(red * mix + 255 * (1 - mix)),
            int(green * mix + 255 * (1 - mix)),
            int(blue * mix + 255 * (1 - mix)),
        )

    return Image(data=media.png(size, size, pixel), format="png")


@mcp.tool(title="Play a tone", description="A short sine tone as WAV audio, generated in code.")
def play_tone(
    frequency: Annotated[int, Field(ge=100, le=2000, description="Pitch in hertz")] = 440,
    duration: Annotated[float, Field(ge=0.1, le=3.0, description="Length in seconds")] = 0.6,
) -> Audio:
    return Audio(data=media.wav_tone(frequency, duration), format="wav")


class Traveller(BaseModel):
    """Who is travelling."""

    name: str = Field(min_length=1, description="Lead traveller's name")
    age: int = Field(ge=0, le=120, description="Age in years")


@mcp.tool(
    title="Plan a trip",
    description="A form with every kind of argument: text, bounded integer, number, boolean, choice, list "
    "and object. Returns an itinerary summary.",
)
def plan_trip(
    destination: Annotated[str, Field(min_length=1, description="Where to")],
    nights: Annotated[int, Field(ge=1, le=30, description="Number of nights (1-30)")],
    budget_eur: Annotated[float, Field(ge=0, description="Total budget in euros")],
    traveller: Annotated[Traveller, Field(description="The lead traveller")],
    transport: Annotated[Literal["train", "plane", "car", "bike"], Field(description="How to get there")] = "train",
    flexible_dates: Annotated[bool, Field(description="Dates may move a few days")] = False,
    activities: Annotated[list[str], Field(description="Things to do, one per entry")] = [],  # noqa: B006
) -> str:
    per_night = budget_eur / nights
    lines = [
        f"Trip to {destination} for {traveller.name} ({traveller.age}), {nights} night(s) by {transport}.",
        f"Budget €{budget_eur:,.2f} — about €{per_night:,.2f} per night.",
        "Dates are flexible." if flexible_dates else "Dates are fixed.",
    ]
    if activities:
        lines.append("Plan: " + "; ".join(f"day {i + 1}: {a}" for i, a in enumerate(activities[:nights])))
    return "\n".join(lines)


@mcp.tool(
    title="Divide",
    description="Divide a by b. Dividing by zero returns an error result (isError: true).",
)
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("Cannot divide by zero. Try another value for b.")
    return a / b


# ---- input requests: register_user, connect_account, pick_color (input_tools.py) ----------------

register_input_tools(mcp)


# --------------------------------------------------------------------------------------------------
# Resources and prompts
# --------------------------------------------------------------------------------------------------

README = """# webhost demo server

This server ships with webhost so that a fresh install has something to show.

## Tools

| Tool | Shows |
|---|---|
| `get_weather` | text **and** structured output |
| `count_slowly` | progress notifications, cancellation |
| `generate_image`, `play_tone` | image and audio content |
| `plan_trip` | a form with every argument type |
| `divide` | an error result (divide by zero) |
| `show_dashboard` | an interactive **MCP App** |
| `register_user` | a two-round form input request |
| `connect_account` | a URL-mode input request |
| `pick_color` | an input request rendered by an app |

## Resources

- `demo://readme` — this page
- `demo://greeting/{name}` — a template: try `demo://greeting/Ada`
- `demo://logo.png` — a binary resource
"""


@mcp.resource(
    "demo://readme",
    name="readme",
    title="About this demo",
    description="What the demo server offers",
    mime_type="text/markdown",
)
def readme() -> str:
    return README


@mcp.resource(
    "demo://greeting/{name}",
    name="greeting",
    title="A greeting",
    description="A personal greeting for any name",
    mime_type="text/plain",
)
def greeting(name: str) -> str:
    return f"Hello, {name}! Welcome to the webhost demo."


@mcp.resource(
    "demo://logo.png",
    name="logo",
    title="Demo logo",
    description="A 64×64 PNG (binary resource)",
    mime_type="image/png",
)
def logo() -> bytes:
    return media.logo()


@mcp.prompt(title="Plan a trip", description="Ask for a day-by-day trip plan.")
def trip_planner(destination: str, days: str = "3", style: str = "relaxed") -> str:
    return (
        f"Plan a {style} trip to {destination} for {days} day(s). "
        "Give a short plan for each day and one tip about local food."
    )


@mcp.prompt(title="Explain a tool", description="Ask the assistant to explain one of this server's tools.")
def explain_tool(tool: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": f"What does the demo tool `{tool}` do, and when is it useful?",
            },
        },
    ]


# --------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m webhost.demo.server", description="The webhost demo MCP server.")
    parser.add_argument(
        "--http", type=int, metavar="PORT", help="serve Streamable HTTP on HOST:PORT/mcp instead of stdio"
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface for --http (default 127.0.0.1)")
    args = parser.parse_args(argv)
    if args.http is not None:
        mcp.run(transport="streamable-http", host=args.host, port=args.http, streamable_http_path="/mcp")
    else:
        mcp.run()


if __name__ == "__main__":
    main()
