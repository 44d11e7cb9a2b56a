"""Stand-ins for what stays in the sandbox, and the errors a test meets there (section 17.7).

A :class:`RemoteObject` is a handle to a candidate object (a generator, an instance of the candidate's
class): attribute reads, calls and ``next()`` are requests through the trial's
:class:`~rlvr_lab.verifier.proxy.client.ProxyClient`; it equals only itself. A :class:`LazyRemote` is a
candidate name imported before any sandbox was bound. What crosses by value instead is
:mod:`~rlvr_lab.verifier.proxy.values`.
"""

from __future__ import annotations

from typing import Any


class CandidateError(Exception):
    """An error raised by (or caused by) the candidate's code in the sandbox, not a builtin exception."""


class SandboxGone(CandidateError):
    """The channel to the sandbox closed or carried a malformed frame; no further calls can succeed."""


class TrialDeadline(CandidateError):
    """A request after the trial's time was up (an endless generator, say): the test fails, as the
    candidate's fault, instead of the runner overrunning its own deadline."""


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
        try:
            n = self._method("__len__")
        except AttributeError:  # a generator, say: ``list(handle)`` asks for a length hint first
            raise TypeError(f"a remote {object.__getattribute__(self, '_cls')} has no len()") from None
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

    def __iter__(self) -> RemoteObject:
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
    def method(self: LazyRemote, *args: Any) -> Any:
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

    for _op in (
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__bool__",
        "__len__",
        "__iter__",
        "__contains__",
        "__getitem__",
        "__str__",
        "__int__",
        "__float__",
        "__index__",
        "__neg__",
        "__add__",
        "__radd__",
        "__sub__",
        "__rsub__",
        "__mul__",
        "__rmul__",
        "__truediv__",
        "__rtruediv__",
        "__floordiv__",
        "__mod__",
        "__pow__",
        "__format__",
        "__enter__",
        "__exit__",
    ):
        locals()[_op] = _lazy_op(_op)
    del _op
