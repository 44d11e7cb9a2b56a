"""Backend selection and the gallery per backend: as root, as an ordinary user, without user namespaces.

``backend="auto"`` picks the strongest backend that works (``local`` as root, ``local-userns`` as an
ordinary user where unprivileged user namespaces work, the weaker ``process`` otherwise), prints one line
naming it, and every verdict records the backend and its isolation layers. The red-team gallery's
expected verdict per backend is written down in ``rlvr_lab/fixtures/exploits/backends.json`` (and as a
table in that directory's README); the slow tests run the whole gallery on each backend through
``tests/backend_gallery.py`` and compare.

The ordinary user: when this suite runs as root, a test user (:data:`STUDENT`) is created once with
``useradd`` and the gallery runs under ``setpriv`` as that user, with a Python it can execute (the
suite's own interpreter when others may run it, else a venv under /tmp made from the system Python with
the same pytest). "User namespaces disabled" is made for that subprocess alone: it enters a user
namespace of its own and sets ``user.max_user_namespaces`` to 0 there, which binds that namespace and
its children only (the host's setting is untouched and is asserted unchanged). When the suite itself
runs as an ordinary user, the gallery runs as that user directly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier import verifier as verifier_mod
from rlvr_lab.verifier.fixtures import exploits_dir, list_exploits, load_fixture, load_reference
from rlvr_lab.sandbox.local import host_root
from verifier_helpers import AnswerServer  # listens on the network exploit's fixed port

ROOT = Path(__file__).resolve().parents[1]
HELPER = Path(__file__).resolve().parent / "backend_gallery.py"
#: The ordinary user the root-run suite creates for these tests.
STUDENT = "rlvr-student"
#: Lock file shared with tests/test_redteam.py: one test at a time owns the sentinel paths and the port.
SENTINEL_LOCK = "/tmp/rlvr-redteam-sentinels.lock"


def expectations() -> dict[str, dict[str, list[str]]]:
    """``{backend: {candidate: allowed outcomes}}`` from the gallery's ``backends.json``."""
    data = json.loads((exploits_dir() / "backends.json").read_text())
    return {
        b: {name: ([v] if isinstance(v, str) else v) for name, v in table.items()}
        for b, table in data["expected"].items()
    }


def test_expectations_cover_every_exploit_and_backend():
    table = expectations()
    assert set(table) == {"local", "local-userns", "process", "process-no-landlock"}
    for backend, rows in table.items():
        assert set(rows) == {"good", "bad_racy_snapshot", *list_exploits()}, backend
        assert rows["good"] == ["pass"] and rows["bad_racy_snapshot"] == ["fail"]
    readme = (exploits_dir() / "README.md").read_text().splitlines()
    columns = ["local", "local-userns", "process", "process-no-landlock"]
    assert f"| exploit | {' | '.join(columns)} |" in readme
    for name in table["local"]:  # the README's per-backend table says what backends.json says
        row = f"| {name} | " + " | ".join("/".join(table[c][name]) for c in columns) + " |"
        assert row in readme, row


def test_unknown_backend_is_a_value_error():
    with pytest.raises(ValueError, match="backend must be one of"):
        Verifier(backend="chroot")


@pytest.mark.skipif(not host_root(), reason="auto picks the root local backend only when run as root")
def test_auto_as_root_picks_local_and_says_so(capfd, monkeypatch):
    monkeypatch.setattr(verifier_mod, "ANNOUNCED", set())
    with Verifier(backend="auto", retries=0) as v:
        verdict = v.verify(load_reference("pool_repair_01", "good"), load_fixture("pool_repair_01"), trials=1)
    err = capfd.readouterr().err
    assert err.count("rlvr-lab verifier: backend auto -> local;") == 1, err
    assert verdict.outcome == "pass" and verdict.backend == "local"
    assert {"slot-uid", "pid-ns", "net-ns", "mount-ns"} <= set(verdict.isolation)


