"""Building one sandbox: namespaces, mounts, limits and the candidate's process (section 17.7; standard
library only, loaded by the zygote by path).

:func:`setup_namespaces` runs once per zygote (private mount, network, IPC and UTS namespaces, the host's
directories hidden, the slot's workspace root read-only at :data:`SANDBOX_ROOT`). Per trial, init calls
:func:`fresh_namespaces` and :func:`trial_view` (its own ``/proc``, tmpfs scratch, every other graded copy
hidden; a warm sandbox builds all of it but the graded copy ahead, :func:`prepare_view`), and
:func:`run_server` confines the candidate's process (rlimits, slot uid, no new privileges) before it serves
on the channel.

An ordinary view: nothing the candidate can see is named after the verifier. Its graded copy is its working
directory at ``/home/user/project`` (:func:`shown_workdir`), the hostname is ``localhost``, and in its own
user namespace it is uid and gid :data:`INSIDE_ID` (:func:`ordinary_identity`; outside it is still the slot
uid, or the caller's user), every process reads as a plain ``python3`` in ``/proc/PID/cmdline``
(:mod:`title`), and the host folders its mounts come from (which ``/proc/self/mountinfo`` shows) have
ordinary names. A candidate that behaves only when it believes it is graded therefore has no cheap tell.
What a behavioural check cannot hide (the namespace's uid map, the server's module in the candidate's own
process, the timing of a test) chapter 6 says.
"""

import ctypes
import fcntl
import os
import signal
import socket
import sys

#: clone(2)/unshare(2), mount(2) and prctl(2) constants.
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE = 1, 38, 36, 4
#: The uid a process has in a user namespace that maps none of its ids.
OVERFLOW_ID = 65534
#: statvfs flags -> mount flags that a read-only remount must keep (they may be locked in a user namespace).
_KEEP_FLAGS = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, 1024),
    (os.ST_NODIRATIME, 2048),
    (os.ST_RELATIME, 1 << 21),
)
#: keyctl(2): syscall numbers and the operations used to give every trial empty keyrings.
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR, KEYCTL_GET_PERSISTENT = 1, 7, 22
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -3, -4, -5

