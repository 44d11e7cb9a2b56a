"""What crosses the verifier's boundary besides plain data (section 17.7, issue 28).

Generators through handles, the standard library's containers and numbers with their exact type, named
tuples, and objects of the fixture's shared classes as a graph with its cycles and sharing kept; each
checked at the codec (the sandbox's encoder against the runner's strict decoder, no sandbox) and end to
end through the Verifier, on the direct and the pytest routes. Candidate subclasses with overridden
comparison still fail, and a candidate file named like a shared module is never used.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import shutil
import types
from decimal import Decimal
from fractions import Fraction

import pytest

from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.fixtures import fixtures_dir, list_references, load_fixture, load_reference, read_manifest
from rlvr_lab.verifier.proxy import server
from rlvr_lab.verifier.proxy.client import ProxyClient
from rlvr_lab.verifier.proxy.values import Graph, NotPlainData, TrialDeadline, decode, encode, load_objects
from rlvr_lab.verifier.schema import Candidate, Fixture, Limits
from verifier_helpers import needs_local_sandbox

LIMITS = Limits(wall_s=5.0, cpu_s=5, memory_mb=256, processes=16, file_mb=4, open_files=64, output_kb=64)

HELPERS = """
import dataclasses
import enum


class Node:
    def __init__(self, name):
        self.name = name
        self.succ = []

    def degree(self):
        return len(self.succ)


class Slotted:
    __slots__ = ("a", "b")


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


class Holder:
    def __init__(self, points):
        self.points = points


class Table(dict):
    pass


class Colour(enum.Enum):
    RED = 1
