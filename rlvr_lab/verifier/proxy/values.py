"""What crosses the proxy: plain data, library values, shared objects, and stand-ins (section 17.7).

The trusted runner never holds a candidate's object. A reply is decoded strictly (:func:`decode`) into
values whose code is the runner's own, or a :class:`RemoteObject` handle, which compares by identity
only and refuses ``bool()``, so an object whose ``__eq__`` always returns True never reaches an
assertion as a value. What crosses, and why:

* **Plain data** of exact builtin types; a builtin subclass is refused (its ``__eq__`` would be the
  candidate's).
* **Standard-library values with their exact type**: ``defaultdict`` (its ``default_factory`` only when
  it is ``None`` or a builtin of :data:`~.server.FACTORIES`, named on the wire and looked up here; any
  other factory is refused, since it would be the candidate's function), ``OrderedDict``, ``Counter``,
  ``deque`` (with ``maxlen``), ``Fraction``, ``Decimal`` (bounded). Exact types only: a candidate's
  subclass is refused like a subclass of ``dict``.
* **Named tuples**: one of a shared module becomes the runner's own class; any other (a candidate's or a
  test's own) becomes a class the receiving side makes with ``collections.namedtuple`` from the name and
  field names alone. So ``result == (1, 2)``, ``result.x`` and ``type(result).__name__`` hold as in
  plain Python, the candidate's methods never run here, and ``isinstance(result, solution.Point)``
  cannot hold (the runner never has the candidate's class). A plain tuple would lose the type.
* **Objects of the fixture's shared classes** (a ``ListNode``, a graph ``Node``, a shared dataclass:
  classes of the test-helper modules the manifest names, :class:`~.server.Shared`) cross *by value*
  as a graph: a message carries a table of every such object met, each once with its fields, and values
  refer to them by id, so cycles and shared references arrive as they were sent (within one message;
  across messages objects are copies, and a candidate's in-place change of an argument is not seen by
  the test: tests check what a function returns). Decoding makes each object with ``object.__new__``
  of the runner's own class, from its own copy of the module, and sets only declared fields
  (:func:`~.server.set_fields`): nothing is unpickled, no method of the sandbox's class runs, and a
  candidate file named like the shared module is never used on either side (the sandbox executes the
  runner's copy, sent at ``init``, before any candidate import). The alternative, handles limited to
  the class's fields, would cost a round trip per attribute read and leave ``==`` to identity.
* **Handles** for everything else, including generators and iterators: each ``next()`` is one
  request, a ``StopIteration`` ends the loop, the generator's exception arrives as the builtin of the
  same name (:func:`safe_exception`) or :class:`CandidateError`, and a request after the trial's
  time is up raises :class:`TrialDeadline`, so an endless generator is a failed test.

A broken channel raises :class:`SandboxGone`. Each way, the test fails and the trial driver decides
from the sandbox's exit record whose fault it was.
"""

from __future__ import annotations

import base64
import builtins
import collections
import decimal
from decimal import Decimal
from fractions import Fraction
from typing import Any

from rlvr_lab.verifier.proxy.server import FACTORIES, MAPPINGS, Shared, named_type, object_table, set_fields

#: Most hash collisions among the elements of one set or the keys of one dict in a reply. A real set
#: holds distinct values, whose hashes rarely collide; many colliding values make building the set
#: quadratic in the trusted runner, so such a reply is refused as malformed.
MAX_HASH_COLLISIONS = 64
#: Longest ``Decimal`` in a reply, characters, and the largest exponent it may have.
MAX_DECIMAL = 4300


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


class TrialDeadline(CandidateError):
    """A request after the trial's time was up (an endless generator, say): the test fails, as the
    candidate's fault, instead of the runner overrunning its own deadline."""


class Graph:
    """The shared objects of one message, by identity (the ``objs`` table, :func:`~.server.object_table`),
    with the fixture's shared classes (``shared``, a :class:`~.server.Shared` built from the runner's
    own copies) and the named-tuple types this side made (``cache``, one trial's)."""

    __slots__ = ("shared", "cache", "ids", "found", "keep", "objects")

    def __init__(self, shared: Shared | None = None, cache: dict | None = None):
        self.shared = shared if shared is not None else Shared()
        self.cache = {} if cache is None else cache
        self.ids: dict[int, int] = {}
        self.found: list = []
        self.keep: list = []
        self.objects: dict[int, Any] = {}

    def ref(self, obj: Any) -> dict:
        oid = self.ids.get(id(obj))
        if oid is None:
            oid = self.ids[id(obj)] = len(self.ids) + 1
            self.found.append(obj)
            self.keep.append(obj)
        return {"$r": oid}

    def table(self) -> list:
        return object_table(self.found, self.ids, self.shared, lambda v: encode(v, graph=self))


