"""The local sandbox backends: Linux namespaces, a slot uid and rlimits, no daemon (section 17.7).

:class:`LocalBackend` keeps one warm zygote per slot (:mod:`rlvr_lab.sandbox.zygote`, run by path with
the base interpreter in isolated mode), so a sandbox costs a few forks instead of an interpreter start.
As root each slot has its own uid; without root the same zygote runs in an unprivileged user namespace
(``local-userns``). :func:`local_mode` picks one and says why neither works. :class:`ProcessBackend`
(``process``) is the explicit weaker mode for machines without namespaces.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from rlvr_lab.sandbox.backend import (
    Limits,
    SandboxBackend,
    SandboxExit,
    SandboxFault,
    SandboxSession,
    SandboxUnavailable,
    SocketChannel,
)
from rlvr_lab.sandbox.confine import children_of

#: Slot uids are taken from [UID_BASE, UID_BASE + UID_COUNT).
UID_BASE = 60000
UID_COUNT = 1000
#: Directories hidden from every sandbox (when they exist), besides the runner's and the repository's.
HIDDEN_DIRS = (
    "/tmp",
    "/var/tmp",
    "/root",
    "/home",
    "/work",
    "/run",
    "/dev/shm",
    "/mnt",
    "/media",
    "/srv",
    "/opt",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/spool",
    "/var/mail",
)
#: Ordinary-looking places for the workspace root inside every sandbox; the first that holds no kept path
#: (a virtual environment under ``/home/user`` would be hidden by it) is used.
SANDBOX_ROOTS = ("/home/user", "/home/dev", "/home/app", "/srv/app")
_HERE = Path(__file__).resolve().parent
_mode: str | None = None
_mode_error: str = ""
#: Isolation layers in force, per mode; every verdict lists them (``Verdict.isolation``).
LAYERS = {
    "root": (
        "mount-ns",
        "pid-ns",
        "net-ns",
        "ipc-ns",
        "uts-ns",
        "hidden-dirs",
        "read-only-workspace",
        "slot-uid",
        "rlimits",
        "deadline",
        "output-cap",
        "no-new-privs",
    ),
    "userns": (
        "user-ns",
        "mount-ns",
        "pid-ns",
        "net-ns",
        "ipc-ns",
        "uts-ns",
        "hidden-dirs",
        "read-only-workspace",
        "no-capabilities",
        "rlimits",
        "deadline",
        "output-cap",
        "no-new-privs",
    ),
    "process": ("process-group", "subreaper", "scratch-dir", "rlimits", "deadline", "output-cap", "no-new-privs"),
}


def base_python() -> str:
    """The real interpreter behind this (possibly virtual) environment; candidates get its stdlib only.

    >>> os.path.isabs(base_python())
    True
    """
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def host_root() -> bool:
    """True when this process is root *and* may switch to the slot uids (they are mapped in its user
    namespace: not so for root inside a rootless container or ``unshare -r``)."""
    if os.geteuid() != 0:
        return False
    try:
        lines = Path("/proc/self/uid_map").read_text().split()
    except OSError:
        return False
    spans = [(int(lines[i]), int(lines[i + 2])) for i in range(0, len(lines) - 2, 3)]
    return any(start <= UID_BASE and UID_BASE + UID_COUNT <= start + count for start, count in spans)


def _probe(mode: str) -> str:
    """Empty when the zygote's ``--probe`` builds a ``mode`` sandbox here; else why not."""
    try:
        done = subprocess.run(
            [base_python(), "-I", "-S", "-B", str(_HERE / "zygote.py"), "--probe", mode],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"status {done.returncode}")[:200]


def local_mode() -> str:
    """``root`` or ``userns``: how the local backend isolates here (probed once per process).

    Raises :class:`SandboxUnavailable` naming why neither works (then ``process`` or ``docker`` remain).
    """
    global _mode, _mode_error
    if _mode is not None:
        return _mode
    if _mode_error:
        raise SandboxUnavailable(_mode_error)
    if not sys.platform.startswith("linux"):
        _mode_error = "the local backend needs Linux namespaces; use backend='docker'"
        raise SandboxUnavailable(_mode_error)
    errors = []
    if host_root():
        why = _probe("root")
        if not why:
            _mode = "root"
            return _mode
        errors.append(f"as root: {why}")
    why = _probe("userns")
    if not why:
        _mode = "userns"
        return _mode
    errors.append(f"in a user namespace: {why}")
    _mode_error = (
        "the local backend could not create mount/pid/net/ipc/uts namespaces ("
        + "; ".join(errors)
        + "); use backend='process' (weaker) or backend='docker'"
    )
    raise SandboxUnavailable(_mode_error)


