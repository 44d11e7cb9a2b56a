"""A sandbox's PID 1: its init, built per trial or ahead of it (section 17.7; standard library only,
loaded by the zygote by path, after :mod:`namespaces`).

:func:`run_init` builds a sandbox for a known trial: fresh namespaces, the trial's view, then the
candidate's server, whose output it drains and caps and whose end it reports (:func:`supervise`).
:func:`run_warm_init` does the forks and namespaces ahead of time, while the previous trial runs, and
waits, holding nothing of any candidate, for the trial. Each sandbox serves one trial either way.
"""

import ctypes
import json
import os
import select
import signal
import socket

try:  # in the zygote: loaded by path, after namespaces.py and title.py, as sandbox_<stem>
    import sandbox_namespaces as namespaces
    import sandbox_title as title
except ImportError:  # imported as part of the package (documentation, doctests)
    from rlvr_lab.sandbox import namespaces, title

#: Bytes of candidate output kept for the evidence.
OUTPUT_EXCERPT = 2048

_libc = ctypes.CDLL(None, use_errno=True)


PR_SET_NAME = 15

#: What a warm sandbox's init answers on its control socket when its trial arrives.
TAKEN = b"taken"

#: The zygote's argument area, read once when it loads this module; every sandbox, a fork, has it at the
#: same addresses and overwrites it (:func:`title.write_title`) so that its processes read as ``python3``.
ARGUMENT_AREA = title.own_argument_area()


def set_name(name):
    """Name this process in ``ps`` and ``/proc/PID/comm`` (at most 15 bytes): ``rlvr-warm-init`` and
    ``rlvr-warm-srv`` for a sandbox waiting for its trial. A trial's processes get the zygote's own name
    back (the interpreter's): nothing a candidate reads in ``/proc`` says "verifier"."""
    _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def _init_start(keep_fds):
    """First steps of a sandbox's init: die with the zygote, an ordinary command line (before the server is
    forked, which inherits it), default SIGINT, no inherited descriptor but ``keep_fds``."""
    namespaces.prctl(namespaces.PR_SET_PDEATHSIG, signal.SIGKILL)
    title.write_title(ARGUMENT_AREA)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2 and int(name) not in keep_fds:
            try:
                os.close(int(name))
            except OSError:
                pass


def _report(status_w, record):
    try:
        os.write(status_w, json.dumps(record).encode())
    except OSError:
        pass


def run_init(server_module, chan_fd, status_w, workdir, limits, uid, mode="root", confine=None, scratch=None):
    """PID 1 of a fresh sandbox: mounts, forks the server, caps its output, reports its end.

    In ``process`` mode there is no PID namespace: it is a child subreaper instead (the candidate's
    orphans come back to it, and to the zygote after it) and makes the sandbox's scratch directory.
    """
    code = 0
    try:
        _init_start((chan_fd, status_w))
        if mode == "process":
            namespaces.prctl(namespaces.PR_SET_CHILD_SUBREAPER, 1)
            os.mkdir(scratch, 0o700)
        else:
            namespaces.fresh_namespaces()
            namespaces.trial_view(workdir, limits, mode)
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(out_r)
            os.close(status_w)
            namespaces.run_server(server_module, chan_fd, out_w, workdir, limits, uid, mode, confine, scratch)
        os.close(out_w)
        os.close(chan_fd)
        _report(status_w, supervise(pid, out_r, int(limits["output_kb"]) * 1024))
    except BaseException as exc:
        _report(status_w, {"kind": "infra", "detail": f"sandbox init failed: {exc}"[:500]})
        code = 1
    os._exit(code)


