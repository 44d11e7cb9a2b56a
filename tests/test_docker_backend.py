"""The docker backend, run for real where a Docker engine answers (skipped with the reason elsewhere)."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from rlvr_lab.sandbox.backend import SandboxExit
from rlvr_lab.sandbox.clock import STRETCH_MAX
from rlvr_lab.verifier import SandboxUnavailable, Verifier
from rlvr_lab.verifier.fixtures import exploit_info, fixtures_dir, load_exploit, load_fixture, load_reference
from rlvr_lab.verifier.proxy import SERVER_PATH
from rlvr_lab.verifier.schema import Limits
from verifier_helpers import check_busy_host

pytestmark = pytest.mark.docker

#: Exploits run on the docker backend: every attack that gets past admission except infinite_loop,
#: whose timeout path fork_bomb already takes; admission refusals are backend-independent, one is kept.
DOCKER_EXPLOITS = (
    "conftest_report_patch",
    "module_report_patch",
    "exit_sys",
    "exit_os",
    "eq_always_true",
    "eq_subclass",
    "tests_rewritten_at_import",
    "read_hidden_via_proc",
    "forge_junit",
    "network_fetch",
    "memory_bomb",
    "daemon_setsid",
    "kill_parent",
    "stdout_flood",
    "fork_bomb",
    "hash_collision_reply",
)


@pytest.fixture(scope="module")
def engine():
    from rlvr_lab.sandbox.docker_image import docker_client

    try:
        client = docker_client()
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    return client


@pytest.fixture(scope="module")
def image(engine):
    from rlvr_lab.sandbox.docker_image import build_image

    return build_image(engine)


@pytest.fixture(scope="module")
def ours(image):
    verifier = Verifier(backend="docker", retries=0)
    yield verifier
    verifier.close()


def _sandbox_containers(engine, slot_dir: Path) -> list:
    """Sandbox containers of the slot under ``slot_dir`` (other tests may run their own meanwhile)."""
    found = engine.containers.list(all=True, filters={"label": "rlvr-lab=sandbox"})
    return [c for c in found if c.labels.get("rlvr-lab.slot", "").startswith(str(Path(slot_dir).resolve()))]


def test_no_engine_is_reported_with_its_address(monkeypatch):
    from rlvr_lab.sandbox.docker_image import docker_client

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable, match="no Docker engine answers at unix:///nonexistent/docker.sock"):
        docker_client(timeout_s=2)


def test_image_is_small_and_holds_only_python(engine, image):
    from rlvr_lab.sandbox.docker_image import build_image

    assert build_image(engine) == image  # idempotent: present, not rebuilt
    size_mb = engine.images.get(image).attrs["Size"] / 1e6
    assert size_mb < 200
    out = engine.containers.run(
        image,
        [
            "/opt/python/bin/python3",
            "-I",
            "-S",
            "-c",
            "import os, sys; print(sys.version_info[:2], os.path.exists('/bin/sh'))",
        ],
        remove=True,
        network_mode="none",
        user="65534:65534",
        environment={"LD_LIBRARY_PATH": "/opt/python/lib"},
    )
    assert out.decode().strip() == "(3, 11) False"


def test_container_is_locked_down_and_removed(engine, image, tmp_path):
    from rlvr_lab.sandbox.docker import DockerBackend

    backend = DockerBackend(tmp_path / "slot", SERVER_PATH)
    ws = backend.workspace_root / "w1"
    ws.mkdir()
    (ws / "probe.py").write_text("import os\ndef who():\n    return os.getuid()\n")
    limits = Limits(wall_s=20, memory_mb=128, processes=8, output_kb=16)
    session = backend.launch(ws, limits, seed=1)
    try:
        attrs = engine.containers.get(session.container.id).attrs
        host = attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
        assert "no-new-privileges" in host["SecurityOpt"]
        assert host["Memory"] == 128 * 1024 * 1024 and host["MemorySwap"] == 128 * 1024 * 1024
        assert host["PidsLimit"] == 8
        assert attrs["Config"]["User"] == "1000:1000" and attrs["Config"]["Hostname"] == "localhost"
        binds = {b.split(":")[1]: b.split(":")[2] for b in host["Binds"]}
        assert binds["/home/user/project"] == "ro" and attrs["Config"]["WorkingDir"] == "/home/user/project"
        assert [c.id for c in _sandbox_containers(engine, tmp_path)] == [session.container.id]
    finally:
        record = session.kill()
    assert record == SandboxExit("killed", output=record.output)
    assert session.kill() is record  # idempotent
    assert _sandbox_containers(engine, tmp_path) == []
    backend.close()


def test_timeout_and_outside_kill_are_told_apart(engine, image, tmp_path):
    from rlvr_lab.sandbox.docker import DockerBackend

    backend = DockerBackend(tmp_path / "slot", SERVER_PATH)
    ws = backend.workspace_root / "w1"
    ws.mkdir()
    session = backend.launch(ws, Limits(wall_s=1.0), seed=1)
    time.sleep(STRETCH_MAX * 1.0 + 0.5)  # past the latest deadline a busy host can stretch 1 s to
    assert session.kill().kind == "timeout"
    session = backend.launch(ws, Limits(wall_s=20.0), seed=2)
    engine.containers.get(session.container.id).kill()  # an operator, not the candidate
    time.sleep(0.5)
    record = session.kill()
    assert record.kind == "infra" and not record.candidate_fault
    assert _sandbox_containers(engine, tmp_path) == []
    backend.close()


def test_reference_patches_on_docker(ours):
    fx = load_fixture("pool_repair_01")
    good = ours.verify(load_reference("pool_repair_01", "good"), fx)
    assert good.outcome == "pass", good.stop_reason
    assert good.backend == "docker" and len(good.trials) == fx.trials
    # the racy patch's rejection is statistical (q about 0.35 here too); tests/test_redteam.py asserts it
    verdict = ours.verify(load_reference("pool_repair_01", "bad_unlocked_notify"), fx)
    assert verdict.outcome == "fail", verdict.stop_reason


@pytest.mark.parametrize("patch", ["bad_patched_wait", "bad_patched_sleep", "bad_patched_lock"])
def test_polling_hidden_in_the_standard_library_is_rejected_on_docker(patch, ours):
    """The candidate patches threading in its own container; the trusted side counts its wakeups from the
    host (the container's processes under docker's init) and rejects it at the first trial."""
    fx = load_fixture("pool_repair_01")
    verdict = ours.verify(load_reference("pool_repair_01", patch), fx)
    assert verdict.outcome == "fail" and verdict.stop_reason.startswith("rejected at trial 1 ")
    assert "it polls instead of being notified" in verdict.trials[0].detail


def _hidden_digest() -> bytes:
    return b"".join(p.read_bytes() for p in sorted((fixtures_dir() / "pool_repair_01" / "hidden").rglob("*.py")))


@pytest.mark.slow
@pytest.mark.parametrize("name", DOCKER_EXPLOITS)
def test_exploit_rejected_on_docker(name, ours, engine):
    info = exploit_info(name)
    if not info.sentinel:
        _docker_case(info, ours, engine)
        return
    # shared with tests/test_redteam.py; read-only is enough for flock (another user may own the file)
    handle = os.open("/tmp/rlvr-redteam-sentinels.lock", os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _docker_case(info, ours, engine)
    finally:
        os.close(handle)


def _docker_case(info, ours, engine):
    name = info.name
    fx = load_fixture("pool_repair_01")
    before = _hidden_digest()
    if info.sentinel and os.path.exists(info.sentinel):
        os.unlink(info.sentinel)
    verdict = ours.verify(load_exploit(name), fx)
    assert verdict.outcome in (("fail", "pending", "unknown") if name == "kill_parent" else ("fail",)), (
        verdict.stop_reason
    )
    assert verdict.backend == "docker"
    assert _hidden_digest() == before
    assert _sandbox_containers(engine, ours.slot_dir) == [], "a sandbox container outlived its trial"
    if info.sentinel:
        assert not os.path.exists(info.sentinel)
    if info.marker:  # no container process of that name survives (host processes are other tests' business)
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                in_container = "/docker/" in Path(f"/proc/{pid}/cgroup").read_text()
            except OSError:
                continue
            assert not (comm == info.marker and in_container), f"{info.marker} survives as pid {pid}"


class _StoppingContainer:
    """A container that reports Running, then has stopped by the time the session kills it (the engine
    answers 409 "is not running"): what a candidate calling sys.exit(0) at import looks like."""

    id = "fake"

    def __init__(self):
        self.reloads, self.removed = 0, False
        self.attrs = {"State": {"Running": True}}
        self.client = self

    def reload(self):
        self.reloads += 1
        if self.reloads > 1:
            self.attrs = {"State": {"Running": False, "ExitCode": 0, "OOMKilled": False, "Status": "exited"}}

    def kill(self):
        raise RuntimeError('409 Client Error: Conflict ("Container fake is not running")')

    def wait(self, timeout=None):
        return {"StatusCode": 0}

    def logs(self, **kwargs):
        return iter(())

    def events(self, **kwargs):
        return iter(())

    def remove(self, force=False):
        self.removed = True


def test_a_container_that_stops_just_before_the_kill_is_the_candidates_own_exit(tmp_path):
    """Not an infrastructure fault: the candidate ended itself, so the trial fails (it must not be pending)."""
    import socket

    from rlvr_lab.sandbox.docker import DockerSession
    from rlvr_lab.sandbox.clock import ContentionMeter
    from rlvr_lab.verifier.schema import Limits

    container = _StoppingContainer()
    ours, theirs = socket.socketpair()
    session = DockerSession(container, ours, Limits(wall_s=30.0), tmp_path / "chan", ContentionMeter())
    record = session.kill()
    theirs.close()
    assert record.kind == "exited" and record.exit_code == 0, record
    assert container.removed


DOCKER_STATE_TESTS = """
from solution import leftovers, plant

