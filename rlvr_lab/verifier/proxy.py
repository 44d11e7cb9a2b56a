"""The trusted runner's side of the proxy: candidate modules as plain-data stubs (section 17.7).

Hidden tests ``import solution`` as usual, but inside the trusted runner that name is a
:class:`RemoteModule`: every attribute read or call becomes a request frame to
:mod:`rlvr_lab.verifier.sandbox_server`, which runs the candidate's code in the sandbox. What comes back
is plain data of exact builtin types, or a :class:`RemoteObject` handle for an object that stays in the
sandbox (a pool, a connection). The rules that keep a verdict honest:

* A handle compares equal only to the same handle (identity), hashes by id, and refuses ``bool()``: an
  object whose ``__eq__`` always returns True never reaches an assertion as a value. Tests write
  ``assert conn is not None`` rather than ``assert conn``.
* A value that subclasses a builtin type (``class Sneaky(int)``) is refused by the server, and the call
  raises :class:`CandidateError`, so the test fails.
* An exception raised in the sandbox comes back as the builtin exception of the same name when there is
  one (``pytest.raises(ValueError)`` works), else as :class:`CandidateError`. Exceptions that are not
  ``Exception`` subclasses (``SystemExit``, ``KeyboardInterrupt``) never cross; they become
  :class:`CandidateError`.
* A malformed frame, a closed channel or a dead sandbox make the call (and every later call) raise
  :class:`SandboxGone`: the trial then fails on the tests, and the trial driver decides from the
  sandbox's exit record whether the candidate or the infrastructure was at fault.

Several test threads may call at once: requests carry ids; whichever waiting caller currently holds
the reader role reads replies and routes each to its caller (leader/follower, so a lone call costs no
thread hand-off).
"""

from __future__ import annotations

import ast
import base64
import builtins
import importlib.abc
import importlib.machinery
import json
import sys
import threading
import types
from typing import Any

from rlvr_lab.verifier.backend import Channel
from rlvr_lab.verifier import wire
from rlvr_lab.verifier.sandbox_server import MAX_FRAME, MAX_MESSAGE


#: Bytes of replies one trial may send the trusted runner; past it the channel is closed (the tests fail).
MAX_REPLY_BYTES = 64 * 1024 * 1024
#: Most names a ``from module import *`` of a candidate module may bind.
MAX_STAR_NAMES = 10_000
#: Most hash collisions among the elements of one set or the keys of one dict in a reply. A real set
#: holds distinct values, whose hashes rarely collide; many colliding values make building the set
#: quadratic in the trusted runner, so such a reply is refused as malformed.
MAX_HASH_COLLISIONS = 64


class CandidateError(Exception):
    """An error raised by (or caused by) the candidate's code in the sandbox, not a builtin exception."""


class SandboxGone(CandidateError):
    """The channel to the sandbox closed or carried a malformed frame; no further calls can succeed."""


class NotPlainData(TypeError):
    """A test tried to send something that is neither plain data nor a handle to the sandbox."""


def _safe_exception(name: str, message: str) -> BaseException:
    """The builtin ``Exception`` subclass called ``name``, else :class:`CandidateError`.

    >>> type(_safe_exception("ValueError", "bad")).__name__
    'ValueError'
    >>> type(_safe_exception("SystemExit", "0")).__name__
    'CandidateError'
    """
    cls = getattr(builtins, name, None) if isinstance(name, str) else None
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # builtins such as UnicodeDecodeError want more arguments
            pass
    return CandidateError(f"{name}: {message}")


