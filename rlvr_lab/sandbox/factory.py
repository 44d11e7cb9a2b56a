"""The one backend factory: a backend name to a sandbox backend for one slot (section 17.7).

It lives apart from :mod:`rlvr_lab.sandbox.backend` (the interface) so that the interface imports no
backend and no backend imports the factory: ``backend`` <- ``local``, ``docker`` <- ``factory``.
"""

from __future__ import annotations

import os
from pathlib import Path

from rlvr_lab.sandbox.backend import BACKENDS, SandboxBackend, SandboxUnavailable


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
    from rlvr_lab.sandbox.local import local_mode

    try:
        local_mode()
    except SandboxUnavailable:
        return "process"
    return "local"


def make_backend(
    name: str,
    slot_dir: Path,
    server_path: str,
    hide: tuple[str, ...] = (),
    keep: tuple[str, ...] = (),
    shared: tuple[str, ...] = (),
    binds: dict | None = None,
) -> SandboxBackend:
    """The backend called ``name`` for one slot whose private scratch directory is ``slot_dir``, running
    the stdlib-only module at ``server_path`` (``serve(rfd, wfd, workdir)``) in each sandbox.

    ``local`` is :class:`~rlvr_lab.sandbox.local.LocalBackend` (root or user namespaces), ``process``
    :class:`~rlvr_lab.sandbox.local.ProcessBackend` and ``docker``
    :class:`~rlvr_lab.sandbox.docker.DockerBackend`. ``hide``, ``keep`` and ``shared`` go to the local
    backends, ``hide`` also to ``process``; ``binds`` to docker (each backend's constructor says what
    they mean).

    >>> make_backend("ssh", Path("/tmp"), "server.py")
    Traceback (most recent call last):
    ...
    ValueError: backend must be one of ('auto', 'local', 'process', 'docker'), got 'ssh'
    """
    name = resolve_backend(name)
    os.makedirs(slot_dir, exist_ok=True)
    if name == "local":
        from rlvr_lab.sandbox.local import LocalBackend

        return LocalBackend(Path(slot_dir), server_path, hide=hide, keep=keep, shared=shared)
    if name == "process":
        from rlvr_lab.sandbox.local import ProcessBackend

        return ProcessBackend(Path(slot_dir), server_path, hide=hide)
    from rlvr_lab.sandbox.docker import DockerBackend

    return DockerBackend(Path(slot_dir), server_path, binds=binds)
