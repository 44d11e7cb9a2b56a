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
import collections
import importlib
import json
import os
import random
import struct
import sys
import threading
import types

#: Largest frame either side accepts, bytes; a bigger frame is a protocol violation.
MAX_FRAME = 16 * 1024 * 1024
#: Longest exception message sent back, characters.
MAX_MESSAGE = 2000

_PLAIN_BASES = (bool, int, float, str, bytes, bytearray, list, tuple, dict, set, frozenset)
#: The ``default_factory`` values a ``defaultdict`` may carry across, by name: builtins the receiving
#: side has itself (a candidate's function would have to run on the trusted side, so it never crosses).
FACTORIES = {f.__name__: f for f in (list, int, set, dict, str, float, tuple, frozenset, bool)}
#: ``Py_TPFLAGS_HEAPTYPE``: set on classes written in Python, clear on builtin types written in C.
HEAPTYPE = 1 << 9
#: Pair-holding library types that cross by value with their exact type, by wire tag.
MAPPINGS = {"$od": collections.OrderedDict, "$c": lambda pairs: collections.Counter(dict(pairs))}


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


class Shared:
    """The classes of the fixture's shared modules (test helpers such as a ``ListNode``), by wire name.

    Both sides build this from their *own* copy of each module (the sandbox: the source the runner sends
    at ``init``, executed before any candidate import; the runner: the file in its hidden-test
    directory), so a class's code never comes from the other side. ``objects``: classes whose instances
    cross as a graph of fields; ``named``: named-tuple classes; ``name_of``: class -> wire name.
    """

    def __init__(self, modules=()):
        self.objects, self.named, self.name_of = {}, {}, {}
        for module in modules:
            self.add(module)

    def add(self, module):
        for value in list(vars(module).values()):
            if not isinstance(value, type) or value.__module__ != module.__name__:
                continue  # imported from elsewhere: not the fixture's own class
            name = f"{module.__name__}.{value.__qualname__}"
            if issubclass(value, tuple) and type(getattr(value, "_fields", None)) is tuple:
                self.named[name] = value
            elif (
                type(value) is type
                and not issubclass(value, BaseException)
                and all(base is object or base.__flags__ & HEAPTYPE for base in value.__mro__)
            ):
                self.objects[name] = value
            else:
                continue  # built on a type written in C (dict, deque, ...), an enum, an exception: not by value
            self.name_of[value] = name


def load_shared(name, source):
    """Execute a fixture's shared module from ``source`` as module ``name`` and register it in
    ``sys.modules`` (before the candidate's code runs, so a candidate file of that name is never used)."""
    module = types.ModuleType(name)
    module.__file__ = f"<fixture shared module {name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec", dont_inherit=True), module.__dict__)
    return module


def declared_fields(cls):
    """A shared class's fields: a dataclass's fields, else the ``__slots__`` of its whole MRO, else None
    (the instance's ``__dict__`` holds them: any name the class does not define as a method or
    descriptor, see :func:`set_fields`)."""
    dataclasses = sys.modules.get("dataclasses")  # imported by whoever defined a dataclass
    if dataclasses is not None and dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls))
    names = []
    for base in cls.__mro__[:-1]:
        if "__slots__" not in base.__dict__:
            return None
        slots = base.__dict__["__slots__"]
        names.extend(n for n in ((slots,) if isinstance(slots, str) else slots) if n not in ("__dict__", "__weakref__"))
    return tuple(names)


_MISSING = object()


def field_items(obj):
    """``[(name, value)]`` of a shared object's fields that are set."""
    names = declared_fields(type(obj))
    if names is None:
        return [(k, v) for k, v in vars(obj).items() if type(k) is str]
    items = []
    for name in names:
        value = getattr(obj, name, _MISSING)
        if value is not _MISSING:
            items.append((name, value))
    return items