def encode(value: Any, depth: int = 0) -> Any:
    """A test's argument -> JSON-ready tree (exact plain types and handles only).

    >>> encode((1, b"x", {"k": [None]}))
    {'$t': [1, {'$b': 'eA=='}, {'$d': [['k', [None]]]}]}
    """
    if depth > 100:
        raise NotPlainData("argument nested deeper than 100 levels")
    kind = type(value)
    if value is None or kind in (bool, int, str, float):
        return value
    if kind is bytes:
        return {"$b": base64.b64encode(value).decode("ascii")}
    if kind is list:
        return [encode(v, depth + 1) for v in value]
    if kind is tuple:
        return {"$t": [encode(v, depth + 1) for v in value]}
    if kind is dict:
        return {"$d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is set:
        return {"$s": [encode(v, depth + 1) for v in value]}
    if kind is frozenset:
        return {"$f": [encode(v, depth + 1) for v in value]}
    if isinstance(value, RemoteObject):
        return {"$h": object.__getattribute__(value, "_hid")}
    if isinstance(value, LazyRemote):
        return encode(value._rlvr_resolve(), depth + 1)
    raise NotPlainData(f"cannot send a {kind.__name__} to the sandbox: only plain data and handles cross")


def _check_hashes(keys: list) -> None:
    """Refuse set elements or dict keys whose hashes collide more than :data:`MAX_HASH_COLLISIONS` times.

    Counting distinct hashes is linear (a set of machine-word hashes), so the quadratic cost of
    inserting colliding values is never paid.

    >>> _check_hashes([1, 2, 3])
    >>> _check_hashes([k * (2**61 - 1) for k in range(1, 200)])
    Traceback (most recent call last):
    ...
    ValueError: 198 hash collisions among 199 set elements or dict keys (at most 64)
    """
    if len(keys) <= MAX_HASH_COLLISIONS:
        return
    collisions = len(keys) - len({hash(k) for k in keys})
    if collisions > MAX_HASH_COLLISIONS:
        raise ValueError(f"{collisions} hash collisions among {len(keys)} set elements or dict keys "
                         f"(at most {MAX_HASH_COLLISIONS})")


def decode(tree: Any, client: "ProxyClient", depth: int = 0) -> Any:
    """A reply tree from the (untrusted) sandbox -> exact plain values or handles; strict.

    Raises ``ValueError`` on anything that is not a well-formed tree of the wire format.

    >>> decode({"$d": [["a", {"$t": [1, 2.5]}]]}, None)
    {'a': (1, 2.5)}
    >>> decode({"$x": []}, None)
    Traceback (most recent call last):
    ...
    ValueError: unknown tag '$x'
    """
    if depth > 100:
        raise ValueError("reply nested deeper than 100 levels")
    kind = type(tree)
    if tree is None or kind in (bool, int, str, float):
        return tree
    if kind is list:
        return [decode(v, client, depth + 1) for v in tree]
    if kind is not dict or len(tree) not in (1, 2):
        raise ValueError(f"malformed value of type {kind.__name__}")
    if "$h" in tree:
        hid, cls = tree["$h"], tree.get("c", "object")
        if type(hid) is not int or type(cls) is not str:
            raise ValueError("malformed handle")
        return RemoteObject(client, hid, cls[:100])
    if len(tree) != 1:
        raise ValueError("malformed tagged value")
    (tag, body), = tree.items()
    if tag == "$b" and type(body) is str:
        return base64.b64decode(body.encode("ascii"), validate=True)
    if type(body) is not list:
        raise ValueError(f"malformed body for tag {tag!r}")
    items = [decode(v, client, depth + 1) for v in body] if tag != "$d" else None
    if tag == "$t":
        return tuple(items)
    if tag in ("$s", "$f"):
        _check_hashes(items)
        return set(items) if tag == "$s" else frozenset(items)
    if tag == "$d":
        pairs = []
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("malformed dict item")
            pairs.append((decode(pair[0], client, depth + 1), decode(pair[1], client, depth + 1)))
        _check_hashes([k for k, _ in pairs])
        return dict(pairs)
    raise ValueError(f"unknown tag {tag!r}")


class ProxyClient:
    """Multiplexed request/reply over a :class:`~rlvr_lab.verifier.backend.Channel` to the sandbox."""

    def __init__(self, channel: Channel):
        self.channel = channel
        self._send_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._next_id = 0
        self._waiting: dict[int, list] = {}  # request id -> [Event, reply or None]
        self._reading = False  # one caller at a time reads the channel (leader/follower)
        self._broken: str | None = None
        self._reply_budget = MAX_REPLY_BYTES  # bytes the sandbox may still send (bounds decode work)
        self.star_cache: dict[str, frozenset[str]] = {}  # module -> names its star import binds

    # -- transport -------------------------------------------------------------------------------
    def _read_exact(self, size: int) -> bytes:
        parts, remaining = [], size
        while remaining:
            chunk = self.channel.recv(min(remaining, 1 << 20))
            if not chunk:
                raise EOFError("the sandbox closed the channel")
            parts.append(chunk)
            remaining -= len(chunk)
        return b"".join(parts)

    def _read_one(self) -> None:
        """Read one reply frame and hand it to its waiting caller (the caller holds the reader role)."""
        (size,) = wire.HEADER.unpack(self._read_exact(wire.HEADER.size))
        if size > MAX_FRAME:
            raise ValueError(f"reply frame of {size} bytes exceeds {MAX_FRAME}")
        self._reply_budget -= size + 4
        if self._reply_budget < 0:
            raise ValueError(f"the sandbox's replies exceeded {MAX_REPLY_BYTES} bytes in one trial")
        reply = json.loads(self._read_exact(size).decode("utf-8"))
        if type(reply) is not dict or type(reply.get("id")) is not int:
            raise ValueError("reply without an integer id")
        with self._state_lock:
            slot = self._waiting.pop(reply["id"], None)
            if slot is not None:
                slot[1] = reply
        if slot is None:
            raise ValueError(f"reply to unknown request {reply['id']}")
        slot[0].set()

    def _break(self, why: str) -> None:
        with self._state_lock:
            if self._broken is None:
                self._broken = why
            waiting, self._waiting = self._waiting, {}
        for slot in waiting.values():
            slot[0].set()

    def _await(self, slot: list) -> None:
        """Wait for ``slot``'s reply, reading the channel ourselves whenever nobody else is."""
        while True:
            with self._state_lock:
                if slot[1] is not None or self._broken is not None:
                    return
                lead = not self._reading
                if lead:
                    self._reading = True
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
            finally:
                with self._state_lock:
                    self._reading = False
                    successor = next(iter(self._waiting.values()), None)
                if successor is not None:
                    successor[0].set()  # wake a waiting caller to take over reading

    def request(self, message: dict) -> Any:
        """Send one request and wait for its reply; returns the decoded value or raises."""
        with self._state_lock:
            if self._broken is not None:
                raise SandboxGone(f"sandbox unavailable: {self._broken}")
            self._next_id += 1
            rid = self._next_id
            slot = [threading.Event(), None]
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
                return decode(reply["ok"], self)
            err = reply.get("err")
            if type(err) is not dict or type(err.get("type")) is not str or type(err.get("msg")) is not str:
                raise ValueError("malformed error reply")
        except (ValueError, TypeError, RecursionError) as exc:
            self._break(f"malformed reply: {exc}")
            raise SandboxGone(f"malformed reply from the sandbox: {exc}") from None
        raise _safe_exception(err["type"][:100], err["msg"][:MAX_MESSAGE])

    # -- operations ------------------------------------------------------------------------------
    def init(self, seed: int) -> None:
        self.request({"op": "init", "seed": int(seed)})

    def getattr(self, target: dict, name: str) -> Any:
        return self.request({"op": "getattr", "target": target, "name": name})

    def names(self, target: dict) -> list[str]:
        """The names ``from module import *`` binds in the sandbox's module (checked: identifiers only).

        Names of builtins (``abs``, ``len``, ``isinstance``, ...) and dunder names are dropped: a hidden
        test's ``abs(candidate(x) - y) < 1e-6`` must use the real ``abs``, not one the candidate exports.
        """
        names = self.request({"op": "names", "target": target})
        if type(names) is not list or len(names) > MAX_STAR_NAMES or not all(
                type(n) is str and n.isidentifier() for n in names):
            raise CandidateError(f"the module's public names are not a list of at most {MAX_STAR_NAMES} identifiers")
        return [n for n in names if not hasattr(builtins, n) and not n.startswith("__")]

    def setattr(self, target: dict, name: str, value: Any) -> None:
        self.request({"op": "setattr", "target": target, "name": name, "value": encode(value)})

    def call(self, target: dict, args: tuple, kwargs: dict, name: str | None = None) -> Any:
        message = {"op": "call" if name is None else "callattr", "target": target,
                   "args": [encode(a) for a in args], "kwargs": encode(dict(kwargs))}
        if name is not None:
            message["name"] = name
        return self.request(message)


class RemoteObject:
    """A handle to an object that lives in the sandbox; attribute reads and calls are forwarded.

    Equality is identity of the handle, never the candidate's ``__eq__``; truth testing raises.
    """

    __slots__ = ("_client", "_hid", "_cls")

    def __init__(self, client: ProxyClient, hid: int, cls: str):
        object.__setattr__(self, "_client", client)
        object.__setattr__(self, "_hid", hid)
        object.__setattr__(self, "_cls", cls)

    def _target(self) -> dict:
        return {"h": object.__getattribute__(self, "_hid")}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return object.__getattribute__(self, "_client").getattr(self._target(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "_client").setattr(self._target(), name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "_client").call(self._target(), args, kwargs)

    def _method(self, name: str, *args: Any) -> Any:
        return object.__getattribute__(self, "_client").call(self._target(), args, {}, name=name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemoteObject) and other._hid == self._hid and other._client is self._client

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("remote", object.__getattribute__(self, "_hid")))

    def __bool__(self) -> bool:
        raise CandidateError(f"the truth value of a remote {self._cls} is not plain data; compare explicitly")

    def __repr__(self) -> str:
        return f"<remote {object.__getattribute__(self, '_cls')} #{object.__getattribute__(self, '_hid')}>"

    def __len__(self) -> int:
        n = self._method("__len__")
        if type(n) is not int or n < 0:
            raise CandidateError("__len__ did not return a non-negative int")
        return n

    def __getitem__(self, key: Any) -> Any:
        return self._method("__getitem__", key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._method("__setitem__", key, value)

    def __delitem__(self, key: Any) -> None:
        self._method("__delitem__", key)

    def __contains__(self, item: Any) -> bool:
        found = self._method("__contains__", item)
        if type(found) is not bool:
            raise CandidateError("__contains__ did not return a bool")
        return found

    def __iter__(self) -> "RemoteObject":
        it = self._method("__iter__")
        if not isinstance(it, RemoteObject):
            raise CandidateError("__iter__ did not return an iterator object")
        return it

    def __next__(self) -> Any:
        return self._method("__next__")

    def __enter__(self) -> Any:
        return self._method("__enter__")

    def __exit__(self, *exc: Any) -> bool:
        self._method("__exit__", None, None, None)
        return False  # never let the candidate swallow a test's exception


class Binding:
    """Which :class:`ProxyClient` the remote modules talk to; empty while the runner pre-collects.

    >>> Binding().get()
    Traceback (most recent call last):
    ...
    rlvr_lab.verifier.proxy.SandboxGone: no sandbox is bound yet: candidate names are resolved at test time
    """

    def __init__(self, client: ProxyClient | None = None):
        self.client = client
        self.star_names: tuple[str, ...] | None = None
        """While no sandbox is bound: the names ``from module import *`` binds (late-bound), e.g. the
        free names of the hidden tests (:func:`free_names`); None makes a star import wait for a sandbox."""

    def get(self) -> ProxyClient:
        if self.client is None:
            raise SandboxGone("no sandbox is bound yet: candidate names are resolved at test time")
        return self.client


def free_names(sources: list[str]) -> tuple[str, ...]:
    r"""Names the (trusted) hidden-test ``sources`` read but never bind, builtins and dunders excluded:
    what a ``from module import *`` must provide them, so they can be bound late before any sandbox.

    >>> free_names(["from solution import *\ndef check(candidate):\n    x = poly([1], 2)\n    assert abs(x) == candidate(x)\n"])
    ('poly',)
    """
    loads: set[str] = set()
    bound: set[str] = set()
    for text in sources:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name):
                (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
    return tuple(sorted(n for n in loads - bound if not hasattr(builtins, n) and not n.startswith("__")))


def star_imports(sources: list[str], modules: tuple[str, ...]) -> bool:
    r"""True when some source does ``from m import *`` for a module ``m`` (or a submodule) in ``modules``.

    >>> star_imports(["from solution import *\n"], ("solution",)), star_imports(["from os import *\n"], ("solution",))
    (True, False)
    """
    for text in sources:
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in modules
                    and any(a.name == "*" for a in node.names)):
                return True
    return False


def _lazy_op(op: str):
    def method(self: "LazyRemote", *args: Any) -> Any:
        return getattr(self._rlvr_resolve(), op)(*args)

    method.__name__ = op
    return method


class _StarName(str):
    """A name handed out by ``__all__`` during pre-collection: ``getattr`` with it makes a star-bound
    :class:`LazyRemote`, which checks that the candidate's module really exports that name."""

    __slots__ = ()


class LazyRemote:
    """``from solution import f`` executed while no sandbox is bound (the runner collects the hidden tests
    once, before any trial): a late-bound name that is looked up in the sandbox each time it is used.

    Calling it is one request (``callattr`` on the module); attribute reads and the operators below look
    the current value up first. Identity (``is``) and ``isinstance`` see the stand-in, so hidden tests
    should import callables at module level and read plain values at test time.
    """

    __slots__ = ("_rlvr_binding", "_rlvr_module", "_rlvr_name", "_rlvr_star")

    def __init__(self, binding: Binding, module: str, name: str, star: bool = False):
        object.__setattr__(self, "_rlvr_binding", binding)
        object.__setattr__(self, "_rlvr_module", module)
        object.__setattr__(self, "_rlvr_name", str(name))
        object.__setattr__(self, "_rlvr_star", star)

    def _rlvr_client(self) -> ProxyClient:
        """The bound client; for a star-bound name, first check the module exports it (else NameError,
        as a real ``from module import *`` would have left the name undefined)."""
        client = self._rlvr_binding.get()
        if self._rlvr_star:
            module = self._rlvr_module
            if module not in client.star_cache:
                client.star_cache[module] = frozenset(client.names({"m": module}))
            if self._rlvr_name not in client.star_cache[module]:
                raise NameError(f"name {self._rlvr_name!r} is not defined ({module} does not export it)")
        return client

    def _rlvr_resolve(self) -> Any:
        return self._rlvr_client().getattr({"m": self._rlvr_module}, self._rlvr_name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._rlvr_client().call({"m": self._rlvr_module}, args, kwargs, name=self._rlvr_name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rlvr_resolve(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._rlvr_resolve(), name, value)

    def __repr__(self) -> str:
        return f"<{self._rlvr_module}.{self._rlvr_name} in the sandbox>"

    def __hash__(self) -> int:
        return hash(self._rlvr_resolve())

    for _op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__len__", "__iter__",
                "__contains__", "__getitem__", "__str__", "__int__", "__float__", "__index__", "__neg__",
                "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                "__rtruediv__", "__floordiv__", "__mod__", "__pow__", "__format__", "__enter__", "__exit__"):
        locals()[_op] = _lazy_op(_op)
    del _op


class RemoteModule(types.ModuleType):
    """A candidate module as the hidden tests see it: attribute reads go to the sandbox.

    While no sandbox is bound (pre-collection), attributes come back as :class:`LazyRemote` names.
    ``from module import *`` reads ``__all__``, which asks the sandbox for :func:`public_names
    <rlvr_lab.verifier.sandbox_server.public_names>` (``__all__`` when the module defines one, else its
    public names); while no sandbox is bound it raises, so such a test file is collected in each trial.
    """

    def __init__(self, name: str, binding: Binding):
        super().__init__(name)
        self.__path__ = []  # a package, so ``import pkg.sub`` reaches the finder again
        self.__dict__["_rlvr_binding"] = binding

    def __getattr__(self, name: str) -> Any:
        binding = self.__dict__["_rlvr_binding"]
        if name == "__all__":  # ``from module import *``: the sandbox says which names
            if binding.client is None and binding.star_names is not None:
                # pre-collection: the names the tests use, bound late and checked against the sandbox's
                # public names (``__all__`` honoured) when first used
                return [_StarName(n) for n in binding.star_names]
            return binding.get().names({"m": self.__name__})
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if binding.client is None:
            return LazyRemote(binding, self.__name__, name, star=type(name) is _StarName)
        return binding.client.getattr({"m": self.__name__}, name)


class _RemoteLoader(importlib.abc.Loader):
    def __init__(self, binding: Binding):
        self.binding = binding

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return RemoteModule(spec.name, self.binding)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class RemoteFinder(importlib.abc.MetaPathFinder):
    """Serves ``import m`` (and ``m.sub``) for every top-level name in ``modules`` from the sandbox."""

    def __init__(self, modules: tuple[str, ...], binding: Binding):
        self.modules = frozenset(modules)
        self.loader = _RemoteLoader(binding)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] not in self.modules:
            return None
        return importlib.machinery.ModuleSpec(fullname, self.loader, is_package=True)


def install(modules: tuple[str, ...], binding: Binding | ProxyClient) -> RemoteFinder:
    """Put a :class:`RemoteFinder` first on ``sys.meta_path`` and drop any cached module of those names."""
    if isinstance(binding, ProxyClient):
        binding = Binding(binding)
    for name in list(sys.modules):
        if name.split(".")[0] in modules:
            del sys.modules[name]
    finder = RemoteFinder(tuple(modules), binding)
    sys.meta_path.insert(0, finder)
    return finder
