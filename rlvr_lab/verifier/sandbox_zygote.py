"""The local backend's pre-forked sandbox zygote (section 17.7; stdlib only, run as a script).

One zygote serves one verifier slot. It starts as root, enters its own mount, network, IPC and UTS
namespaces once, hides every directory that holds the runner, the hidden tests or the repository behind
empty read-only tmpfs mounts, exposes the slot's workspace root read-only at :data:`SANDBOX_ROOT`, loads
:mod:`sandbox_server` and a few stdlib modules, and then waits for requests from its trusted parent on a
SOCK_SEQPACKET control socket (its descriptor number is in the config):

``{"op": "spawn", "ws": name, "limits": {...}, "uid": u}`` with one SCM_RIGHTS descriptor
    Fork a sandbox whose server talks on that descriptor (the sandbox's end of a socketpair the runner
    made, so the runner can start its pytest process while the sandbox is still being built): a child in a *new PID namespace* becomes its init (PID 1, still root): it unshares a
    private mount namespace and a fresh IPC namespace (SysV shared memory capped at the memory limit, no
    segment, queue or semaphore of another trial), hides every other graded copy, mounts a fresh ``/proc`` (so only the sandbox's own processes are visible)
    and fresh small tmpfs mounts on ``/tmp``, ``/var/tmp`` and ``/dev/shm``, then forks the candidate's
    server: descriptors closed, stdout+stderr into a capped pipe, rlimits applied (CPU, address space,
    processes, file size, open files, no core), groups dropped, ``setgid``/``setuid`` to the slot's
    unprivileged uid, a new session keyring with the uid's own keyrings emptied, no-new-privileges, ``cwd`` = the read-only graded copy, and
    ``sandbox_server.serve`` on the given descriptor. The reply is ``{"ok": true, "pid": init}``. Members of a PID namespace cannot signal its init, and when init dies the
    kernel kills every process left in the namespace (setsid daemons included).
``{"op": "kill", "pid": p, "grace": s}``
    (``grace`` optional: the server has already ended, so wait up to ``s`` seconds for init's record first.)
    Kill that sandbox's init (and so all its processes), reap it, and reply with the exit record
    ``{"kind", "exit_code", "signal", "detail", "output"}`` (kinds as in
    :class:`rlvr_lab.verifier.backend.SandboxExit`).

The zygote also enforces each sandbox's wall-clock deadline (``timeout``; extended by the host's CPU
contention up to a cap, see :mod:`sandbox_clock`), and tells apart an init that
reported the server's own end (``exited``, ``output_cap``) from one that was killed from outside
(``infra``).
"""

import ctypes
import json
import os
import select
import signal
import socket
import struct
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 38, 36
#: statvfs flags -> mount flags that a read-only remount must keep (they may be locked in a user namespace).
_KEEP_FLAGS = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
               (os.ST_NOATIME, 1024), (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21))
#: keyctl(2): syscall numbers and the operations used to give every trial empty keyrings.
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5

#: Where the slot's workspace root appears inside every sandbox.
SANDBOX_ROOT = "/run/rlvr-sandbox"
#: Bytes of candidate output kept for the evidence.
OUTPUT_EXCERPT = 2048
#: Modules imported once in the zygote so that candidates do not pay for them.
PRELOAD = ("json", "random", "threading", "collections", "itertools", "functools", "math", "re",
           "heapq", "bisect", "string", "time", "queue", "dataclasses", "typing", "contextlib",
           "fractions", "decimal", "statistics", "operator", "copy", "enum", "base64", "struct", "resource")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags):
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def setns(fd, flags):
    _check(_libc.setns(fd, flags), "setns")


def mount(source, target, fstype, flags, data=None):
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def prctl(option, value):
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl({option})")


def remount_read_only(path):
    """Make the bind mount at ``path`` read-only, keeping the flags it already has (a user namespace may
    not clear flags inherited from the host's mounts)."""
    have = os.statvfs(path).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    for st, ms in _KEEP_FLAGS:
        if have & st:
            flags |= ms
    mount(None, path, None, flags)


