"""The supervisor between webhost and one stdio server on Linux, so that no server process outlives webhost.

Run by the stdio transport as `python -I -S shim.py STATUS_FD WEBHOST_PID GRACE COMMAND [ARGS...]` (standard
library only, so it does not import webhost, nor anything the server's environment points Python at). It:

1. becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant orphaned by its parent, including one that
   left the process group with `setsid()` or double-forked, is re-parented to the shim rather than to init, so the
   shim can still find and kill it;
2. asks for a signal when webhost dies (`PR_SET_PDEATHSIG`, SIGTERM), even of SIGKILL, and checks webhost's pid
   once after that so a death just before is not missed;
3. starts the server with its own stdin, stdout and stderr (the transport's pipes), reports `0 PID` or
   `ERRNO FILENAME` on STATUS_FD, then lets go of the pipes (the server alone holds them, so EOF still means what
   it meant);
4. waits. When the server exits, every remaining descendant is killed (SIGKILL) and the shim exits with the
   server's status (by the same signal, if the server died of one). On SIGTERM, SIGINT or SIGHUP (webhost's
   group termination, or webhost's death) the server is sent SIGTERM and has GRACE seconds to exit before every
   descendant is killed.

Limits: a descendant that makes itself a subreaper's child elsewhere, or a process in another PID namespace, is
out of reach; `PR_SET_PDEATHSIG` is cleared when the shim itself execs a set-user-ID program (it never does);
each stdio server costs one more small Python process: about 4.6 MB PSS, of which 2.9 MB is the floor of any
`python -I -S` (bench/shim_memory.py). So it imports only `ctypes`, `select` and `signal` beyond what Python
loads at start: no `subprocess` (2 MB by itself; the server starts with `posix_spawnp`), no `contextlib`.
Not used on macOS or Windows (no such `prctl`), where the transport keeps the process-group kill at shutdown
and a SIGKILLed webhost leaves its servers behind.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
KILL_BOUND = 3.0  # for killing and reaping every descendant


def main(argv: list[str]) -> int:
    status_fd, webhost_pid, grace, command = int(argv[1]), int(argv[2]), float(argv[3]), argv[4:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    wake_read, wake_write = os.pipe()
    # Both ends non-blocking: the signal handler must never block on a full pipe, and the drain below must not
    # block on an empty one (the select returns empty-handed when the grace period runs out).
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    stop: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, frame: stop.append(number))
    signal.signal(signal.SIGCHLD, lambda number, frame: None)  # only to wake the select below
    if os.getppid() != webhost_pid:
        stop.append(signal.SIGTERM)  # webhost died before the death signal was armed

    os.set_inheritable(status_fd, False)  # the server inherits only 0, 1 and 2 (the wake-up pipe is not inheritable)
    try:
        # The handlers above are reset to the defaults by exec; glibc reports a failed exec as this OSError.
        server_pid = os.posix_spawnp(command[0], command, os.environ)
    except OSError as exc:
        os.write(status_fd, f"{exc.errno or 0} {exc.filename or command[0]}".encode())
        return 127
    os.write(status_fd, f"0 {server_pid}".encode())
    os.close(status_fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)

    status: int | None = None
    deadline: float | None = None
    while status is None:
        status = _reap(server_pid)
        if status is not None:
            break
        if stop and deadline is None:
            deadline = time.monotonic() + grace
            _kill(server_pid, signal.SIGTERM)
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        if timeout == 0.0:
            break
        select.select([wake_read], [], [], timeout)
        try:
            os.read(wake_read, 4096)
        except BlockingIOError:
            pass
    status = _kill_all(server_pid, status)
    return _exit_like(status)


def _reap(server_pid: int) -> int | None:
    """Reaps every dead child; the server's wait status once it is among them."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == server_pid:
            found = status


def _kill_all(server_pid: int, status: int | None) -> int | None:
    """SIGKILLs every descendant (orphans come to the shim as they lose their parents) until none is left."""
    deadline = time.monotonic() + KILL_BOUND
    while time.monotonic() < deadline:
        for pid in _children():
            _kill(pid, signal.SIGKILL)
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == server_pid:
            status = wait_status
        if pid == 0:
            time.sleep(0.005)
    return status


def _kill(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except OSError:  # gone already
        pass


def _children() -> list[int]:
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as listing:
            return [int(word) for word in listing.read().split()]
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN: scan every process's parent
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as stat:
                        if int(stat.read().rpartition(")")[2].split()[1]) == me:
                            found.append(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
        return found


def _exit_like(status: int | None) -> int:
    if status is None:
        return 137  # the server outlived every kill (uninterruptible); say it was killed
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        return 128 + number
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
