"""webhost's stdio transport for the SDK `Client`: like the SDK's `stdio_client`, with a linear-time line reader.

Processes. Each server runs in its own session and process group, which shutdown terminates whole (SIGTERM, then
SIGKILL) even after a clean exit of the server. On Linux the server is started through a small supervisor
(`shim.py`): a child subreaper with a parent-death signal, so that when webhost dies, even of SIGKILL, the server
and every descendant (including ones that left the group with `setsid()`) are terminated within about
`FORCE_KILL_TIMEOUT / 2` seconds, and when the server exits its leftover descendants are killed at once. Where
the supervisor cannot run (macOS, Windows, no `sys.executable`, or `SUPERVISE = False`) the group kill at
shutdown is all there is: a SIGKILLed webhost leaves its servers behind, and a descendant that called `setsid()`
escapes the group kill.

The spawn, the three pipe tasks, the exit watch and the bounded shutdown share one process's state (`_Link`) and
its invariants, and read best together; the framing of stdout into lines and messages is `stdio_lines.py`, the
supervisor `shim.py`.
"""

from __future__ import annotations

import codecs
import logging
import os
import select
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import IO

import anyio
import anyio.lowlevel
from anyio.abc import AsyncResource, ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
)
from pydantic_core import PydanticSerializationError

from .sdk import close_subprocess_transport
from .stdio_lines import BIG_LINE, LineSplitter, Unreadable, parse_line, parse_long_line

__all__ = [
    "ExitCallback",
    "LineSplitter",
    "ReadStream",
    "WriteStream",
    "stdio_transport",
]

logger = logging.getLogger(__name__)

# The bounds of shutdown, the same as the SDK's stdio_client (module attributes so tests can shorten them).
PROCESS_TERMINATION_TIMEOUT = 2.0  # grace for the server to exit by itself once its stdin closes
FORCE_KILL_TIMEOUT = 2.0  # from SIGTERM to SIGKILL of the process group
KILL_REAP_TIMEOUT = 2.0  # for the event loop to see the death after the kill
WRITER_FLUSH_TIMEOUT = 0.5  # for already-accepted messages to reach stdin before it closes

SUPERVISE = True  # start servers through shim.py on Linux (module attribute so tests can compare)
SHIM = Path(__file__).with_name("shim.py")

_SHUTDOWN_POLL_INTERVAL = 0.01
# Only where there is no pidfd (not Linux, or a seccomp profile that forbids pidfd_open).
_WATCH_POLL_INTERVAL = 0.1

