"""A file on its way in (storage/upload_spool.py, issue 28): on disk only sealed, in a file with no name in the
given folder, read back through a file object block by block, and gone once closed."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from tests.support.open_files import open_in
from webhost.storage.upload_spool import BLOCK, SpoolBroken, UploadSpool

SECRET = b"the secret plans for the garden, "


def plans(size: int) -> bytes:
    return (SECRET * (size // len(SECRET) + 1))[:size]


def on_disk(spool: UploadSpool) -> bytes:
    return os.pread(spool.fileno(), os.fstat(spool.fileno()).st_size, 0)


def test_an_upload_is_on_disk_only_sealed_in_a_file_with_no_name(tmp_path: Path) -> None:
    data = plans(BLOCK * 2 + 1000)
    folder = tmp_path / "temp"
    with UploadSpool(folder) as spool:
        for start in range(0, len(data), 300_000):  # chunks that do not line up with the blocks
            spool.write(data[start : start + 300_000])
        spool.finish()
        sealed = on_disk(spool)
        assert SECRET[:16] not in sealed and len(sealed) > len(data)
        assert os.fstat(spool.fileno()).st_nlink == 0 and list(folder.iterdir()) == []  # nothing to find, or leave
        assert spool.size == len(data) and spool.read() == data
        assert open_in(folder) == [spool.fileno()]
    assert open_in(folder) == []


def test_the_reader_seeks_and_reads_across_blocks(tmp_path: Path) -> None:
    data = os.urandom(BLOCK * 2 + 123)
    with UploadSpool(tmp_path) as spool:
        spool.write(data)
        spool.finish()
        with spool.reader() as file:
            assert file.read(12) == data[:12]
            file.seek(BLOCK - 5)
            assert file.read(10) == data[BLOCK - 5 : BLOCK + 5]  # over a block's end
            assert file.tell() == BLOCK + 5
            file.seek(-3, io.SEEK_END)
            assert file.read() == data[-3:] and file.read(5) == b""
            file.seek(0)
            assert file.read() == data


def test_a_block_changed_on_disk_does_not_open(tmp_path: Path) -> None:
    with UploadSpool(tmp_path) as spool:
        spool.write(plans(BLOCK + 10))
        spool.finish()
        os.pwrite(spool.fileno(), b"\x00", 40)
        with pytest.raises(SpoolBroken), spool.reader() as file:
            file.read(10)


def test_a_closed_spool_has_let_its_file_go(tmp_path: Path) -> None:
    spool = UploadSpool(tmp_path)
    spool.write(plans(1000))
    assert len(open_in(tmp_path)) == 1
    spool.close()
    spool.close()  # twice is fine: every way an upload ends closes it
    assert spool.closed and open_in(tmp_path) == []