"""


def module(name: str, source: str) -> types.ModuleType:
    """A fresh copy of a shared module (each side of the boundary has its own)."""
    mod = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec", dont_inherit=True), mod.__dict__)
    return mod


def cross(value, sandbox_mod=None, trusted_mod=None):
    """``value`` encoded by the sandbox's server, sent as JSON, decoded by the runner's strict decoder."""
    codec = server.Codec(server._Handles(), server.Shared([sandbox_mod] if sandbox_mod else []))
    reply = {"ok": server.encode(value, codec)}
    if codec.found:
        reply["objs"] = codec.table()
    reply = json.loads(json.dumps(reply))
    graph = Graph(server.Shared([trusted_mod] if trusted_mod else []))
    if "objs" in reply:
        load_objects(reply["objs"], None, graph)
    return decode(reply["ok"], None, graph=graph)


def send(value, trusted_mod=None, sandbox_mod=None):
    """``value`` encoded by the runner and decoded by the sandbox's server (a test's argument)."""
    graph = Graph(server.Shared([trusted_mod] if trusted_mod else []))
    message = {"args": [encode(value, graph=graph)]}
    if graph.found:
        message["objs"] = graph.table()
    message = json.loads(json.dumps(message))
    codec = server.Codec(server._Handles(), server.Shared([sandbox_mod] if sandbox_mod else []))
    if "objs" in message:
        codec.load(message["objs"])
    return server.decode(message["args"], codec)[0]


# -- the standard library's values, by exact type ---------------------------------------------------------
LIBRARY = [
    collections.defaultdict(list, {"a": [1, 2], "b": []}),
    collections.defaultdict(None, {1: 2}),
    collections.defaultdict(int, {(1, 2): 3}),
    collections.OrderedDict([("z", 1), ("a", 2)]),
    collections.Counter("abracadabra"),
    collections.deque([1, 2, 3], maxlen=3),
    collections.deque(["x"]),
    Fraction(-7, 3),
    Decimal("3.14159265358979323846"),
    Decimal("-Infinity"),
    {frozenset({1, 2}), frozenset()},
    [{"k": collections.Counter({"x": 2})}, (Fraction(1, 2), Decimal("0.1"))],
]


@pytest.mark.parametrize("value", LIBRARY, ids=lambda v: type(v).__name__)
def test_library_values_cross_both_ways_with_their_exact_type(value):
    for arrived in (cross(value), send(value)):
        assert type(arrived) is type(value) and arrived == value
        if isinstance(value, collections.defaultdict):
            assert arrived.default_factory is value.default_factory
        if isinstance(value, collections.deque):
            assert arrived.maxlen == value.maxlen
        if isinstance(value, collections.OrderedDict):
            assert list(arrived) == list(value)


def test_a_defaultdict_with_a_function_for_factory_is_refused_clearly():
    with pytest.raises(server.NonPlainValue, match="default_factory .*cannot cross: only None or one of list, int"):
        cross(collections.defaultdict(lambda: 0))
    with pytest.raises(NotPlainData, match="default_factory"):
        encode(collections.defaultdict(lambda: 0))


def test_a_malformed_library_value_is_refused_by_the_runner():
    for tree in (
        {"$dd": ["eval", []]},
        {"$q": [-1, []]},
        {"$fr": [1, 0]},
        {"$dc": "1e99999"},
        {"$dc": "x"},
        {"$nt": ["P", ["x"], [1, 2]]},
        {"$nt": ["P", ["class"], [1]]},
        {"$r": 1},
    ):
        with pytest.raises(ValueError):
            decode(tree, None)


class Always(dict):
    def __eq__(self, other):
        return True


class Sorted(collections.OrderedDict):
    def __eq__(self, other):
        return True


class Many(collections.Counter):
    def __eq__(self, other):
        return True


class Ring(collections.deque):
    def __eq__(self, other):
        return True


class Half(Fraction):
    def __eq__(self, other):
        return True


def test_candidate_subclasses_with_overridden_comparison_never_compare_equal():
    for value in (Always(), Sorted(), Many()):  # builtin subclasses: refused outright
        with pytest.raises(server.NonPlainValue, match="subclasses a builtin type"):
            cross(value)
    for value in (Ring(), Half(1, 2)):  # library subclasses: handles, equal only to themselves
        arrived = cross(value)
        assert arrived != collections.deque() and arrived != Fraction(1, 2)


def test_a_candidate_named_tuple_arrives_as_the_runners_own_named_tuple():
    Point = collections.namedtuple("Point", "x y")

    class Liar(collections.namedtuple("Liar", "x y")):
        def __eq__(self, other):
            return True

        def __hash__(self):
            return 0

    p = cross(Point(1, 2))
    assert p == (1, 2) and p.x == 1 and p.y == 2 and type(p).__name__ == "Point" and type(p) is not Point
    assert type(cross(Point(3, 4))) is type(p) or True  # each reply may make its own class
    liar = cross(Liar(1, 2))
    assert liar != (5, 6) and liar == (1, 2) and type(liar).__eq__ is tuple.__eq__
    back = send(Point(5, 6))
    assert back == (5, 6) and back.y == 6 and type(back).__name__ == "Point"


# -- objects of shared classes: a graph with its cycles and sharing -----------------------------------------
def test_shared_objects_cross_with_cycles_and_shared_references():
    sandbox_mod, trusted_mod = module("helpers", HELPERS), module("helpers", HELPERS)
    a, b, c = (sandbox_mod.Node(n) for n in "abc")
    a.succ = [b, c]
    b.succ = [c, a]  # a cycle through a, and c reached twice
    c.succ = [c]  # a self loop
    got = cross([a, c], sandbox_mod, trusted_mod)
    ga, gc = got
    assert type(ga) is trusted_mod.Node and ga.name == "a" and ga.degree() == 2
    gb = ga.succ[0]
    assert gb.succ[0] is gc and ga.succ[1] is gc and gb.succ[1] is ga and gc.succ[0] is gc
    back = send(ga, trusted_mod, sandbox_mod)
    assert type(back) is sandbox_mod.Node and back.succ[0].succ[1] is back


def test_a_long_linked_list_is_no_deeper_than_a_short_one():
    sandbox_mod, trusted_mod = module("helpers", HELPERS), module("helpers", HELPERS)
    head = None
    for i in range(20_000):
        node = sandbox_mod.Node(i)
        node.succ = head
        head = node
    got = cross(head, sandbox_mod, trusted_mod)
    count = 0
    while got is not None:
        count, got = count + 1, got.succ
    assert count == 20_000


def test_slots_and_frozen_dataclasses_cross_and_hash_after_their_fields_are_set():
    sandbox_mod, trusted_mod = module("helpers", HELPERS), module("helpers", HELPERS)
    s = sandbox_mod.Slotted()
    s.a = sandbox_mod.Point(1, 2)  # b left unset
    holder = sandbox_mod.Holder({sandbox_mod.Point(3, 4), sandbox_mod.Point(5, 6)})
    got_s, got_h = cross([s, holder], sandbox_mod, trusted_mod)
    assert type(got_s) is trusted_mod.Slotted and got_s.a == trusted_mod.Point(1, 2) and not hasattr(got_s, "b")
    assert trusted_mod.Point(3, 4) in got_h.points and len(got_h.points) == 2


def test_the_runner_builds_its_own_class_and_sets_only_declared_fields():
    tampered = module("helpers", HELPERS + "\nNode.__eq__ = lambda self, other: True\n")
    trusted_mod = module("helpers", HELPERS)
    got = cross(tampered.Node("x"), tampered, trusted_mod)
    assert type(got) is trusted_mod.Node and got != trusted_mod.Node("x")  # the runner's class: identity eq
    for name, fields in [
        ("helpers.Node", [["degree", 1]]),
        ("helpers.Node", [["__class__", 1]]),
        ("helpers.Point", [["z", 1]]),
        ("helpers.Slotted", [["c", 1]]),
        ("os.system", []),
        ("helpers.dataclasses", []),
    ]:
        with pytest.raises(ValueError):
            load_objects([[1, name, fields]], None, Graph(server.Shared([trusted_mod])))


def test_shared_classes_built_on_c_types_or_enums_do_not_cross_by_value():
    sandbox_mod = module("helpers", HELPERS)
    shared = server.Shared([sandbox_mod])
    assert {"helpers.Node", "helpers.Slotted", "helpers.Point", "helpers.Holder"} == set(shared.objects)
    with pytest.raises(server.NonPlainValue, match="subclasses a builtin type"):
        cross(sandbox_mod.Table(), sandbox_mod, module("helpers", HELPERS))


def test_a_shared_object_without_shared_modules_is_not_plain_data():
    trusted_mod = module("helpers", HELPERS)
    with pytest.raises(NotPlainData, match="cannot send a Node"):
        encode(trusted_mod.Node("x"))


# -- generators and the trial's deadline --------------------------------------------------------------------
class SilentChannel:
    def send_all(self, data):
        raise AssertionError("nothing may be sent after the deadline")


def test_no_request_leaves_after_the_trials_deadline():
    client = ProxyClient(SilentChannel(), deadline=0.0)
    with pytest.raises(TrialDeadline, match="time is up"):
        client.call({"m": "solution"}, (), {}, name="f")


# -- end to end: the Verifier on both routes -----------------------------------------------------------------
#: How a trial of an endless loop or generator may end: the sandbox's wall clock, its CPU or memory limit
#: (SIGKILL: "candidate process ended"), or the proxy's deadline failing the test.
ENDLESS = ("timeout", "test failed in call", "resource limit", "candidate process ended")
COURSE = ("linked_reverse_01", "graph_cycle_01", "graph_bfs_01", "windows_gen_01")


@pytest.fixture(scope="module", params=["auto", "pytest"])
def verifier(request):
    with Verifier(backend="local", retries=0, seed=11, test_runner=request.param) as v:
        yield v


@needs_local_sandbox
@pytest.mark.parametrize("name", COURSE)
def test_course_fixtures_pass_fixed_and_fail_buggy_for_their_bug(verifier, name):
    fx = load_fixture(name)
    assert fx.shared and all(f"{m}.py" in fx.hidden_tests for m in fx.shared)
    references = read_manifest(name)["references"]
    for ref, expect in list_references(name).items():
        verdict = verifier.verify(load_reference(name, ref), fx)
        assert verdict.outcome == expect, (ref, verdict.stop_reason, verdict.trials)
        if expect == "fail":
            trial = verdict.trials[-1]
            assert "NotPlainData" not in trial.detail and "NonPlainValue" not in trial.detail, trial
            assert "malformed" not in trial.detail, trial
            if references[ref]["fails"]:  # the failing test is one that checks this bug
                assert trial.reason == "test failed in call", trial
                assert any(f"::{test}" in trial.detail for test in references[ref]["fails"]), trial
            else:  # an endless loop or generator: the candidate's limit (time, CPU, memory), never pending
                assert trial.reason in ENDLESS, trial


IMPOSTOR = """
class ListNode:
    def __init__(self, val=0, next=None):
        self.val, self.next = val, next

    def __eq__(self, other):
        return True


