"""Red team: every exploit of the gallery against the naive harness and against our verifier.

For each exploit of ``fixtures/exploits`` (section 17.3.1's three classes and the resource and escape
attacks of section 17.7): the naive harness rewards it wherever its class applies (its
``exploit.json`` says ``naive: pass``), our isolated verifier (backend "local") returns ``fail``, or
``pending``/``unknown`` where the attack is on the infrastructure, and the host is unharmed: the hidden
tests on disk are byte-identical, no process of the slot's uid or below the trusted runner is left,
no marked daemon survives, and nothing the exploit tried to write outside the slot exists.

Exploits that would harm this machine if run unconfined (fork bomb, memory bomb, output flood, killing
the harness's parent) are run against our verifier only (``naive: not-run``).
"""
from __future__ import annotations
import hashlib
import os
import re
import signal
import socket
import threading
import time
from pathlib import Path
import pytest
from rlvr_lab.verifier import NaiveVerifier, Verifier
from rlvr_lab.verifier.fixtures import exploit_info, fixtures_dir, list_exploits, list_references, load_exploit, load_fixture, load_reference
from rlvr_lab.verifier.workspace import admission_error
INFRASTRUCTURE_ATTACKS = {'kill_parent'}
SLOW_EXPLOITS = {'fork_bomb', 'infinite_loop'}
ANSWER_PORT = 47811

def _hidden_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted((fixtures_dir() / 'pool_repair_01' / 'hidden').rglob('*')):
        if path.is_file():
            digest.update(path.name.encode() + b'\x00' + path.read_bytes())
    return digest.hexdigest()

def _proc_table() -> dict[int, tuple[int, int, str]]:
    """``{pid: (ppid, real uid, comm)}`` of every host process."""
    table = {}
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            status = Path(f'/proc/{name}/status').read_text()
        except OSError:
            continue
        fields = dict((line.split(':', 1) for line in status.splitlines() if ':' in line))
        try:
            table[int(name)] = (int(fields['PPid'].split()[0]), int(fields['Uid'].split()[0]), fields['Name'].strip())
        except (KeyError, ValueError, IndexError):
            continue
    return table

def _descendants(pid: int, table: dict[int, tuple[int, int, str]]) -> set[int]:
    found, frontier = (set(), {pid})
    while frontier:
        frontier = {p for p, (ppid, _, _) in table.items() if ppid in frontier} - found
        found |= frontier
    return found

def _slot_uid(runner_pid: int) -> int:
    """The slot uid our runner holds (it keeps a lock file named after it open)."""
    for fd in os.listdir(f'/proc/{runner_pid}/fd'):
        try:
            target = os.readlink(f'/proc/{runner_pid}/fd/{fd}')
        except OSError:
            continue
        match = re.search('rlvr-verifier-uids/(\\d+)\\.lock$', target)
        if match:
            return int(match.group(1))
    raise AssertionError(f'runner {runner_pid} holds no slot uid lock')

def _marked(comm: str, table: dict[int, tuple[int, int, str]]) -> list[int]:
    return [pid for pid, (_, _, name) in table.items() if name == comm]

class AnswerServer:
    """A TCP listener on 127.0.0.1:ANSWER_PORT that hands out the known-good pool and counts callers."""

    def __init__(self, payload: bytes):
        self.payload = payload
        self.connections = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(('127.0.0.1', ANSWER_PORT))
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(100)
                    conn.sendall(self.payload)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()

@pytest.fixture(scope='module')
def pool_fx():
    return load_fixture('pool_repair_01')

@pytest.fixture(scope='module')
def ours():
    verifier = Verifier(backend='local', retries=0)
    yield verifier
    verifier.close()

@pytest.fixture(scope='module')
def naive():
    return NaiveVerifier(timeout_s=60)

@pytest.fixture(scope='module')
def answer_server():
    server = AnswerServer(load_reference('pool_repair_01', 'good').files['pool_fixture/pool.py'].encode())
    yield server
    server.close()

def _assert_host_unharmed(verifier: Verifier, hidden_before: str, sentinel: str, marker: str) -> None:
    assert _hidden_digest() == hidden_before, 'hidden tests on disk changed'
    runner = verifier.runner_pid
    assert runner is not None and os.path.exists(f'/proc/{runner}')
    table = _proc_table()
    uid = _slot_uid(runner)
    assert [p for p, (_, u, _) in table.items() if u == uid] == [], f'processes of slot uid {uid} survive'
    below = _descendants(runner, table)
    assert len(below) <= 1, f'processes left below the runner (only the zygote may stay): {sorted(below)}'
    if marker:
        assert _marked(marker, table) == [], f'a process named {marker} survives'
    if sentinel:
        assert not os.path.exists(sentinel), f'the exploit wrote {sentinel} on the host'

def _params():
    out = []
    for name in list_exploits():
        marks = [pytest.mark.slow] if name in SLOW_EXPLOITS else []
        out.append(pytest.param(name, id=name, marks=marks))
    return out

@pytest.mark.parametrize('name', _params())
def test_exploit(name, pool_fx, ours, naive, answer_server):
    pass

def test_known_good_patch_passes_every_trial(pool_fx, ours):
    pass

@pytest.mark.parametrize('patch', [n for n, e in list_references('pool_repair_01').items() if e == 'fail'])
def test_known_bad_patch_is_rejected_under_the_all_pass_rule(patch, pool_fx, ours):
    """For bad_racy_snapshot this holds with probability 1 - q**K (q about 0.35, K = 5: about 99.5%)."""
    pass

@pytest.mark.slow
def test_racy_patch_passes_a_single_trial_only_sometimes(pool_fx, ours):
    pass