"""The trusted runner's side of the proxy: requests to the candidate's sandbox (section 17.7).

Hidden tests reach candidate code only through :class:`ProxyClient`: every attribute read, attribute
write or call becomes a request frame to :mod:`rlvr_lab.verifier.proxy.server`, which runs the
candidate's code in the sandbox, and the reply is decoded strictly into plain data or a handle
(:mod:`~rlvr_lab.verifier.proxy.values`, where the rules that keep a verdict honest are). Candidate
modules become such requests through the import hook of :mod:`~rlvr_lab.verifier.proxy.imports`.

Several test threads may call at once: requests carry ids; whichever waiting caller currently holds
the reader role reads replies and routes each to its caller (leader/follower, so a lone call costs no
thread hand-off). The sandbox's replies are bounded per trial twice: in bytes (:data:`MAX_REPLY_BYTES`)
and in what decoding them would cost the runner's memory (:data:`MAX_DECODED_BYTES`, estimated from a
frame's bytes before it is decoded: a few bytes of JSON such as ``[],`` become a 56-byte list, so a reply
of tiny objects costs the runner many times its size, and the runner is the one process all trials share).
"""

from __future__ import annotations

import builtins
import json
import threading
import time
import types
from typing import Any
from collections.abc import Mapping

from rlvr_lab.sandbox.backend import Channel
from rlvr_lab.verifier import wire
from rlvr_lab.verifier.proxy.server import MAX_FRAME, MAX_MESSAGE, Shared
from rlvr_lab.verifier.proxy.handles import CandidateError, RemoteObject, SandboxGone, TrialDeadline
from rlvr_lab.verifier.proxy.values import Graph, decode, encode, load_objects, safe_exception

#: Bytes of replies one trial may send the trusted runner; past it the channel is closed (the tests fail).
MAX_REPLY_BYTES = 64 * 1024 * 1024
#: Estimated bytes of Python objects one trial's replies may decode to in the runner
#: (:func:`decoded_size_estimate`, counted as if every reply were kept); past it the channel is closed.
MAX_DECODED_BYTES = 256 * 1024 * 1024
#: Most names a ``from module import *`` of a candidate module may bind.
MAX_STAR_NAMES = 10_000
#: Types of module attributes a second read may take from the first (nothing a test can change).
_IMMUTABLE = (type(None), bool, int, float, str, bytes)


def decoded_size_estimate(frame: bytes) -> int:
    """An upper estimate of the bytes of Python objects ``json.loads(frame)`` builds (CPython, 64-bit): 64
    per list (``[``: 56 plus slack), 240 per dict (``{``: a small dict with its table), 40 per further value
    (``,`` or ``:``: a float, an int or a short string, and its slot), plus the text itself. Counting bytes
    is done in C at memory speed, so the estimate costs a small share of the decode it guards.

    >>> decoded_size_estimate(b"[1, 2, 3]")
    153
    >>> round(decoded_size_estimate(b"[" + b"[]," * 999 + b"[]]") / 3001)  # object bytes per byte of JSON
    36
    """
    values = frame.count(b",") + frame.count(b":")
    return len(frame) + 64 * frame.count(b"[") + 240 * frame.count(b"{") + 40 * values