#: Where the slot's workspace root appears inside every sandbox (a home directory inside the hidden
#: ``/home``); the backend may pick another (``config["sandbox_root"]``) when a kept path lies beneath it.
SANDBOX_ROOT = "/home/user"
#: The name a trial's own graded copy has inside its sandbox (its working directory).
PROJECT = "project"
#: The uid and gid the candidate has inside its own user namespace.
INSIDE_ID = 1000
CLONE_NEWUSER = 0x10000000

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
    root = config.get("sandbox_root", SANDBOX_ROOT)
    if not any(root.startswith(h.rstrip("/") + "/") for h in hidden):
        parent = os.path.dirname(root)
        os.makedirs(parent, exist_ok=True)
        mount("tmpfs", parent, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        hidden.append(parent)
    os.makedirs(root, exist_ok=True)
    mount(f"/proc/self/fd/{ws_fd}", root, None, MS_BIND)
    remount_read_only(root)
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
    return {
        "/proc/sys/kernel/shmmax": int(memory_mb) * 1024 * 1024,
        "/proc/sys/kernel/shmall": pages,
        "/proc/sys/kernel/shmmni": 16,
        "/proc/sys/kernel/msgmni": 16,
        "/proc/sys/fs/mqueue/queues_max": 16,
    }


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
    persistent = call(
        SYS_KEYCTL, ctypes.c_long(KEYCTL_GET_PERSISTENT), ctypes.c_long(-1), ctypes.c_long(KEY_SPEC_SESSION_KEYRING)
    )
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
        if mode != "process":
            workdir = shown_workdir(workdir)
        os.chdir(workdir)
        confine_server(out_w, limits, uid, mode, confine, scratch, chan_fd=chan_fd)
    except BaseException:
        os._exit(71)
    serve_confined(server_module, 3, workdir)


def confine_server(out_w, limits, uid, mode="root", confine=None, scratch=None, chan_fd=None, keep_fd=None):
    """Every step of :func:`run_server` but the working directory: standard descriptors, the channel at
    descriptor 3 (``/dev/null`` there while ``chan_fd`` is None), rlimits, ids, keyrings, the ordinary
    identity, no new privileges, a clean environment. ``keep_fd``, if given, is moved to descriptor 4 and
    kept open (a warm server's socket to its init, on which its trial arrives); every other is closed.

    A warm server (:func:`init.run_warm_init`) runs this before its trial exists, for the limits and uid
    the trial is expected to have; the zygote hands it only a trial with exactly those
    (:meth:`Zygote.spawn`). Raises on any failure (the caller ends the process)."""
    if keep_fd is not None and keep_fd < 5:  # out of the way of descriptors 0 to 4 before they are set
        keep_fd = fcntl.fcntl(keep_fd, fcntl.F_DUPFD, 5)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    os.dup2(devnull if chan_fd is None else chan_fd, 3)
    if keep_fd is None:
        os.closerange(4, 1 << 16)
    else:
        os.dup2(keep_fd, 4)
        os.closerange(5, 1 << 16)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
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
    if mode != "process":
        ordinary_identity(confine)
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


def serve_confined(server_module, chan, workdir):
    """In a confined server process (:func:`confine_server`), in ``workdir``: serve the runner on
    descriptor ``chan`` until it is done, then exit with the server's status. Never returns."""
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


def fresh_namespaces():
    """In a sandbox's init: a private mount namespace with a fresh ``/proc``, and a fresh IPC namespace
    (no SysV or POSIX IPC object of an earlier trial survives it)."""
    unshare(CLONE_NEWNS | CLONE_NEWIPC)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def shown_workdir(workdir):
    """Where the graded copy ``workdir`` (``ROOT/NAME`` in the zygote's view) appears in its own sandbox:
    ``ROOT/project``, whatever its name outside.

    >>> shown_workdir("/home/user/c123-4")
    '/home/user/project'
    """
    return os.path.join(os.path.dirname(workdir), PROJECT)


def ordinary_identity(confine, inside=INSIDE_ID):
    """In the candidate's process, after its uid is final: enter a user namespace of its own in which it is
    uid and gid ``inside`` (its outer ids stay what they were), then drop the capabilities that namespace
    grants. Best effort: where the kernel refuses unprivileged user namespaces the outer ids stay visible.
    Returns whether the namespace was entered."""
    # After setuid the process is not dumpable, so its /proc/self/*_map files belong to root; for the
    # moment of writing its own maps it must own them.
    prctl(PR_SET_DUMPABLE, 1)
    try:
        confine.enter_user_namespace(os.geteuid(), os.getegid(), inside=inside)
    except OSError:
        if os.getuid() == OVERFLOW_ID:  # in the namespace without a map: no identity at all, refuse
            raise
        return False
    finally:
        prctl(PR_SET_DUMPABLE, 0)
    confine.drop_capabilities()
    return True


def trial_view(workdir, limits, mode):
    """In a sandbox's init, after :func:`fresh_namespaces`: the IPC limits, only this trial's graded copy
    (at :func:`shown_workdir`) beside the backend's shared entries, and fresh ``/tmp``-like tmpfs mounts
    sized from the limits (:func:`prepare_view`, then :func:`show_graded_copy`)."""
    show_graded_copy(prepare_view(os.path.dirname(workdir), limits, mode), workdir)


def prepare_view(root, limits, mode):
    """Everything of a trial's view but its graded copy, which may not exist yet: a warm sandbox builds this
    ahead of its trial from the limits it expects (its trial must bring exactly those).

    The IPC limits; an empty read-only tmpfs over ``root`` (so no other candidate's copy is visible) holding
    the backend's shared entries, read-only, and the empty mount point :data:`PROJECT`; fresh tmpfs on
    ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (kept directories below them stay visible, read-only). Returns
    an ``O_PATH`` descriptor of ``root`` as it was before it was covered, for :func:`show_graded_copy`; init
    holds it, the candidate's process never does."""
    write_ipc_limits(limits["memory_mb"], mode)
    under = os.open(root, os.O_PATH | os.O_DIRECTORY)
    views = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in limits["shared"]]
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16k,mode=755")
    os.mkdir(os.path.join(root, PROJECT), 0o755)
    for path, fd in views:
        os.mkdir(path, 0o755)
        mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        remount_read_only(path)
        os.close(fd)
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=16k,mode=755")
    for path in TMP_DIRS:
        if os.path.isdir(path):
            kept = [
                (k, os.open(k, os.O_PATH | os.O_DIRECTORY))
                for k in limits.get("keep", ())
                if k.startswith(path + "/") and os.path.isdir(k)
            ]
            mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_size_mb(limits)}m,mode=1777")
            for k, fd in kept:
                os.makedirs(k, 0o755, exist_ok=True)
                mount(f"/proc/self/fd/{fd}", k, None, MS_BIND | MS_REC)
                remount_read_only(k)
                os.close(fd)
    return under


def show_graded_copy(under, workdir):
    """Bind the trial's graded copy (``workdir``, found below ``under``, the descriptor
    :func:`prepare_view` returned, which this closes) read-only at :func:`shown_workdir`."""
    try:
        fd = os.open(os.path.basename(workdir), os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=under)
    finally:
        os.close(under)
    try:
        mount(f"/proc/self/fd/{fd}", shown_workdir(workdir), None, MS_BIND | MS_REC)
    finally:
        os.close(fd)
    remount_read_only(shown_workdir(workdir))


#: The world-writable scratch directories a trial gets fresh.
TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


def tmp_size_mb(limits):
    """Size of each fresh scratch tmpfs, MiB: twice the file-size limit, between 1 and 64."""
    return max(1, min(64, 2 * int(limits["file_mb"])))


def write_ipc_limits(memory_mb, mode):
    """Write :func:`ipc_limits` into this IPC namespace (as root; in a user namespace on an older kernel
    they may not be ours to write, and are skipped)."""
    for path, value in ipc_limits(memory_mb).items():
        if os.path.exists(path):  # fs.mqueue is absent without POSIX message queues
            try:
                with open(path, "w") as handle:
                    handle.write(str(value))
            except OSError:
                if mode == "root":
                    raise


def probe(mode, confine):
    """``zygote.py --probe MODE``: can this user build a ``root`` or ``userns`` sandbox here?

    Exit status 0 when the namespaces, a fresh ``/proc`` and a tmpfs mount all work; else the error on
    stderr. ``confine``: :mod:`confine`, which enters the user namespace. Run once per process by
    :func:`rlvr_lab.sandbox.local.local_mode`.
    """
    try:
        if mode == "userns":
            confine.enter_user_namespace(os.getuid(), os.getgid())
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
