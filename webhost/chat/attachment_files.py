"""What an attached file becomes (docs/chat.md "Attachments"): an image the model is given as an image
block, a text file as its text, a PDF as the text `pypdf` extracts; anything else is refused.

The kind is read from the file's first bytes, not from its name or the type the browser claims. An image
is kept as it came when both wires take it as it is; else it is scaled down with Pillow to the documented
caps of Anthropic's Messages API (the stricter of the two wires: at most 5 MB of base64 per image, and
images with a long edge over 1568 px are scaled down by the API anyway, costing time for nothing), as a
JPEG (a PNG when it has transparency). Runs in a worker thread: decoding a large image takes a while.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from webhost.errors import InvalidParams

LONG_EDGE = 1568  # px: Anthropic's documented size past which it scales an image down itself
IMAGE_BYTES = 3_750_000  # bytes whose base64 is Anthropic's documented 5 MB per image
MAX_PIXELS = 50_000_000  # an image bigger than this is refused before it is decoded (a "decompression bomb")
IMAGE_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class AttachmentRefused(InvalidParams):
    """A file that cannot be attached: its message is one line for the composer."""


@dataclass(frozen=True)
class Prepared:
    kind: str  # "image" or "text"
    mime_type: str  # of `content`: an image's type, or the file's own for text (a PDF's is application/pdf)
    content: bytes  # an image's bytes, or UTF-8 text


def prepare(name: str, data: bytes, *, text_chars: int) -> Prepared:
    """The file as it is kept and given to the model, or `AttachmentRefused` saying why not."""
    if _is_image(data):
        return _image(name, data)
    if data.startswith(b"%PDF-"):
        return Prepared("text", "application/pdf", _checked_text(name, pdf_text(name, data), text_chars).encode())
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = ""
    if not data or "\x00" in text or (not text and data):
        raise AttachmentRefused(
            f"{name}: only images (PNG, JPEG, GIF, WebP), PDFs and UTF-8 text files can be attached"
        )
    return Prepared("text", "text/plain", _checked_text(name, text, text_chars).encode())


def _checked_text(name: str, text: str, limit: int) -> str:
    if len(text) > limit:
        raise AttachmentRefused(f"{name} has {len(text):,} characters of text; a file may have at most {limit:,}")
    return text


def _is_image(data: bytes) -> bool:
    return (
        data.startswith(b"\x89PNG\r\n\x1a\n")
        or data.startswith(b"\xff\xd8\xff")
        or data[:6] in (b"GIF87a", b"GIF89a")
        or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")
    )


def _image(name: str, data: bytes) -> Prepared:
    from PIL import Image, UnidentifiedImageError  # imported on the first image: most processes never need it

    try:
        image = Image.open(io.BytesIO(data))  # reads the header only
        width, height = image.size
        if width * height > MAX_PIXELS:
            raise AttachmentRefused(f"{name} is {width}x{height} pixels; an image may have at most 50 megapixels")
        kind = IMAGE_TYPES.get(image.format or "")
        if kind is not None and max(width, height) <= LONG_EDGE and len(data) <= IMAGE_BYTES:
            return Prepared("image", kind, data)  # both wires take it as it is: not decoded at all
        return _scaled(image)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise AttachmentRefused(f"{name} could not be read as an image ({exc})") from None


def _scaled(image: object) -> Prepared:
    from PIL import Image

    assert isinstance(image, Image.Image)
    image.draft("RGB", (LONG_EDGE, LONG_EDGE))  # a JPEG is decoded at a reduced scale, not whole
    image.thumbnail((LONG_EDGE, LONG_EDGE))  # decodes, then scales in place, keeping the proportions
    alpha = image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info)
    out = io.BytesIO()
    if alpha:
        image.convert("RGBA").save(out, "PNG", optimize=True)
        if out.tell() <= IMAGE_BYTES:
            return Prepared("image", "image/png", out.getvalue())
    rgb = image if image.mode == "RGB" else image.convert("RGB")  # convert() copies even to its own mode
    for quality in (85, 70, 50, 30):
        out = io.BytesIO()
        rgb.save(out, "JPEG", quality=quality)
        if out.tell() <= IMAGE_BYTES:
            return Prepared("image", "image/jpeg", out.getvalue())
    rgb.thumbnail((LONG_EDGE // 2, LONG_EDGE // 2))  # noise at 1568 px can pass the cap even at quality 30
    out = io.BytesIO()
    rgb.save(out, "JPEG", quality=50)
    return Prepared("image", "image/jpeg", out.getvalue())


def pdf_text(name: str, data: bytes) -> str:
    """The PDF's text, page after page (a scanned PDF without a text layer has none: refused)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise AttachmentRefused(f"{name} could not be read as a PDF ({exc})") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise AttachmentRefused(f"{name} has no text to extract (a scanned PDF?): attach its pages as images instead")
    return text
