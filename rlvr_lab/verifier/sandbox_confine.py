"""Confinement steps that do not need root (section 17.7; stdlib only, loaded by the zygote by path).

The local backend runs as root where it can (namespaces plus a per-slot uid). Without root it falls back,
in order, to what an ordinary user may still do, and every verdict lists the layers that were in force:

* **user namespace** (``local-userns``): :func:`enter_user_namespace` maps the caller to root inside a
  fresh user namespace, so the zygote may then create its mount, PID, network, IPC and UTS namespaces as
  before; the candidate process then gives up every capability (:func:`drop_capabilities`), so it cannot
  undo the mounts that hide the host. There is no per-slot uid: the candidate keeps the caller's uid.
* **process** (no namespaces at all): the candidate runs in its own session and process group under a
  child subreaper, with rlimits and a private scratch directory, and, where the kernel has Landlock,
  :func:`landlock` takes away the filesystem outside a read-only allow-list, TCP connect and bind, and
  signals or ptrace to processes outside the sandbox.

Linux syscall numbers below are the generic ones (the same on x86-64 and arm64).
"""

import ctypes
import os

PR_CAPBSET_DROP = 24
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
#: Landlock filesystem rights by ABI version (each ABI adds the bits after the previous one's).
FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1, 2, 4, 8
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2
#: Directories a confined candidate may read and execute from (besides the interpreter's prefix).
READ_ONLY_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/proc", "/dev")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _fail(what):
    err = ctypes.get_errno()
    raise OSError(err, f"{what}: {os.strerror(err)}")


def enter_user_namespace(uid, gid):
    """Unshare a user namespace and map ``uid``/``gid`` (the caller's) to root inside it."""
    if _libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        _fail("unshare(CLONE_NEWUSER)")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"0 {gid} 1")


def drop_capabilities():
    """Empty the bounding set and the effective, permitted and inheritable sets of this process."""
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    number = SYS_CAPSET.get(os.uname().machine)
    if number is None or _libc.syscall(number, header, data) != 0:
        _fail("capset")


def landlock_abi():
    """The kernel's Landlock ABI version, 0 where Landlock is missing or disabled."""
    version = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                            ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(0, int(version))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock(read_only, writable, abi):
    """Restrict this process (and its future children) with Landlock; return the layers in force.

    ``read_only``: directories readable and executable; ``writable``: directories with every right.
    ``/dev/null`` stays writable. TCP bind/connect are refused from ABI 4 and signals/abstract Unix
    sockets to processes outside the sandbox from ABI 6; ptrace of outside processes is refused always.
    Needs no-new-privileges set first.
    """
    all_fs = (1 << FS_BITS_BY_ABI.get(abi, 16)) - 1
    fields = [ctypes.c_uint64(all_fs)]
    layers = ["landlock-fs"]
    if abi >= 4:
        fields.append(ctypes.c_uint64(NET_BIND_TCP | NET_CONNECT_TCP))
        layers.append("landlock-no-tcp")
    if abi >= 6:
        fields.append(ctypes.c_uint64(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL))
        layers.append("landlock-signal-scope")
    attr = (ctypes.c_uint64 * len(fields))(*[f.value for f in fields])
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(ctypes.sizeof(attr)),
                            ctypes.c_uint32(0))
    if ruleset < 0:
        _fail("landlock_create_ruleset")
    file_rights = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (FS_TRUNCATE if abi >= 3 else 0)
    try:
        rules = [(p, FS_EXECUTE | FS_READ_FILE | FS_READ_DIR) for p in read_only]
        rules += [(p, all_fs) for p in writable]
        rules += [("/dev/null", FS_READ_FILE | FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0))]
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= file_rights
                rule = _PathBeneath(rights, fd)
                if _libc.syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                                 ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    _fail(f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return layers


def children_of(pids):
    """Pids of processes (zombies included) whose parent is in ``pids`` (a /proc scan)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) in pids:
            found.append(int(name))
    return found


def process_count(uid):
    """How many processes ``uid`` owns now (RLIMIT_NPROC counts them all, not only the sandbox's)."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count
