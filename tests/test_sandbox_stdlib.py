"""The sandbox folder imports the standard library only (section 17.7).

Why the rule, and why over the whole folder:

* The zygote runs as ``python -I -S zygote.py`` with the base interpreter, and loads :data:`SIBLINGS` by
  path (``spec_from_file_location``): no package is importable there, and whatever it imports is in every
  sandbox's memory before the candidate starts. So the zygote, its siblings and the server modules that
  sandboxes run by path (the verifier's ``proxy/server.py``) import the standard library and nothing
  else, not even ``rlvr_lab.sandbox``; a sibling imports another under the name the zygote registers it
  by (``sandbox_<stem>``), with the package import only as the fallback of an ``except ImportError``
  (for doctests and documentation).
* The rest of the folder (interface, factory, the backends' trusted side) is the lowest layer that the
  verifier and the grader both stand on: it imports the standard library and ``rlvr_lab.sandbox`` only.
  One third-party client is allowed, by name: the docker SDK in the two docker modules (an optional
  extra, imported inside functions, so the package imports without it).

A module is checked by parsing it, not importing it: an import inside a function counts too.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rlvr_lab"
SANDBOX = PACKAGE / "sandbox"
#: Server modules run inside a sandbox by path (``server_path`` of a backend), held to the zygote's rule.
SERVERS = (PACKAGE / "verifier" / "proxy" / "server.py",)
#: Third-party top-level modules a module of the folder may import, by file name.
THIRD_PARTY = {"docker.py": {"docker"}, "docker_image.py": {"docker"}}


def zygote_siblings() -> tuple[str, ...]:
    """``SIBLINGS`` of zygote.py, read from its source (importing it would load them)."""
    tree = ast.parse((SANDBOX / "zygote.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "SIBLINGS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("zygote.py defines no SIBLINGS")


def fallback_imports(tree: ast.Module) -> set[int]:
    """ids of the import nodes in an ``except ImportError`` handler (a by-path module's fallback)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                if isinstance(handler.type, ast.Name) and handler.type.id in ("ImportError", "ModuleNotFoundError"):
                    found |= {
                        id(n)
                        for stmt in handler.body
                        for n in ast.walk(stmt)
                        if isinstance(n, (ast.Import, ast.ImportFrom))
                    }
    return found


def offences(source: str, by_path: bool, siblings: tuple[str, ...] = (), allowed: frozenset = frozenset()) -> list[str]:
    """Imports of ``source`` that break the rule. ``by_path``: the module is loaded by path (standard library,
    ``sandbox_<sibling>`` and, only as an ImportError fallback, ``rlvr_lab.sandbox``); else the standard
    library, ``rlvr_lab.sandbox`` and the top-level names in ``allowed``.

    >>> offences("import os\\nfrom pathlib import Path", by_path=True)
    []
    >>> offences("import numpy\\nfrom rlvr_lab.verifier import wire", by_path=False)
    ['line 1: numpy', 'line 2: rlvr_lab.verifier']
    """
    tree = ast.parse(source)
    fallback = fallback_imports(tree)
    sibling_names = {f"sandbox_{stem}" for stem in siblings}
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                bad.append(f"line {node.lineno}: relative import")
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            ours = name == "rlvr_lab.sandbox" or name.startswith("rlvr_lab.sandbox.")
            if top in sys.stdlib_module_names:
                continue
            if by_path and (name in sibling_names or (ours and id(node) in fallback)):
                continue
            if not by_path and (ours or top in allowed):
                continue
            bad.append(f"line {node.lineno}: {name}")
    return bad


def test_the_checker_catches_what_the_rule_forbids():
    siblings = ("namespaces",)
    assert offences("import json, socket\nimport importlib.util", by_path=True) == []
    assert offences("import sandbox_namespaces as ns", by_path=True, siblings=siblings) == []
    good_fallback = (
        "try:\n    import sandbox_namespaces as namespaces\n"
        "except ImportError:\n    from rlvr_lab.sandbox import namespaces\n"
    )
    assert offences(good_fallback, by_path=True, siblings=siblings) == []
    # a by-path module may not import the package, a sibling it does not load, or anything third-party
    assert offences("from rlvr_lab.sandbox import namespaces", by_path=True, siblings=siblings) == [
        "line 1: rlvr_lab.sandbox"
    ]
    assert offences("import sandbox_server", by_path=True, siblings=siblings) == ["line 1: sandbox_server"]
    assert offences("def f():\n    import numpy\n", by_path=True) == ["line 2: numpy"]
    assert offences("from . import clock", by_path=True) == ["line 1: relative import"]
    # the rest of the folder: the package itself, never a layer above it, a client only where allowed
    assert offences("from rlvr_lab.sandbox.backend import Limits", by_path=False) == []
    assert offences("from rlvr_lab.verifier.schema import Limits", by_path=False) == [
        "line 1: rlvr_lab.verifier.schema"
    ]
    assert offences("import rlvr_lab", by_path=False) == ["line 1: rlvr_lab"]
    assert offences("import docker", by_path=False) == ["line 1: docker"]
    assert offences("import docker", by_path=False, allowed=frozenset({"docker"})) == []


def test_the_zygote_and_what_it_loads_by_path_import_the_standard_library_only():
    siblings = zygote_siblings()
    by_path = [SANDBOX / "zygote.py", *(SANDBOX / f"{stem}.py" for stem in siblings), *SERVERS]
    assert all(p.is_file() for p in by_path), by_path
    bad = {
        str(p.relative_to(PACKAGE)): found
        for p in by_path
        if (found := offences(p.read_text(), by_path=True, siblings=siblings))
    }
    assert bad == {}


def test_the_sandbox_package_imports_the_standard_library_and_itself_only():
    """The modules the zygote loads are held to the stricter rule above."""
    by_path = {"zygote.py", *(f"{stem}.py" for stem in zygote_siblings())}
    paths = [p for p in sorted(SANDBOX.glob("*.py")) if p.name not in by_path]
    assert len(paths) >= 5
    bad = {
        p.name: found
        for p in paths
        if (found := offences(p.read_text(), by_path=False, allowed=frozenset(THIRD_PARTY.get(p.name, ()))))
    }
    assert bad == {}