def set_fields(obj, items):
    """Set a freshly made shared object's fields from decoded ``items``; no code of the class runs (no
    ``__init__``, no ``__setattr__``). Only declared fields (:func:`declared_fields`); for a class whose
    fields live in ``__dict__``, an identifier not starting with ``__`` that the class does not define as
    a method or descriptor. Anything else is a ``ValueError``."""
    cls = type(obj)
    names = declared_fields(cls)
    for name, value in items:
        if type(name) is not str or not name.isidentifier() or name.startswith("__"):
            raise ValueError(f"malformed field name {name!r:.60}")
        if names is None:
            attr = getattr(cls, name, _MISSING)
            if attr is not _MISSING and (callable(attr) or hasattr(type(attr), "__get__")):
                raise ValueError(f"{name!r} is not a field of {cls.__name__}")
            obj.__dict__[name] = value
        elif name in names:
            object.__setattr__(obj, name, value)
        else:
            raise ValueError(f"{name!r} is not a field of {cls.__name__}")


def named_type(name, fields, shared, cache):
    """The named-tuple class a ``$nt`` value is rebuilt as: the shared class called ``name`` (with those
    fields), else a class the receiving side makes itself with ``collections.namedtuple`` (same name and
    fields, none of the sender's code), one per (name, fields) in ``cache``."""
    if (
        type(name) is not str
        or type(fields) is not list
        or len(fields) > 255
        or not all(type(f) is str for f in fields)
    ):
        raise ValueError("malformed named tuple")
    cls = shared.named.get(name)
    if cls is not None:
        if list(cls._fields) != fields:
            raise ValueError(f"named tuple {name} has fields {cls._fields}, not {fields}")
        return cls
    key = (name, tuple(fields))
    cls = cache.get(key)
    if cls is None:
        if len(cache) >= 256:
            raise ValueError("more than 256 named-tuple types in one trial")
        cls = cache[key] = collections.namedtuple(name, fields, module="sandbox")
    return cls


def object_table(found, ids, shared, encode_value):
    """The ``objs`` table of a message: ``[[id, class name, [[field, value], ...]], ...]`` for every shared
    object met (``found``, in meeting order; ``ids``: ``id(obj)`` -> id), each object's fields encoded with
    ``encode_value`` (which may meet more objects, appended to ``found``). Children come before parents
    (post-order; a cycle is cut where it closes), so a receiver that fills objects in table order hashes
    a frozen dataclass only after its fields are set. An explicit stack: a long linked list is no deeper
    than a short one."""
    table = []
    stack = [(obj, None) for obj in reversed(found)]
    del found[:]
    while stack:
        obj, fields = stack.pop()
        if fields is not None:
            table.append([ids[id(obj)], shared.name_of[type(obj)], fields])
            continue
        fields = [[name, encode_value(value)] for name, value in field_items(obj)]
        stack.append((obj, fields))
        stack.extend((o, None) for o in reversed(found))
        del found[:]
    return table


class Codec:
    """One message's encoding state: the handle table, the shared classes and the shared objects met so
    far, by identity (so cycles and shared references cross as references, ``{"$r": id}``)."""

    def __init__(self, handles, shared=None, cache=None):
        self.handles = handles
        self.shared = shared if shared is not None else Shared()
        self.cache = {} if cache is None else cache  # named-tuple types made on this side
        self.ids = {}
        self.found = []
        self.keep = []
        self.objects = {}  # id -> object, of a received table

    def ref(self, obj):
        oid = self.ids.get(id(obj))
        if oid is None:
            oid = self.ids[id(obj)] = len(self.ids) + 1
            self.found.append(obj)
            self.keep.append(obj)
        return {"$r": oid}

    def table(self):
        return object_table(self.found, self.ids, self.shared, lambda v: encode(v, self))

    def load(self, table):
        """Rebuild a received ``objs`` table: make every object, then fill them in table order."""
        for oid, name, _ in table:
            self.objects[oid] = object.__new__(self.shared.objects[name])
        for oid, _, fields in table:
            set_fields(self.objects[oid], [(n, decode(v, self)) for n, v in fields])


def _pairs(value, codec, depth):
    return [[encode(k, codec, depth + 1), encode(v, codec, depth + 1)] for k, v in dict.items(value)]