ExitCallback = Callable[[int], None]
ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters,
    errlog: IO[str] = sys.stderr,
    *,
    on_exit: ExitCallback | None = None,
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Spawns the server and yields `(read_stream, write_stream)` for `mcp.Client(transport)`.

    Behaves like the SDK's `stdio_client` (environment, own session, message framing, parse errors delivered as
    `Exception` items, bounded shutdown shielded from cancellation) with two differences: stdout lines are read in
    linear time, and the whole process group is terminated at shutdown even when the server itself exits within
    the grace period, so its children cannot outlive the connection.

    `on_exit(returncode)` is called at most once, synchronously from the transport's tasks, when the server ends
    by itself: it exits while the context is open (at once, via a pidfd on Linux), or it closes its stdout first
    and then exits within the shutdown's grace period. `returncode` is negative for a death by signal. It is not
    called for an exit that shutdown causes. The read stream still delivers what the server wrote before exiting,
    then ends (once no other process holds the server's stdout).

    POSIX only; on Windows this falls back to the SDK's `stdio_client`, and `on_exit` is never called.

    Raises:
        OSError: If the server process cannot be spawned.
    """
    if sys.platform == "win32":  # the process-group and pidfd handling below is POSIX
        async with stdio_client(server, errlog) as streams:
            yield streams
        return

    process = await _spawn(server, errlog)
    # No awaits from the spawn until the task group is entered: a cancellation in the gap would leak the process.
    link = _Link(process, server, on_exit)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(link.read_stdout)
            tg.start_soon(link.write_stdin)
            tg.start_soon(link.watch_exit)
            try:
                yield link.read_stream, link.write_stream
            finally:
                link.shutting_down = True
                # Must finish under the caller's cancellation too, or the server would leak; every wait is bounded.
                with anyio.CancelScope(shield=True):
                    await link.shutdown()
                # Unsticks pipe tasks that a kill survivor holding a pipe end could still block.
                tg.cancel_scope.cancel()
    finally:
        link.release()  # only now: the exit watcher may wait on the pidfd until the task group is done


def _supervised() -> bool:
    return SUPERVISE and sys.platform == "linux" and bool(sys.executable)


async def _spawn(server: StdioServerParameters, errlog: IO[str]) -> Process:
    """Starts the server in a new session; on Linux under the supervisor, which reports whether the exec worked."""
    env = get_default_environment() | (server.env or {})
    if not _supervised():
        try:
            return await anyio.open_process(
                [server.command, *server.args], env=env, stderr=errlog, cwd=server.cwd, start_new_session=True
            )
        except OSError as exc:
            raise _named(exc, server.cwd, server.command) from None
    status_read, status_write = os.pipe()
    try:
        grace = f"{FORCE_KILL_TIMEOUT / 2:g}"
        process = await anyio.open_process(
            [
                sys.executable,
                "-I",
                "-S",
                str(SHIM),
                str(status_write),
                str(os.getpid()),
                grace,
                server.command,
                *server.args,
            ],
            env=env,
            stderr=errlog,
            cwd=server.cwd,
            start_new_session=True,
            pass_fds=(status_write,),
        )
    except OSError as exc:
        os.close(status_read)
        raise _named(exc, server.cwd, None) from None
    except BaseException:
        os.close(status_read)
        raise
    finally:
        os.close(status_write)
    try:
        await _spawn_status(status_read)
    except BaseException:
        with anyio.CancelScope(shield=True):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with anyio.move_on_after(KILL_REAP_TIMEOUT):
                await process.aclose()
        raise
    finally:
        os.close(status_read)
    return process


def _named(exc: OSError, cwd: str | Path | None, command: str | None) -> OSError:
    """The spawn's error naming what failed, as asyncio's loop names it (the working directory, else the command):
    uvloop's name nothing, and the page says which of the two was wrong (upstream/connection.py)."""
    if exc.filename is not None or exc.errno is None:
        return exc
    if cwd is not None and not (os.path.isdir(cwd) and os.access(cwd, os.X_OK)):
        filename: str | None = str(cwd)
    else:
        filename = command
    if filename is None:
        return exc
    return type(exc)(exc.errno, exc.strerror, filename)


async def _spawn_status(status_read: int) -> None:
    """Reads the supervisor's `0 PID` or `ERRNO FILENAME`; raises the exec's OSError as a direct spawn would."""
    chunks = []
    while True:
        await anyio.wait_readable(status_read)
        chunk = os.read(status_read, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    code, _, filename = b"".join(chunks).decode(errors="replace").partition(" ")
    if not code:
        raise OSError("the stdio supervisor exited before starting the server")
    if code != "0":
        number = int(code)
        raise OSError(number, os.strerror(number), filename)


class _Link:
    """The pipes, streams and exit bookkeeping of one spawned server."""

    def __init__(self, process: Process, server: StdioServerParameters, on_exit: ExitCallback | None) -> None:
        self.process = process
        self.server = server
        self.on_exit = on_exit
        self.read_stream_writer, self.read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self.write_stream, self.write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
        # The transport's own answers to the server (requests too malformed for the session to see).
        self._replies = self.write_stream.clone()
        self.writer_done = anyio.Event()
        self.shutting_down = False
        self._pidfd = _open_pidfd(process.pid)
        self._stopping = False  # set when shutdown starts acting on the process (closing its stdin)
        self._exited_first = False  # the server exited before that
        self._hung_up = False  # the server closed its stdout before shutdown began
        self._reported = False

    def release(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    async def read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None, "the server is spawned with a stdout pipe"
        decoder = codecs.getincrementaldecoder(self.server.encoding)(errors=self.server.encoding_error_handler)
        splitter = LineSplitter()
        try:
            async with self.read_stream_writer:
                try:
                    while True:
                        try:
                            data = await stdout.receive()
                        except anyio.EndOfStream:
                            self._hung_up = not self.shutting_down
                            return  # an unterminated last line is dropped, as the SDK does
                        # Lines go out one at a time; no read-ahead while a delivery is blocked. Each line is
                        # let go once parsed: a 10 MB result is not held twice while webhost sends it on.
                        lines = splitter.feed(decoder.decode(data))
                        lines.reverse()
                        while lines:
                            line = lines.pop()
                            if isinstance(line, str) and len(line) < BIG_LINE:
                                parsed = parse_line(line)
                            else:
                                parsed = await parse_long_line(line)
                            try:
                                if isinstance(parsed, Unreadable):
                                    await self._answer_unreadable(parsed)
                                    parsed = parsed.error
                                await self.read_stream_writer.send(parsed)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session is gone; only the drain below remains
                finally:
                    await _drain(stdout)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed stdout under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not self.shutting_down:
                logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def write_stdin(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None, "the server is spawned with a stdin pipe"
        try:
            async with self.write_stream_reader:
                async for session_message in self.write_stream_reader:
                    try:
                        json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        data = (json + "\n").encode(self.server.encoding, errors=self.server.encoding_error_handler)
                    except (PydanticSerializationError, UnicodeEncodeError) as exc:
                        # One message that cannot be encoded (a lone surrogate) fails alone, not the connection.
                        await self._refuse(session_message, exc)
                        continue
                    await stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may still be alive: end the read side so a request cannot wait forever.
            await self.read_stream_writer.aclose()
        finally:
            self.writer_done.set()

    async def _answer_unreadable(self, unreadable: Unreadable) -> None:
        """Answers a server request that is not valid JSON-RPC but has an id, instead of leaving it unanswered."""
        logger.warning(
            "answering an unreadable %s request from the MCP server with %d",
            unreadable.method,
            unreadable.reply.error.code,
        )
        await self._replies.send(SessionMessage(unreadable.reply))

    async def _refuse(self, session_message: SessionMessage, exc: Exception) -> None:
        message = session_message.message
        logger.warning("could not encode a message for the server: %s", exc)
        if isinstance(message, JSONRPCRequest):
            error = ErrorData(code=INVALID_PARAMS, message=f"webhost could not encode the request: {exc}")
            await self.read_stream_writer.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=message.id, error=error)))

    async def watch_exit(self) -> None:
        """Reports an exit of the server's own making as soon as it happens."""
        if self._pidfd is not None:
            await anyio.wait_readable(self._pidfd)
        else:
            while self.process.returncode is None:
                await anyio.sleep(_WATCH_POLL_INTERVAL)
        if self._stopping:
            return
        self._exited_first = True
        # A readable pidfd means dead, but the loop's child watcher reports the status a moment later.
        while (returncode := self.process.returncode) is None:
            await anyio.sleep(_SHUTDOWN_POLL_INTERVAL)
        self._report(returncode)

    async def shutdown(self) -> None:
        """Stops traffic, flushes, stops the server's process group, releases the streams."""
        # Unblocks the reader into its drain: a server stuck writing stdout cannot read its stdin.
        self.read_stream.close()
        self.write_stream.close()
        self._replies.close()
        with anyio.move_on_after(WRITER_FLUSH_TIMEOUT):
            await self.writer_done.wait()
        await self._stop_process()
        for stream in (
            self.read_stream,
            self.write_stream,
            self._replies,
            self.read_stream_writer,
            self.write_stream_reader,
        ):
            await stream.aclose()
        # One pass so the unblocked tasks leave through their except paths before the task group's cancel.
        await anyio.lowlevel.checkpoint()

    async def _stop_process(self) -> None:
        """Closes stdin, waits out the grace period, then terminates the whole group (SIGTERM, later SIGKILL)."""
        process = self.process
        assert process.stdin is not None and process.stdout is not None
        # The server ended the session by itself if, before we touch it, it has exited or hung up its stdout (the
        # reader can see EOF before the process is dead, and end the session before the watcher sees the exit).
        by_itself = self._exited_first or self._hung_up or self._has_exited()
        self._stopping = True
        await _close_pipe(process.stdin)
        exited = await self._wait_for_exit(PROCESS_TERMINATION_TIMEOUT)
        if by_itself and exited and process.returncode is not None:
            self._report(process.returncode)
        # Even after a clean exit of the server: its children are in the group and must not outlive it.
        await terminate_posix_process_tree(process, FORCE_KILL_TIMEOUT)
        if not await self._wait_for_exit(KILL_REAP_TIMEOUT):
            logger.warning("MCP server process %d is still alive after the kill escalation; abandoning it", process.pid)
        # A kill survivor can hold the stdout pipe open; end the reader's drain anyway.
        await _close_pipe(process.stdout)
        close_subprocess_transport(process)  # the seam: a private member of the loop's process

    def _has_exited(self) -> bool:
        if self.process.returncode is not None:
            return True
        if self._pidfd is None:
            return False
        poller = select.poll()  # not select.select(): a busy host's descriptors can exceed FD_SETSIZE
        poller.register(self._pidfd, select.POLLIN)
        return bool(poller.poll(0))

    async def _wait_for_exit(self, timeout: float) -> bool:
        """Whether the server died within the timeout; not `process.wait()`, which also waits for pipe EOF."""
        with anyio.move_on_after(timeout):
            while self.process.returncode is None:
                await anyio.sleep(_SHUTDOWN_POLL_INTERVAL)
            return True
        return False

    def _report(self, returncode: int) -> None:
        if self._reported or self.on_exit is None:
            return
        self._reported = True
        try:
            self.on_exit(returncode)
        except Exception:  # the callback's bug must not break the transport's shutdown
            logger.exception("The on_exit callback of the MCP stdio transport raised")


def _open_pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when the process exits, where the platform has one."""
    if sys.platform != "linux":
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:  # ENOSYS on old kernels, EPERM under some seccomp profiles, ESRCH if already reaped
        return None


async def _drain(stdout: ByteReceiveStream) -> None:
    """Discards the server's remaining stdout, so a server flushing output is not stuck on a full pipe.

    Shielded; it ends at EOF or when shutdown closes the pipe.
    """
    with anyio.CancelScope(shield=True):
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            while True:
                await stdout.receive()


async def _close_pipe(stream: AsyncResource) -> None:
    """Closes a pipe, tolerating one already closed, broken or contended."""
    with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.aclose()
