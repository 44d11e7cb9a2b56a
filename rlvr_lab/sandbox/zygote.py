"""The local backend's pre-forked sandbox zygote (section 17.7; standard library only, run as a script).

One zygote serves one slot: it enters its namespaces and hides the host once, loads the server module,
then forks a sandbox per request from its trusted parent on a SOCK_SEQPACKET control socket (a fork is
far cheaper than an interpreter start). Requests, JSON with at most one SCM_RIGHTS descriptor:

``{"op": "spawn", "ws": name, "limits": {...}, "uid": u}`` + the sandbox's end of the runner's channel
    Fork a sandbox (:mod:`init` is its PID 1 in a new PID namespace); reply ``{"ok": true, "pid": init}``.
``{"op": "kill", "pid": p, "grace": s}``
    Kill that sandbox's init (so all its processes) and reply with its exit record (kinds as in
    :class:`rlvr_lab.sandbox.backend.SandboxExit`); ``grace``: wait that long for init's own record. In
    the namespace modes the reply comes as soon as init has its SIGKILL and the reap follows it; in every
    mode the sandbox is reaped before the zygote reads its next request.

It also enforces each sandbox's wall-clock deadline (:mod:`clock`). It imports no package: its sibling
modules are loaded by path (:func:`load_sibling`), so the host's packages never enter a sandbox.
"""

import gc
import json
import os
import select
import signal
import socket
import sys
import time

#: Modules imported once in the zygote so that candidates do not pay for them.
PRELOAD = (
    "json",
    "random",
    "threading",
    "collections",
    "itertools",
    "functools",
    "math",
    "re",
    "heapq",
    "bisect",
    "string",
    "time",
    "queue",
    "dataclasses",
    "typing",
    "contextlib",
    "fractions",
    "decimal",
    "statistics",
    "operator",
    "copy",
    "enum",
    "base64",
    "struct",
    "resource",
)
#: Modules of this folder the zygote loads by path (they import the standard library only and each
#: other under these names: ``sandbox_<stem>``); ``tests/test_sandbox_stdlib.py`` holds them to that.
SIBLINGS = ("title", "namespaces", "init", "confine", "clock")
#: Seconds the zygote waits for a warm sandbox to answer that it took its trial (it answers in
#: microseconds when alive; past this it is replaced by one built from scratch).
TAKE_WAIT_S = 2.0


