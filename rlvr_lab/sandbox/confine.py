"""Confinement steps that do not need root (section 17.7; standard library only, loaded by the zygote by
path).

Without root the local backend falls back to what an ordinary user may still do, and every verdict lists
the layers in force: :func:`enter_user_namespace` and :func:`drop_capabilities` (``local-userns``); for
``process`` (no namespaces), :func:`landlock` (filesystem allow-list, no TCP, no signals outside) where
the kernel has it, and :func:`deny_network_sockets` (seccomp: only Unix sockets) on every kernel.
Syscall numbers are the generic ones (the same on x86-64 and arm64).
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


def enter_user_namespace(uid, gid, inside=0):
    """Unshare a user namespace and map ``uid``/``gid`` (the caller's) to ``inside`` (root by default)."""
    if _libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        _fail("unshare(CLONE_NEWUSER)")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{inside} {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{inside} {gid} 1")


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
    version = _libc.syscall(
        SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)
    )
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
    ruleset = _libc.syscall(SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
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
                if (
                    _libc.syscall(
                        SYS_LANDLOCK_ADD_RULE,
                        ctypes.c_int(ruleset),
                        ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                        ctypes.byref(rule),
                        ctypes.c_uint32(0),
                    )
                    != 0
                ):
                    _fail(f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return layers


#: seccomp: the audit arch and the syscall numbers of socket(2) and io_uring_setup(2) per machine.
SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
AF_UNIX, EACCES = 1, 13
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
RET_ALLOW, RET_ERRNO, RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def network_filter(machine):
    """The classic-BPF program of :func:`deny_network_sockets`, as (code, jt, jf, k) rows, or None.

    ``seccomp_data`` is read at offset 0 (syscall number), 4 (audit arch) and 16 (low half of the first
    argument, little-endian). A foreign arch (e.g. i386 calls from x86-64) kills the process; x32 numbers
    (bit 30 set) and io_uring_setup (which could open sockets without socket(2)) get EACCES; socket(2)
    gets EACCES unless its domain is AF_UNIX.
    """
    if machine not in SECCOMP_ARCH:
        return None
    arch, nr_socket, nr_io_uring = SECCOMP_ARCH[machine]
    return [
        (_LD_ABS, 0, 0, 4),  # 0  A = arch
        (_JEQ, 1, 0, arch),  # 1  native arch: skip the kill
        (_RET, 0, 0, RET_KILL_PROCESS),  # 2
        (_LD_ABS, 0, 0, 0),  # 3  A = syscall number
        (_JGE, 5, 0, 0x40000000),  # 4  x32 call -> 10
        (_JEQ, 4, 0, nr_io_uring),  # 5  io_uring_setup -> 10
        (_JEQ, 0, 2, nr_socket),  # 6  socket -> 7, anything else -> 9
        (_LD_ABS, 0, 0, 16),  # 7  A = domain
        (_JEQ, 0, 1, AF_UNIX),  # 8  AF_UNIX -> 9, else -> 10
        (_RET, 0, 0, RET_ALLOW),  # 9
        (_RET, 0, 0, RET_ERRNO | EACCES),  # 10
    ]


def deny_network_sockets():
    """Install :func:`network_filter` on this process and its future children; return the layer name.

    Needs no-new-privileges set first. Raises OSError where the machine or kernel has no seccomp filter.
    """
    rows = network_filter(os.uname().machine)
    if rows is None:
        raise OSError(0, f"no seccomp filter for {os.uname().machine}")
    program = (_SockFilter * len(rows))(*[_SockFilter(*row) for row in rows])
    fprog = _SockFprog(len(rows), program)
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        _fail("prctl(PR_SET_SECCOMP)")
    return "seccomp-no-inet"


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
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) in pids:
            found.append(int(name))
    return found


def process_count(uid):
    """How many tasks (threads included) ``uid`` owns now: RLIMIT_NPROC counts every task of the real
    uid, not only the sandbox's, so the process backend adds this to the fixture's process limit."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return count