def test_state():
    if MODE == "plant":
        assert leftovers() == []
        assert plant()[:2] == ["shm", "msg"]
    else:
        assert leftovers() == []
"""


def test_candidate_caused_conditions_and_state_on_docker(ours):
    """Issue 13 on docker: candidate-caused conditions are fail, no state crosses containers, and nothing
    in the container (no PYTHONHASHSEED, no seed) predicts the hidden tests' randomness."""
    import dataclasses

    from rlvr_lab.verifier.schema import Candidate
    from test_verifier_boundary import GOOD, HASH_BOMB, PLANT, PREDICT, PREDICT_TESTS, function_fixture

    long_name = ours.verify(Candidate({"solution.py": GOOD, "helpers/" + "a" * 300 + ".py": ""}), function_fixture())
    assert long_name.outcome == "fail" and long_name.stop_reason.startswith("admission: ")
    bomb = ours.verify(Candidate({"solution.py": GOOD + HASH_BOMB}), function_fixture())
    assert bomb.outcome == "fail", bomb.stop_reason
    fx = function_fixture(trials=2)
    rand = ours.verify(
        Candidate({"solution.py": GOOD + PREDICT}),
        dataclasses.replace(fx, hidden_tests={"test_rand.py": PREDICT_TESTS}),
    )
    assert rand.outcome == "pass", rand.stop_reason + " " + " | ".join(t.detail for t in rand.trials)
    for mode, trials in (("plant", 2), ("look", 1)):
        fx = dataclasses.replace(
            function_fixture(trials=trials),
            trials=trials,
            hidden_tests={"test_state.py": f"MODE = {mode!r}\n" + DOCKER_STATE_TESTS},
        )
        verdict = ours.verify(Candidate({"solution.py": GOOD + PLANT + f"\n# {mode}\n"}), fx)
        assert verdict.outcome == "pass", verdict.stop_reason + " " + " | ".join(t.detail for t in verdict.trials)


