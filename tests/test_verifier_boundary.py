"""The boundary against a determined red team (issue 13): verdict classes, state between candidates,
trusted-side amplification, secret hidden-test randomness, terminal output.

Every condition a candidate causes must end in ``fail`` with a reason (never ``pending``/``unknown``,
which would let a candidate censor its GRPO group), no trial may see what an earlier one left, and the
trusted side's work on candidate material is bounded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.cli import format_verdict
from rlvr_lab.verifier.schema import Candidate, Fixture, TrialResult, Verdict
from rlvr_lab.verifier.workspace import admission_error, capture
from verifier_helpers import (
    DECODE_BOMB,
    GOOD,
    decode_bomb_fixture,
    function_fixture,
    needs_local_sandbox,
    trusted_peak_rss_kb,
)

pytestmark = needs_local_sandbox

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def verifier():
    v = Verifier(backend="local", retries=1, seed=5)
    yield v
    v.close()


def _fail(verdict: Verdict, reason: str) -> None:
    assert verdict.outcome == "fail", (verdict.outcome, verdict.stop_reason)
    assert reason in verdict.stop_reason, verdict.stop_reason


# -- 1. the candidate cannot choose its own verdict class -------------------------------------------------
@pytest.mark.parametrize(
    "files, reason",
    [
        ({"solution.py": GOOD, "helpers/" + "a" * 300 + ".py": "x = 1\n"}, "longer than 255 bytes"),
        ({"solution.py": GOOD, "helpers/a.py": "", "helpers/a.py/b.py": ""}, "is also a directory of"),
        ({"solution.py": GOOD + "\nX = '\ud800'\n"}, "lone surrogate"),
        ({"solution.py": GOOD, "helpers/\udcff.py": ""}, "not valid Unicode text"),
        ({"solution.py": GOOD, "helpers/\x1b[2J.py": ""}, "control character"),
    ],
    ids=["long-name", "colliding-paths", "surrogate-text", "surrogate-name", "control-name"],
)
def test_candidate_controlled_names_and_text_fail_at_admission(verifier, files, reason):
    _fail(verifier.verify(Candidate(files), function_fixture()), "admission: ")
    assert reason in admission_error(Candidate(files), function_fixture())


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir(parents=True)
    (tree / "solution.py").write_text(GOOD)
    return tree


def test_fifo_symlink_and_non_utf8_trees_fail_without_hanging(verifier, tmp_path):
    fx = function_fixture()
    cases = {
        "fifo": lambda t: os.mkfifo(t / "helpers.py"),
        "symlink": lambda t: os.symlink("/etc/passwd", t / "notes.py"),
        "dirlink": lambda t: os.symlink("/etc", t / "helpers"),
        "latin1": lambda t: (t / "solution.py").write_bytes(b"# caf\xe9\n" + GOOD.encode()),
    }
    for name, make in cases.items():
        tree = _tree(tmp_path / name)
        make(tree)
        start = time.monotonic()
        cand = capture(tree, fx)
        assert time.monotonic() - start < 5.0, name
        assert cand.problems, name
        _fail(verifier.verify(cand, fx), "admission: ")


def test_cli_verify_of_a_tree_with_a_fifo_is_a_fail_not_an_error(tmp_path):
    tree = _tree(tmp_path)
    os.mkfifo(tree / "pool.py")
    out = subprocess.run(
        [sys.executable, "-m", "rlvr_lab", "verify", str(tree), "--fixture", "pool_repair_01"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "verdict: fail" in out.stdout and "not a regular file" in out.stdout


def test_sparse_file_does_not_amplify_the_trusted_side(tmp_path):
    """A 64 GiB sparse file costs capture one lstat: run it under a 1 GiB address-space limit."""
    tree = _tree(tmp_path)
    with open(tree / "big.py", "wb") as handle:
        handle.truncate(64 << 30)
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
        "from rlvr_lab.verifier.workspace import capture; from verifier_helpers import function_fixture;"
        f"c = capture({str(tree)!r}, function_fixture()); print(c.problems)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'tests'}"},
    )
    assert out.returncode == 0, out.stderr[-500:]
    assert "big.py" in out.stdout and "bytes" in out.stdout


#: Rewrites the sandbox server's ``encode`` (the candidate shares its process) so that one call answers
#: with a raw set of values whose hashes all collide: quadratic work for whoever builds the set.
HASH_BOMB = """
import gc as _gc

