"""Deprecated: moved to :mod:`rlvr_lab.sandbox.docker`; this path goes in 0.2.

The new backend takes the server module's path; this one keeps the old signature and runs the
verifier's proxy server unless told otherwise.
"""

import warnings
from pathlib import Path

from rlvr_lab.sandbox import docker
from rlvr_lab.sandbox.docker import *  # noqa: F401,F403
from rlvr_lab.verifier.proxy import SERVER_PATH

warnings.warn(
    "rlvr_lab.verifier.docker_backend moved to rlvr_lab.sandbox.docker; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)


class DockerBackend(docker.DockerBackend):
    """:class:`rlvr_lab.sandbox.docker.DockerBackend` with the old signature."""

    def __init__(self, slot_dir: Path, server_path: str | None = None, binds: dict | None = None):
        super().__init__(slot_dir, server_path or SERVER_PATH, binds)