def load_server(path, name="sandbox_server"):
    """Load the module at ``path`` under ``name`` (registered in ``sys.modules`` first, so that a module
    loaded after it can import it by that name)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_sibling(stem):
    """The module ``stem`` of :data:`SIBLINGS`, loaded by path as ``sandbox_<stem>``."""
    return load_server(os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{stem}.py"), f"sandbox_{stem}")


#: The namespaces and mounts of one sandbox, and a sandbox's PID 1, loaded once before any namespace is
#: entered (init imports namespaces, so it comes second).
title = load_sibling("title")
namespaces = load_sibling("namespaces")
init = load_sibling("init")


class Zygote:
    """The control loop: spawn sandboxes, enforce deadlines, kill and report."""

    def __init__(self, ctl, server_module, config, confine, clock, meter):
        self.ctl = ctl
        self.clock = clock
        self.meter = meter
        self.server = server_module
        self.config = config
        self.mode = self.config.get("mode", "root")
        self.confine = confine
        self.root = (
            self.config["ws_dir"]
            if self.mode == "process"
            else self.config.get("sandbox_root", namespaces.SANDBOX_ROOT)
        )
        self.pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self.sessions = {}
        self.warm = None  # the next sandbox, built ahead of its trial: {"pid", "ctl", "status_r"}
        self.expected = None  # the limits and uid the next trial is expected to have (the last trial's)
        with open("/proc/self/comm") as handle:
            self.name = handle.read().strip()  # what every trial's processes are called

    def warm_up(self):
        """Build the next sandbox now, between trials (``root`` and ``userns`` modes): its init enters
        fresh namespaces and forks the server process, which wait for the trial
        (:func:`init.run_warm_init`), so a spawn only mounts the graded copy and hands over the
        channel. Best effort: without a warm sandbox a spawn builds one from scratch."""
        if self.mode == "process" or self.warm is not None:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        status_r, status_w = os.pipe()
        try:
            namespaces.setns(self.pidns_fd, namespaces.CLONE_NEWPID)
            namespaces.unshare(namespaces.CLONE_NEWPID)
            init.set_name("rlvr-warm-init")  # the child is born with this name: never mistaken for a trial's
            try:
                pid = os.fork()
            except OSError:
                init.set_name(self.name)
                raise
            if pid:
                init.set_name(self.name)
        except OSError:
            for fd in (status_r, status_w):
                os.close(fd)
            ours.close()
            theirs.close()
            return
        if pid == 0:
            os.close(status_r)
            ours.close()
            view = (
                None
                if self.expected is None
                else {"root": self.root, "limits": self.expected[0], "uid": self.expected[1]}
            )
            init.run_warm_init(self.server, theirs.fileno(), status_w, self.mode, self.confine, self.name, view)
        theirs.close()
        os.close(status_w)
        self.warm = {"pid": pid, "ctl": ours, "status_r": status_r, "built_for": self.expected}

    @staticmethod
    def _end_warm(warm):
        """Kill and reap a warm sandbox that will not run a trial, and close its status pipe."""
        try:
            os.kill(warm["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(warm["pid"], 0)
        os.close(warm["status_r"])

    def _take_warm(self, job, chan_fd):
        """Hand ``job`` and the channel to the warm sandbox; (init pid, status pipe), or None if there is
        no warm sandbox or it is gone (then it is reaped and the spawn builds one from scratch).

        A send can succeed into the socket of an init that is dying (killed, but its descriptors not yet
        closed), so the handover counts only once init answers :data:`init.TAKEN`; an init that does not
        answer within :data:`TAKE_WAIT_S` is killed and replaced like a dead one."""
        warm, self.warm = self.warm, None
        if warm is None:
            return None
        try:
            socket.send_fds(warm["ctl"], [json.dumps(job).encode()], [chan_fd])
            ready, _, _ = select.select([warm["ctl"]], [], [], TAKE_WAIT_S)
            if not ready or warm["ctl"].recv(16) != init.TAKEN:
                raise OSError("the warm sandbox did not take its trial")
            return warm["pid"], warm["status_r"]
        except OSError:
            self._end_warm(warm)
            return None
        finally:
            warm["ctl"].close()

    def spawn(self, request, chan_fd):
        """Fork a sandbox whose server talks on ``chan_fd`` (the sandbox's end of the runner's socketpair)."""
        limits = dict(request["limits"])
        workdir = os.path.join(self.root, request["ws"])
        limits["shared"] = [os.path.join(self.root, name) for name in self.config.get("shared", ())]
        limits["keep"] = list(self.config.get("keep", ()))
        if self.mode == "process":
            limits["landlock_abi"] = self.config.get("landlock_abi", 0)
            limits["seccomp"] = bool(self.config.get("seccomp", False))
            limits["read_only"] = (
                self.config["keep"] + [workdir] + limits["shared"] + list(self.confine.READ_ONLY_ROOTS)
            )
        uid = int(request["uid"])
        if self.warm is not None and self.warm["built_for"] not in (None, (limits, uid)):
            warm, self.warm = self.warm, None  # its view and its server's confinement were made for another trial
            self._end_warm(warm)
            warm["ctl"].close()
        warm = self._take_warm({"workdir": workdir, "limits": limits, "uid": uid}, chan_fd)
        self.expected = (limits, uid)  # the next warm sandbox's view and server are built for these
        if warm is not None:
            pid, status_r = warm
        else:
            status_r, status_w = os.pipe()
            if self.mode != "process":
                namespaces.setns(self.pidns_fd, namespaces.CLONE_NEWPID)
                namespaces.unshare(namespaces.CLONE_NEWPID)
            pid = os.fork()
            if pid == 0:
                os.close(status_r)
                scratch = os.path.join(self.config.get("scratch_dir", "/nonexistent"), f"s{os.getpid()}")
                init.run_init(
                    self.server,
                    chan_fd,
                    status_w,
                    workdir,
                    limits,
                    uid,
                    self.mode,
                    self.confine,
                    scratch,
                )
            os.close(status_w)
        clock = self.clock.TrialClock(float(limits["wall_s"]), self.meter)
        self.sessions[pid] = {
            "status_r": status_r,
            "clock": clock,
            "deadline": clock.start + clock.wall_s,
            "record": None,
            "buffer": b"",
            "reaped": False,
            "ours": False,
        }
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
                    session["record"] = {
                        "kind": "infra",
                        "detail": f"sandbox init ended from outside (status {status}, signal {sig})",
                    }
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
        """Read what init reported; ``block``: until it closed its end. Init writes its record in one
        write (under ``PIPE_BUF``), so a record that arrived is taken at once, before init has exited."""
        session = self.sessions[pid]
        ended = False
        while True:
            if not block:
                ready, _, _ = select.select([session["status_r"]], [], [], 0)
                if not ready:
                    break
            data = os.read(session["status_r"], 65536)
            if not data:
                ended = True
                break
            session["buffer"] += data
        if session["buffer"] and session["record"] is None:
            try:
                session["record"] = json.loads(session["buffer"].decode())
            except ValueError:
                if ended:
                    session["record"] = {"kind": "infra", "detail": "unreadable status from sandbox init"}

    def kill(self, pid, kind="killed", grace=0.0, reap=True):
        """End sandbox ``pid`` and return its record. ``reap``: also wait for init's end (which means every
        process of its PID namespace has ended); without it the record is settled once init has its
        SIGKILL, and the caller reaps (:meth:`_reap`) before it serves another request."""
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
            if reap:
                self._reap(pid)
            elif session["record"] is None:
                session["record"] = {"kind": kind}
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
                    self.warm_up()  # the next trial's sandbox, built while this trial runs
                elif request["op"] == "kill":
                    # In a PID namespace, init's SIGKILL dooms every process of the sandbox: the kernel ends
                    # them as init exits and none can leave the namespace. So the runner has its answer at
                    # once and judges while this loop reaps, and the reap comes before the next request is
                    # read: no trial of this slot starts while a process of an earlier one is alive. The
                    # process mode reaps first, because its reap also sweeps the strays no namespace holds.
                    pid = int(request["pid"])
                    grace = float(request.get("grace") or 0.0)
                    record = self.kill(pid, grace=grace, reap=self.mode == "process")
                    self.ctl.send(json.dumps({"ok": True, "record": record}).encode())
                    if pid in self.sessions:
                        self._reap(pid)
                        del self.sessions[pid]

                elif request["op"] == "ping":
                    self.ctl.send(b'{"ok": true}')


def main():
    """``python -I -S zygote.py`` with its JSON config on stdin (kept out of ``/proc/*/cmdline``).

    ``mode`` in the config: ``root`` (namespaces, slot uid), ``userns`` (the same namespaces inside an
    unprivileged user namespace; the zygote then runs as PID 1 of its own PID namespace, so that it may
    re-enter it between sandboxes) or ``process`` (no namespaces; a child subreaper).
    """
    if len(sys.argv) == 3 and sys.argv[1] == "--probe":
        os._exit(namespaces.probe(sys.argv[2], load_sibling("confine")))
    config = json.loads(sys.stdin.buffer.read().decode())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    ctl = socket.socket(fileno=int(config["ctl_fd"]))
    namespaces.prctl(namespaces.PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != config["parent"]:
        os._exit(1)
    mode = config.get("mode", "root")
    try:
        server = load_server(config["server_path"])
        confine = load_sibling("confine")
        clock = load_sibling("clock")
        meter = clock.ContentionMeter()  # opened before namespaces and hidden directories
        for name in PRELOAD:
            __import__(name)
        if mode == "userns":
            confine.enter_user_namespace(config["uid"], config["gid"])
        if mode == "process":
            namespaces.prctl(namespaces.PR_SET_CHILD_SUBREAPER, 1)
        else:
            namespaces.setup_namespaces(config)
        if mode == "userns":
            try:  # candidates may not nest user namespaces (this one's own limit; the host's is untouched)
                with open("/proc/sys/user/max_user_namespaces", "w") as fh:
                    fh.write("0")
            except OSError:
                pass
            namespaces.unshare(namespaces.CLONE_NEWPID)
            child = os.fork()
            if child:  # stay as the backend's handle on the zygote, which is PID 1 of the new namespace
                ctl.close()
                _, status = os.waitpid(child, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            namespaces.prctl(namespaces.PR_SET_PDEATHSIG, signal.SIGKILL)
    except BaseException as exc:
        ctl.send(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}).encode())
        os._exit(2)
    ctl.send(b'{"ok": true, "ready": true}')
    zygote = Zygote(ctl, server, config, confine, clock, meter)
    zygote.warm_up()
    # Every sandbox is a fork of this process: with its objects frozen, a collection in a sandbox never
    # walks (and so never copies) the zygote's pages, only what the sandbox made itself.
    gc.collect()
    gc.freeze()
    zygote.serve()
    os._exit(0)


if __name__ == "__main__":
    main()
