"""``rlvr-lab grade --ray-address``: a class graded over a real Ray cluster (section 17.14 spread as 17.9).

One cluster for the module: a head node and a worker node, each started with ``ray start`` as separate
processes on 127.0.0.1 (:class:`rlvr_lab.verifier.ray_cluster.LocalCluster`) and ended by process group,
after which no process of either node may be left. The same submissions are graded on this machine and
over the cluster: same outcomes, scores and statuses, each notebook's node named; a grading worker killed
mid-notebook gives that notebook a retry, and when retries run out, an ``infra`` outcome that says so.
The Ray tests are skipped, with the reason, where Ray (the ``fleet`` extra) is not installed or the local
sandbox cannot start.
"""

from __future__ import annotations

import argparse
import functools
import glob
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from test_grading import BACKEND, EX1, EX7, SOLUTIONS, _append, _cheats, _honest, _load
from test_verifier_ray import _process, _wait_gone
from verifier_helpers import needs_local_sandbox

from rlvr_lab import grading

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="Ray is not installed (pip install 'rlvr-lab[fleet]')"
)
TIMEOUT_S = 30
#: A correct ex1 notebook whose last cell keeps its sandbox busy (the answers are already set).
SLOW_CELL = "import time\ntime.sleep(5)"


@pytest.fixture(scope="module")
def cluster():
    import ray

    from rlvr_lab.verifier.ray_cluster import LocalCluster

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # nodes import this checkout
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    c = LocalCluster(workers=1, cpus_per_node=2, extra_env={"PYTHONPATH": path})
    c.seen = []  # actor and sandbox processes the tests met; none may outlive the cluster
    try:
        c.connect()
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()
    assert c.pids() == [], "cluster processes left on the host"
    assert _wait_gone(c.seen) == [], "grading actors or sandboxes left on the host"


def _write(folder, notebooks: dict) -> None:
    for name, (exercise, nb) in notebooks.items():
        (folder / name).mkdir()
        (folder / name / exercise).write_text(json.dumps(nb))


def _by_name(report, folder) -> dict:
    return {os.path.relpath(s["path"], folder).split(os.sep)[0]: s for s in report["submissions"]}


def _summary(sub) -> tuple:
    return (sub["outcome"], sub["score"], sub["max"], {p: e["status"] for p, e in sub["parts"].items()})


def _skip_without_sandbox(report) -> None:
    if report["sandbox_error"]:
        pytest.skip(f"no sandbox backend on this machine: {report['sandbox_error'][-300:]}")


def _descendants(pid: int) -> list[int]:
    from rlvr_lab.verifier.ray_cluster import _process_table

    table, found, grew = _process_table(), {pid}, True
    while grew:
        more = {p for p, (parent, _) in table.items() if parent in found and p not in found}
        found |= more
        grew = bool(more)
    return sorted(found)


def _kill_actor_mid_notebook(cluster, seconds: float = 120.0):
    """SIGKILL the first grading actor seen running a notebook; return its processes, the actor first."""
    from rlvr_lab.verifier.ray_cluster import _cmdline

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for pid in cluster.pids():
            if _cmdline(pid).startswith("ray::GradingActor"):
                tree = _descendants(pid)
                if any("notebook_executor" in _cmdline(p) for p in tree if p != pid):
                    procs = [_process(pid)] + [_process(p) for p in tree if p != pid]  # the actor first
                    os.kill(pid, signal.SIGKILL)
                    cluster.seen += procs
                    return procs
        time.sleep(0.05)
    raise AssertionError("no grading actor ever ran a notebook")


@needs_ray
@needs_local_sandbox
@pytest.mark.slow
def test_ray_grading_equals_local_grading_and_names_the_node(cluster, tmp_path):
    honest, cheats = _honest(), _cheats([], SOLUTIONS)
    chosen = {"key_ex1": honest["key_ex1"], "types_ex7": honest["types_ex7"]}
    chosen.update({name: cheats[name][:2] for name in ("redefine", "key_hunt", "killer")})
    _write(tmp_path, chosen)
    local = grading.grade([str(tmp_path)], key_dir=SOLUTIONS, workers=2, timeout_s=TIMEOUT_S, backend=BACKEND)
    _skip_without_sandbox(local)
    fleet = grading.grade(
        [str(tmp_path)], key_dir=SOLUTIONS, workers=2, timeout_s=TIMEOUT_S, backend=BACKEND, ray_address=cluster.address
    )
    here, there = _by_name(local, tmp_path), _by_name(fleet, tmp_path)
    assert {n: _summary(s) for n, s in there.items()} == {n: _summary(s) for n, s in here.items()}
    assert there["key_ex1"]["score"] == 3 and there["types_ex7"]["score"] == 4
    for name in ("redefine", "key_hunt", "killer"):  # every cheat scores zero, the same way
        assert there[name]["score"] == 0, there[name]
    assert set(there["redefine"]["parts"][p]["status"] for p in there["redefine"]["parts"]) == {"tampered"}
    assert "rlvr_lab.checks.ex1.part_a was replaced" in " ".join(there["redefine"]["tampering"])
    assert "hunt: []" in there["key_hunt"]["cell_errors"][-1]["error"]  # the key is hidden on every node
    assert there["killer"]["outcome"] == "died"
    assert fleet["engine"] == "ray" and len(fleet["nodes"]) == 2 and fleet["faults"] == []
    assert {s["node"] for s in there.values()} == set(fleet["nodes"])  # both machines graded
    assert all(s["attempts"] == 1 and s["sandbox"] == here[n]["sandbox"] for n, s in there.items())
    assert local["engine"] == "threads" and {s["node"] for s in here.values()} == set(local["nodes"])


