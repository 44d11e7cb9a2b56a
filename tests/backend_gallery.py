"""Run the exploit gallery against one backend and report, per exploit, the verdict and the host's state.

A helper of ``tests/test_backends.py``, run in a subprocess (often as an ordinary user, or with user
namespaces disabled): ``python backend_gallery.py BACKEND [NAME ...]``. BACKEND is ``auto``, ``local``,
``process`` or ``process-no-landlock`` (the process backend with Landlock switched off, driven through
the runner class in this process, since no public name selects it). Prints one JSON line per candidate:
``{"name", "outcome", "backend", "isolation", "stop", "sentinel_left", "marker_alive", "hidden_changed",
"survivors"}``, then cleans what an exploit left (its sentinel file, its marked daemon), so a weak backend's losses are
recorded, not left behind. Sentinel paths are the caller's own (``fixtures.private_sentinel``); one that
exists before a candidate runs and cannot be removed (under ``unshare --map-root-user`` the name carries
uid 0, like root's) counts only if the candidate changes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.fixtures import (
    exploit_info,
    fixtures_dir,
    list_exploits,
    load_exploit,
    load_fixture,
    load_reference,
)


def hidden_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((fixtures_dir() / "pool_repair_01" / "hidden").rglob("*")):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def file_state(path: str) -> tuple[int, int, int] | None:
    """(inode, mtime, size) of ``path``, or None when it does not exist: a sentinel counts as left by this
    run only if it appeared or changed during it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def marked(comm: str) -> list[int]:
    """Host processes named ``comm`` that this run's candidates could have started: those of our own uid.

    Every backend this helper drives runs the candidate as the caller's uid on the host (an ordinary
    user's user namespace maps only that uid; the process backend keeps it). Other xdist workers run the
    same exploits as root, in docker (uid 1000) or through a naive harness; their daemons carry another
    uid and are theirs to count, not ours.
    """
    found = []
    for name in os.listdir("/proc"):
        try:
            if (
                name.isdigit()
                and os.stat(f"/proc/{name}").st_uid == os.getuid()
                and Path(f"/proc/{name}/comm").read_text().strip() == comm
            ):
                found.append(int(name))
        except OSError:
            pass
    return found


def describe(pid: int) -> str:
    """``pid``'s parent and namespaced pids, for a report that says where a survivor lives."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return f"{pid}: gone"
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    return f"{pid}: PPid {fields.get('PPid', '?').strip()} NSpid {fields.get('NSpid', '?').strip()}"


class RunnerInProcess:
    """The runner class with a backend object we build (Landlock off), behind the Verifier's verify shape."""

    def __init__(self) -> None:
        from rlvr_lab.sandbox.local import ProcessBackend
        from rlvr_lab.verifier.proxy import SERVER_PATH
        from rlvr_lab.verifier.runner import SlotRunner

        self.dir = Path(tempfile.mkdtemp(prefix="rlvr-gallery-"))
        self.runner = SlotRunner(ProcessBackend(self.dir / "sandbox", SERVER_PATH, landlock=False), self.dir / "slot")
        self.runner.backend.name = "process-no-landlock"

    def verify(self, candidate, fixture):
        reply = self.runner.verify(fixture, candidate, fixture.trials, 1234)
        return type(
            "V",
            (),
            {
                "outcome": reply.outcome,
                "backend": self.runner.backend.name,
                "isolation": self.runner.backend.isolation,
                "stop_reason": reply.stop_reason,
            },
        )

    def close(self) -> None:
        self.runner.close()


def main(argv: list[str]) -> int:
    backend, names = argv[0], argv[1:] or ["good", "bad_racy_snapshot", *list_exploits()]
    fixture = load_fixture("pool_repair_01")
    verifier = RunnerInProcess() if backend == "process-no-landlock" else Verifier(backend=backend, retries=0)
    try:
        for name in names:
            reference = name in ("good", "bad_racy_snapshot")
            info = None if reference else exploit_info(name)
            candidate = load_reference("pool_repair_01", name) if reference else load_exploit(name)
            before = hidden_digest()
            if info and info.sentinel:  # remove a leftover of ours; a file we cannot remove is judged by change
                try:
                    os.unlink(info.sentinel)
                except OSError:
                    pass
            sentinel_before = file_state(info.sentinel) if info and info.sentinel else None
            verdict = verifier.verify(candidate, fixture)
            alive = marked(info.marker) if info and info.marker else []
            # the zygote's sweep reaps re-parented daemons a moment later (seconds on a loaded machine);
            # the daemon itself lingers 30 s, so 10 s still tells a reaped one from a survivor
            deadline = time.monotonic() + 10.0
            while alive and time.monotonic() < deadline:
                time.sleep(0.1)
                alive = marked(info.marker)
            time.sleep(0.2)
            sentinel = bool(info and info.sentinel and file_state(info.sentinel) not in (None, sentinel_before))
            print(
                json.dumps(
                    {
                        "name": name,
                        "outcome": verdict.outcome,
                        "backend": verdict.backend,
                        "isolation": list(verdict.isolation),
                        "stop": verdict.stop_reason[:200],
                        "sentinel_left": sentinel,
                        "marker_alive": bool(alive),
                        "survivors": [describe(pid) for pid in alive],
                        "hidden_changed": hidden_digest() != before,
                    }
                ),
                flush=True,
            )
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if sentinel:
                try:
                    os.unlink(info.sentinel)
                except OSError:
                    pass
    finally:
        verifier.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