def run_warm_init(server_module, ctl_fd, status_w, mode="root", confine=None, plain_name="python3", view=None):
    """PID 1 of a sandbox built ahead of its trial (``root`` and ``userns`` modes); never returns.

    It enters fresh mount and IPC namespaces and forks the server process, which waits, holding nothing
    of any candidate, for its trial. When the zygote sends the trial over ``ctl_fd`` (``{"ws", "limits",
    "uid"}`` and the channel's descriptor), init answers :data:`TAKEN` (so the zygote knows the sandbox was
    alive to take it), mounts the trial's view (:func:`trial_view`), hands the job and the channel to the
    server, and supervises it as :func:`run_init` does. End of stream on ``ctl_fd`` (the zygote dropped
    this sandbox) ends it unused.

    ``view`` (``{"root", "limits", "uid"}``, the previous trial's), or None: with it, the view is built
    ahead for those limits (:func:`namespaces.prepare_view`, after the server was forked, so it never holds
    the descriptor of the uncovered root) and the waiting server confines itself for those limits and that
    uid (:func:`namespaces.confine_server`); the trial then only binds its graded copy, and the server only
    takes its channel and working directory. A trial with other limits or another uid is refused (the
    zygote drops such a sandbox before it sends one). Without it the server waits unconfined and confines
    itself at its trial exactly as in :func:`namespaces.run_server`. Nothing of a candidate is known, held
    or visible before its trial arrives.
    The zygote forks it already named ``rlvr-warm-init``; at its trial it takes ``plain_name`` (the
    zygote's own) back.
    """
    code = 0
    try:
        _init_start((ctl_fd, status_w))
        namespaces.fresh_namespaces()
        out_r, out_w = os.pipe()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            set_name("rlvr-warm-srv")
            for fd in (out_r, status_w, ctl_fd, ours.fileno()):
                os.close(fd)
            if view is not None:  # confined now, for the expected limits and uid; its socket to init is fd 4
                try:
                    namespaces.confine_server(
                        out_w, view["limits"], int(view["uid"]), mode, confine, keep_fd=theirs.fileno()
                    )
                    theirs = socket.socket(fileno=4)
                except BaseException:
                    os._exit(71)
            try:
                message, fds, _, _ = socket.recv_fds(theirs, 1 << 20, 1)
                job = json.loads(message.decode()) if message and len(fds) == 1 else None
            except BaseException:
                job = None
            if job is None:
                os._exit(0)
            set_name(plain_name)
            if view is None:  # never returns
                namespaces.run_server(
                    server_module, fds[0], out_w, job["workdir"], job["limits"], int(job["uid"]), mode, confine
                )
            try:  # already confined: only the channel (descriptor 3) and the working directory are left
                os.dup2(fds[0], 3)
                os.close(fds[0])
                theirs.close()
                workdir = namespaces.shown_workdir(job["workdir"])
                os.chdir(workdir)
            except BaseException:
                os._exit(71)
            namespaces.serve_confined(server_module, 3, workdir)
        os.close(out_w)
        theirs.close()
        under = namespaces.prepare_view(view["root"], view["limits"], mode) if view else None
        ctl = socket.socket(fileno=ctl_fd)
        message, fds, _, _ = socket.recv_fds(ctl, 1 << 20, 1)
        if not message or len(fds) != 1:
            os._exit(0)  # dropped unused: the server ends with this PID namespace
        ctl.send(TAKEN)  # the zygote waits for this: a warm sandbox that died unseen is replaced, not used
        job = json.loads(message.decode())
        set_name(plain_name)
        if under is None:
            namespaces.trial_view(job["workdir"], job["limits"], mode)
        else:
            if os.path.dirname(job["workdir"]) != view["root"]:
                raise ValueError("the warm view was built for another root")
            if job["limits"] != view["limits"] or int(job["uid"]) != int(view["uid"]):
                raise ValueError("the warm sandbox was built for another trial's limits or uid")
            namespaces.show_graded_copy(under, job["workdir"])
        socket.send_fds(ours, [message], fds)
        os.close(fds[0])
        ours.close()
        _report(status_w, supervise(pid, out_r, int(job["limits"]["output_kb"]) * 1024))
    except BaseException as exc:
        _report(status_w, {"kind": "infra", "detail": f"sandbox init failed: {exc}"[:500]})
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
    return {
        "kind": "exited",
        "exit_code": code,
        "detail": f"candidate process exited with status {code}",
        "output": output,
    }