def _library(value, kind, codec, depth):
    """The tree of a standard-library value that crosses with its exact type, else None."""
    if kind is collections.defaultdict:
        factory = value.default_factory
        name = None if factory is None else getattr(factory, "__name__", None)
        if factory is not None and FACTORIES.get(name) is not factory:
            raise NonPlainValue(
                f"a defaultdict whose default_factory is {factory!r:.80} cannot cross: only None "
                f"or one of {', '.join(FACTORIES)} (the other side would have to run it)"
            )
        return {"$dd": [name, _pairs(value, codec, depth)]}
    if kind is collections.OrderedDict:
        return {"$od": _pairs(value, codec, depth)}
    if kind is collections.Counter:
        return {"$c": _pairs(value, codec, depth)}
    if kind is collections.deque:
        return {"$q": [value.maxlen, [encode(v, codec, depth + 1) for v in value]]}
    # fractions, decimal: looked up, not imported (a value of theirs means whoever made it imported them),
    # so that every sandbox does not pay for their import
    fractions, decimal = sys.modules.get("fractions"), sys.modules.get("decimal")
    if fractions is not None and kind is fractions.Fraction:
        return {"$fr": [encode(value.numerator, codec), encode(value.denominator, codec)]}
    if decimal is not None and kind is decimal.Decimal:
        return {"$dc": str(value)}
    if codec.shared.name_of.get(kind) in codec.shared.objects:
        return codec.ref(value)
    if isinstance(value, tuple) and type(getattr(kind, "_fields", None)) is tuple:
        fields = list(kind._fields)
        items = list(tuple.__iter__(value))
        if len(fields) != len(items) or not all(type(f) is str for f in fields):
            raise NonPlainValue(f"a {kind.__name__} is not a well-formed named tuple")
        return {
            "$nt": [
                codec.shared.name_of.get(kind, kind.__name__[:100]),
                fields,
                [encode(v, codec, depth + 1) for v in items],
            ]
        }
    return None


