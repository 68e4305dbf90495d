"""Test images: a PNG of one colour, or of noise (which does not compress: its file is about its pixels' size)."""

from __future__ import annotations

import io
import os

from PIL import Image


def png(width: int, height: int, *, noise: bool = False) -> bytes:
    pixels = os.urandom(width * height * 3) if noise else None
    image = (
        Image.frombytes("RGB", (width, height), pixels) if pixels else Image.new("RGB", (width, height), (200, 30, 30))
    )
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)  # noise gains nothing from a harder try; it only takes longer
    return out.getvalue()
