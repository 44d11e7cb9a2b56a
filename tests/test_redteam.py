"""Red team: every exploit of the gallery against the naive harness and against our verifier.

For each exploit of ``rlvr_lab/fixtures/exploits`` (section 17.3.1's three classes and the resource and escape
attacks of section 17.7): the naive harness rewards it wherever its class applies (its
``exploit.json`` says ``naive: pass``), our isolated verifier (backend "local") returns ``fail``, or
``pending``/``unknown`` where the attack is on the infrastructure, and the host is unharmed: the hidden
tests on disk are byte-identical, no process of the slot's uid or below the trusted runner is left,
no marked daemon survives, and nothing the exploit tried to write outside the slot exists.

Exploits that would harm this machine if run unconfined (fork bomb, memory bomb, output flood, killing
the harness's parent) are run against our verifier only (``naive: not-run``). The naive harness itself
runs with this test process moved into an empty scratch directory that holds a decoy test file, so an
exploit that looks at its parent's working directory finds the decoy, not this repository, and the
test asserts the decoy is untouched.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import signal
import time
from pathlib import Path

import pytest

from rlvr_lab.verifier import NaiveVerifier, Verifier
from rlvr_lab.verifier.fixtures import (
    exploit_info,
    fixtures_dir,
    list_exploits,
    list_references,
    load_exploit,
    load_fixture,
    load_reference,
)
from rlvr_lab.verifier.workspace import admission_error
from verifier_helpers import AnswerServer  # listens on the network exploit's fixed port

#: Exploits whose attack is on the harness itself: an infrastructure verdict is acceptable there.
INFRASTRUCTURE_ATTACKS = {"kill_parent"}
#: Exploits that spend a whole wall-clock budget (a few seconds) before they are stopped.
SLOW_EXPLOITS = {"fork_bomb", "infinite_loop"}
#: Lock file shared with tests/test_docker_backend.py: one test at a time may own the sentinel paths.
SENTINEL_LOCK = "/tmp/rlvr-redteam-sentinels.lock"
#: Port the network exploit phones; a listener here plays the outside world.
#: A test file placed where the naive harness's caller sits; no exploit may change it.
DECOY = 'def test_decoy():\n    assert 1 + 1 == 2, "decoy body"\n'


def _hidden_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((fixtures_dir() / "pool_repair_01" / "hidden").rglob("*")):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _proc_table() -> dict[int, tuple[int, int, str]]:
    """``{pid: (ppid, real uid, comm)}`` of every host process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            table[int(name)] = (int(fields["PPid"].split()[0]), int(fields["Uid"].split()[0]), fields["Name"].strip())
        except (KeyError, ValueError, IndexError):
            continue
    return table


def _descendants(pid: int, table: dict[int, tuple[int, int, str]]) -> set[int]:
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (ppid, _, _) in table.items() if ppid in frontier} - found
        found |= frontier
    return found


