"""Deprecated: moved to :mod:`rlvr_lab.sandbox.local`; this path goes in 0.2.

The new backends take the server module's path; these keep the old signatures and run the verifier's
proxy server unless told otherwise.
"""

import warnings
from pathlib import Path

from rlvr_lab.sandbox import local
from rlvr_lab.sandbox.local import *  # noqa: F401,F403
from rlvr_lab.verifier.proxy import SERVER_PATH

warnings.warn(
    "rlvr_lab.verifier.sandbox moved to rlvr_lab.sandbox.local; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)


class LocalBackend(local.LocalBackend):
    """:class:`rlvr_lab.sandbox.local.LocalBackend` with the old signature."""

    def __init__(
        self,
        slot_dir: Path,
        hide: tuple[str, ...] = (),
        keep: tuple[str, ...] = (),
        server_path: str | None = None,
        shared: tuple[str, ...] = (),
    ):
        super().__init__(slot_dir, server_path or SERVER_PATH, hide, keep, shared)


class ProcessBackend(local.ProcessBackend):
    """:class:`rlvr_lab.sandbox.local.ProcessBackend` with the old signature."""

    def __init__(self, slot_dir: Path, hide: tuple[str, ...] = (), landlock: bool = True):
        super().__init__(slot_dir, SERVER_PATH, hide, landlock)