@pytest.mark.slow
def test_a_busy_host_stretches_the_deadline_on_docker_too(ours):
    """The host-side timer re-arms while the host is busy: the blocked candidate runs past ``wall_s`` and
    times out by the cap. (Docker gives the container its own cgroup and so a fair CPU share, so the
    correct candidate is seldom slowed past ``wall_s`` here; the local backend's test shows that case.)"""
    check_busy_host(ours)


#: The course's crossing fixtures (issue 28) with one buggy reference each.
CROSSING = (
    ("linked_reverse_01", "bad_returns_old_head"),
    ("graph_cycle_01", "bad_seen_is_cycle"),
    ("graph_bfs_01", "bad_depth_first"),
    ("windows_gen_01", "bad_misses_last"),
)


def test_the_candidate_sees_an_ordinary_machine_on_docker(ours):
    """As on the local backend: no cheap tell (uid 1000, hostname localhost, /home/user/project)."""
    from verifier_helpers import TELL_BLIND, TELL_SEEKER, candidate, function_fixture

    assert ours.verify(candidate(TELL_SEEKER), function_fixture()).outcome == "fail"
    assert ours.verify(candidate(TELL_BLIND), function_fixture()).outcome == "pass"
    probe = (
        "import os, socket\ndef double(x):\n    seen = (os.getuid(), os.getgid(), os.getcwd(), socket.gethostname())\n"
        "    return 2 * x if seen == (1000, 1000, '/home/user/project', 'localhost') else 0\n"
    )
    assert ours.verify(candidate(probe), function_fixture()).outcome == "pass"


