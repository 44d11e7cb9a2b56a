"""The house rules a reader of the code relies on: no import cycle inside rlvr_lab (lazy imports inside
functions count too) and no private name imported from another module. A module longer than
:data:`MAX_LINES` is reported as a warning."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rlvr_lab"


def modules() -> dict[str, ast.Module]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        if "fixtures" in rel.parts:  # candidate code of the exploit gallery, not the library
            continue
        name = ".".join(rel.parts).removesuffix(".__init__")
        found[name] = ast.parse(path.read_text(), filename=str(path))
    return found


def import_graph(mods: dict[str, ast.Module]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, tree in mods.items():
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods else node.module for a in node.names
                ]
            for target in targets:
                # a submodule importing its own package reaches only names the package re-exports
                if target in mods and target != name and not name.startswith(target + "."):
                    graph[name].add(target)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    cycles = find_cycles(import_graph(modules()))
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_no_private_name_is_imported_from_another_module():
    offences = []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rlvr_lab"):
                offences += [
                    f"{name}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and a.name != "__version__"
                ]
    assert offences == []


def test_the_trainer_api_names_are_objects_not_submodules():
    """A submodule named like an API name would shadow it once imported (``from rlvr_lab.train import sft``
    returning the module): every name of ``rlvr_lab.train.__all__`` stays the object it documents."""
    import importlib
    import types

    import rlvr_lab.train as train

    modules = set(train.API.values()) | {module for module, _ in train.DEPRECATED.values()}
    for module in modules | {"cli", "config", "trl_engine", "metrics"}:
        importlib.import_module(f"rlvr_lab.train.{module}")
    shadowed = [name for name in train.__all__ if isinstance(getattr(train, name), types.ModuleType)]
    assert shadowed == []


#: The library's layers, lowest first (the README's house table): a module may import its own layer and the
#: layers below it, never one above. A module belongs to the layer of the longest prefix that names it (the
#: package itself, ``rlvr_lab``, names only its ``__init__``, so a new top-level module must be placed).
LAYERS = (
    (
        "math",
        (
            "rlvr_lab.validation",
            "rlvr_lab.equations",
            "rlvr_lab.rewards",
            "rlvr_lab.advantages",
            "rlvr_lab.credit",
            "rlvr_lab.cycle_time",
            "rlvr_lab.grpo",
        ),
    ),
    ("sandbox", ("rlvr_lab.sandbox",)),
    (
        "data",
        (
            "rlvr_lab.records",
            "rlvr_lab.tasks",
            "rlvr_lab.humaneval",
            "rlvr_lab.mbpp",
            "rlvr_lab.exercise_spec",
            "rlvr_lab.exercises",
            "rlvr_lab.exercise_code",
            "rlvr_lab.checks",
            "rlvr_lab.claims",
            "rlvr_lab.exploits",
            "rlvr_lab.warm_starts",
            "rlvr_lab.recorded",
            "rlvr_lab.colab",
            "rlvr_lab.verifier.schema",
        ),
    ),
    ("cluster", ("rlvr_lab.ray_workers",)),
    ("verifier", ("rlvr_lab.verifier",)),
    ("environments", ("rlvr_lab.envs",)),
    ("policy", ("rlvr_lab.scoring_mode", "rlvr_lab.policy")),
    ("train", ("rlvr_lab.train",)),
    (
        "grading",
        (
            "rlvr_lab.grading",
            "rlvr_lab.grading_admission",
            "rlvr_lab.grading_sandbox",
            "rlvr_lab.grading_worker",
            "rlvr_lab.grading_ray",
            "rlvr_lab.notebook_executor",
        ),
    ),
    (
        "figures",
        (
            "rlvr_lab.figures",
            "rlvr_lab.plots",
            "rlvr_lab.widgets",
            "rlvr_lab.dashboard",
            "rlvr_lab.chapter_figures",
            "rlvr_lab.fleet_figures",
            "rlvr_lab.figure_style",
            "rlvr_lab.recorded.figures",
        ),
    ),
    ("faces", ("rlvr_lab", "rlvr_lab.cli", "rlvr_lab.lab_setup", "rlvr_lab.demo", "rlvr_lab.__main__")),
)


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of the longest prefix naming ``module``; None when no layer names it."""
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module.startswith(prefix + ".") and prefix != PACKAGE.name
            if (module == prefix or inside) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """``"a (layer) -> b (layer)"`` for each import of a higher layer, and each module no layer names."""
    found = []
    for name, targets in sorted(graph.items()):
        own = layer_of(name)
        if own is None:
            found.append(f"{name}: in no layer of LAYERS")
            continue
        found += [
            f"{name} ({LAYERS[own][0]}) -> {t} ({LAYERS[layer_of(t)][0]})"
            for t in sorted(targets)
            if layer_of(t) is not None and layer_of(t) > own
        ]
    return found


def test_the_layer_check_finds_an_upward_import():
    graph = {
        "rlvr_lab.rewards": {"rlvr_lab.train.config"},
        "rlvr_lab.train.config": {"rlvr_lab.rewards"},
        "rlvr_lab.elsewhere": set(),
    }
    assert upward_imports(graph) == [
        "rlvr_lab.elsewhere: in no layer of LAYERS",
        "rlvr_lab.rewards (math) -> rlvr_lab.train.config (train)",
    ]


def test_every_module_imports_only_its_layer_and_those_below():
    assert upward_imports(import_graph(modules())) == []


#: Length, in lines, past which a module probably holds more than one concept. It is a warning, not a rule:
#: a split that follows no seam reads worse than one long module (issue 21).
MAX_LINES = 400


def long_modules(paths: list[Path], limit: int = MAX_LINES) -> dict[str, int]:
    """``{path: lines}`` of the modules in ``paths`` longer than ``limit``."""
    return {str(p): n for p in paths if (n := len(p.read_text().splitlines())) > limit}


def test_the_length_check_finds_a_long_module(tmp_path):
    short, long = tmp_path / "short.py", tmp_path / "long.py"
    short.write_text("x = 1\n")
    long.write_text("x = 1\n" * 5)
    assert long_modules([short, long], limit=3) == {str(long): 5}


def test_modules_longer_than_one_sitting_are_reported():
    """Warns (never fails) with the modules over :data:`MAX_LINES`, so a reviewer sees them."""
    import warnings

    roots = [PACKAGE, PACKAGE.parent / "labs" / "exercises", PACKAGE.parent / "scripts"]
    paths = [p for root in roots for p in root.rglob("*.py") if "fixtures" not in p.relative_to(root).parts]
    assert len(paths) > 60
    long = long_modules(paths)
    if long:
        warnings.warn(f"modules over {MAX_LINES} lines (split along a seam if one exists): {long}", stacklevel=1)
