"""The candidate's side of the proxy: the server that runs inside the sandbox (section 17.7; standard
library only, loaded by path: the zygote loads it as ``sandbox_server``, docker mounts it).

The trusted runner never imports candidate code. When a hidden test touches ``solution.f`` the runner's
client (:mod:`rlvr_lab.verifier.proxy.client`) sends a request; this server imports the candidate's
module from its working directory (the graded copy), does the read or call, and answers with plain data
(:func:`encode`; requests and replies: :class:`Server`). Each frame is a 4-byte big-endian length then
that many bytes of UTF-8 JSON, at most :data:`MAX_FRAME` bytes.

Command line: ``python server.py`` serves on stdin/stdout (the candidate's prints go to stderr);
``python server.py --fd N`` serves on the open socket descriptor N.
"""

import base64
import importlib
import json
import os
import random
import struct
import sys
import threading

#: Largest frame either side accepts, bytes; a bigger frame is a protocol violation.
MAX_FRAME = 16 * 1024 * 1024
#: Longest exception message sent back, characters.
MAX_MESSAGE = 2000

_PLAIN_BASES = (bool, int, float, str, bytes, bytearray, list, tuple, dict, set, frozenset)


class NonPlainValue(TypeError):
    """A value that looks like plain data but is not of an exact plain type (e.g. a subclass of int)."""


class _Handles:
    """Objects that stay in the sandbox, addressed by small integer ids."""

    def __init__(self):
        self._lock = threading.Lock()
        self._objects = {}
        self._ids = {}

    def put(self, obj):
        with self._lock:
            key = id(obj)
            hid = self._ids.get(key)
            if hid is None or self._objects.get(hid) is not obj:
                hid = len(self._objects) + 1
                self._objects[hid] = obj
                self._ids[key] = hid
            return hid

    def get(self, hid):
        if type(hid) is not int or hid not in self._objects:
            raise LookupError(f"unknown handle {hid!r}")
        return self._objects[hid]


def encode(value, handles, depth=0):
    """Plain data -> JSON-ready tree; exact types only, other objects become handles.

    Tags for what JSON cannot say exactly: ``{"$b": base64}`` bytes, ``{"$t": [...]}`` tuple,
    ``{"$d": [[k, v], ...]}`` dict, ``{"$s": [...]}`` set, ``{"$f": [...]}`` frozenset, ``{"$h": id, "c":
    class name}`` a handle to an object that stays in the sandbox. Only the *exact* types
    None/bool/int/float/str/bytes/list/tuple/dict/set/frozenset cross as data; a subclass is refused.

    >>> h = _Handles()
    >>> encode({"k": (1, b"a")}, h)
    {'$d': [['k', {'$t': [1, {'$b': 'YQ=='}]}]]}
    >>> encode(object(), h)["$h"]
    1
    >>> class Sneaky(int): pass
    >>> try:
    ...     encode(Sneaky(3), h)
    ... except NonPlainValue as exc:
    ...     print(exc)
    a Sneaky is not plain data: it subclasses a builtin type
    """
    if depth > 100:
        raise NonPlainValue("value nested deeper than 100 levels")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str or kind is float:
        return value
    if kind is bytes:
        return {"$b": base64.b64encode(value).decode("ascii")}
    if kind is list:
        return [encode(v, handles, depth + 1) for v in value]
    if kind is tuple:
        return {"$t": [encode(v, handles, depth + 1) for v in value]}
    if kind is dict:
        return {"$d": [[encode(k, handles, depth + 1), encode(v, handles, depth + 1)] for k, v in value.items()]}
    if kind is set:
        return {"$s": [encode(v, handles, depth + 1) for v in value]}
    if kind is frozenset:
        return {"$f": [encode(v, handles, depth + 1) for v in value]}
    if isinstance(value, _PLAIN_BASES):
        raise NonPlainValue(f"a {kind.__name__} is not plain data: it subclasses a builtin type")
    return {"$h": handles.put(value), "c": kind.__name__[:100]}


def decode(tree, handles):
    """JSON tree from the runner -> Python values; handles resolve to the sandbox's objects.

    >>> decode({"$t": [1, {"$s": [2]}]}, _Handles())
    (1, {2})
    """
    if isinstance(tree, list):
        return [decode(v, handles) for v in tree]
    if not isinstance(tree, dict):
        return tree
    if "$b" in tree:
        return base64.b64decode(tree["$b"])
    if "$t" in tree:
        return tuple(decode(v, handles) for v in tree["$t"])
    if "$d" in tree:
        return {decode(k, handles): decode(v, handles) for k, v in tree["$d"]}
    if "$s" in tree:
        return {decode(v, handles) for v in tree["$s"]}
    if "$f" in tree:
        return frozenset(decode(v, handles) for v in tree["$f"])
    if "$h" in tree:
        return handles.get(tree["$h"])
    raise ValueError(f"unknown tag in {sorted(tree)!r}")


def public_names(module):
    """The names ``from module import *`` binds: ``__all__`` when it is a list or tuple of strings,
    else every name not starting with an underscore that is not itself a module.

    >>> import types; m = types.ModuleType("m"); m.f = 1; m._g = 2; m.os = os
    >>> public_names(m)
    ['f']
    """
    names = getattr(module, "__all__", None)
    if type(names) in (list, tuple) and all(type(n) is str for n in names):
        return list(names)
    return sorted(n for n, v in vars(module).items()
                  if type(n) is str and not n.startswith("_") and type(v) is not type(sys))


