"""The files this process holds open in a folder, from /proc (Linux): a file with no name (an upload's spool,
storage/upload_spool.py) shows there as `FOLDER/#INODE (deleted)`, and nowhere else."""

from __future__ import annotations

import os
from pathlib import Path


def open_in(folder: Path) -> list[int]:
    """The descriptors open on files in `folder`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since the listing
            continue
        if target.startswith(f"{folder}/"):
            found.append(int(fd))
    return found
