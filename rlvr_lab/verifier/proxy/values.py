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

# SandboxGone and TrialDeadline are re-exported: the proxy's errors were importable from here before handles.py
from rlvr_lab.verifier.proxy.handles import (  # noqa: F401
    CandidateError,
    LazyRemote,
    RemoteObject,
    SandboxGone,
    TrialDeadline,
)
from rlvr_lab.verifier.proxy.server import FACTORIES, MAPPINGS, Shared, named_type, object_table, set_fields


#: Most hash collisions among the elements of one set or the keys of one dict in a reply. A real set
#: holds distinct values, whose hashes rarely collide; many colliding values make building the set
#: quadratic in the trusted runner, so such a reply is refused as malformed.
MAX_HASH_COLLISIONS = 64
#: Longest ``Decimal`` in a reply, characters, and the largest exponent it may have.
MAX_DECIMAL = 4300


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

    def pairs() -> list:
        return [[encode(k, depth + 1, graph), encode(v, depth + 1, graph)] for k, v in dict.items(value)]

    if kind is collections.defaultdict:
        factory = value.default_factory
        name = None if factory is None else getattr(factory, "__name__", None)
        if factory is not None and FACTORIES.get(name) is not factory:
            raise NotPlainData(
                f"cannot send a defaultdict whose default_factory is {factory!r:.80}: only None or "
                f"one of {', '.join(FACTORIES)} cross"
            )
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
        return {
            "$nt": [
                graph.shared.name_of.get(kind, kind.__name__),
                list(kind._fields),
                [encode(v, depth + 1, graph) for v in tuple.__iter__(value)],
            ]
        }
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
    raise NotPlainData(
        f"cannot send a {kind.__name__} to the sandbox: only plain data, handles, the standard "
        "library's containers and numbers, and objects of the fixture's shared classes cross"
    )


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
        raise ValueError(
            f"{collisions} hash collisions among {len(keys)} set elements or dict keys (at most {MAX_HASH_COLLISIONS})"
        )


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
        if (
            type(entry) is not list
            or len(entry) != 3
            or type(entry[0]) is not int
            or entry[0] in graph.objects
            or type(entry[1]) is not str
            or type(entry[2]) is not list
        ):
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
    ((tag, body),) = tree.items()
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
        if (
            len(body) != 2
            or not (body[0] is None or (type(body[0]) is int and body[0] >= 0))
            or type(body[1]) is not list
        ):
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