def setup_namespaces(config):
    """Enter private namespaces and build the sandbox's view of the filesystem (once per zygote)."""
    unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    socket.sethostname("localhost")  # an ordinary name: nothing says "verifier"
    ws_fd = os.open(config["ws_dir"], os.O_PATH | os.O_DIRECTORY)
    keep = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in config["keep"]]
    hidden = []
    for path in config["hide"]:
        if not os.path.isdir(path) or os.path.islink(path):
            continue
        mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        hidden.append(path)
    os.makedirs(SANDBOX_ROOT, exist_ok=True)
    mount(f"/proc/self/fd/{ws_fd}", SANDBOX_ROOT, None, MS_BIND)
    remount_read_only(SANDBOX_ROOT)
    for path, fd in keep:
        if any(path == h or path.startswith(h.rstrip("/") + "/") for h in hidden):
            os.makedirs(path, exist_ok=True)
            mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
            remount_read_only(path)
    for path in hidden:
        mount(None, path, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    for fd in [ws_fd] + [fd for _, fd in keep]:
        os.close(fd)


def ipc_limits(memory_mb):
    """Caps of a fresh IPC namespace (written as root before the candidate starts): SysV shared memory
    in total at most ``memory_mb`` (so it counts within the memory limit), few segments and queues."""
    pages = max(1, int(memory_mb) * 256)  # 4 KiB pages
    return {"/proc/sys/kernel/shmmax": int(memory_mb) * 1024 * 1024, "/proc/sys/kernel/shmall": pages,
            "/proc/sys/kernel/shmmni": 16, "/proc/sys/kernel/msgmni": 16, "/proc/sys/fs/mqueue/queues_max": 16}


def fresh_keyrings(clear_user=True):
    """Before any candidate code: join a new anonymous session keyring and (``clear_user``) clear the
    uid's user, user-session and persistent keyrings, so no key of an earlier trial or candidate is
    reachable. As a slot uid those keyrings are the slot's; in a user namespace they belong to the
    zygote's namespace (the kernel keeps user keyrings per user namespace), so clearing them never
    touches the caller's own. In ``process`` mode they are the caller's, so only the session keyring is
    new there. Best effort where keyctl is unavailable (then no trial can create keys either)."""
    if SYS_KEYCTL is None:
        return
    call = _libc.syscall
    call.restype = ctypes.c_long
    call(SYS_KEYCTL, ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_void_p(None))
    if not clear_user:
        return
    for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        call(SYS_KEYCTL, ctypes.c_long(KEYCTL_CLEAR), ctypes.c_long(ring))
    persistent = call(SYS_KEYCTL, ctypes.c_long(KEYCTL_GET_PERSISTENT), ctypes.c_long(-1),
                      ctypes.c_long(KEY_SPEC_SESSION_KEYRING))
    if persistent > 0:
        call(SYS_KEYCTL, ctypes.c_long(KEYCTL_CLEAR), ctypes.c_long(persistent))


def _apply_limits(limits, nproc_base=0):
    import resource

    mib = 1024 * 1024
    pairs = [
        (resource.RLIMIT_CPU, int(limits["cpu_s"])),
        (resource.RLIMIT_AS, int(limits["memory_mb"]) * mib),
        (resource.RLIMIT_NPROC, nproc_base + int(limits["processes"])),
        (resource.RLIMIT_FSIZE, int(limits["file_mb"]) * mib),
        (resource.RLIMIT_NOFILE, int(limits["open_files"])),
        (resource.RLIMIT_CORE, 0),
    ]
    for which, value in pairs:
        resource.setrlimit(which, (value, value))


def run_server(server_module, chan_fd, out_w, workdir, limits, uid, mode="root", confine=None, scratch=None):
    """In the candidate's process: drop everything, then serve. Never returns.

    ``mode`` ``root``: switch to the slot's ``uid``; ``userns``: stay the namespace's root but drop every
    capability; ``process``: a new session, Landlock (``confine.landlock``) where the kernel has it, and a seccomp
    filter that refuses every socket but a Unix one (``confine.deny_network_sockets``).
    """
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        chan = os.dup2(chan_fd, 3)
        os.closerange(4, 1 << 16)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.chdir(workdir)
        if mode == "process":
            os.setsid()
            _apply_limits(limits, nproc_base=confine.process_count(os.getuid()))
        else:
            _apply_limits(limits)
        if mode == "root":
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            fresh_keyrings()
        else:
            if mode == "userns":
                confine.drop_capabilities()
            fresh_keyrings(clear_user=mode == "userns")
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if mode == "process" and limits.get("landlock_abi"):
            confine.landlock(limits["read_only"], [scratch], int(limits["landlock_abi"]))
        if mode == "process" and limits.get("seccomp"):
            confine.deny_network_sockets()
        os.environ.clear()
        home = scratch or "/tmp"
        os.environ.update({"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8"})
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
    except BaseException:
        os._exit(71)
    try:
        server_module.serve(chan, chan, workdir)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        code = 70
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)


