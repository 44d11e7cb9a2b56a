"""A Ray cluster of separate node processes on this machine, for tests, benchmarks and a class demo
(section 17.9.5: the fleet, and what happens when a machine fails).

:class:`LocalCluster` runs ``ray start --head`` and ``ray start --address`` on 127.0.0.1, each node in
its own process group, so that a test can kill one node (its raylet, or every process of it) as a
machine failure would, and :meth:`LocalCluster.shutdown` ends exactly the processes it started (never
``ray stop``, which would end every Ray process on the host). Nodes are small: a few logical CPUs, an
80 MiB object store, no dashboard, no usage reporting, fast failure detection. Being a throwaway cluster
on one machine, it runs with Ray's token authentication off (``RAY_AUTH_MODE=disabled`` on every node,
whatever ``~/.ray/auth_token`` holds); a real cluster should turn it on (instructors' page).

A real deployment runs the same two commands on real machines (see the instructors' page).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

#: Environment of every node: no usage reporting, dead nodes noticed within about two seconds, and workers
#: at the node's own priority (Ray lowers them by 15 niceness steps by default, which on a machine shared
#: with other work starves the verifier slots and their sandboxes behind it).
NODE_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_AUTH_MODE": "disabled",
    "RAY_worker_niceness": "0",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
    "RAY_health_check_initial_delay_ms": "500",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_cli() -> str:
    found = Path(sys.executable).with_name("ray")
    if found.exists():
        return str(found)
    cli = shutil.which("ray")
    if cli is None:
        raise FileNotFoundError("the `ray` command is not installed: pip install 'rlvr-lab[fleet]'")
    return cli


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every live process."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                table[int(entry)] = (int(fields[1]), int(fields[2]))
    return table


def _group_and_descendants(pgid: int) -> list[int]:
    """Processes of group ``pgid`` and everything they started (Ray's workers open groups of their own)."""
    table = _process_table()
    found = {pid for pid, (_, group) in table.items() if group == pgid}
    grew = True
    while grew:
        more = {pid for pid, (parent, _) in table.items() if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return sorted(found)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Node:
    """One node: its process group (the ``ray start`` process and everything it launched)."""

    name: str
    pgid: int

    def pids(self) -> list[int]:
        """Live processes of the node, with the workers its raylet started."""
        return _group_and_descendants(self.pgid)

    def raylet_pid(self) -> int | None:
        """PID of the node's raylet (None once it is gone)."""
        for pid in self.pids():
            if "/raylet/raylet" in _cmdline(pid).split(" ", 1)[0]:
                return pid
        return None


class LocalCluster:
    """A head node plus ``workers`` worker nodes on 127.0.0.1 (module docstring)."""

    def __init__(self, workers: int = 1, cpus_per_node: int = 2, extra_env: dict | None = None):
        if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= 8:
            raise ValueError(f"workers must be an integer in [0, 8], got {workers!r}")
        if isinstance(cpus_per_node, bool) or not isinstance(cpus_per_node, int) or cpus_per_node < 1:
            raise ValueError(f"cpus_per_node must be an integer >= 1, got {cpus_per_node!r}")
        self.cpus = cpus_per_node
        self.temp_dir = tempfile.mkdtemp(prefix="rlvr-ray-")
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {**os.environ, **NODE_ENV, **(extra_env or {})}
        self.nodes: list[Node] = []
        try:
            self._start(
                "head", ["--head", f"--port={self.port}", "--include-dashboard=false", f"--temp-dir={self.temp_dir}"]
            )
            for _ in range(workers):
                self.add_worker()
        except BaseException:
            self.shutdown()
            raise

    def _start(self, name: str, args: list[str]) -> Node:
        cmd = [
            _ray_cli(),
            "start",
            *args,
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.cpus}",
            "--num-gpus=0",
            "--object-store-memory=83886080",
            "--disable-usage-stats",
        ]
        proc = subprocess.Popen(
            cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True
        )
        node = Node(name, proc.pid)
        self.nodes.append(node)
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"`ray start` for the {name} node failed:\n{out[-2000:]}")
        return node

    def add_worker(self) -> Node:
        """Start one more worker node and join it to the head."""
        return self._start(f"worker-{len(self.nodes)}", [f"--address={self.address}"])

    def kill_raylet(self, node: Node) -> int:
        """SIGKILL the node's raylet, as a crashed machine would lose it; returns its PID."""
        pid = node.raylet_pid()
        if pid is None:
            raise RuntimeError(f"node {node.name} has no raylet running")
        os.kill(pid, signal.SIGKILL)
        return pid

    def stop_node(self, node: Node, grace_s: float = 5.0) -> None:
        """End every process of ``node``: SIGTERM, then SIGKILL after ``grace_s`` seconds."""
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            for pid in node.pids():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + wait
            while node.pids() and time.monotonic() < end:
                time.sleep(0.1)
            if not node.pids():
                return

    def connect(self, **kwargs) -> None:
        """``ray.init`` this process as a driver of the cluster (``kwargs`` to ``ray.init``)."""
        import ray

        ray.init(address=self.address, include_dashboard=False, log_to_driver=False, logging_level="WARNING", **kwargs)

    def pids(self) -> list[int]:
        """Every live process the cluster started."""
        return [pid for node in self.nodes for pid in node.pids()]

    def shutdown(self) -> None:
        """Stop the worker nodes, then the head; remove the temporary directory. Idempotent."""
        for node in reversed(self.nodes):
            self.stop_node(node)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