def to_list(head, limit=0):
    return [3, 2, 1]
"""


@needs_local_sandbox
def test_a_candidate_file_named_like_the_shared_module_is_never_used(verifier):
    base = load_fixture("linked_reverse_01")
    hidden = dict(base.hidden_tests)
    hidden["test_origin.py"] = (
        "import listnode\nfrom linked import origin\n\n\ndef test_origin():\n"
        "    assert origin() == '<fixture shared module listnode>'\n"
        "    assert listnode.__file__.endswith('listnode.py')\n"
    )
    fx = dataclasses.replace(base, hidden_tests=hidden, allowed_paths=("*.py",), trials=1)
    good = load_reference("linked_reverse_01", "good").files["linked.py"]
    origin = "\n\ndef origin():\n    import listnode\n    return listnode.__file__\n"
    verdict = verifier.verify(Candidate({"linked.py": good + origin, "listnode.py": IMPOSTOR}), fx)
    assert verdict.outcome == "pass", verdict.trials
    buggy = load_reference("linked_reverse_01", "bad_returns_old_head").files["linked.py"]
    verdict = verifier.verify(Candidate({"linked.py": buggy + origin, "listnode.py": IMPOSTOR}), fx)
    assert verdict.outcome == "fail" and "test_origin" not in verdict.trials[-1].detail, verdict.trials


LIBRARY_SOLUTION = """
import collections
from decimal import Decimal
from fractions import Fraction

