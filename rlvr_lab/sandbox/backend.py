"""The sandbox backend contract: where untrusted code runs and how the trusted side reaches it (17.7).

Every backend (``local`` namespaces, ``process``, ``docker``) implements :class:`SandboxBackend` and
:class:`SandboxSession`, so that the verifier's runner and the notebook grader never need to know which
one they talk to. :class:`Limits` is what one sandbox may use; :class:`SandboxExit` is why it ended.
"""

from __future__ import annotations

import abc
import socket
from dataclasses import dataclass
from pathlib import Path


#: Ways a sandbox can end; see :class:`SandboxExit`.
EXIT_KINDS = ("killed", "exited", "timeout", "output_cap", "limit", "infra")


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to one sandbox (one trial of the verifier, one notebook of the grader)."""

    wall_s: float = 10.0
    """Wall-clock deadline, seconds; past it every sandbox process is killed (verdict fail). A busy host
    stretches it by the CPU contention it reports, to at most ``STRETCH_MAX * wall_s``
    (:mod:`~rlvr_lab.sandbox.clock`)."""
    cpu_s: int = 10
    """RLIMIT_CPU of each candidate process, CPU seconds."""
    memory_mb: int = 512
    """RLIMIT_AS (address space) of each candidate process, MiB."""
    processes: int = 32
    """RLIMIT_NPROC / pids limit: the most processes the sandbox may hold at once."""
    file_mb: int = 16
    """RLIMIT_FSIZE: the largest file the candidate may write, MiB."""
    open_files: int = 64
    """RLIMIT_NOFILE: the most file descriptors one candidate process may hold."""
    output_kb: int = 256
    """Cap on captured stdout+stderr, KiB; output past it is dropped and the trial fails."""


class SandboxUnavailable(RuntimeError):
    """The backend cannot run sandboxes here at all (no namespaces, no engine); not a verdict."""


class SandboxFault(RuntimeError):
    """A transient infrastructure failure while starting or ending a sandbox (the trial is pending)."""


@dataclass(frozen=True)
class SandboxExit:
    """Why one sandbox ended. ``kind`` is one of :data:`EXIT_KINDS`:

    * ``killed``: ended by ``kill()`` while healthy (the normal end of a trial);
    * ``exited``: the candidate's server process ended by itself (``sys.exit``, ``os._exit``, a crash,
      a signal it raised, RLIMIT_CPU's SIGXCPU), recorded with ``exit_code`` or ``signal``;
    * ``timeout``: the wall-clock deadline ``limits.wall_s`` passed first;
    * ``output_cap``: stdout+stderr exceeded ``limits.output_kb``;
    * ``limit``: another declared resource limit ended it (e.g. a container's memory limit);
    * ``infra``: the sandbox itself (its init, the container, the engine, the helper) failed or was
      killed from outside while the candidate stayed within its limits.

    The first five are candidate-caused (:attr:`candidate_fault`; the trial fails unless the kind is
    ``killed``); ``infra`` makes the trial ``pending``.
    """

    kind: str
    """One of :data:`EXIT_KINDS`."""
    exit_code: int | None = None
    """Exit status of the candidate's server process when it exited by itself."""
    signal: int | None = None
    """Signal number that ended the candidate's server process, if any."""
    detail: str = ""
    """Short human-readable account (bounded), e.g. ``output cap 262144 bytes exceeded``."""
    output: str = ""
    """First bytes of the candidate's stdout+stderr (bounded, decoded with replacement)."""

    def __post_init__(self) -> None:
        if self.kind not in EXIT_KINDS:
            raise ValueError(f"kind must be one of {EXIT_KINDS}, got {self.kind!r}")

    @property
    def candidate_fault(self) -> bool:
        """True unless the infrastructure failed (``infra``).

        >>> SandboxExit("timeout").candidate_fault, SandboxExit("infra").candidate_fault
        (True, False)
        """
        return self.kind != "infra"


class Channel(abc.ABC):
    """A bidirectional byte stream to the sandbox server that survives ``os.fork``."""

    @abc.abstractmethod
    def send_all(self, data: bytes) -> None:
        """Write all of ``data``; raise ``OSError`` when the other side is gone."""

    @abc.abstractmethod
    def recv(self, size: int) -> bytes:
        """Read up to ``size`` bytes; ``b""`` at end of stream."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close this end (idempotent)."""

    def peer_closed(self) -> bool:
        """True when the server's end is known to be closed (its process ended); False when unknown."""
        return False


class SocketChannel(Channel):
    """A :class:`Channel` over a connected stream socket (what the local backend hands out).

    >>> a, b = socket.socketpair()
    >>> ch = SocketChannel(a); ch.send_all(b"hi"); b.recv(2)
    b'hi'
    >>> ch.close(); b.close()
    """

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def send_all(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv(self, size: int) -> bytes:
        return self.sock.recv(size)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def fileno(self) -> int:
        return self.sock.fileno()

    def peer_closed(self) -> bool:
        """End of stream with nothing unread: every holder of the server's end has closed it."""
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True


class SandboxSession(abc.ABC):
    """One running sandbox: a channel to its server and a way to end it.

    ``channel`` is one bidirectional byte stream to the server's request loop. A :class:`SocketChannel`'s
    descriptor may be passed to a process forked ahead of time (SCM_RIGHTS); any other channel must
    survive ``os.fork``. ``launch`` may return before the server is up: frames written meanwhile wait in
    the stream. The candidate's own stdout and stderr never mix into the channel.
    """

    channel: Channel

    @abc.abstractmethod
    def kill(self, grace_s: float = 0.0) -> SandboxExit:
        """Kill and reap every process of this sandbox; report why it ended (idempotent).

        ``grace_s``: the caller saw the server's channel close, so the sandbox is ending by itself; wait up
        to this long for its own exit record before killing (else a candidate's ``os._exit`` can race
        the kill and be recorded as ``killed``)."""

    def watch_root(self) -> tuple[int, bool] | None:
        """``(pid, supervisor)``: the sandbox's topmost process, as a pid of the caller's PID namespace, and
        whether it only supervises (an init) while the candidate's processes are those below it. None when
        the backend cannot tell; the trusted side then cannot count the candidate's wakeups
        (:mod:`rlvr_lab.verifier.watch`), and a test that asks fails rather than passes."""
        return None


class SandboxBackend(abc.ABC):
    """Starts sandboxes; one backend object serves one slot, one sandbox at a time.

    ``name`` and ``isolation`` (the layers in force) are recorded in every verdict; a weaker mode says so
    in its name. The caller makes each graded copy in a fresh directory under ``workspace_root``; the
    backend shows it to the sandbox read-only as the working directory.
    """

    name: str = "abstract"
    isolation: tuple[str, ...] = ()
    workspace_root: Path

    @abc.abstractmethod
    def launch(self, workspace: Path, limits: Limits, seed: int) -> SandboxSession:
        """Start the backend's server module in a fresh sandbox, cwd = a read-only view of ``workspace``,
        under ``limits``, as an unprivileged user with no network. ``seed`` is for the backend's own
        randomness. Raise :class:`SandboxUnavailable` when no sandbox can start here at all (no engine,
        no namespaces) and :class:`SandboxFault` for a transient infrastructure failure."""

    def close(self) -> None:  # noqa: B027 (a hook: a backend with nothing to release keeps it empty)
        """Release helper processes or containers (idempotent)."""

    def __enter__(self) -> SandboxBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Backend names accepted by :func:`rlvr_lab.sandbox.factory.make_backend` (and ``Verifier(backend=...)``);
#: ``auto`` is resolved by :func:`rlvr_lab.sandbox.factory.resolve_backend` before a backend is made.
BACKENDS = ("auto", "local", "process", "docker")
