"""8. **a 5 MB image attached and sent** (issue 28): webhost's peak resident memory (VmHWM, /proc) while a
5 MB PNG is chosen in the composer, sent in chunks, scaled to the wires' caps and given to a model with
vision, against its resident memory just before (the same run's baseline: the peak is reset first through
/proc/PID/clear_refs, after a small image was sent once so Pillow's import is not counted). Goal: the rise
is at most 2x the file's size. The PNG is noise (it does not compress: 5 MB of file are about 5 MB of
pixels); a smaller file of many more pixels decodes larger (webhost refuses images over 50 megapixels).
The peak is also read when the attachment shows in the composer (the attach alone: chunks, decode, scaling,
sealing), without resetting it, so the rise is split into the attach and what sending it added.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

from PIL import Image
from playwright.sync_api import Page

FILE_BYTES = 5 * 1024 * 1024


def noise_png(path: Path, target: int = FILE_BYTES) -> int:
    side = int((target / 3) ** 0.5)  # 3 bytes a pixel, and noise does not compress
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "PNG", compress_level=1)
    path.write_bytes(out.getvalue())
    return len(out.getvalue())


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} for {pid}")


def send_with(page: Page, path: Path, text: str, attached: Callable[[], object] = lambda: None) -> None:
    chat = page.locator('[data-testid="chat"]')
    answers = chat.locator('[data-chat-message][data-role="assistant"]').count()
    chat.locator('input[type="file"][data-testid="chat-attach"]').set_input_files(path)
    chat.locator(".chat-composer [data-attachment]").wait_for()
    attached()
    chat.locator('textarea[data-testid="chat-input"]').fill(text)
    chat.locator('textarea[data-testid="chat-input"]').press("Enter")
    page.wait_for_function(
        """(n) => {
          const a = document.querySelectorAll('[data-testid="chat"] [data-chat-message][data-role="assistant"]');
          return a.length > n && a[a.length - 1].dataset.status === "done"; }""",
        arg=answers,
    )


def image_memory(page: Page, pid: int, directory: Path) -> None:
    print("\n8. a 5 MB image attached and sent: webhost's peak RSS over the same run's RSS just before")
    small = directory / "small.png"
    noise_png(small, 64 * 1024)
    send_with(page, small, "warm up")  # Pillow imported, the chunk path and the model's request exercised once
    big = directory / "big.png"
    size = noise_png(big)
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS now
    before = status_kb(pid, "VmRSS")
    marks: list[int] = []
    send_with(page, big, "what is in it?", lambda: marks.append(status_kb(pid, "VmHWM")))
    peak = status_kb(pid, "VmHWM")
    rise, attach = (peak - before) * 1024, (marks[0] - before) * 1024
    print(f"   file {size / 1e6:.2f} MB   RSS before {before / 1024:.1f} MiB   peak {peak / 1024:.1f} MiB")
    print(f"   rise {rise / 1e6:.2f} MB = {rise / size:.2f}x the file (goal <= 2x)")
    print(f"   of which the attach alone {attach / 1e6:.2f} MB = {attach / size:.2f}x; the send added the rest")