def _pid_ns(pid: int) -> str:
    """The PID namespace of ``pid`` ('' when it cannot be read, which counts as a foreign one)."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return ""


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _slot_uid(runner_pid: int) -> int:
    """The slot uid our runner holds (it keeps a lock file named after it open)."""
    for fd in os.listdir(f"/proc/{runner_pid}/fd"):
        try:
            target = os.readlink(f"/proc/{runner_pid}/fd/{fd}")
        except OSError:
            continue
        match = re.search(r"rlvr-verifier-uids/(\d+)\.lock$", target)
        if match:
            return int(match.group(1))
    raise AssertionError(f"runner {runner_pid} holds no slot uid lock")


def _marked(comm: str, table: dict[int, tuple[int, int, str]]) -> list[int]:
    """Host processes named ``comm``, leaving out processes inside docker containers (other tests')."""
    found = []
    for pid, (_, _, name) in table.items():
        if name != comm:
            continue
        try:
            if "/docker/" in Path(f"/proc/{pid}/cgroup").read_text():
                continue
        except OSError:
            continue
        found.append(pid)
    return found


@pytest.fixture(scope="module")
def pool_fx():
    return load_fixture("pool_repair_01")


@pytest.fixture(scope="module")
def ours():
    verifier = Verifier(backend="local", retries=0)
    yield verifier
    verifier.close()


@pytest.fixture(scope="module")
def naive():
    return NaiveVerifier(timeout_s=60)


@pytest.fixture
def answer_server():
    server = AnswerServer(load_reference("pool_repair_01", "good").files["pool_fixture/pool.py"].encode())
    yield server
    server.close()


@contextlib.contextmanager
def sentinel_lock(path: str):
    """Serialize tests (across xdist workers) that look at the same host sentinel path."""
    if not path:
        yield
        return
    # read-only is enough for flock, so a lock file another user created (a shared /tmp) still works
    handle = os.open(SENTINEL_LOCK, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


def _assert_host_unharmed(verifier: Verifier, hidden_before: str, sentinel: str, marker: str) -> None:
    assert _hidden_digest() == hidden_before, "hidden tests on disk changed"
    runner = verifier.runner_pid
    assert runner is not None and os.path.exists(f"/proc/{runner}")
    table = _proc_table()
    # Below the runner only trusted helpers may stay: the sandbox zygote (with nothing under it but, in a
    # user namespace, its own PID-namespace init, itself with nothing under it), at most one sandbox the
    # zygote built ahead of the next trial (an init named rlvr-warm-init, a child of a zygote, with one idle
    # server named rlvr-warm-srv under it, already confined as the slot uid, and nothing under that) and
    # pytest processes the runner forked ahead of time (same command line and uid as the runner).
    warm = {p for p in _descendants(runner, table) if table[p][2] in ("rlvr-warm-init", "rlvr-warm-srv")}
    inits = [p for p in warm if table[p][2] == "rlvr-warm-init"]
    assert len(inits) <= 1, f"more than one warm sandbox: {sorted(warm)}"
    for p in warm:
        parent = table[p][0]
        assert "sandbox/zygote.py" in _cmdline(parent) if p in inits else parent in inits, f"stray {table[p][2]} {p}"
        assert not _descendants(p, table) - warm, f"processes under warm sandbox process {p}"
    table = {p: row for p, row in table.items() if p not in warm}
    if verifier.sandbox_uid is not None:  # root: the slot uid runs nothing but the warm server (confined ahead)
        uid = _slot_uid(runner)
        assert [p for p, (_, u, _) in table.items() if u == uid] == [], f"processes of slot uid {uid} survive"
    runner_cmd = _cmdline(runner)
    for pid in _descendants(runner, table):
        ppid, owner, _ = table[pid]
        if "sandbox/zygote.py" in _cmdline(pid):
            below = _descendants(pid, table)
            if "user-ns" in verifier.isolation and "sandbox/zygote.py" not in _cmdline(ppid):
                assert len(below) <= 1 and not any(_descendants(c, table) for c in below), (
                    f"sandbox processes survive under zygote {pid}"
                )
            elif "user-ns" not in verifier.isolation or "sandbox/zygote.py" not in _cmdline(table[ppid][0]):
                assert below == set(), f"sandbox processes survive under zygote {pid}"
        else:
            assert ppid == runner and owner == table[runner][1] and _cmdline(pid) == runner_cmd, (
                f"process {pid} ({_cmdline(pid)[:80]!r}) survives below the runner"
            )
    if marker:  # a sandbox's process lives in the sandbox's PID namespace; one in ours was started by a
        # naive run elsewhere (a parallel test, or a chapter or lab that runs the naive harness). A daemon
        # that a parallel test's sandbox (docker, Ray) is tearing down is gone within moments, while an
        # escaped one lives on (the gallery's daemon sleeps 30 s)
        ours_ns = _pid_ns(os.getpid())
        deadline = time.monotonic() + 5
        escaped = [p for p in _marked(marker, table) if _pid_ns(p) != ours_ns]
        while escaped and time.monotonic() < deadline:
            time.sleep(0.1)
            escaped = [p for p in _marked(marker, _proc_table()) if _pid_ns(p) != ours_ns]
        assert escaped == [], f"a process named {marker} survives a sandbox"
    if sentinel:
        assert not os.path.exists(sentinel), f"the exploit wrote {sentinel} on the host"


def _params():
    out = []
    for name in list_exploits():
        marks = [pytest.mark.slow] if name in SLOW_EXPLOITS else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out


@pytest.mark.parametrize("name", _params())
def test_exploit(name, pool_fx, ours, naive, request, tmp_path, monkeypatch):
    with sentinel_lock(exploit_info(name).sentinel):
        _exploit_case(name, pool_fx, ours, naive, request, tmp_path, monkeypatch)


def _exploit_case(name, pool_fx, ours, naive, request, tmp_path, monkeypatch):
    info = exploit_info(name)
    candidate = load_exploit(name)
    hidden_before = _hidden_digest()
    if info.sentinel and os.path.exists(info.sentinel):
        os.unlink(info.sentinel)
    # only the network exploit phones out; binding the port per test keeps xdist workers apart
    server = request.getfixturevalue("answer_server") if name == "network_fetch" else None
    calls_before = server.connections if server else 0

    # ours: isolated, sandboxed, all-pass over K trials
    verdict = ours.verify(candidate, pool_fx)
    allowed = ("fail", "pending", "unknown") if name in INFRASTRUCTURE_ATTACKS else ("fail",)
    assert verdict.outcome in allowed, f"{name}: {verdict.outcome} ({verdict.stop_reason})"
    assert verdict.backend in ("local", "local-userns")  # root, or an ordinary user
    if admission_error(candidate, pool_fx):
        assert verdict.stop_reason.startswith("admission: "), verdict.stop_reason
        assert verdict.trials == ()
    else:
        assert verdict.trials and verdict.trials[-1].outcome != "pass"
    time.sleep(0.05)  # let the kernel finish reaping before we look
    _assert_host_unharmed(ours, hidden_before, info.sentinel, info.marker)
    if server:
        assert server.connections == calls_before, "a sandboxed candidate reached the host network"

    if info.naive == "not-run":
        return
    # naive: the harness many projects use, called from a scratch directory holding a decoy test
    decoy = tmp_path / "tests" / "test_decoy.py"
    decoy.parent.mkdir()
    decoy.write_text(DECOY)
    monkeypatch.chdir(tmp_path)
    harness = NaiveVerifier(timeout_s=4) if name == "infinite_loop" else naive
    naive_verdict = harness.verify(candidate, pool_fx)
    try:
        assert naive_verdict.outcome == info.naive, (
            f"{name}: naive {naive_verdict.outcome} ({naive_verdict.stop_reason})"
        )
        if name == "network_fetch":
            assert server.connections > calls_before, "the naive run did not reach the network"
        if name == "read_hidden_via_proc":
            loot = Path(info.sentinel).read_text()
            assert "def test_release_wakes_a_waiting_thread" in loot, "the naive run did not leak the hidden tests"
        if info.marker:
            deadline = time.monotonic() + 5
            while not _marked(info.marker, _proc_table()) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _marked(info.marker, _proc_table()), "the daemon did not outlive the naive run"
    finally:
        if info.marker:
            for pid in _marked(info.marker, _proc_table()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if info.sentinel and os.path.exists(info.sentinel):
            os.unlink(info.sentinel)
    assert decoy.read_text() == DECOY, "an exploit run by the naive harness changed its caller's files"
    assert _hidden_digest() == hidden_before


def test_known_good_patch_passes_every_trial(pool_fx, ours):
    verdict = ours.verify(load_reference("pool_repair_01", "good"), pool_fx)
    assert verdict.outcome == "pass", verdict.stop_reason
    assert len(verdict.trials) == pool_fx.trials
    assert all(t.outcome == "pass" for t in verdict.trials)
    assert len({t.seed for t in verdict.trials}) == pool_fx.trials, "each trial gets its own seed"


@pytest.mark.parametrize("patch", [n for n, e in list_references("pool_repair_01").items() if e == "fail"])
def test_known_bad_patch_is_rejected_under_the_all_pass_rule(patch, pool_fx, ours):
    """For bad_racy_narrow_window this holds with probability 1 - q**K (q about 0.1, K = 8: 1 - 1e-7);
    the other known-bad patches fail every trial of repair_accept_v3."""
    verdict = ours.verify(load_reference("pool_repair_01", patch), pool_fx)
    assert verdict.outcome == "fail", f"{patch} accepted: {verdict.stop_reason}"
    assert verdict.trials[-1].outcome == "fail"
    assert verdict.stop_reason.startswith("rejected at trial")


@pytest.mark.slow
def test_racy_patch_passes_a_single_trial_only_sometimes(pool_fx, ours):
    """The narrow-window racy patch's per-trial pass probability q lies strictly between 0 and 1 (measured
    about 0.1 here; 60 runs see no pass with probability 0.875**60, about 3e-4)."""
    outcomes = [
        ours.verify(load_reference("pool_repair_01", "bad_racy_narrow_window"), pool_fx, trials=1).outcome
        for _ in range(60)
    ]
    passes = outcomes.count("pass")
    assert outcomes.count("fail") + passes == 60
    assert 0 < passes < 60, f"q estimate {passes}/60 is not intermittent"
