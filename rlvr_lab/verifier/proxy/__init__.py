"""The proxy: how the trusted runner's hidden tests reach candidate code in the sandbox (section 17.7).

* :mod:`~rlvr_lab.verifier.proxy.server`: the candidate's side, run in the sandbox (standard library
  only, loaded by path from :data:`SERVER_PATH`).
* :mod:`~rlvr_lab.verifier.proxy.client`: the runner's side, :class:`~.client.ProxyClient`.
* :mod:`~rlvr_lab.verifier.proxy.values`: what crosses by value (plain data, library values, shared
  objects), decoded strictly; :mod:`~rlvr_lab.verifier.proxy.handles`: handles to what stays.
* :mod:`~rlvr_lab.verifier.proxy.imports`: the import hook that makes ``import solution`` a proxy.

This package imports none of them (the wire format imports the server's frame limit; the client imports
the wire format).
"""

import os

#: The server module every verifier sandbox runs (what the sandbox backends take as ``server_path``).
SERVER_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")

#: Names the old module ``rlvr_lab.verifier.proxy`` (now :mod:`~rlvr_lab.verifier.proxy.client`) had.
OLD_NAMES = ("ProxyClient", "MAX_REPLY_BYTES", "MAX_STAR_NAMES")


def __getattr__(name: str):
    if name in OLD_NAMES:
        import warnings

        from rlvr_lab.verifier.proxy import client

        warnings.warn(
            f"rlvr_lab.verifier.proxy.{name} moved to rlvr_lab.verifier.proxy.client; the old path goes in 0.2",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
