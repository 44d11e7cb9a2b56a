"""Candidate modules as the hidden tests import them: names served from the sandbox (section 17.7).

Hidden tests ``import solution`` as usual, but inside the trusted runner :func:`install` puts a
:class:`RemoteFinder` first on ``sys.meta_path``, so that name is a :class:`RemoteModule`: every
attribute read or call becomes a request to the sandbox through the bound
:class:`~rlvr_lab.verifier.proxy.client.ProxyClient`. The runner collects the hidden tests once, before any
sandbox exists: while no client is bound (:class:`Binding`), ``from solution import f`` gives a late-bound
:class:`~rlvr_lab.verifier.proxy.handles.LazyRemote`, and a ``from solution import *`` binds the names the
tests read (:func:`free_names`).
"""

from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

from rlvr_lab.verifier.proxy.client import ProxyClient
from rlvr_lab.verifier.proxy.handles import LazyRemote, SandboxGone


class Binding:
    """Which :class:`ProxyClient` the remote modules talk to; empty while the runner pre-collects.

    >>> Binding().get()
    Traceback (most recent call last):
    ...
    rlvr_lab.verifier.proxy.handles.SandboxGone: no sandbox is bound yet: candidate names are resolved at test time
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
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.split(".")[0] in modules
                and any(a.name == "*" for a in node.names)
            ):
                return True
    return False


class _StarName(str):
    """A name handed out by ``__all__`` during pre-collection: ``getattr`` with it makes a star-bound
    :class:`LazyRemote`, which checks that the candidate's module really exports that name."""

    __slots__ = ()


class RemoteModule(types.ModuleType):
    """A candidate module as the hidden tests see it: attribute reads go to the sandbox.

    While no sandbox is bound (pre-collection), attributes come back as :class:`LazyRemote` names.
    ``from module import *`` reads ``__all__``, which asks the sandbox for :func:`public_names
    <rlvr_lab.verifier.proxy.server.public_names>` (``__all__`` when the module defines one, else its
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
