"""The sandbox: where untrusted code runs, for the verifier (17.7) and the notebook grader (17.14).

It is the lowest layer of the boundary and imports nothing else of ``rlvr_lab``.

* :mod:`~rlvr_lab.sandbox.backend`: the contract every backend implements, :class:`Limits`, the exceptions.
* :mod:`~rlvr_lab.sandbox.factory`: the one backend factory (:func:`make_backend`, :func:`resolve_backend`).
* :mod:`~rlvr_lab.sandbox.local`: the ``local`` (namespaces) and ``process`` backends and their zygote's
  parent side; :mod:`~rlvr_lab.sandbox.zygote`, :mod:`~rlvr_lab.sandbox.init`,
  :mod:`~rlvr_lab.sandbox.namespaces`, :mod:`~rlvr_lab.sandbox.confine`, :mod:`~rlvr_lab.sandbox.clock`
  and :mod:`~rlvr_lab.sandbox.title` (an ordinary command line) run in the zygote, loaded by path: standard
  library only (``tests/test_sandbox_stdlib.py``).
* :mod:`~rlvr_lab.sandbox.docker` and :mod:`~rlvr_lab.sandbox.docker_image`: the ``docker`` backend.

A backend runs a *server module* (``serve(rfd, wfd, workdir)``, standard library only) in each sandbox:
the verifier's :mod:`rlvr_lab.verifier.proxy.server` or the grader's notebook executor.
"""

from rlvr_lab.sandbox.backend import (
    BACKENDS,
    Limits,
    SandboxBackend,
    SandboxExit,
    SandboxFault,
    SandboxSession,
    SandboxUnavailable,
)
from rlvr_lab.sandbox.factory import make_backend, resolve_backend

__all__ = [
    "BACKENDS",
    "Limits",
    "SandboxBackend",
    "SandboxExit",
    "SandboxFault",
    "SandboxSession",
    "SandboxUnavailable",
    "make_backend",
    "resolve_backend",
]
