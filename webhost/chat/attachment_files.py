"""What an attached file becomes (docs/chat.md "Attachments"): an image the model is given as an image
block, a text file as its text, a PDF as the text `pypdf` extracts; anything else is refused.

The kind is read from the file's first bytes, not from its name or the type the browser claims. An image
is kept as it came when both wires take it as it is; else it is scaled down with Pillow to the documented
caps of Anthropic's Messages API (the stricter of the two wires: at most 5 MB of base64 per image, and
images with a long edge over 1568 px are scaled down by the API anyway, costing time for nothing), as a
JPEG (a PNG when it has transparency). Runs in a worker thread: decoding a large image takes a while.

A file sent in chunks comes spooled (storage/upload_spool.py): an image to scale is decoded from there through a
file object, so its bytes and its pixels are never in memory side by side (issue 28); a file kept as it is, or
read as text, is read whole once.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Protocol, cast

from webhost.errors import InvalidParams
from webhost.malloc import give_back

if TYPE_CHECKING:
    from PIL.Image import Image

LONG_EDGE = 1568  # px: Anthropic's documented size past which it scales an image down itself
IMAGE_BYTES = 3_750_000  # bytes whose base64 is Anthropic's documented 5 MB per image
MAX_PIXELS = 50_000_000  # an image bigger than this is refused before it is decoded (a "decompression bomb")
IMAGE_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class AttachmentRefused(InvalidParams):
    """A file that cannot be attached: its message is one line for the composer."""


class Spooled(Protocol):
    """A file as it came, kept outside one bytes object (storage/upload_spool.py's `UploadSpool`)."""

    @property
    def size(self) -> int: ...

    def reader(self) -> BinaryIO: ...

    def read(self) -> bytes: ...


@dataclass(frozen=True)
class Prepared:
    kind: str  # "image" or "text"
    mime_type: str  # of `content`: an image's type, or the file's own for text (a PDF's is application/pdf)
    content: bytes  # an image's bytes, or UTF-8 text


def prepare(name: str, data: bytes | Spooled, *, text_chars: int) -> Prepared:
    """The file as it is kept and given to the model, or `AttachmentRefused` saying why not."""
    if _is_image(_head(data)):
        return _image(name, data)
    if not isinstance(data, bytes):
        data = data.read()
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


def _head(data: bytes | Spooled) -> bytes:
    if isinstance(data, bytes):
        return data[:12]
    with data.reader() as file:
        return file.read(12)


def _is_image(data: bytes) -> bool:
    return (
        data.startswith(b"\x89PNG\r\n\x1a\n")
        or data.startswith(b"\xff\xd8\xff")
        or data[:6] in (b"GIF87a", b"GIF89a")
        or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")
    )


def _image(name: str, data: bytes | Spooled) -> Prepared:
    from PIL import Image, UnidentifiedImageError  # imported on the first image: most processes never need it

    size = len(data) if isinstance(data, bytes) else data.size
    try:
        # Opened from the bytes or the spool: only the header is read here, and only a block at a time later.
        with io.BytesIO(data) if isinstance(data, bytes) else data.reader() as file, Image.open(file) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise AttachmentRefused(f"{name} is {width}x{height} pixels; an image may have at most 50 megapixels")
            kind = IMAGE_TYPES.get(image.format or "")
            if kind is not None and max(width, height) <= LONG_EDGE and size <= IMAGE_BYTES:
                # Both wires take it as it is: not decoded at all.
                return Prepared("image", kind, data if isinstance(data, bytes) else data.read())
            give_back()  # what the chunks' frames left free goes back before the pixels take their place
            scaled = _scaled(image)  # the decoded pixels are freed (closed) before it returns
        give_back()  # this worker thread's arena would keep the pixels' pages resident
        return scaled
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise AttachmentRefused(f"{name} could not be read as an image ({exc})") from None


def _scaled(image: Image) -> Prepared:
    image.draft("RGB", (LONG_EDGE, LONG_EDGE))  # a JPEG is decoded at a reduced scale, not whole
    image.thumbnail((LONG_EDGE, LONG_EDGE))  # decodes, then scales in place, keeping the proportions
    # Decoded here if thumbnail() did not (already small enough): else save() copies the whole image first, taking
    # it for read-only (an image opened from a file object without a name, saved to one, is "saved over itself").
    image.load()
    alpha = image.mode in ("RGBA", "LA") or (image.mode == "P" and "transparency" in image.info)
    if alpha:
        rgba = image if image.mode == "RGBA" else image.convert("RGBA")  # convert() copies even to its own mode
        out = _saved(rgba, "PNG", optimize=True)
        if rgba is not image:
            rgba.close()
        if out.size <= IMAGE_BYTES:
            image.close()
            return Prepared("image", "image/png", out.joined())
        del out  # before the JPEG is encoded
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    if rgb is not image:
        image.close()  # one decoded copy at a time
    for quality in (85, 70, 50, 30):
        out = _saved(rgb, "JPEG", quality=quality)
        if out.size <= IMAGE_BYTES:
            rgb.close()
            return Prepared("image", "image/jpeg", out.joined())
        del out  # before the next try is encoded
    rgb.thumbnail((LONG_EDGE // 2, LONG_EDGE // 2))  # noise at 1568 px can pass the cap even at quality 30
    out = _saved(rgb, "JPEG", quality=50)
    rgb.close()
    return Prepared("image", "image/jpeg", out.joined())


class _Pieces:
    """What Pillow encodes, kept as the pieces it writes (64 KiB each): no buffer grows by copies of itself while
    the decoded image is held, and they are joined once the image is freed."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.size = 0

    def write(self, data: bytes) -> int:
        self.pieces.append(bytes(data))  # the object itself: Pillow hands over bytes
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def joined(self) -> bytes:
        data = b"".join(self.pieces)
        self.pieces.clear()
        return data


def _saved(image: Image, format: str, **options: object) -> _Pieces:
    out = _Pieces()
    image.save(cast(BinaryIO, out), format, **options)  # write() and flush() are all Pillow's encoders use
    return out


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