def _patch():
    for obj in _gc.get_objects():
        if type(obj) is dict and obj.get("__name__") == "sandbox_server" and "encode" in obj:
            original = obj["encode"]

            def encode(value, handles, depth=0):
                if value == "BOMB":
                    return {"$s": [k * (2 ** 61 - 1) for k in range(1, 60000)]}
                return original(value, handles, depth)

            obj["encode"] = encode

_patch()
_calls = []


def double(x):
    if x is None:
        raise TypeError("x must be a number")
    _calls.append(x)
    # The request that first imports this module already holds the unpatched encode (it was looked up
    # before the call ran), so the first answer is honest and every later one is the bomb: whatever the
    # order of the hidden tests, the second call of double sends it.
    return 2 * x if len(_calls) == 1 else "BOMB"
"""


def test_hash_colliding_reply_is_a_fail_charged_to_the_candidate(verifier):
    start = time.monotonic()
    verdict = verifier.verify(Candidate({"solution.py": GOOD + HASH_BOMB}), function_fixture())
    assert verdict.outcome == "fail", (verdict.outcome, verdict.stop_reason)
    assert time.monotonic() - start < 20.0
    assert "hash collisions" in verdict.trials[0].detail or "malformed reply" in verdict.trials[0].detail


# -- 2. no state survives between trials or candidates --------------------------------------------------
PLANT = r'''
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
IPC_CREAT, KEY = 0o1000, 0x52564C52


def _shm(key, size, flags=0):
    return _libc.shmget(ctypes.c_int(key), ctypes.c_size_t(size), ctypes.c_int(flags))


def plant():
    """What this trial managed to leave behind for a later one."""
    left = []
    if _shm(KEY, 4096, IPC_CREAT | 0o666) >= 0:
        left.append("shm")
    if _libc.msgget(ctypes.c_int(KEY + 1), ctypes.c_int(IPC_CREAT | 0o666)) >= 0:
        left.append("msg")
    if _libc.syscall(248, b"user", b"rlvr-left", b"secret", ctypes.c_size_t(6), ctypes.c_long(-4)) > 0:
        left.append("key")
    for path in ("/tmp/rlvr-left", "/dev/shm/rlvr-left"):
        try:
            with open(path, "w") as handle:
                handle.write("secret")
        except OSError:  # docker's ipc_mode none has no /dev/shm
            continue
        left.append(path)
    big = sum(_shm(KEY + 10 + i, 120 << 20, IPC_CREAT | 0o600) >= 0 for i in range(3))
    left.append(f"{big} big segments")
    return left


def leftovers():
    """What an earlier trial or candidate left that this one can see."""
    found = []
    if _shm(KEY, 0) >= 0:
        found.append("shm")
    if _libc.msgget(ctypes.c_int(KEY + 1), ctypes.c_int(0)) >= 0:
        found.append("msg")
    if _libc.syscall(250, ctypes.c_long(10), ctypes.c_long(-4), b"user", b"rlvr-left", ctypes.c_long(0)) > 0:
        found.append("key")
    for path in ("/tmp/rlvr-left", "/dev/shm/rlvr-left"):
        if os.path.exists(path):
            found.append(path)
    here = os.path.basename(os.getcwd())
    found += ["sibling " + d for d in os.listdir("..") if d != here]
    return found
'''

STATE_TESTS = """
from solution import leftovers, plant

def test_state():
    if MODE == "plant":
        assert leftovers() == []
        left = plant()
        assert left[:5] == ["shm", "msg", "key", "/tmp/rlvr-left", "/dev/shm/rlvr-left"], left
        assert left[5] in ("0 big segments", "1 big segments", "2 big segments"), left  # within 256 MiB
        assert sorted(leftovers()) == sorted(["shm", "msg", "key", "/tmp/rlvr-left", "/dev/shm/rlvr-left"])
    else:
        assert leftovers() == []
