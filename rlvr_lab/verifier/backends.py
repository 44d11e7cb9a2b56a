"""The backend factory: a backend name to a sandbox backend for one slot (section 17.7).

It lives apart from :mod:`rlvr_lab.verifier.backend` (the interface every backend implements) so that the
interface imports no backend and no backend imports the factory: ``backend`` <- ``sandbox``,
``docker_backend`` <- ``backends``.
"""

from __future__ import annotations

import os
from pathlib import Path

from rlvr_lab.verifier.backend import BACKENDS, SandboxBackend, SandboxUnavailable


def resolve_backend(name: str) -> str:
    """The concrete backend for ``name``: ``auto`` becomes ``local`` where namespaces work (as root, or in
    an unprivileged user namespace) and the weaker ``process`` otherwise; other names stay as they are.
    ``docker`` is never picked by ``auto`` (it needs an engine and an image; ask for it by name).

    >>> resolve_backend("docker")
    'docker'
    """
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name != "auto":
        return name
    from rlvr_lab.verifier.sandbox import local_mode

    try:
        local_mode()
    except SandboxUnavailable:
        return "process"
    return "local"


def make_backend(name: str, slot_dir: Path) -> SandboxBackend:
    """The backend called ``name`` for one slot whose private scratch directory is ``slot_dir``.

    ``docker`` is :class:`rlvr_lab.verifier.docker_backend.DockerBackend`, constructed as
    ``DockerBackend(slot_dir)``; ``local`` is :class:`rlvr_lab.verifier.sandbox.LocalBackend` (root or
    user namespaces) and ``process`` :class:`rlvr_lab.verifier.sandbox.ProcessBackend`.

    >>> make_backend("ssh", Path("/tmp"))
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of ('auto', 'local', 'process', 'docker'), got 'ssh'
    """
    name = resolve_backend(name)
    os.makedirs(slot_dir, exist_ok=True)
    if name == "local":
        from rlvr_lab.verifier.sandbox import LocalBackend

        return LocalBackend(Path(slot_dir))
    if name == "process":
        from rlvr_lab.verifier.sandbox import ProcessBackend

        return ProcessBackend(Path(slot_dir))
    from rlvr_lab.verifier.docker_backend import DockerBackend

    return DockerBackend(Path(slot_dir))
