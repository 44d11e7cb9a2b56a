"""What crosses the proxy: plain data, and stand-ins for what stays in the sandbox (section 17.7).

The trusted runner never holds a candidate's object. A reply is decoded strictly (:func:`decode`) into
plain data of exact builtin types or a :class:`RemoteObject` handle, which compares by identity only and
refuses ``bool()``, so an object whose ``__eq__`` always returns True never reaches an assertion as a
value. A builtin subclass is refused and a sandbox exception comes back as the builtin of the same name
or :class:`CandidateError` (:func:`safe_exception`); a broken channel raises :class:`SandboxGone`. Each
way, the test fails and the trial driver decides from the sandbox's exit record whose fault it was.
"""

from __future__ import annotations

import base64
import builtins
from typing import Any

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


def safe_exception(name: str, message: str) -> BaseException:
    """The builtin ``Exception`` subclass called ``name``, else :class:`CandidateError`.

    >>> type(safe_exception("ValueError", "bad")).__name__
    'ValueError'
    >>> type(safe_exception("SystemExit", "0")).__name__
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


def decode(tree: Any, client: Any, depth: int = 0) -> Any:
    """A reply tree from the (untrusted) sandbox -> exact plain values or handles (talking through
    ``client``, the :class:`~rlvr_lab.verifier.proxy.client.ProxyClient`); strict.

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


class RemoteObject:
    """A handle to an object that lives in the sandbox; attribute reads and calls are forwarded through
    ``client`` (the :class:`~rlvr_lab.verifier.proxy.client.ProxyClient` whose reply made it).

    Equality is identity of the handle, never the candidate's ``__eq__``; truth testing raises (tests
    write ``assert conn is not None``, not ``assert conn``).
    """

    __slots__ = ("_client", "_hid", "_cls")

    def __init__(self, client: Any, hid: int, cls: str):
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


def _lazy_op(op: str):
    def method(self: "LazyRemote", *args: Any) -> Any:
        return getattr(self._rlvr_resolve(), op)(*args)

    method.__name__ = op
    return method


class LazyRemote:
    """``from solution import f`` executed while no sandbox is bound (the runner collects the hidden tests
    once, before any trial): a late-bound name that is looked up in the sandbox each time it is used.

    Calling it is one request (``callattr`` on the module); attribute reads and the operators below look
    the current value up first. Identity (``is``) and ``isinstance`` see the stand-in, so hidden tests
    should import callables at module level and read plain values at test time. ``binding`` is the
    runner's :class:`~rlvr_lab.verifier.proxy.imports.Binding`.
    """

    __slots__ = ("_rlvr_binding", "_rlvr_module", "_rlvr_name", "_rlvr_star")

    def __init__(self, binding: Any, module: str, name: str, star: bool = False):
        object.__setattr__(self, "_rlvr_binding", binding)
        object.__setattr__(self, "_rlvr_module", module)
        object.__setattr__(self, "_rlvr_name", str(name))
        object.__setattr__(self, "_rlvr_star", star)

    def _rlvr_client(self) -> Any:
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