class ProxyClient:
    """Multiplexed request/reply over a :class:`~rlvr_lab.sandbox.backend.Channel` to the sandbox."""

    def __init__(
        self, channel: Channel, shared: Mapping[str, types.ModuleType] | None = None, deadline: float | None = None
    ):
        """``shared``: the fixture's shared modules as the runner loaded them (name -> module), whose
        classes cross by value; ``deadline``: ``time.perf_counter()`` after which no request is sent
        (:class:`~.handles.TrialDeadline`)."""
        self.channel = channel
        self.shared_modules = dict(shared or {})
        self.shared = Shared(self.shared_modules.values())
        self.cache: dict = {}  # named-tuple types made for this trial's replies
        self.deadline = deadline
        self._send_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._next_id = 0
        self._waiting: dict[int, list] = {}  # request id -> [Event (made when it must wait) or None, reply or None]
        self._rbuf = bytearray()  # bytes read from the channel and not yet taken (the reader's only)
        self._reading = False  # one caller at a time reads the channel (leader/follower)
        self._broken: str | None = None
        self._reply_budget = MAX_REPLY_BYTES  # bytes the sandbox may still send (bounds decode work)
        self._decode_budget = MAX_DECODED_BYTES  # estimated bytes its replies may still decode to
        self.star_cache: dict[str, frozenset[str]] = {}  # module -> names its star import binds
        self._module_reads: dict[tuple, Any] = {}  # (op, module, name) -> value, until the next other request

    # -- transport -------------------------------------------------------------------------------
    def _read_exact(self, size: int) -> bytes:
        """The next ``size`` bytes; reads up to 64 KiB at a time, so a small frame costs one system call."""
        buf = self._rbuf
        while len(buf) < size:
            chunk = self.channel.recv(min(max(size - len(buf), 1 << 16), 1 << 20))
            if not chunk:
                raise EOFError("the sandbox closed the channel")
            buf += chunk
        out = bytes(buf[:size])
        del buf[:size]
        return out

    def _read_one(self) -> None:
        """Read one reply frame and hand it to its waiting caller (the caller holds the reader role)."""
        (size,) = wire.HEADER.unpack(self._read_exact(wire.HEADER.size))
        if size > MAX_FRAME:
            raise ValueError(f"reply frame of {size} bytes exceeds {MAX_FRAME}")
        self._reply_budget -= size + 4
        if self._reply_budget < 0:
            raise ValueError(f"the sandbox's replies exceeded {MAX_REPLY_BYTES} bytes in one trial")
        frame = self._read_exact(size)
        self._decode_budget -= decoded_size_estimate(frame)
        if self._decode_budget < 0:
            raise ValueError(
                f"the sandbox's replies would decode to more than {MAX_DECODED_BYTES >> 20} MB of objects in one "
                "trial (estimated from their bytes)"
            )
        reply = json.loads(frame.decode("utf-8"))
        if type(reply) is not dict or type(reply.get("id")) is not int:
            raise ValueError("reply without an integer id")
        with self._state_lock:
            slot = self._waiting.pop(reply["id"], None)
            if slot is not None:
                slot[1] = reply
                event = slot[0]
        if slot is None:
            raise ValueError(f"reply to unknown request {reply['id']}")
        if event is not None:
            event.set()

    def _break(self, why: str) -> None:
        with self._state_lock:
            if self._broken is None:
                self._broken = why
            waiting, self._waiting = self._waiting, {}
            events = [slot[0] for slot in waiting.values() if slot[0] is not None]
        for event in events:
            event.set()

    def _await(self, slot: list) -> None:
        """Wait for ``slot``'s reply, reading the channel ourselves whenever nobody else is."""
        while True:
            with self._state_lock:
                if slot[1] is not None or self._broken is not None:
                    return
                lead = not self._reading
                if lead:
                    self._reading = True
                elif slot[0] is None:
                    slot[0] = threading.Event()  # only a caller that must wait needs one
                else:
                    slot[0].clear()
            if not lead:
                slot[0].wait()
                continue
            try:
                while slot[1] is None:
                    self._read_one()
            except BaseException as exc:  # EOF, malformed frame, OSError: all end the channel
                self._break(f"{type(exc).__name__}: {exc}"[:MAX_MESSAGE])
                if not isinstance(exc, Exception):
                    raise  # the runner's watchdog or an interrupt: not the sandbox's answer
            finally:
                with self._state_lock:
                    self._reading = False
                    successor = next((s[0] for s in self._waiting.values() if s[0] is not None), None)
                if successor is not None:
                    successor.set()  # wake a waiting caller to take over reading

    def request(self, message: dict) -> Any:
        """Send one request and wait for its reply; returns the decoded value or raises."""
        self._module_reads.clear()  # anything but a read of a module may change what a module holds
        return self._request(message)

    def _read_module(self, op: str, module: str, name: str = "") -> Any:
        """A read of a candidate module (an attribute, or its star-import names), remembered until the
        next request of any other kind. ``from m import a, b`` and a star import ask for each name twice
        (Python's import machinery checks ``hasattr`` first); the second read costs no round trip."""
        key = (op, module, name)
        if key in self._module_reads:
            return self._module_reads[key]
        message = {"op": op, "target": {"m": module}}
        if op == "getattr":
            message["name"] = name
        value = self._request(message)
        if op == "names" or type(value) in _IMMUTABLE or isinstance(value, RemoteObject):
            self._module_reads[key] = value  # never a list or dict a test could change between two reads
        return value

    def _request(self, message: dict) -> Any:
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise TrialDeadline("the trial's time is up: no more requests to the sandbox (an endless generator?)")
        with self._state_lock:
            if self._broken is not None:
                raise SandboxGone(f"sandbox unavailable: {self._broken}")
            self._next_id += 1
            rid = self._next_id
            slot = [None, None]
            self._waiting[rid] = slot
        message["id"] = rid
        frame = wire.json_frame(message, limit=None)  # the sandbox enforces its own frame limit
        try:
            with self._send_lock:
                self.channel.send_all(frame)
        except OSError as exc:
            self._break(f"send failed: {exc}")
        self._await(slot)
        reply = slot[1]
        if reply is None:
            raise SandboxGone(f"sandbox unavailable: {self._broken}")
        try:
            if "ok" in reply and "err" not in reply:
                graph = Graph(self.shared, self.cache)
                if "objs" in reply:
                    load_objects(reply["objs"], self, graph)
                return decode(reply["ok"], self, graph=graph)
            err = reply.get("err")
            if type(err) is not dict or type(err.get("type")) is not str or type(err.get("msg")) is not str:
                raise ValueError("malformed error reply")
        except (ValueError, TypeError, RecursionError) as exc:
            self._break(f"malformed reply: {exc}")
            raise SandboxGone(f"malformed reply from the sandbox: {exc}") from None
        raise safe_exception(err["type"][:100], err["msg"][:MAX_MESSAGE])

    # -- operations ------------------------------------------------------------------------------
    def init(self, seed: int, shared_sources: Mapping[str, str] | None = None) -> None:
        """Seed the sandbox's ``random`` and have it execute the fixture's shared modules (``shared_sources``:
        name -> the runner's copy of the source) before any candidate import."""
        message: dict = {"op": "init", "seed": int(seed)}
        if shared_sources:
            message["shared"] = dict(shared_sources)
        self.request(message)

    def getattr(self, target: dict, name: str) -> Any:
        if set(target) == {"m"}:
            return self._read_module("getattr", target["m"], name)
        return self.request({"op": "getattr", "target": target, "name": name})

    def names(self, target: dict) -> list[str]:
        """The names ``from module import *`` binds in the sandbox's module (checked: identifiers only).

        Names of builtins (``abs``, ``len``, ``isinstance``, ...) and dunder names are dropped: a hidden
        test's ``abs(candidate(x) - y) < 1e-6`` must use the real ``abs``, not one the candidate exports.
        """
        names = (
            self._read_module("names", target["m"])
            if set(target) == {"m"}
            else self.request({"op": "names", "target": target})
        )
        if (
            type(names) is not list
            or len(names) > MAX_STAR_NAMES
            or not all(type(n) is str and n.isidentifier() for n in names)
        ):
            raise CandidateError(f"the module's public names are not a list of at most {MAX_STAR_NAMES} identifiers")
        return [n for n in names if not hasattr(builtins, n) and not n.startswith("__")]

    def setattr(self, target: dict, name: str, value: Any) -> None:
        graph = Graph(self.shared, self.cache)
        message = {"op": "setattr", "target": target, "name": name, "value": encode(value, graph=graph)}
        if graph.found:
            message["objs"] = graph.table()
        self.request(message)

    def call(self, target: dict, args: tuple, kwargs: dict, name: str | None = None) -> Any:
        graph = Graph(self.shared, self.cache)  # one identity table for all the arguments
        message = {
            "op": "call" if name is None else "callattr",
            "target": target,
            "args": [encode(a, graph=graph) for a in args],
            "kwargs": encode(dict(kwargs), graph=graph),
        }
        if graph.found:
            message["objs"] = graph.table()
        if name is not None:
            message["name"] = name
        return self.request(message)