def check_available() -> None:
    """Raise :class:`SandboxUnavailable` unless the local backend works here (as root or in a user namespace)."""
    local_mode()


#: Host-wide directory of slot-uid locks. A fixed path, not ``$TMPDIR``: two processes with different
#: temporary directories must still never hand the same uid (and so the same process limit) to two slots.
LOCK_DIR = "/run/rlvr-verifier-uids"


def _lock_dir() -> Path:
    path = Path(LOCK_DIR)
    if not os.access(path.parent, os.W_OK):  # no writable /run: fall back to the shared temp directory
        path = Path("/tmp") / "rlvr-verifier-uids"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def sandbox_root(keep: list[str]) -> str:
    """The first of :data:`SANDBOX_ROOTS` that neither holds nor lies inside a kept directory.

    >>> sandbox_root(["/usr", "/home/user/.venv"])
    '/home/dev'
    """
    for root in SANDBOX_ROOTS:
        if not any(k == root or k.startswith(root + "/") or root.startswith(k.rstrip("/") + "/") for k in keep):
            return root
    raise SandboxUnavailable(f"every sandbox root {SANDBOX_ROOTS} collides with a kept directory {keep}")


def claim_uid() -> tuple[int, int]:
    """Lock and return a free slot uid as ``(uid, lock_fd)``; the lock lives as long as the descriptor."""
    base = _lock_dir()
    for uid in range(UID_BASE, UID_BASE + UID_COUNT):
        fd = os.open(base / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return uid, fd
    raise SandboxUnavailable(f"all {UID_COUNT} slot uids from {UID_BASE} are in use")


def _topmost(paths: list[str]) -> list[str]:
    """Drop paths nested in another listed path.

    >>> _topmost(["/work/main", "/work", "/tmp/x"])
    ['/tmp/x', '/work']
    """
    out: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(path == p or path.startswith(p.rstrip("/") + "/") for p in out):
            out.append(path)
    return sorted(out)


class LocalSession(SandboxSession):
    """One sandbox started by the zygote.

    ``launch`` only *sends* the spawn request, so the caller can start its own work while the zygote
    builds the sandbox; frames written to the channel meanwhile wait in the socket. The zygote's reply
    (the init's pid, or an error) is read when the session is killed, or when the trusted side first asks
    where the sandbox's processes are (:meth:`watch_root`).
    """

    def __init__(self, backend: LocalBackend, sock: socket.socket):
        self.backend = backend
        self.pid: int | None = None
        self.channel = SocketChannel(sock)
        self._exit: SandboxExit | None = None
        self._spawn_error: str | None = None  # None until the zygote's reply is read

    def _spawned(self) -> str:
        """Read the zygote's reply to the spawn once (it sets :attr:`pid`); an error text, or ``""``."""
        if self._spawn_error is None:
            try:
                reply = self.backend._reply()
            except SandboxFault as exc:
                self._spawn_error = str(exc) or "sandbox fault"
                return self._spawn_error
            if not reply.get("ok"):
                self._spawn_error = f"sandbox spawn failed: {reply.get('error')}"[:500]
                return self._spawn_error
            self.pid = int(reply["pid"])
            self._spawn_error = ""
        return self._spawn_error

    def watch_root(self) -> tuple[int, bool] | None:
        """The sandbox's init (PID 1 of its PID namespace; in the process mode a subreaper), which only
        supervises: the server and whatever the candidate starts are below it."""
        if self._exit is not None or self._spawned():
            return None
        pid = self.backend.host_pid(self.pid)
        return None if pid is None else (pid, True)

    def kill(self, grace_s: float = 0.0) -> SandboxExit:
        if self._exit is None:
            error = self._spawned()
            if error:
                self._exit = SandboxExit("infra", detail=error)
                return self._exit
            self._exit = self.backend._kill(self.pid, grace_s)
        return self._exit


class LocalBackend(SandboxBackend):
    """Namespaces + slot uid + rlimits, with a warm zygote per slot.

    The zygote has entered private mount, network (no interface up), IPC and UTS namespaces and hidden
    the runner's directories once; each sandbox is a new PID namespace whose init mounts a fresh ``/proc``
    and tmpfs scratch, then runs the server under the slot's uid (``UID_BASE + n``, held with a lock file
    so two slots never share one). Without root there is no slot uid; the candidate drops every
    capability instead.
    """

    name = "local"
    mode = "root"

    def __init__(
        self,
        slot_dir: Path,
        server_path: str,
        hide: tuple[str, ...] = (),
        keep: tuple[str, ...] = (),
        shared: tuple[str, ...] = (),
    ):
        """``server_path``: the stdlib-only module with ``serve(rfd, wfd, workdir)`` that each sandbox runs
        (the verifier's :mod:`~rlvr_lab.verifier.proxy.server`, the grader's notebook executor); ``hide``:
        more directories to hide; ``keep``: directories to show read-only inside hidden ones (e.g. a
        virtual environment); ``shared``: names of directories in ``workspace_root`` that every sandbox sees read-only beside its
        own copy (a sandbox otherwise sees only its own copy there, never a sibling).
        """
        self.shared = [str(name) for name in shared]
        if any(not name or "/" in name or name in (".", "..", "project") for name in self.shared):
            raise ValueError(
                f"shared must name entries directly in the workspace root, other than 'project' (each trial's own copy), got {self.shared}"
            )
        if type(self).mode != "process":
            self.mode = local_mode()
            self.name = "local" if self.mode == "root" else "local-userns"
        self.isolation: tuple[str, ...] = LAYERS[self.mode]
        """The layers in force for every sandbox of this backend (recorded in each verdict)."""
        self.slot_dir = Path(slot_dir).resolve()
        # "home/user" under the runner's folder: the path a candidate can read in /proc/self/mountinfo
        self.workspace_root = self.slot_dir / "user"
        self.workspace_root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.workspace_root, 0o755)
        self.uid: int | None = None
        self._uid_lock: int | None = None
        if self.mode == "root":
            self.uid, self._uid_lock = claim_uid()
        repo = str(_HERE.parent.parent)
        extra = [repo, sys.prefix, os.getcwd(), str(self.slot_dir.parent), *hide]
        self.hide = _topmost(
            [
                p
                for p in list(HIDDEN_DIRS) + extra
                if os.path.isabs(p)
                and p not in ("/", "/usr", "/bin", "/lib", "/etc", "/proc", "/dev", "/sys", "/sbin", "/lib64")
            ]
        )
        self.keep = [os.path.realpath(sys.base_prefix)] + [os.path.realpath(p) for p in keep]
        self.sandbox_root = sandbox_root(self.keep)
        """Where the workspace root appears inside every sandbox (root and userns modes); a trial's own
        copy is ``sandbox_root/project``, a shared entry ``sandbox_root/NAME``."""
        self.server_path = str(server_path)
        self._proc: subprocess.Popen | None = None
        self._ctl: socket.socket | None = None

    # -- zygote lifecycle ----------------------------------------------------------------------------
    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {
            "ws_dir": str(self.workspace_root),
            "sandbox_root": self.sandbox_root,
            "hide": self.hide,
            "keep": self.keep,
            "shared": self.shared,
            "server_path": self.server_path,
            "parent": os.getpid(),
            "ctl_fd": theirs.fileno(),
            "mode": self.mode,
            "uid": os.getuid(),
            "gid": os.getgid(),
        }
        config.update(self._extra_config())
        self._proc = subprocess.Popen(
            [base_python(), "-I", "-S", "-B", str(_HERE / "zygote.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            env={"PATH": "/usr/bin:/bin"},
        )
        theirs.close()
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(config).encode())
        self._proc.stdin.close()
        ours.settimeout(30)
        reply = json.loads(ours.recv(65536) or b'{"ok": false, "error": "zygote exited at start"}')
        if not reply.get("ok"):
            self._proc.wait()
            raise SandboxUnavailable(f"local sandbox zygote could not start: {reply.get('error')}")
        ours.settimeout(None)
        self._ctl = ours

    def _extra_config(self) -> dict:
        return {}

    def _send(self, message: dict, fds: tuple[int, ...] = ()) -> None:
        if self._ctl is None or self._proc is None or self._proc.poll() is not None:
            self._discard()
            self._start()
        assert self._ctl is not None
        try:
            socket.send_fds(self._ctl, [json.dumps(message).encode()], list(fds))
        except OSError as exc:
            self._discard()
            raise SandboxFault(f"zygote control channel failed: {exc}") from None

    def _reply(self) -> dict:
        if self._ctl is None:
            raise SandboxFault("the sandbox zygote is gone")
        try:
            data = self._ctl.recv(65536)
        except OSError as exc:
            self._discard()
            raise SandboxFault(f"zygote control channel failed: {exc}") from None
        if not data:
            self._discard()
            raise SandboxFault("the sandbox zygote died")
        return json.loads(data.decode())

    def _discard(self) -> None:
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None

    @property
    def zygote_pid(self) -> int | None:
        """PID of the current zygote (for tests that kill it)."""
        return None if self._proc is None else self._proc.pid

    # -- the contract ---------------------------------------------------------------------------------
    def launch(self, workspace: Path, limits: Limits, seed: int) -> LocalSession:
        workspace = Path(workspace).resolve()
        if workspace.parent != self.workspace_root:
            raise ValueError(f"workspace must be a directory directly under {self.workspace_root}, got {workspace}")
        ours, theirs = socket.socketpair()
        try:
            self._send(
                {"op": "spawn", "ws": workspace.name, "limits": dataclasses.asdict(limits), "uid": self.uid or 0},
                fds=(theirs.fileno(),),
            )
        except SandboxFault:
            ours.close()
            raise
        finally:
            theirs.close()
        return LocalSession(self, ours)

    def host_pid(self, pid: int) -> int | None:
        """The pid in this process's PID namespace of the zygote's child ``pid`` (a sandbox's init), or None.

        In the ``userns`` mode the zygote is PID 1 of a PID namespace of its own, so the pids it reports
        are that namespace's; each child's ``NSpid`` line in ``/proc`` lists its pid here first and its pid
        there second."""
        if self.mode != "userns":
            return pid
        if self._proc is None:
            return None
        zygotes = set(children_of({self._proc.pid}))  # the handle's one child: the zygote, PID 1 there
        for child in children_of(zygotes):
            try:
                with open(f"/proc/{child}/status", encoding="ascii", errors="replace") as fh:
                    nspid = next((line.split()[1:] for line in fh if line.startswith("NSpid:")), [])
            except OSError:
                continue
            if len(nspid) >= 2 and int(nspid[1]) == pid:
                return child
        return None

    def _kill(self, pid: int, grace_s: float = 0.0) -> SandboxExit:
        try:
            self._send({"op": "kill", "pid": pid, "grace": grace_s})
            reply = self._reply()
        except SandboxFault as exc:
            return SandboxExit("infra", detail=str(exc))
        record = reply.get("record") or {"kind": "infra", "detail": "no record"}
        return SandboxExit(
            kind=record.get("kind", "infra"),
            exit_code=record.get("exit_code"),
            signal=record.get("signal"),
            detail=str(record.get("detail", ""))[:500],
            output=str(record.get("output", ""))[:2048],
        )

    def close(self) -> None:
        self._discard()
        if self._uid_lock is not None:
            os.close(self._uid_lock)
            self._uid_lock = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class ProcessBackend(LocalBackend):
    """The explicit weaker backend for machines without namespaces (name ``process``).

    Each sandbox is a process in its own session and process group under a child subreaper, with the same
    rlimits, deadline and output cap and a private scratch directory, but no namespaces and no separate
    uid. Where the kernel has Landlock it loses the filesystem outside a read-only allow-list, TCP and
    signals to processes outside; a seccomp filter refuses every socket but a Unix one on every kernel.
    The gallery's outcomes per backend are in ``rlvr_lab/fixtures/exploits/README.md``.
    """

    name = "process"
    mode = "process"

    def __init__(self, slot_dir: Path, server_path: str, hide: tuple[str, ...] = (), landlock: bool = True):
        if not sys.platform.startswith("linux"):
            raise SandboxUnavailable("the process backend needs Linux (prctl, /proc); use backend='docker'")
        from rlvr_lab.sandbox.confine import landlock_abi, network_filter

        self.landlock_abi = landlock_abi() if landlock else 0
        self.seccomp = network_filter(os.uname().machine) is not None
        super().__init__(slot_dir, server_path, hide)
        self.sandbox_root = str(self.workspace_root)  # no mount namespace: the real paths are what it sees
        self.scratch_dir = self.slot_dir / "scratch"
        self.scratch_dir.mkdir(mode=0o700, exist_ok=True)
        layers = ["landlock-fs"] if self.landlock_abi else []
        layers += ["landlock-no-tcp"] if self.landlock_abi >= 4 else []
        layers += ["landlock-signal-scope"] if self.landlock_abi >= 6 else []
        layers += ["seccomp-no-inet"] if self.seccomp else []
        self.isolation = LAYERS["process"] + tuple(layers)

    def _extra_config(self) -> dict:
        return {"scratch_dir": str(self.scratch_dir), "landlock_abi": self.landlock_abi, "seccomp": self.seccomp}
