"""The sandbox backend contract: where candidate code runs and how the runner reaches it (section 17.7).

A backend starts one sandbox per trial. Every backend ("local" namespaces, "docker" containers, ...)
implements the same small interface so that the trial driver (:mod:`rlvr_lab.verifier.runner`) never
needs to know which one it talks to:

``SandboxBackend``
    ``name``
        Recorded in every verdict's ``backend`` field; a weaker mode must say so in its name.
    ``isolation``
        The isolation layers in force (e.g. ``("user-ns", "mount-ns", ..., "rlimits")``), recorded in
        every verdict's ``isolation`` field.
    ``workspace_root``
        Directory under which the caller creates each graded copy (a fresh directory per verification)
        before calling ``launch``. The backend must make that copy visible to the sandbox, read-only,
        as the candidate's working directory.
    ``launch(workspace, limits, seed) -> SandboxSession``
        Start :mod:`rlvr_lab.verifier.sandbox_server` inside a fresh sandbox whose working directory is
        (a read-only view of) ``workspace``, under ``limits`` (:class:`~rlvr_lab.verifier.schema.Limits`:
        wall-clock deadline, CPU, address space, processes, file size, open files, output cap), as an
        unprivileged user with no network. ``seed`` is for the backend's own randomness (the runner
        seeds the candidate's ``random`` through the proxy's ``init`` request). Raise
        :class:`SandboxUnavailable` when the sandbox cannot be started at all (no engine, no
        namespaces) and :class:`SandboxFault` for a transient infrastructure failure.
    ``close()``
        Release whatever the backend holds (helper processes, containers). Idempotent.

``SandboxSession``
    ``channel``
        A :class:`Channel`: one bidirectional *byte stream* to the server's request loop (frames are
        defined in :mod:`rlvr_lab.verifier.sandbox_server`). The runner's trusted pytest process talks
        on it: a :class:`SocketChannel`'s descriptor is passed to a pytest process forked ahead of time
        (SCM_RIGHTS); any other channel must survive ``os.fork`` (the runner then forks after
        ``launch``). ``launch`` may return before the server is up: frames written meanwhile must wait
        in the stream. The candidate's own stdout and stderr must not be mixed into the channel
        (``python sandbox_server.py`` moves them to stderr).
    ``kill() -> SandboxExit``
        End the sandbox now: kill and reap every process the candidate started (daemons included),
        and report why the sandbox ended. Idempotent: later calls return the same record.

``SandboxExit``
    Why a sandbox ended. ``kind`` is one of :data:`EXIT_KINDS`:

    * ``killed``: ended by ``kill()`` while healthy (the normal end of a trial);
    * ``exited``: the candidate's server process ended by itself (``sys.exit``, ``os._exit``, a crash,
      a signal it raised, RLIMIT_CPU's SIGXCPU), recorded with ``exit_code`` or ``signal``;
    * ``timeout``: the wall-clock deadline ``limits.wall_s`` passed first;
    * ``output_cap``: stdout+stderr exceeded ``limits.output_kb``;
    * ``limit``: another declared resource limit ended it (e.g. a container's memory limit);
    * ``infra``: the sandbox itself (its init, the container, the engine, the helper) failed or was
      killed from outside while the candidate stayed within its limits.

    The first five are candidate-caused (:attr:`SandboxExit.candidate_fault` is True; the trial fails
    unless the kind is ``killed``); ``infra`` makes the trial ``pending``.
"""

from __future__ import annotations

import abc
import socket
from dataclasses import dataclass
from pathlib import Path

from rlvr_lab.verifier.schema import Limits

#: Ways a sandbox can end; see :class:`SandboxExit`.
EXIT_KINDS = ("killed", "exited", "timeout", "output_cap", "limit", "infra")


class SandboxUnavailable(RuntimeError):
    """The backend cannot run sandboxes here at all (no namespaces, no engine); not a verdict."""


class SandboxFault(RuntimeError):
    """A transient infrastructure failure while starting or ending a sandbox (the trial is pending)."""


@dataclass(frozen=True)
class SandboxExit:
    """Why one sandbox ended (see the module docstring for the kinds)."""

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
    """One running sandbox: a channel to its server and a way to end it."""

    channel: Channel

    @abc.abstractmethod
    def kill(self, grace_s: float = 0.0) -> SandboxExit:
        """Kill and reap every process of this sandbox; report why it ended (idempotent).

        ``grace_s``: the caller saw the server's channel close, so the sandbox is ending by itself; wait up
        to this long for its own exit record before killing (else a candidate's ``os._exit`` can race
        the kill and be recorded as ``killed``)."""


class SandboxBackend(abc.ABC):
    """Starts sandboxes; one backend object serves one verifier slot, one sandbox at a time."""

    name: str = "abstract"
    isolation: tuple[str, ...] = ()
    workspace_root: Path

    @abc.abstractmethod
    def launch(self, workspace: Path, limits: Limits, seed: int) -> SandboxSession:
        """Start ``sandbox_server`` with cwd = a read-only view of ``workspace`` under ``limits``."""

    def close(self) -> None:
        """Release helper processes or containers (idempotent)."""

    def __enter__(self) -> "SandboxBackend":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Backend names accepted by ``Verifier(backend=...)`` and :func:`rlvr_lab.verifier.backends.make_backend`;
#: ``auto`` is resolved by :func:`rlvr_lab.verifier.backends.resolve_backend` before a backend is made.
BACKENDS = ("auto", "local", "process", "docker")