"""


def _state_fixture(mode: str, trials: int) -> Fixture:
    fx = function_fixture(trials=trials)
    return Fixture(
        name=fx.name,
        version=fx.version,
        files=fx.files,
        allowed_paths=fx.allowed_paths,
        modules=fx.modules,
        limits=fx.limits,
        trials=trials,
        checker_version=fx.checker_version,
        hidden_tests={"test_state.py": f"MODE = {mode!r}\n" + STATE_TESTS},
    )


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe uses x86_64 syscall numbers")
def test_candidate_b_learns_nothing_from_candidate_a(verifier):
    leftover = verifier.slot_dir / "run" / "home" / "user" / "c0-left-by-a-dead-runner"
    leftover.mkdir(parents=True)
    (leftover / "solution.py").write_text("SECRET = 1\n")
    a = verifier.verify(Candidate({"solution.py": GOOD + PLANT}), _state_fixture("plant", 3))
    assert a.outcome == "pass", a.stop_reason + " " + " | ".join(t.detail for t in a.trials)
    b = verifier.verify(Candidate({"solution.py": GOOD + PLANT + "\n# candidate B\n"}), _state_fixture("look", 2))
    assert b.outcome == "pass", b.stop_reason + " " + " | ".join(t.detail for t in b.trials)


# -- 4. hidden-test randomness comes from a secret the sandbox never sees -------------------------------
PREDICT = """
import random, os

def predict():
    return [random.random(), os.environ.get("PYTHONHASHSEED")]
"""

PREDICT_TESTS = """
import random
from solution import predict

def test_unpredictable():
    guess, hash_seed = predict()
    assert hash_seed is None
    assert guess != random.random()
"""


def test_hidden_test_randomness_is_not_predictable_from_the_sandbox(verifier):
    fx = function_fixture(trials=4)
    fx = Fixture(
        name=fx.name,
        version=fx.version,
        files=fx.files,
        allowed_paths=fx.allowed_paths,
        modules=fx.modules,
        limits=fx.limits,
        trials=4,
        hidden_tests={"test_rand.py": PREDICT_TESTS},
    )
    verdict = verifier.verify(Candidate({"solution.py": GOOD + PREDICT}), fx)
    assert verdict.outcome == "pass", verdict.stop_reason + " " + " | ".join(t.detail for t in verdict.trials)
    assert len({t.seed for t in verdict.trials}) == 4


# -- 6. terminal output ---------------------------------------------------------------------------------
def test_human_readable_verdict_escapes_control_characters():
    evil = "\x1b]0;pwned\x07\x1b[2J\rboom\x9b31m"
    verdict = Verdict(
        "fail",
        "d" * 64,
        "fx" + evil,
        "v1",
        "c1",
        "local",
        trials=(TrialResult("fail", 0.1, 1, "test failed" + evil, "E " + evil),),
        stop_reason="rejected" + evil,
    )
    text = format_verdict(verdict)
    assert not any(ch in text for ch in "\x1b\x07\r\x9b"), repr(text)
    assert "\\x1b" in text


@needs_local_sandbox
@pytest.mark.parametrize("test_runner", ["auto", "pytest"])  # auto: the direct route here
def test_replies_built_to_be_expensive_to_decode_are_bounded_on_the_trusted_side(test_runner):
    """30 replies of a million empty lists are 180 MB of JSON but about 1.8 GB of objects: the trusted
    side stops reading at its per-trial decode budget (estimated from the bytes before decoding) and the
    candidate fails. Its runner (the direct route decodes in the runner itself) or trusted pytest child
    never holds more than the budget."""
    from rlvr_lab.verifier.proxy.client import MAX_DECODED_BYTES

    with Verifier(backend="local", retries=0, test_runner=test_runner) as v:
        verdict, peak_kb = trusted_peak_rss_kb(
            v, lambda: v.verify(Candidate({"solution.py": DECODE_BOMB}), decode_bomb_fixture())
        )
    assert verdict.outcome == "fail", verdict
    assert verdict.test_runner == ("direct" if test_runner == "auto" else "pytest")
    assert "would decode to more than" in verdict.trials[0].detail, verdict.trials[0]
    assert peak_kb * 1024 < MAX_DECODED_BYTES + 200 * 2**20, peak_kb  # the budget, plus the process itself