Pair = collections.namedtuple("Pair", "left right")


def make(kind):
    return {
        "defaultdict": collections.defaultdict(list, {"a": [1]}),
        "ordered": collections.OrderedDict([("b", 1), ("a", 2)]),
        "counter": collections.Counter("aab"),
        "deque": collections.deque([1, 2], maxlen=5),
        "fraction": Fraction(1, 3),
        "decimal": Decimal("0.1"),
        "frozenset": frozenset({1}),
        "pair": Pair(1, 2),
    }[kind]


def echo(value):
    return value


def count_up(n):
    for i in range(n):
        yield i
    raise KeyError("past the end")


def count_to(n):
    yield from range(n)
"""

LIBRARY_TESTS = """
import collections
from decimal import Decimal
from fractions import Fraction

import pytest

from solution import count_to, count_up, echo, make


def test_exact_types():
    d = make("defaultdict")
    assert type(d) is collections.defaultdict and d.default_factory is list and d == {"a": [1]}
    assert list(make("ordered")) == ["b", "a"] and type(make("ordered")) is collections.OrderedDict
    assert make("counter") == collections.Counter("aab") and type(make("counter")) is collections.Counter
    q = make("deque")
    assert type(q) is collections.deque and q.maxlen == 5 and list(q) == [1, 2]
    assert make("fraction") == Fraction(1, 3) and type(make("decimal")) is Decimal
    assert make("frozenset") == frozenset({1})


def test_candidate_named_tuple():
    pair = make("pair")
    assert pair == (1, 2) and pair.left == 1 and type(pair).__name__ == "Pair"


def test_round_trip():
    for value in (collections.defaultdict(set), collections.deque([1], maxlen=1), Fraction(2, 7),
                  Decimal("-0"), collections.Counter({"x": 3})):
        back = echo(value)
        assert type(back) is type(value) and back == value


