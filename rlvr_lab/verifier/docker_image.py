"""Deprecated: moved to :mod:`rlvr_lab.sandbox.docker_image`; this path goes in 0.2."""

import warnings

from rlvr_lab.sandbox.docker_image import *  # noqa: F401,F403

warnings.warn(
    "rlvr_lab.verifier.docker_image moved to rlvr_lab.sandbox.docker_image; the old path goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)

if __name__ == "__main__":
    from rlvr_lab.sandbox.docker_image import main

    raise SystemExit(main())