def run_init(server_module, chan_fd, status_w, workdir, limits, uid, mode="root", confine=None, scratch=None):
    """PID 1 of a fresh sandbox: mounts, forks the server, caps its output, reports its end.

    In ``process`` mode there is no PID namespace: it is a child subreaper instead (the candidate's
    orphans come back to it, and to the zygote after it) and makes the sandbox's scratch directory.
    """
    code = 0
    try:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for name in os.listdir("/proc/self/fd"):
            if int(name) > 2 and int(name) not in (chan_fd, status_w):
                try:
                    os.close(int(name))
                except OSError:
                    pass
        if mode == "process":
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            os.mkdir(scratch, 0o700)
        else:
            unshare(CLONE_NEWNS | CLONE_NEWIPC)  # a fresh IPC namespace per trial: no SysV/POSIX IPC survives it
            mount(None, "/", None, MS_REC | MS_PRIVATE)
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            for path, value in ipc_limits(limits["memory_mb"]).items():
                if os.path.exists(path):  # fs.mqueue is absent without POSIX message queues
                    try:
                        with open(path, "w") as handle:
                            handle.write(str(value))
                    except OSError:
                        if mode == "root":  # a user namespace on an older kernel may not own these
                            raise
            # Only this trial's graded copy (and the backend's shared entries, such as the grader's staged
            # library) is visible: an empty tmpfs hides its siblings (other candidates').
            views = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in [workdir] + limits["shared"]]
            mount("tmpfs", SANDBOX_ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=16k,mode=755")
            for path, fd in views:
                os.mkdir(path, 0o755)
                mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
                remount_read_only(path)
                os.close(fd)
            mount(None, SANDBOX_ROOT, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=16k,mode=755")
            tmp_mb = max(1, min(64, 2 * int(limits["file_mb"])))
            for path in ("/tmp", "/var/tmp", "/dev/shm"):
                if os.path.isdir(path):
                    # kept directories below it (a virtual environment under /tmp) stay visible, read-only
                    kept = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in limits.get("keep", ())
                            if k.startswith(path + "/") and os.path.isdir(k)]
                    mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,mode=1777")
                    for k, fd in kept:
                        os.makedirs(k, 0o755, exist_ok=True)
                        mount(f"/proc/self/fd/{fd}", k, None, MS_BIND | MS_REC)
                        remount_read_only(k)
                        os.close(fd)
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(out_r)
            os.close(status_w)
            run_server(server_module, chan_fd, out_w, workdir, limits, uid, mode, confine, scratch)
        os.close(out_w)
        os.close(chan_fd)
        record = supervise(pid, out_r, int(limits["output_kb"]) * 1024)
        os.write(status_w, json.dumps(record).encode())
    except BaseException as exc:
        try:
            os.write(status_w, json.dumps({"kind": "infra", "detail": f"sandbox init failed: {exc}"[:500]}).encode())
        except OSError:
            pass
        code = 1
    os._exit(code)


def supervise(pid, out_r, cap_bytes):
    """Drain the server's output until it ends; kill it at the output cap. Returns the exit record."""
    pidfd = os.pidfd_open(pid)
    excerpt = bytearray()
    total = 0
    over_cap = False
    readers = [out_r, pidfd]
    status = None
    while status is None:
        ready, _, _ = select.select(readers, [], [], 0.5)
        if out_r in ready:
            data = os.read(out_r, 65536)
            if not data:
                readers.remove(out_r)
            else:
                total += len(data)
                if len(excerpt) < OUTPUT_EXCERPT:
                    excerpt += data[: OUTPUT_EXCERPT - len(excerpt)]
                if total > cap_bytes and not over_cap:
                    over_cap = True
                    os.kill(pid, signal.SIGKILL)
                    readers.remove(out_r)
        while True:  # reap everything that ended: orphans are re-parented to us
            try:
                done, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                done = 0
            if done == 0:
                break
            if done == pid:
                status = st
    output = bytes(excerpt).decode("utf-8", "replace")
    if over_cap:
        return {"kind": "output_cap", "detail": f"output exceeded {cap_bytes} bytes", "output": output}
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return {"kind": "exited", "signal": sig, "detail": f"candidate process killed by {name}", "output": output}
    code = os.WEXITSTATUS(status)
    return {"kind": "exited", "exit_code": code, "detail": f"candidate process exited with status {code}",
            "output": output}


class Zygote:
    """The control loop: spawn sandboxes, enforce deadlines, kill and report."""

    def __init__(self, ctl, server_module, config=None, confine=None, clock=None, meter=None):
        self.ctl = ctl
        self.clock = clock or load_clock()
        self.meter = meter or self.clock.ContentionMeter()
        self.server = server_module
        self.config = config or {}
        self.mode = self.config.get("mode", "root")
        self.confine = confine
        self.root = self.config.get("ws_dir") if self.mode == "process" else SANDBOX_ROOT
        self.pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self.sessions = {}

    def spawn(self, request, chan_fd):
        """Fork a sandbox whose server talks on ``chan_fd`` (the sandbox's end of the runner's socketpair)."""
        limits = dict(request["limits"])
        workdir = os.path.join(self.root, request["ws"])
        status_r, status_w = os.pipe()
        limits["shared"] = [os.path.join(self.root, name) for name in self.config.get("shared", ())]
        limits["keep"] = list(self.config.get("keep", ()))
        if self.mode == "process":
            limits["landlock_abi"] = self.config.get("landlock_abi", 0)
            limits["seccomp"] = bool(self.config.get("seccomp", False))
            limits["read_only"] = (self.config["keep"] + [workdir] + limits["shared"]
                                   + list(self.confine.READ_ONLY_ROOTS))
        else:
            setns(self.pidns_fd, CLONE_NEWPID)
            unshare(CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            os.close(status_r)
            scratch = os.path.join(self.config.get("scratch_dir", "/nonexistent"), f"s{os.getpid()}")
            run_init(self.server, chan_fd, status_w, workdir, limits, int(request["uid"]), self.mode,
                     self.confine, scratch)
        os.close(status_w)
        clock = self.clock.TrialClock(float(limits["wall_s"]), self.meter)
        self.sessions[pid] = {"status_r": status_r, "clock": clock, "deadline": clock.deadline(), "record": None,
                              "buffer": b"", "reaped": False, "ours": False}
        self.ctl.send(json.dumps({"ok": True, "pid": pid}).encode())

    def _reap(self, pid):
        session = self.sessions[pid]
        if not session["reaped"]:
            _, status = os.waitpid(pid, 0)
            session["reaped"] = True
            session["init_status"] = status
            self._drain(pid, block=True)
            os.close(session["status_r"])
            if session["record"] is None:
                if session["ours"]:
                    session["record"] = {"kind": session.get("ours_kind", "killed")}
                else:
                    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
                    session["record"] = {"kind": "infra",
                                         "detail": f"sandbox init ended from outside (status {status}, signal {sig})"}
            if self.mode == "process":
                self._sweep(pid)

    def _sweep(self, init_pid):
        """``process`` mode: kill every process the sandbox left (they were re-parented to this child
        subreaper when their parents died), then remove the sandbox's scratch directory."""
        live = {p for p, s in self.sessions.items() if not s["reaped"]}
        for _ in range(1000):
            strays = [p for p in self.confine.children_of({os.getpid()}) if p not in live]
            if not strays:
                break
            self._kill_groups(strays)
            for p in strays:
                try:
                    os.waitpid(p, 0)
                except ChildProcessError:
                    pass
        scratch = os.path.join(self.config.get("scratch_dir", "/nonexistent"), f"s{init_pid}")
        for top, dirs, files in os.walk(scratch, topdown=False):
            for name in files + dirs:
                path = os.path.join(top, name)
                try:
                    os.rmdir(path) if name in dirs and not os.path.islink(path) else os.unlink(path)
                except OSError:
                    pass
        try:
            os.rmdir(scratch)
        except OSError:
            pass

    def _kill_groups(self, pids):
        """SIGKILL each process and, first, its whole process group (a fork bomb's children share the
        candidate's group, so they die together instead of one generation per sweep)."""
        own = os.getpgrp()
        for p in pids:
            try:
                group = os.getpgid(p)
                if group != own:
                    os.killpg(group, signal.SIGKILL)
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass

    def _drain(self, pid, block=False):
        session = self.sessions[pid]
        while True:
            if not block:
                ready, _, _ = select.select([session["status_r"]], [], [], 0)
                if not ready:
                    return
            data = os.read(session["status_r"], 65536)
            if not data:
                break
            session["buffer"] += data
        if session["buffer"] and session["record"] is None:
            try:
                session["record"] = json.loads(session["buffer"].decode())
            except ValueError:
                session["record"] = {"kind": "infra", "detail": "unreadable status from sandbox init"}

    def kill(self, pid, kind="killed", grace=0.0):
        session = self.sessions.get(pid)
        if session is None:
            return {"kind": "infra", "detail": f"no sandbox {pid}"}
        if not session["reaped"]:
            self._drain(pid)
            if session["record"] is None and grace > 0:  # its server has ended: let init report why
                select.select([session["status_r"]], [], [], min(float(grace), 2.0))
                self._drain(pid)
            if session["record"] is None:
                session["ours"] = True
                session["ours_kind"] = kind
                if kind == "timeout":
                    session["record"] = {"kind": "timeout", "detail": session["clock"].describe()}
            # process mode: init first (so it cannot report the server's death as the candidate's own end),
            # then the candidate's process groups, which must not outlive it
            below = self.confine.children_of({pid}) if self.mode == "process" else []
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._kill_groups(below)
            self._reap(pid)
        return session["record"]

    def on_status(self, pid):
        """Init wrote its record (or died): reap it."""
        self._reap(pid)

    def serve(self):
        while True:
            live = {s["status_r"]: pid for pid, s in self.sessions.items() if not s["reaped"]}
            deadlines = [s["deadline"] for s in self.sessions.values() if not s["reaped"]]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready, _, _ = select.select([self.ctl] + list(live), [], [], timeout)
            now = time.monotonic()
            for pid, session in list(self.sessions.items()):
                if not session["reaped"] and session["deadline"] <= now:
                    session["deadline"] = session["clock"].deadline()  # later if the host was busy
                    if session["deadline"] <= now:
                        self.kill(pid, kind="timeout")
            for fd in ready:
                if fd in live and not self.sessions[live[fd]]["reaped"]:
                    self.on_status(live[fd])
            if self.ctl in ready:
                message, fds, _, _ = socket.recv_fds(self.ctl, 65536, 4)
                if not message:
                    return
                request = json.loads(message.decode())
                if request["op"] != "spawn" or len(fds) != 1:
                    for fd in fds:
                        os.close(fd)
                if request["op"] == "spawn":
                    if len(fds) != 1:
                        self.ctl.send(b'{"ok": false, "error": "spawn needs exactly one channel descriptor"}')
                        continue
                    try:
                        self.spawn(request, fds[0])
                    except OSError as exc:
                        self.ctl.send(json.dumps({"ok": False, "error": str(exc)}).encode())
                    finally:
                        os.close(fds[0])
                elif request["op"] == "kill":
                    record = self.kill(int(request["pid"]), grace=float(request.get("grace") or 0.0))
                    self.sessions.pop(int(request["pid"]), None)
                    self.ctl.send(json.dumps({"ok": True, "record": record}).encode())
                elif request["op"] == "ping":
                    self.ctl.send(b'{"ok": true}')


def load_server(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("sandbox_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_confine(config):
    # next to this file, not to the server: a caller may run another server module (the grader's executor)
    return load_server(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_confine.py"))


def load_clock():
    """:mod:`sandbox_clock`, loaded by path like the confinement module (this script imports no package)."""
    return load_server(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_clock.py"))


def probe(mode):
    """``sandbox_zygote.py --probe MODE``: can this user build a ``root`` or ``userns`` sandbox here?

    Exit status 0 when the namespaces, a fresh ``/proc`` and a tmpfs mount all work; else the error on
    stderr. Run once per process by :func:`rlvr_lab.verifier.sandbox.local_mode`.
    """
    try:
        if mode == "userns":
            load_confine({"server_path": __file__}).enter_user_namespace(os.getuid(), os.getgid())
        unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID)
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        pid = os.fork()
        if pid == 0:
            try:
                mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
                mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k")
            except BaseException as exc:
                sys.stderr.write(f"{exc}\n")
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        return 0 if status == 0 else 1
    except BaseException as exc:
        sys.stderr.write(f"{exc}\n")
        return 1


def main():
    """``python -I -S sandbox_zygote.py`` with its JSON config on stdin (kept out of ``/proc/*/cmdline``).

    ``mode`` in the config: ``root`` (namespaces, slot uid), ``userns`` (the same namespaces inside an
    unprivileged user namespace; the zygote then runs as PID 1 of its own PID namespace, so that it may
    re-enter it between sandboxes) or ``process`` (no namespaces; a child subreaper).
    """
    if len(sys.argv) == 3 and sys.argv[1] == "--probe":
        os._exit(probe(sys.argv[2]))
    config = json.loads(sys.stdin.buffer.read().decode())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    ctl = socket.socket(fileno=int(config["ctl_fd"]))
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != config["parent"]:
        os._exit(1)
    mode = config.get("mode", "root")
    try:
        server = load_server(config["server_path"])
        confine = load_confine(config)
        clock = load_clock()
        meter = clock.ContentionMeter()  # opened before namespaces and hidden directories
        for name in PRELOAD:
            __import__(name)
        if mode == "userns":
            confine.enter_user_namespace(config["uid"], config["gid"])
        if mode == "process":
            prctl(PR_SET_CHILD_SUBREAPER, 1)
        else:
            setup_namespaces(config)
        if mode == "userns":
            try:  # candidates may not nest user namespaces (this one's own limit; the host's is untouched)
                with open("/proc/sys/user/max_user_namespaces", "w") as fh:
                    fh.write("0")
            except OSError:
                pass
            unshare(CLONE_NEWPID)
            child = os.fork()
            if child:  # stay as the backend's handle on the zygote, which is PID 1 of the new namespace
                ctl.close()
                _, status = os.waitpid(child, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except BaseException as exc:
        ctl.send(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}).encode())
        os._exit(2)
    ctl.send(b'{"ok": true, "ready": true}')
    Zygote(ctl, server, config, confine, clock, meter).serve()
    os._exit(0)


if __name__ == "__main__":
    main()
