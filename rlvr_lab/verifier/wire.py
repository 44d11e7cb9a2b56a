"""The verifier's wire: one frame format and the typed messages between the Verifier and its runner (17.7).

Every link of the verifier carries the same frame: a 4-byte big-endian length, then the body.

* **Verifier <-> runner** (both trusted, over the runner's stdin/stdout): pickled dataclasses of this
  module. The Verifier sends a :class:`VerifyRequest`; the runner answers once with :class:`RunnerReady`
  or :class:`RunnerFailed` when it starts, then one :class:`VerifyReply` or :class:`RunnerFailed` per
  request. K has one name, ``k``, in the request; ``trials`` is only ever the tuple of trial results.
* **runner <-> sandbox server** (the candidate's side): JSON bodies of at most ``MAX_JSON_FRAME`` bytes
  (the sandbox server's own ``MAX_FRAME``),
  built by :func:`json_frame` here and by the stdlib-only copy in ``sandbox_server.py`` inside the
  sandbox (it cannot import rlvr_lab); ``tests/test_verifier_wire.py`` checks that both write the same
  bytes.

Timing contract: a sandbox may run up to ``STRETCH_MAX * wall_s`` when the host is busy (see
:mod:`~rlvr_lab.sandbox.clock`); :data:`GRACE_S` is how long the runner's pytest child may run
past that before it counts as hung (:func:`trial_budget_s`); callers wait :func:`verify_budget_s` for a
verification of ``k`` trials.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
from dataclasses import dataclass
from typing import Any

from rlvr_lab.sandbox.clock import STRETCH_MAX
from rlvr_lab.verifier.proxy.server import MAX_FRAME as MAX_JSON_FRAME
from rlvr_lab.verifier.schema import Candidate, Fixture, TrialResult

#: Seconds the pytest child may run past the sandbox's wall-clock deadline before it counts as hung.
GRACE_S = 5.0


def trial_budget_s(wall_s: float) -> float:
    """Seconds the runner waits for one trial's report: the longest stretched deadline plus the grace."""
    return STRETCH_MAX * wall_s + GRACE_S


def verify_budget_s(k: int, wall_s: float) -> float:
    """Seconds a caller waits for one verification of ``k`` trials before it counts the runner as hung."""
    return k * (trial_budget_s(wall_s) + GRACE_S) + 30.0


#: The frame header: body length, 4 bytes, big-endian.
HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class VerifyRequest:
    """Verify ``candidate`` against ``fixture`` with ``k`` trials; ``seed`` is the first trial's seed."""

    fixture: Fixture
    candidate: Candidate
    k: int
    seed: int
    direct: bool = True
    """Run plain hidden tests without pytest's machinery (:mod:`~rlvr_lab.verifier.direct`); False: pytest."""


@dataclass(frozen=True)
class VerifyReply:
    """The runner's decision: ``outcome`` (pass, fail or pending), the trials run, why it stopped."""

    outcome: str
    trials: tuple[TrialResult, ...]
    stop_reason: str
    backend: str = ""
    """The runner's sandbox backend (filled in by the runner's loop)."""
    runner_child: int | None = None
    """PID of the last pytest child (tests use it to look for leftovers)."""
    test_runner: str = ""
    """How the hidden tests ran: ``direct`` (plain tests, :mod:`~rlvr_lab.verifier.direct`) or ``pytest``."""


@dataclass(frozen=True)
class RunnerReady:
    """The runner started: its backend, PID, slot uid (local backend as root) and isolation layers."""

    backend: str
    pid: int
    uid: int | None
    isolation: tuple[str, ...]


@dataclass(frozen=True)
class RunnerFailed:
    """The runner could not start or serve a request. ``kind``: ``unavailable`` (no sandbox here),
    ``value`` (a bad argument, raised again as ValueError by the Verifier) or ``error``."""

    kind: str
    error: str


def pending(reason: str) -> VerifyReply:
    """A reply for a verification the infrastructure lost (never a verdict on the candidate)."""
    return VerifyReply("pending", (), reason)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to descriptor ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exact(fd: int, size: int) -> bytes:
    """Read exactly ``size`` bytes from ``fd``; EOFError if the peer closes first."""
    parts, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def send_message(fd: int, message: Any) -> None:
    """One pickled frame (the trusted Verifier <-> runner link only)."""
    body = pickle.dumps(message)
    write_all(fd, HEADER.pack(len(body)) + body)


def recv_message(fd: int) -> Any:
    """The next pickled frame from ``fd`` (EOFError at the end of the stream)."""
    (size,) = HEADER.unpack(read_exact(fd, HEADER.size))
    return pickle.loads(read_exact(fd, size))


def json_frame(message: Any, limit: int | None = MAX_JSON_FRAME) -> bytes:
    """One JSON frame (compact separators, UTF-8), as both sides of the sandbox link write it; a body over
    ``limit`` bytes raises ValueError (None: no limit, the receiver enforces its own).

    >>> json_frame({"op": "init", "seed": 7})
    b'\\x00\\x00\\x00\\x16{"op":"init","seed":7}'
    """
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    if limit is not None and len(body) > limit:
        raise ValueError(f"frame of {len(body)} bytes exceeds the {limit}-byte limit")
    return HEADER.pack(len(body)) + body