def write_frame(fd, message, lock):
    """Write one length-prefixed JSON frame to ``fd`` under ``lock``."""
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    if len(body) > MAX_FRAME:
        raise NonPlainValue(f"reply of {len(body)} bytes exceeds the {MAX_FRAME}-byte frame limit")
    data = struct.pack(">I", len(body)) + body
    with lock:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]


class Server:
    """Answers the runner's requests against the candidate's modules.

    Requests: ``{"id": n, "op": "init", "seed": s}``, ``{"id": n, "op": "getattr", "target": T, "name":
    a}``, ``{"id": n, "op": "names", "target": T}`` (what ``from module import *`` binds,
    :func:`public_names`), ``{"id": n, "op": "setattr", "target": T, "name": a, "value": v}``, ``{"id":
    n, "op": "call", "target": T, "args": [...], "kwargs": {"$d": ...}}`` and ``{"id": n, "op":
    "callattr", "target": T, "name": a, "args": ..., "kwargs": ...}``, where a target T is ``{"m":
    "module.name"}`` or ``{"h": id}``. Replies: ``{"id": n, "ok": value}`` or ``{"id": n, "err":
    {"type": name, "msg": text}}``. The thread that reads a request runs it after making sure another
    thread is ready to read the next, so a call that blocks does not stop another test thread's call.
    """

    def __init__(self, rfd, wfd):
        self.rfd = rfd
        self.wfd = wfd
        self.rbuf = bytearray()  # read from the channel, not yet taken
        self.lock = threading.Lock()
        self.handles = _Handles()

    def target(self, spec):
        if "m" in spec:
            name = spec["m"]
            if type(name) is not str:
                raise TypeError("module name must be a string")
            return importlib.import_module(name)
        return self.handles.get(spec["h"])

    def perform(self, request):
        op = request.get("op")
        if op == "init":
            random.seed(request.get("seed", 0))
            return None
        if op == "getattr":
            return getattr(self.target(request["target"]), request["name"])
        if op == "names":
            return public_names(self.target(request["target"]))
        if op == "setattr":
            setattr(self.target(request["target"]), request["name"], decode(request["value"], self.handles))
            return None
        if op in ("call", "callattr"):
            func = self.target(request["target"])
            if op == "callattr":
                func = getattr(func, request["name"])
            args = decode(request.get("args", []), self.handles)
            kwargs = decode(request.get("kwargs", {"$d": []}), self.handles)
            return func(*args, **kwargs)
        raise ValueError(f"unknown op {op!r}")

    def handle(self, request):
        rid = request.get("id")
        try:
            reply = {"id": rid, "ok": encode(self.perform(request), self.handles)}
        except BaseException as exc:  # the candidate's exception, reported by type name
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and threading.current_thread() is threading.main_thread():
                raise
            reply = {"id": rid, "err": {"type": type(exc).__name__[:100], "msg": str(exc)[:MAX_MESSAGE]}}
        try:
            write_frame(self.wfd, reply, self.lock)
        except NonPlainValue as exc:
            write_frame(self.wfd, {"id": rid, "err": {"type": "NonPlainValue", "msg": str(exc)}}, self.lock)
        except OSError:
            os._exit(3)

    def _take(self, size):
        """The next ``size`` bytes of the channel (b"" at a clean end of stream), read up to 64 KiB at a
        time, so a small frame costs one system call; only the thread holding ``read_lock`` calls it."""
        buf = self.rbuf
        while len(buf) < size:
            chunk = os.read(self.rfd, min(max(size - len(buf), 1 << 16), 1 << 20))
            if not chunk:
                if not buf:
                    return b""
                raise EOFError("stream ended inside a frame")
            buf += chunk
        out = bytes(buf[:size])
        del buf[:size]
        return out

    def read_request(self):
        """The next request, or None at the end of the stream; a malformed frame ends the server."""
        try:
            header = self._take(4)
            if not header:
                return None
            (size,) = struct.unpack(">I", header)
            if size > MAX_FRAME:
                raise ValueError("request frame too large")
            request = json.loads(self._take(size).decode("utf-8"))
            if type(request) is not dict:
                raise ValueError("request is not an object")
            return request
        except (OSError, ValueError, EOFError):
            os._exit(3)

    def run(self):
        """Leader/follower: one thread at a time reads; it then handles what it read itself, after
        making sure another thread is ready to read, so a call that blocks never stalls the channel."""
        self.read_lock = threading.Lock()
        self.state_lock = threading.Lock()
        self.readers = 0
        self.closed = False
        self.loop()

    def loop(self):
        while True:
            with self.state_lock:
                self.readers += 1
            with self.read_lock:
                request = None if self.closed else self.read_request()
                if request is None:
                    self.closed = True
            with self.state_lock:
                self.readers -= 1
                spare = self.readers
            if request is None:
                return
            if spare == 0:
                try:
                    threading.Thread(target=self.loop, daemon=True).start()
                except RuntimeError:  # the candidate's own threads used up the process limit
                    pass
            self.handle(request)


def serve(rfd, wfd, workdir="."):
    """Serve requests from ``rfd``, replying on ``wfd``, with ``workdir`` first on ``sys.path``."""
    workdir = os.path.abspath(workdir)
    if workdir not in sys.path:
        sys.path.insert(0, workdir)
    sys.dont_write_bytecode = True
    threading.stack_size(4 * 1024 * 1024)
    Server(rfd, wfd).run()


def main(argv=None):
    """``python server.py [--fd N]``: serve until the runner closes the channel."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--fd"]:
        fd = int(argv[1])
        serve(fd, fd)
    else:
        rfd, wfd = os.dup(0), os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        serve(rfd, wfd)
    os._exit(0)


if __name__ == "__main__":
    main()