@needs_ray
@needs_local_sandbox
@pytest.mark.slow
def test_a_worker_lost_mid_notebook_is_graded_again_elsewhere(cluster, tmp_path):
    slow = _append(_load(SOLUTIONS, EX1), SLOW_CELL)
    _write(tmp_path, {"ada": (EX1, slow), "bob": (EX1, slow), "cy": (EX7, _load(SOLUTIONS, EX7))})
    out = {}
    worker = threading.Thread(
        target=lambda: out.update(
            report=grading.grade(
                [str(tmp_path)],
                key_dir=SOLUTIONS,
                workers=2,
                timeout_s=TIMEOUT_S,
                backend=BACKEND,
                ray_address=cluster.address,
            )
        )
    )
    worker.start()
    try:
        victims = _kill_actor_mid_notebook(cluster)
    finally:
        worker.join(timeout=600)
    report = out["report"]
    _skip_without_sandbox(report)
    subs = _by_name(report, tmp_path)
    assert [(n, s["outcome"], s["score"]) for n, s in sorted(subs.items())] == [
        ("ada", "completed", 3),
        ("bob", "completed", 3),
        ("cy", "completed", 4),
    ]  # never a zero, never dropped
    assert len(report["faults"]) == 1 and report["faults"][0]["retried"] is True
    lost = report["faults"][0]
    assert lost["error"] and lost["node"] in report["nodes"] + [""], lost
    retried = next(s for s in subs.values() if s["path"] == lost["path"])
    assert retried["attempts"] == 2 and retried["node"] in report["nodes"]
    assert sorted(s["attempts"] for s in subs.values()) == [1, 1, 2]
    assert _wait_gone(victims) == [], "the lost actor's sandbox outlived it"
    from rlvr_lab.grading.ray_grader import SCRATCH_PREFIX  # its scratch folder was swept by the actor that replaced it

    assert not glob.glob(os.path.join(tempfile.gettempdir(), f"{SCRATCH_PREFIX}{victims[0][0]}-*"))


@needs_ray
@needs_local_sandbox
@pytest.mark.slow
def test_retries_exhausted_is_infra_with_the_reason_never_a_silent_zero(cluster, tmp_path, monkeypatch, capsys):
    from rlvr_lab.grading import ray_grader

    monkeypatch.setattr(ray_grader, "RayGrader", functools.partial(ray_grader.RayGrader, lost_retries=0))
    _write(tmp_path, {"ada": (EX1, _append(_load(SOLUTIONS, EX1), SLOW_CELL))})
    parser = argparse.ArgumentParser()
    grading.register(parser.add_subparsers())
    args = parser.parse_args(
        [
            "grade",
            str(tmp_path),
            "--key",
            SOLUTIONS,
            "--backend",
            BACKEND,
            "--workers",
            "1",
            "--timeout",
            str(TIMEOUT_S),
            "--no-progress",
            "--ray-address",
            cluster.address,
            "--json",
            str(tmp_path / "report.json"),
        ]
    )
    killer = threading.Thread(target=lambda: _kill_actor_mid_notebook(cluster), daemon=True)
    killer.start()
    code = args.func(args)
    killer.join(timeout=10)
    report = json.loads((tmp_path / "report.json").read_text())
    _skip_without_sandbox(report)
    sub = report["submissions"][0]
    printed = capsys.readouterr()
    assert (
        code == 4
        and "not graded" in printed.err
        and "1 notebook run(s) lost with their worker, 1 not graded" in printed.out
    )
    assert sub["outcome"] == "infra" and sub["error"] and "grading worker was lost mid-notebook 1 time" in sub["reason"]
    assert {p["status"] for p in sub["parts"].values()} == {"not run"} and sub["score"] == 0
    assert report["faults"][0]["retried"] is False


def test_bad_ray_address_and_missing_ray_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="ray_address"):
        grading.grade([SOLUTIONS], key_dir=SOLUTIONS, ray_address="")
    parser = argparse.ArgumentParser()
    grading.register(parser.add_subparsers())
    with pytest.raises(SystemExit):
        parser.parse_args(["grade", "x.ipynb", "--ray-address", " "])
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / EX1).write_text(json.dumps(_load(SOLUTIONS, EX1)))
    code = (
        "import sys; sys.modules['ray'] = None\n"  # as if Ray were not installed
        "from rlvr_lab.grading import run, register\nimport argparse\np = argparse.ArgumentParser()\n"
        "register(p.add_subparsers())\n"
        f"a = p.parse_args(['grade', {str(tmp_path / 'a')!r}, '--key', {SOLUTIONS!r}, '--ray-address', 'auto'])\n"
        "sys.exit(a.func(a))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 2 and "rlvr-lab[fleet]" in out.stderr, out.stderr[-1000:]