def test_shared_objects_and_generators_cross_on_docker(ours):
    """Shared-class graphs, named tuples and generators cross the container's proxy as the local one's,
    on both routes: fixed versions pass, buggy ones fail in a test, never for what crossed."""
    with Verifier(backend="docker", retries=0, test_runner="pytest") as by_pytest:
        for verifier in (ours, by_pytest):
            for name, bad in CROSSING:
                fx = load_fixture(name)
                good = verifier.verify(load_reference(name, "good"), fx)
                assert good.outcome == "pass" and good.backend == "docker", (name, good.trials)
                verdict = verifier.verify(load_reference(name, bad), fx)
                assert verdict.outcome == "fail", (name, verdict.trials)
                assert verdict.trials[-1].reason == "test failed in call", (name, verdict.trials)
                assert "NonPlainValue" not in verdict.trials[-1].detail, (name, verdict.trials)


@pytest.mark.parametrize("test_runner", ["auto", "pytest"])
def test_replies_built_to_be_expensive_to_decode_are_bounded_on_docker_too(image, test_runner):
    """The decode budget is the trusted side's, so it holds whatever the sandbox: a container that answers
    with a million empty lists per reply fails at the budget and the runner or its pytest child stays under
    it (1.35 GB and rising before the budget existed, on the local backend's pytest route)."""
    from rlvr_lab.verifier.proxy.client import MAX_DECODED_BYTES
    from rlvr_lab.verifier.schema import Candidate
    from verifier_helpers import DECODE_BOMB, decode_bomb_fixture, trusted_peak_rss_kb

    with Verifier(backend="docker", retries=0, test_runner=test_runner) as v:
        verdict, peak_kb = trusted_peak_rss_kb(
            v, lambda: v.verify(Candidate({"solution.py": DECODE_BOMB}), decode_bomb_fixture())
        )
    assert verdict.outcome == "fail" and verdict.backend == "docker", verdict
    assert "would decode to more than" in verdict.trials[0].detail, verdict.trials[0]
    assert peak_kb * 1024 < MAX_DECODED_BYTES + 200 * 2**20, peak_kb