_SOCKET_PROBE = r"""
import ctypes, json, os, socket, sys
from rlvr_lab.sandbox import confine
ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
layer = confine.deny_network_sockets()
out = {"layer": layer}
for name, family, kind in [("inet_tcp", socket.AF_INET, socket.SOCK_STREAM), ("inet_udp", socket.AF_INET, socket.SOCK_DGRAM),
                           ("inet6_tcp", socket.AF_INET6, socket.SOCK_STREAM), ("netlink", socket.AF_NETLINK, socket.SOCK_RAW),
                           ("unix", socket.AF_UNIX, socket.SOCK_STREAM)]:
    try:
        socket.socket(family, kind).close()
        out[name] = "open"
    except OSError as exc:
        out[name] = exc.errno
a, b = socket.socketpair()
a.sendall(b"x")
out["socketpair"] = b.recv(1).decode()
print(json.dumps(out))
"""


@pytest.mark.skipif(
    os.uname().machine not in ("x86_64", "aarch64"), reason="the filter is written for x86-64 and arm64"
)
def test_seccomp_filter_refuses_every_socket_but_a_unix_one():
    """The process backend's network guard on its own (it must hold where Landlock has no TCP rules)."""
    import errno

    done = subprocess.run(
        [sys.executable, "-c", _SOCKET_PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out == {
        "layer": "seccomp-no-inet",
        "inet_tcp": errno.EACCES,
        "inet_udp": errno.EACCES,
        "inet6_tcp": errno.EACCES,
        "netlink": errno.EACCES,
        "unix": "open",
        "socketpair": "x",
    }


def test_seccomp_program_jumps_stay_inside_it():
    from rlvr_lab.sandbox.confine import network_filter

    for machine in ("x86_64", "aarch64"):
        rows = network_filter(machine)
        for i, (code, jt, jf, _) in enumerate(rows):
            if code in (0x15, 0x35):  # conditional jumps land on a later row of the program
                assert i + 1 + max(jt, jf) < len(rows)
        assert rows[-1][0] == 0x06 and rows[-2][0] == 0x06  # it ends in returns
    assert network_filter("riscv64") is None


# -- running the gallery as an ordinary user ---------------------------------------------------------
def _readable_by_others(path: str) -> bool:
    p = Path(path).resolve()
    for part in [p, *p.parents]:
        mode = part.stat().st_mode
        if not mode & (0o001 if part.is_dir() else 0o005):
            return False
    return True


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    """``(argv prefix, python)`` that runs a command as an ordinary user (see the module docstring)."""
    if os.geteuid() != 0:
        return [], sys.executable
    if shutil.which("setpriv") is None or shutil.which("useradd") is None:
        pytest.skip("running as root without setpriv/useradd: cannot become an ordinary user here")
    if subprocess.run(["id", STUDENT], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", STUDENT], check=True)
    uid = int(subprocess.run(["id", "-u", STUDENT], capture_output=True, text=True).stdout)
    gid = int(subprocess.run(["id", "-g", STUDENT], capture_output=True, text=True).stdout)
    python = sys.executable
    if not _readable_by_others(os.path.realpath(getattr(sys, "_base_executable", sys.executable))):
        python = _student_venv(tmp_path_factory)
    if not _readable_by_others(str(ROOT / "rlvr_lab")):
        pytest.skip(f"{ROOT} is not readable by other users")
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"], python


def _student_venv(tmp_path_factory) -> str:
    """A venv under /tmp from the system Python, with this suite's pytest (the runner's private API)."""
    base = shutil.which("python3", path="/usr/bin:/bin")
    if base is None:
        pytest.skip("this interpreter lives where other users cannot run it, and there is no /usr/bin/python3")
    venv = Path("/tmp") / f"rlvr-student-venv-{os.getpid()}"
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin/pip"), "install", "-q", f"pytest=={pytest.__version__}", "numpy"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"could not install pytest into a venv for the test user: {done.stderr[-300:]}")
    os.chmod(venv, 0o755)
    return str(venv / "bin/python")


def _userns_works(student) -> bool:
    prefix, _ = student
    return (
        subprocess.run(prefix + ["unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode == 0
    )


def run_gallery(student, backend: str, no_userns: bool = False, names: tuple[str, ...] = ()):
    """Run the gallery helper as the student; returns (rows by name, stderr, answer-server connections)."""
    import fcntl

    prefix, python = student
    inner = [python, str(HELPER), backend, *names]
    if no_userns:
        inner = [
            "unshare",
            "--user",
            "--map-root-user",
            "sh",
            "-c",
            'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"',
            "sh",
            *inner,
        ]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    host_limit = Path("/proc/sys/user/max_user_namespaces").read_text()
    lock = os.open(SENTINEL_LOCK, os.O_RDONLY | os.O_CREAT, 0o644)  # flock needs no write access
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        server = AnswerServer(load_reference("pool_repair_01", "good").files["pool_fixture/pool.py"].encode())
        try:
            done = subprocess.run(prefix + inner, capture_output=True, text=True, env=env, cwd="/tmp", timeout=900)
        finally:
            server.close()
    finally:
        os.close(lock)
    assert Path("/proc/sys/user/max_user_namespaces").read_text() == host_limit, "the host's limit changed"
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {row["name"]: row for row in map(json.loads, done.stdout.splitlines())}
    return rows, done.stderr, server.connections


def _check(rows: dict, backend: str, connections: int) -> None:
    expected = expectations()[backend]
    wrong = {n: (r["outcome"], r["stop"]) for n, r in rows.items() if r["outcome"] not in expected[n]}
    assert not wrong, f"{backend}: outcomes differ from backends.json: {wrong}"
    for row in rows.values():
        assert row["backend"] == backend and not row["hidden_changed"], row
        if backend != "process-no-landlock":  # the weakest mode's losses are recorded, not asserted away
            assert not row["sentinel_left"] and not row["marker_alive"], row
    if "network_fetch" in rows:  # every backend closes the network (the process ones by seccomp)
        assert connections == 0, "a sandboxed candidate reached the host network"


@pytest.mark.slow
def test_gallery_as_an_ordinary_user_with_user_namespaces(student):
    if not _userns_works(student):
        pytest.skip("unprivileged user namespaces are unavailable to an ordinary user here")
    rows, err, connections = run_gallery(student, "auto")
    backend = rows["good"]["backend"]
    assert backend in ("local-userns", "local"), err  # "local" when the suite runs as a root that is not us
    assert f"backend auto -> {backend}" in err
    assert "user-ns" in rows["good"]["isolation"] and "slot-uid" not in rows["good"]["isolation"]
    _check(rows, backend, connections)


@pytest.mark.slow
def test_gallery_with_user_namespaces_disabled_falls_back_to_process_and_says_so(student):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to disable user namespaces for one subprocess")
    # where an ordinary user has no user namespaces anyway (Ubuntu's AppArmor default), run as is
    rows, err, connections = run_gallery(student, "auto", no_userns=_userns_works(student))
    assert [line for line in err.splitlines() if "backend auto ->" in line] == [
        "rlvr-lab verifier: backend auto -> process (weaker: no namespaces); isolation: "
        + ", ".join(rows["good"]["isolation"])
    ], err
    assert {"process-group", "subreaper", "rlimits", "deadline", "output-cap", "seccomp-no-inet"} <= set(
        rows["good"]["isolation"]
    )
    if "landlock-fs" not in rows["good"]["isolation"]:
        pytest.skip("this kernel has no Landlock: the process backend is process-no-landlock here")
    _check(rows, "process", connections)


@pytest.mark.slow
def test_gallery_on_the_process_backend_without_landlock(student):
    """The weakest mode: what it loses is written down and measured, not hidden (see backends.json)."""
    rows, _, connections = run_gallery(student, "process-no-landlock")
    _check(rows, "process-no-landlock", connections)
    assert rows["good"]["isolation"] == [
        "process-group",
        "subreaper",
        "scratch-dir",
        "rlimits",
        "deadline",
        "output-cap",
        "no-new-privs",
        "seccomp-no-inet",
    ]