def test_generator_and_its_exception():
    gen = count_up(3)
    assert [next(gen), next(gen), next(gen)] == [0, 1, 2]
    with pytest.raises(KeyError):
        next(gen)
    with pytest.raises(KeyError):
        list(count_up(4))
    assert list(count_to(4)) == [0, 1, 2, 3] and sum(x for x in count_to(5)) == 10
"""

CHEATS = {
    "dict subclass": "class D(dict):\n    def __eq__(self, o):\n        return True\n",
    "ordered subclass": "class D(collections.OrderedDict):\n    def __eq__(self, o):\n        return True\n",
    "counter subclass": "class D(collections.Counter):\n    def __eq__(self, o):\n        return True\n",
    "deque subclass": "class D(collections.deque):\n    def __eq__(self, o):\n        return True\n",
    "named tuple with eq": "class D(collections.namedtuple('D', 'a')):\n    def __eq__(self, o):\n        return True\n",
}


def library_fixture(tests: str) -> Fixture:
    return Fixture(
        "crossing_library",
        "v1",
        files={"solution.py": ""},
        hidden_tests={"test_library.py": tests},
        allowed_paths=("solution.py",),
        modules=("solution",),
        limits=LIMITS,
        trials=1,
    )


@needs_local_sandbox
def test_library_values_and_generators_end_to_end(verifier):
    verdict = verifier.verify(Candidate({"solution.py": LIBRARY_SOLUTION}), library_fixture(LIBRARY_TESTS))
    assert verdict.outcome == "pass", verdict.trials


@needs_local_sandbox
@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_subclasses_with_overridden_comparison_still_fail(verifier, cheat):
    tests = (
        "import collections\nfrom solution import make\n\n\ndef test_make():\n"
        "    assert make() == collections.OrderedDict(a=1)\n"
    )
    body = "import collections\n" + CHEATS[cheat] + "\n\ndef make():\n    return D()\n"
    verdict = verifier.verify(Candidate({"solution.py": body}), library_fixture(tests))
    assert verdict.outcome == "fail", verdict.trials


@needs_local_sandbox
def test_a_defaultdict_with_the_candidates_factory_fails_with_a_clear_reason(verifier):
    tests = "from solution import make\n\n\ndef test_make():\n    assert make() == {}\n"
    body = "import collections\n\n\ndef make():\n    return collections.defaultdict(lambda: 0)\n"
    verdict = verifier.verify(Candidate({"solution.py": body}), library_fixture(tests))
    assert verdict.outcome == "fail" and "default_factory" in verdict.trials[-1].detail, verdict.trials


@needs_local_sandbox
def test_an_endless_generator_is_a_fail_at_the_deadline(verifier):
    tests = "from solution import forever\n\n\ndef test_forever():\n    assert len(list(forever())) > 0\n"
    body = "def forever():\n    while True:\n        yield 1\n"
    fx = dataclasses.replace(library_fixture(tests), limits=dataclasses.replace(LIMITS, wall_s=1.0))
    verdict = verifier.verify(Candidate({"solution.py": body}), fx)
    assert verdict.outcome == "fail", verdict.trials
    assert verdict.trials[-1].reason in ENDLESS, verdict.trials


def test_manifest_shared_modules_must_be_a_list(tmp_path):
    copy = tmp_path / "fx"
    shutil.copytree(fixtures_dir() / "linked_reverse_01", copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["shared_modules"] = "listnode"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="shared_modules must be a list"):
        load_fixture(copy)


def test_manifest_shared_modules_are_checked():
    base = load_fixture("linked_reverse_01")
    for shared, match in [
        (("linked",), "candidate module"),
        (("json",), "standard-library"),
        (("nothere",), "needs nothere.py"),
        (("test_x",), "identifiers, not test_"),
        (("x_test",), "identifiers, not test_"),
    ]:
        with pytest.raises(ValueError, match=match):
            dataclasses.replace(base, shared=shared)
