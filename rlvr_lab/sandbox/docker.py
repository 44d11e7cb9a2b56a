"""The docker sandbox backend: one throwaway container per trial (section 17.7).

Each ``launch`` starts a fresh container from :mod:`~rlvr_lab.sandbox.docker_image` (an interpreter and its
standard library, nothing else): no network, read-only root and workspace, memory, pids and rlimits, an
unprivileged user without capabilities, docker's init as PID 1. The host enforces the deadline
(:mod:`~rlvr_lab.sandbox.clock`) and the output cap, and always removes the container. The server module
is mounted at ``/opt/app/server.py`` and talks on a Unix socket in a per-trial directory (``/run/app``
inside) that the container connects to; the candidate's stdout and stderr go to the container log.

What the candidate sees is ordinary: uid and gid 1000 (``user``), hostname ``localhost``, its graded copy
as the working directory ``/home/user/project``; no path is named after the verifier, not even the host
paths ``/proc/self/mountinfo`` shows (the server module and the entry point are mounted from copies in the
slot's folder) or the command lines (the entry point is a file, and rewrites its own, :mod:`title`).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

from rlvr_lab.sandbox.backend import Limits, SandboxBackend, SandboxExit, SandboxFault, SandboxSession, SocketChannel
from rlvr_lab.sandbox.clock import ContentionMeter, TrialClock
from rlvr_lab.sandbox.docker_image import IMAGE, PY_PREFIX, build_image, docker_client

#: Unprivileged uid:gid that runs the candidate (``user`` in the image; an ordinary first user's ids).
SANDBOX_USER = "1000:1000"
#: Seconds to wait for a container's server to connect back.
CONNECT_TIMEOUT_S = 30.0
#: Bytes of candidate output kept for the evidence.
OUTPUT_EXCERPT = 2048

#: Where the graded copy is mounted (the candidate's working directory) and where the channel's socket is.
WORKDIR, CHAN_DIR = "/home/user/project", "/run/app"
#: The container's entry point, mounted as ``/opt/app/main.py`` (a file, not ``-c`` code: docker's init,
#: PID 1, shows its child's command line in its own): make the command line a plain ``python3``
#: (:mod:`title`, whose source comes first), connect to the runner's socket, serve the candidate from WORKDIR.
BOOTSTRAP = (Path(__file__).with_name("title.py").read_text() + "\nplain_command_line()\n") + (
    "import os, socket, sys\n"
    "sys.path.insert(0, '/opt/app')\n"
    "import server as sandbox_server\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    f"s.connect('{CHAN_DIR}/sock')\n"
    f"sandbox_server.serve(s.fileno(), s.fileno(), '{WORKDIR}')\n"
    "os._exit(0)\n"
)


class DockerSession(SandboxSession):
    """One running container (see the module docstring)."""

    def __init__(self, container, sock: socket.socket, limits: Limits, chan_dir: Path, meter: ContentionMeter):
        self.container = container
        self.channel = SocketChannel(sock)
        self.limits = limits
        self.chan_dir = chan_dir
        self._lock = threading.Lock()
        self._reason: str | None = None  # "timeout" or "output_cap" once the host ended it
        self._output = bytearray()
        self._exit: SandboxExit | None = None
        self._started = int(time.time())
        self._clock = TrialClock(limits.wall_s, meter)
        self._arm(limits.wall_s)
        self._logs = threading.Thread(target=self._read_logs, daemon=True)
        self._logs.start()

    def _arm(self, delay_s: float) -> None:
        self._timer = threading.Timer(delay_s, self._deadline)
        self._timer.daemon = True
        self._timer.start()

    def _deadline(self) -> None:
        """The timer fired: end the container, unless host CPU contention moved the deadline later."""
        left = self._clock.deadline() - time.monotonic()
        with self._lock:
            if left > 0 and self._reason is None and self._exit is None:
                self._arm(left)
                return
        self._end("timeout")

    def _end(self, reason: str) -> None:
        with self._lock:
            if self._reason is not None or self._exit is not None:
                return
            self._reason = reason
        try:
            self.container.kill()
        except Exception:
            pass  # already gone; kill() below records what happened

    def _read_logs(self) -> None:
        cap = self.limits.output_kb * 1024
        total = 0
        try:
            for chunk in self.container.logs(stream=True, follow=True, stdout=True, stderr=True):
                total += len(chunk)
                if len(self._output) < OUTPUT_EXCERPT:
                    self._output.extend(chunk[: OUTPUT_EXCERPT - len(self._output)])
                if total > cap:
                    self._end("output_cap")
                    return
        except Exception:
            return

    def _killed_from_outside(self) -> bool:
        """True when the engine logged a ``kill`` of this container that the session did not send.

        A candidate cannot reach the engine's API, so such an event is an operator's or the host's doing.
        """
        try:
            events = self.container.client.events(
                since=self._started - 1,
                until=int(time.time()) + 1,
                decode=True,
                filters={"container": self.container.id, "event": "kill"},
            )
            return any(True for _ in events)
        except Exception:
            return False

    def watch_root(self) -> tuple[int, bool] | None:
        """The container's PID 1 (docker's init, which supervises the server), as the host numbers it."""
        if self._exit is not None:
            return None
        try:
            self.container.reload()
            pid = int(self.container.attrs["State"].get("Pid") or 0)
        except Exception:
            return None
        return (pid, True) if pid > 0 else None

    def kill(self, grace_s: float = 0.0) -> SandboxExit:
        if self._exit is not None:
            return self._exit
        self._timer.cancel()
        try:
            self.container.reload()
            state = self.container.attrs["State"]
            ran_out = not state.get("Running", False)
            if not ran_out:
                try:
                    self.container.kill()
                except Exception as exc:  # it stopped between the reload and the kill: its own end
                    if "is not running" not in str(exc):
                        raise
                    ran_out = True
            self.container.wait(timeout=30)
            self.container.reload()
            state = self.container.attrs["State"]
        except Exception as exc:
            record = SandboxExit("infra", detail=f"docker failed while ending the container: {exc}"[:500])
        else:
            output = self._output.decode(errors="replace")
            code = int(state.get("ExitCode", -1))
            with self._lock:
                reason = self._reason
                self._reason = self._reason or "killed"
            if reason == "timeout":
                record = SandboxExit("timeout", detail=self._clock.describe(), output=output)
            elif reason == "output_cap":
                record = SandboxExit(
                    "output_cap", detail=f"output exceeded {self.limits.output_kb * 1024} bytes", output=output
                )
            elif state.get("OOMKilled"):
                record = SandboxExit("limit", detail=f"memory limit of {self.limits.memory_mb} MiB", output=output)
            elif ran_out and self._killed_from_outside():
                record = SandboxExit(
                    "infra", exit_code=code, detail="the container was killed from outside the verifier", output=output
                )
            elif ran_out:
                sig = code - 128 if code > 128 else None
                record = SandboxExit(
                    "exited",
                    exit_code=code,
                    signal=sig,
                    detail=f"candidate process exited with status {code}",
                    output=output,
                )
            else:
                record = SandboxExit("killed", output=output)
        finally:
            try:
                self.container.remove(force=True)
            except Exception:
                pass
            shutil.rmtree(self.chan_dir, ignore_errors=True)
        self._exit = record
        return record


class DockerBackend(SandboxBackend):
    """Containers from :data:`IMAGE`, one per trial (see the module docstring).

    Raises :class:`~rlvr_lab.sandbox.backend.SandboxUnavailable` when no engine answers; builds the
    image on first use if ``scripts/setup.d/docker.sh`` has not.
    """

    name = "docker"

    def __init__(self, slot_dir: Path, server_path: str, binds: dict | None = None):
        """``server_path``: the stdlib-only module with ``serve(rfd, wfd, workdir)`` each container runs
        (the verifier's :mod:`~rlvr_lab.verifier.proxy.server`, the grader's notebook executor); ``binds``:
        more host folders to mount read-only, ``{host path: container path}``."""
        self.slot_dir = Path(slot_dir).resolve()
        # A container's /proc/self/mountinfo names the host path of every bind: the server module is
        # mounted from a copy in the slot's folder, not from the package (whose path names the verifier).
        self.app_dir = self.slot_dir / "share"  # not "lib": the grader stages its library there
        self.app_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.app_dir, 0o755)
        self.server_path = str(self.app_dir / "server.py")
        shutil.copyfile(server_path, self.server_path)
        (self.app_dir / "main.py").write_text(BOOTSTRAP)
        for name in ("server.py", "main.py"):
            os.chmod(self.app_dir / name, 0o644)
        self.binds = {str(host): {"bind": inside, "mode": "ro"} for host, inside in (binds or {}).items()}
        self.client = docker_client()
        self._meter = ContentionMeter()
        build_image(self.client)
        self.workspace_root = self.slot_dir / "user"  # as the local backend's: an ordinary path in mountinfo
        self.workspace_root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.workspace_root, 0o755)
        self.chan_root = self.slot_dir / "app"
        self.chan_root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.chan_root, 0o755)
        self._count = 0
        self._sessions: list[DockerSession] = []

    def launch(self, workspace: Path, limits: Limits, seed: int) -> DockerSession:
        import docker

        workspace = Path(workspace).resolve()
        if workspace.parent != self.workspace_root:
            raise ValueError(f"workspace must be a directory directly under {self.workspace_root}, got {workspace}")
        self._count += 1
        chan_dir = self.chan_root / f"t{os.getpid()}-{self._count}"
        shutil.rmtree(chan_dir, ignore_errors=True)
        chan_dir.mkdir(mode=0o755)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(chan_dir / "sock"))
        os.chmod(chan_dir / "sock", 0o777)
        listener.listen(1)
        mib = 1024 * 1024
        ulimits = [
            docker.types.Ulimit(name="cpu", soft=limits.cpu_s, hard=limits.cpu_s),
            docker.types.Ulimit(name="fsize", soft=limits.file_mb * mib, hard=limits.file_mb * mib),
            docker.types.Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            docker.types.Ulimit(name="core", soft=0, hard=0),
        ]
        try:
            container = self.client.containers.create(
                IMAGE,
                [f"{PY_PREFIX}/bin/python3", "-I", "-S", "-B", "/opt/app/main.py"],
                user=SANDBOX_USER,
                working_dir=WORKDIR,
                hostname="localhost",
                network_mode="none",
                read_only=True,
                tmpfs={"/tmp": "rw,nosuid,nodev,size=16m"},
                volumes={
                    str(workspace): {"bind": WORKDIR, "mode": "ro"},
                    str(chan_dir): {"bind": CHAN_DIR, "mode": "ro"},
                    str(self.app_dir): {"bind": "/opt/app", "mode": "ro"},
                    **self.binds,
                },
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                pids_limit=limits.processes,
                ulimits=ulimits,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,
                ipc_mode="none",
                environment={
                    "LD_LIBRARY_PATH": f"{PY_PREFIX}/lib:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu",
                    "HOME": "/tmp",
                },  # no PYTHONHASHSEED: nothing derived from the trial seed
                log_config=docker.types.LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}),
                labels={"rlvr-lab": "sandbox", "rlvr-lab.slot": str(self.slot_dir)},
                detach=True,
            )
            container.start()
        except Exception as exc:
            listener.close()
            shutil.rmtree(chan_dir, ignore_errors=True)
            raise SandboxFault(f"docker could not start the sandbox container: {exc}"[:500]) from None
        listener.settimeout(1.0)
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        sock = None
        try:
            while sock is None:
                try:
                    sock, _ = listener.accept()
                except TimeoutError:
                    container.reload()
                    if not container.attrs["State"].get("Running") or time.monotonic() > deadline:
                        logs = container.logs()[-300:].decode(errors="replace")
                        raise SandboxFault(
                            f"sandbox server did not connect (status {container.attrs['State'].get('Status')}): {logs}"
                        ) from None
        except Exception as exc:
            try:
                container.remove(force=True)
            except Exception:
                pass
            shutil.rmtree(chan_dir, ignore_errors=True)
            if isinstance(exc, SandboxFault):
                raise
            raise SandboxFault(f"docker sandbox failed to start: {exc}"[:500]) from None
        finally:
            listener.close()
        sock.settimeout(None)
        session = DockerSession(container, sock, limits, chan_dir, self._meter)
        self._sessions = [s for s in self._sessions if s._exit is None] + [session]
        return session

    def close(self) -> None:
        for session in self._sessions:
            session.kill()
        self._sessions = []
