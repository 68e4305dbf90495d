"""Pictures and sounds for the demo server, generated in code: PNG and WAV encoders, the palette, the logo."""

from __future__ import annotations

import io
import math
import struct
import wave
import zlib
from collections.abc import Callable

PALETTE: dict[str, str] = {
    "#e11d48": "Raspberry",
    "#f97316": "Tangerine",
    "#eab308": "Sunflower",
    "#16a34a": "Fern",
    "#0891b2": "Lagoon",
    "#2563eb": "Cobalt",
    "#7c3aed": "Violet",
    "#334155": "Slate",
}


def png(width: int, height: int, pixel: Callable[[int, int], tuple[int, int, int]]) -> bytes:
    """Encode an RGB image as PNG with nothing but zlib."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = bytearray()
    for y in range(height):
        rows.append(0)
        for x in range(width):
            rows.extend(pixel(x, y))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


def hex_rgb(value: str) -> tuple[int, int, int]:
    """`#rrggbb` as an (r, g, b) tuple."""
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


def wav_tone(frequency: float, seconds: float, rate: int = 8000) -> bytes:
    """A sine tone with a short fade in and out, 8-bit mono WAV."""
    frames = bytearray()
    total = int(rate * seconds)
    fade = max(1, int(rate * 0.02))
    for i in range(total):
        envelope = min(1.0, i / fade, (total - i) / fade)
        frames.append(int(128 + 110 * envelope * math.sin(2 * math.pi * frequency * i / rate)))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(rate)
        out.writeframes(bytes(frames))
    return buffer.getvalue()


def logo() -> bytes:
    """The 64×64 demo logo: a disc chequered in the palette's colours."""

    def pixel(x: int, y: int) -> tuple[int, int, int]:
        inside = (x - 31.5) ** 2 + (y - 31.5) ** 2 < 26**2
        if not inside:
            return (255, 255, 255)
        return hex_rgb(list(PALETTE)[(x // 8 + y // 8) % len(PALETTE)])

    return png(64, 64, pixel)