def _library(value: Any, kind: type, depth: int, graph: Graph | None) -> Any:
    """A standard-library value, shared object or named tuple as a tree (see the server's ``encode``)."""
    pairs = lambda: [[encode(k, depth + 1, graph), encode(v, depth + 1, graph)] for k, v in dict.items(value)]
    if kind is collections.defaultdict:
        factory = value.default_factory
        name = None if factory is None else getattr(factory, "__name__", None)
        if factory is not None and FACTORIES.get(name) is not factory:
            raise NotPlainData(f"cannot send a defaultdict whose default_factory is {factory!r:.80}: only None or "
                               f"one of {', '.join(FACTORIES)} cross")
        return {"$dd": [name, pairs()]}
    if kind is collections.OrderedDict:
        return {"$od": pairs()}
    if kind is collections.Counter:
        return {"$c": pairs()}
    if kind is collections.deque:
        return {"$q": [value.maxlen, [encode(v, depth + 1, graph) for v in value]]}
    if kind is Fraction:
        return {"$fr": [value.numerator, value.denominator]}
    if kind is Decimal:
        return {"$dc": str(value)}
    graph = graph if graph is not None else Graph()
    if graph.shared.name_of.get(kind) in graph.shared.objects:
        return graph.ref(value)
    if isinstance(value, tuple) and type(getattr(kind, "_fields", None)) is tuple:
        return {"$nt": [graph.shared.name_of.get(kind, kind.__name__), list(kind._fields),
                        [encode(v, depth + 1, graph) for v in tuple.__iter__(value)]]}
    return None


def encode(value: Any, depth: int = 0, graph: Graph | None = None) -> Any:
    """A test's argument -> JSON-ready tree (exact plain types, the standard-library values of the
    module docstring, objects of the fixture's shared classes as references into ``graph``, handles).

    >>> encode((1, b"x", {"k": [None]}))
    {'$t': [1, {'$b': 'eA=='}, {'$d': [['k', [None]]]}]}
    >>> encode(collections.defaultdict(list, {"a": [1]}))
    {'$dd': ['list', [['a', [1]]]]}
    """
    if depth > 100:
        raise NotPlainData("argument nested deeper than 100 levels")
    kind = type(value)
    if value is None or kind in (bool, int, str, float):
        return value
    if kind is bytes:
        return {"$b": base64.b64encode(value).decode("ascii")}
    if kind is list:
        return [encode(v, depth + 1, graph) for v in value]
    if kind is tuple:
        return {"$t": [encode(v, depth + 1, graph) for v in value]}
    if kind is dict:
        return {"$d": [[encode(k, depth + 1, graph), encode(v, depth + 1, graph)] for k, v in value.items()]}
    if kind is set:
        return {"$s": [encode(v, depth + 1, graph) for v in value]}
    if kind is frozenset:
        return {"$f": [encode(v, depth + 1, graph) for v in value]}
    if isinstance(value, RemoteObject):
        return {"$h": object.__getattribute__(value, "_hid")}
    if isinstance(value, LazyRemote):
        return encode(value._rlvr_resolve(), depth + 1, graph)
    tree = _library(value, kind, depth, graph)
    if tree is not None:
        return tree
    raise NotPlainData(f"cannot send a {kind.__name__} to the sandbox: only plain data, handles, the standard "
                       "library's containers and numbers, and objects of the fixture's shared classes cross")


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


def _pairs(body: Any, client: Any, depth: int, graph: Graph | None) -> list:
    if type(body) is not list:
        raise ValueError("malformed mapping")
    pairs = []
    for pair in body:
        if type(pair) is not list or len(pair) != 2:
            raise ValueError("malformed dict item")
        pairs.append((decode(pair[0], client, depth + 1, graph), decode(pair[1], client, depth + 1, graph)))
    _check_hashes([k for k, _ in pairs])
    return pairs


