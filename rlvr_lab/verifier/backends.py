"""Deprecated: moved to :mod:`rlvr_lab.sandbox.factory`; this path goes in 0.2.

The new :func:`~rlvr_lab.sandbox.factory.make_backend` takes the server module's path; this one keeps the
old signature and runs the verifier's proxy server.
"""

import warnings
from pathlib import Path

from rlvr_lab.sandbox.backend import SandboxBackend
from rlvr_lab.sandbox.factory import make_backend as make_sandbox_backend
from rlvr_lab.sandbox.factory import resolve_backend
from rlvr_lab.verifier.proxy import SERVER_PATH

__all__ = ["make_backend", "resolve_backend"]

warnings.warn(
    "rlvr_lab.verifier.backends moved to rlvr_lab.sandbox.factory; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)


def make_backend(name: str, slot_dir: Path) -> SandboxBackend:
    """The backend called ``name`` for one slot, running the verifier's proxy server."""
    return make_sandbox_backend(name, slot_dir, SERVER_PATH)
