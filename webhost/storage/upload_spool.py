"""A file a person is attaching, kept on disk while its chunks come (docs/chat.md "Attachments"), sealed: its
plaintext never touches the disk, and it is never held whole in memory unless asked for (`read`).

Each block of BLOCK bytes is sealed with the one envelope (storage/envelope.py) under a key of the upload's own,
made at random and kept only in memory, and bound to its place in the file. The file has no name: it is made in
the data folder's temp/ with O_TMPFILE (or made and unlinked at once where that is missing), so the kernel frees
it when it is closed, or when the process ends, whatever ends it; nothing is left behind for a later start.
`reader()` is a file object over the plaintext that opens the block a read reaches (Pillow decodes from it).
"""

from __future__ import annotations

import io
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from webhost.storage.envelope import Envelope

FOLDER = "temp"  # in the data folder
BLOCK = 256 * 1024  # plaintext bytes per sealed block: what one read opens at a time


class SpoolBroken(OSError):
    """A block that does not open: the file was changed under webhost (or the disk returned something else)."""


class UploadSpool:
    """One upload's sealed blocks in a nameless temporary file; `close` frees it (idempotent)."""

    def __init__(self, folder: Path | None) -> None:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._file = tempfile.TemporaryFile(dir=folder, buffering=0)
        self._envelope = Envelope(secrets.token_bytes(32), "upload")
        self._pending = bytearray()  # the plaintext of the block being filled (less than BLOCK)
        self._ends: list[int] = [0]  # where each sealed block ends in the file (after the first 0)
        self.size = 0  # plaintext bytes written

    def write(self, data: bytes) -> None:
        """Append plaintext; each full block is sealed and written at once (OSError: the disk refused)."""
        self.size += len(data)
        self._pending += data
        while len(self._pending) >= BLOCK:
            self._seal(bytes(memoryview(self._pending)[:BLOCK]))
            del self._pending[:BLOCK]

    def finish(self) -> None:
        """No more writes: the last, short block is sealed too."""
        if self._pending:
            self._seal(bytes(self._pending))
            self._pending = bytearray()

    def _seal(self, plain: bytes) -> None:
        sealed = self._envelope.seal(plain, _bound(len(self._ends) - 1))
        offset = self._ends[-1]
        written = 0
        while written < len(sealed):  # a regular file takes it whole unless the disk is full (then OSError)
            written += os.pwrite(self._file.fileno(), memoryview(sealed)[written:], offset + written)
        self._ends.append(offset + len(sealed))

    def block(self, index: int) -> bytes:
        """The plaintext of block `index` (of those `finish` or a full block sealed)."""
        start, end = self._ends[index], self._ends[index + 1]
        plain = self._envelope.open(os.pread(self._file.fileno(), end - start, start), _bound(index))
        if plain is None:
            raise SpoolBroken(f"block {index} of an upload does not open")
        return plain

    @property
    def blocks(self) -> int:
        return len(self._ends) - 1

    def reader(self) -> BinaryIO:
        """A new file object over the plaintext, from its start (after `finish`)."""
        return io.BufferedReader(_Reader(self))

    def read(self) -> bytes:
        """The whole plaintext as one bytes object (after `finish`): for files kept as they came."""
        out = io.BytesIO()
        for index in range(self.blocks):
            out.write(self.block(index))
        return out.getvalue()  # the buffer itself, not a copy of it

    def fileno(self) -> int:
        return self._file.fileno()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        self._pending = bytearray()
        self._file.close()

    def __enter__(self) -> UploadSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Reader(io.RawIOBase):
    """The spool's plaintext, read block by block; only the block being read is held in the clear."""

    def __init__(self, spool: UploadSpool) -> None:
        self._spool = spool
        self._pos = 0
        self._index = -1
        self._plain = b""

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._spool.size}.get(whence)
        if base is None or base + offset < 0:
            raise ValueError(f"cannot seek to {offset} from {whence}")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer: Any) -> int:  # any writable buffer (a bytearray, a memoryview)
        if self._pos >= self._spool.size:
            return 0
        index, at = divmod(self._pos, BLOCK)
        if index != self._index:
            self._plain = b""  # the block read before goes before the next one is opened
            self._plain, self._index = self._spool.block(index), index
        view = memoryview(buffer).cast("B")
        count = min(len(view), len(self._plain) - at)
        view[:count] = memoryview(self._plain)[at : at + count]
        self._pos += count
        return count

    def close(self) -> None:
        self._plain = b""
        super().close()


def _bound(index: int) -> bytes:
    return b"webhost-upload\0%d" % index