def encode(value, codec, depth=0):
    """Plain data -> JSON-ready tree; exact types only, other objects become handles.

    Tags for what JSON cannot say exactly: ``{"$b": base64}`` bytes, ``{"$t": [...]}`` tuple,
    ``{"$d": [[k, v], ...]}`` dict, ``{"$s": [...]}`` set, ``{"$f": [...]}`` frozenset, ``{"$h": id, "c":
    class name}`` a handle to an object that stays in the sandbox. Only the *exact* types
    None/bool/int/float/str/bytes/list/tuple/dict/set/frozenset cross as data; a subclass is refused.
    Standard-library values with their exact type (:func:`_library`): ``$dd`` defaultdict (factory by
    name, :data:`FACTORIES`), ``$od`` OrderedDict, ``$c`` Counter, ``$q`` deque (maxlen too), ``$fr``
    Fraction, ``$dc`` Decimal, ``$nt`` a named tuple (name, fields, items); a shared class's object is a
    reference ``{"$r": id}`` into the message's ``objs`` table (:func:`object_table`).

    >>> c = Codec(_Handles())
    >>> encode({"k": (1, b"a")}, c)
    {'$d': [['k', {'$t': [1, {'$b': 'YQ=='}]}]]}
    >>> encode(object(), c)["$h"]
    1
    >>> encode(collections.deque([1], maxlen=3), c)
    {'$q': [3, [1]]}
    >>> class Sneaky(int): pass
    >>> try:
    ...     encode(Sneaky(3), c)
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
        return [encode(v, codec, depth + 1) for v in value]
    if kind is tuple:
        return {"$t": [encode(v, codec, depth + 1) for v in value]}
    if kind is dict:
        return {"$d": [[encode(k, codec, depth + 1), encode(v, codec, depth + 1)] for k, v in value.items()]}
    if kind is set:
        return {"$s": [encode(v, codec, depth + 1) for v in value]}
    if kind is frozenset:
        return {"$f": [encode(v, codec, depth + 1) for v in value]}
    tree = _library(value, kind, codec, depth)
    if tree is not None:
        return tree
    if isinstance(value, _PLAIN_BASES):
        raise NonPlainValue(f"a {kind.__name__} is not plain data: it subclasses a builtin type")
    return {"$h": codec.handles.put(value), "c": kind.__name__[:100]}


def decode(tree, codec):
    """JSON tree from the runner -> Python values; handles resolve to the sandbox's objects, ``$r`` to
    the objects of the message's table (:meth:`Codec.load`).

    >>> decode({"$t": [1, {"$s": [2]}]}, Codec(_Handles()))
    (1, {2})
    """
    if isinstance(tree, list):
        return [decode(v, codec) for v in tree]
    if not isinstance(tree, dict):
        return tree
    ((tag, body),) = tree.items() if len(tree) == 1 else [("$h", tree.get("$h"))]
    if tag == "$b":
        return base64.b64decode(body)
    if tag == "$dc":
        from decimal import Decimal

        return Decimal(body)
    if tag == "$r":
        return codec.objects[body]
    if tag == "$h":
        return codec.handles.get(body)
    if tag in ("$d", "$od", "$c"):
        return (dict if tag == "$d" else MAPPINGS[tag])((decode(k, codec), decode(v, codec)) for k, v in body)
    if tag == "$dd":
        return collections.defaultdict(
            FACTORIES[body[0]] if body[0] else None, ((decode(k, codec), decode(v, codec)) for k, v in body[1])
        )
    if tag == "$q":
        return collections.deque((decode(v, codec) for v in body[1]), body[0])
    if tag == "$nt":
        return tuple.__new__(
            named_type(body[0], body[1], codec.shared, codec.cache), [decode(v, codec) for v in body[2]]
        )
    items = [decode(v, codec) for v in body]
    if tag == "$fr":
        from fractions import Fraction

        return Fraction(*items)
    kinds = {"$t": tuple, "$s": set, "$f": frozenset}
    if tag not in kinds:
        raise ValueError(f"unknown tag in {sorted(tree)!r}")
    return kinds[tag](items)


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
    return sorted(
        n for n, v in vars(module).items() if type(n) is str and not n.startswith("_") and type(v) is not type(sys)
    )


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
    {"type": name, "msg": text}}``. A request or reply whose values hold shared objects carries their
    table as ``"objs"`` (:func:`object_table`); ``init`` may carry ``"shared": {module: source}``, the
    fixture's shared modules, executed here before any candidate import (:func:`load_shared`). The thread that reads a request runs it after making sure another
    thread is ready to read the next, so a call that blocks does not stop another test thread's call.
    """

    def __init__(self, rfd, wfd):
        self.rfd = rfd
        self.wfd = wfd
        self.rbuf = bytearray()  # read from the channel, not yet taken
        self.lock = threading.Lock()
        self.handles = _Handles()
        self.shared = Shared()  # the fixture's shared modules, from the runner's ``init``
        self.cache = {}  # named-tuple types made here

    def target(self, spec):
        if "m" in spec:
            name = spec["m"]
            if type(name) is not str:
                raise TypeError("module name must be a string")
            return importlib.import_module(name)
        return self.handles.get(spec["h"])

    def perform(self, request, codec):
        op = request.get("op")
        if op == "init":
            random.seed(request.get("seed", 0))
            for name, source in request.get("shared", {}).items():
                self.shared.add(load_shared(name, source))
            return None
        if "objs" in request:
            codec.load(request["objs"])
        if op == "getattr":
            return getattr(self.target(request["target"]), request["name"])
        if op == "names":
            return public_names(self.target(request["target"]))
        if op == "setattr":
            setattr(self.target(request["target"]), request["name"], decode(request["value"], codec))
            return None
        if op in ("call", "callattr"):
            func = self.target(request["target"])
            if op == "callattr":
                func = getattr(func, request["name"])
            args = decode(request.get("args", []), codec)
            kwargs = decode(request.get("kwargs", {"$d": []}), codec)
            return func(*args, **kwargs)
        raise ValueError(f"unknown op {op!r}")

    def handle(self, request):
        rid = request.get("id")
        codec = Codec(self.handles, self.shared, self.cache)
        try:
            reply = {"id": rid, "ok": encode(self.perform(request, codec), codec)}
            if codec.found:
                reply["objs"] = codec.table()
        except BaseException as exc:  # the candidate's exception, reported by type name
            if (
                isinstance(exc, (KeyboardInterrupt, SystemExit))
                and threading.current_thread() is threading.main_thread()
            ):
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