def _decimal(body: Any) -> Decimal:
    """A ``$dc`` body: a Decimal of at most :data:`MAX_DECIMAL` characters whose exponent is no larger
    than an int's digit limit (so ``int(value)`` in a test cannot take the runner's memory)."""
    if type(body) is not str or len(body) > MAX_DECIMAL:
        raise ValueError("malformed Decimal")
    try:
        value = Decimal(body)
    except decimal.InvalidOperation:
        raise ValueError("malformed Decimal") from None
    if value.is_finite() and abs(value.adjusted()) > MAX_DECIMAL:
        raise ValueError(f"Decimal exponent beyond {MAX_DECIMAL}")
    return value


def load_objects(table: Any, client: Any, graph: Graph) -> None:
    """Rebuild a reply's ``objs`` table into instances of the runner's own shared classes (made with
    ``object.__new__``, fields set by :func:`~.server.set_fields`: no code of the candidate, and no
    ``__init__``), filled in table order; strict like :func:`decode`."""
    if type(table) is not list:
        raise ValueError("malformed object table")
    for entry in table:
        if type(entry) is not list or len(entry) != 3 or type(entry[0]) is not int or entry[0] in graph.objects \
                or type(entry[1]) is not str or type(entry[2]) is not list:
            raise ValueError("malformed object table entry")
        cls = graph.shared.objects.get(entry[1])
        if cls is None:
            raise ValueError(f"{entry[1][:100]!r} is not a shared class of this fixture")
        graph.objects[entry[0]] = object.__new__(cls)
    for oid, _, fields in table:
        items = []
        for pair in fields:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("malformed field")
            items.append((pair[0], decode(pair[1], client, 1, graph)))
        set_fields(graph.objects[oid], items)


def decode(tree: Any, client: Any, depth: int = 0, graph: Graph | None = None) -> Any:
    """A reply tree from the (untrusted) sandbox -> exact plain values or handles (talking through
    ``client``, the :class:`~rlvr_lab.verifier.proxy.client.ProxyClient`); strict. ``graph``: the
    reply's shared objects, already rebuilt (:func:`load_objects`).

    Raises ``ValueError`` on anything that is not a well-formed tree of the wire format.

    >>> decode({"$d": [["a", {"$t": [1, 2.5]}]]}, None)
    {'a': (1, 2.5)}
    >>> decode({"$q": [2, [1, 2]]}, None)
    deque([1, 2], maxlen=2)
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
        return [decode(v, client, depth + 1, graph) for v in tree]
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
    if tag == "$dc":
        return _decimal(body)
    if tag == "$r":
        if graph is None or type(body) is not int or body not in graph.objects:
            raise ValueError("reference to an object the reply does not hold")
        return graph.objects[body]
    if type(body) is not list:
        raise ValueError(f"malformed body for tag {tag!r}")
    if tag in ("$d", "$od", "$c"):
        return (dict if tag == "$d" else MAPPINGS[tag])(_pairs(body, client, depth, graph))
    if tag == "$dd":
        if len(body) != 2 or not (body[0] is None or body[0] in FACTORIES):
            raise ValueError("malformed defaultdict")
        return collections.defaultdict(FACTORIES.get(body[0]), _pairs(body[1], client, depth, graph))
    if tag == "$q":
        if len(body) != 2 or not (body[0] is None or (type(body[0]) is int and body[0] >= 0)) or type(body[1]) is not list:
            raise ValueError("malformed deque")
        return collections.deque([decode(v, client, depth + 1, graph) for v in body[1]], body[0])
    if tag == "$fr":
        if len(body) != 2 or type(body[0]) is not int or type(body[1]) is not int or body[1] <= 0:
            raise ValueError("malformed Fraction")
        return Fraction(body[0], body[1])
    if tag == "$nt":
        if len(body) != 3 or type(body[2]) is not list or type(body[1]) is not list or len(body[1]) != len(body[2]):
            raise ValueError("malformed named tuple")
        graph = graph if graph is not None else Graph()
        cls = named_type(body[0][:100] if type(body[0]) is str else body[0], body[1], graph.shared, graph.cache)
        return tuple.__new__(cls, [decode(v, client, depth + 1, graph) for v in body[2]])
    items = [decode(v, client, depth + 1, graph) for v in body]
    if tag == "$t":
        return tuple(items)
    if tag in ("$s", "$f"):
        _check_hashes(items)
        return set(items) if tag == "$s" else frozenset(items)
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
