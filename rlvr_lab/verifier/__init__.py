"""The sandboxed pytest verifier (section 17.7).

``RayVerifierPool`` (the fleet on a Ray cluster, 17.9.5) is imported on first use, so importing this
package never needs Ray.
"""

from rlvr_lab.sandbox.backend import SandboxUnavailable
from rlvr_lab.verifier.fixtures import list_exploits, list_fixtures, load_exploit, load_fixture, load_reference
from rlvr_lab.verifier.naive import NaiveVerifier
from rlvr_lab.verifier.pool import VerifierPool
from rlvr_lab.verifier.schema import VERDICTS, Candidate, Fixture, Limits, TrialResult, Verdict
from rlvr_lab.verifier.verifier import Verifier

__all__ = [
    "VERDICTS",
    "Candidate",
    "Fixture",
    "Limits",
    "TrialResult",
    "Verdict",
    "Verifier",
    "VerifierPool",
    "RayVerifierPool",
    "SandboxUnavailable",
    "NaiveVerifier",
    "load_fixture",
    "list_fixtures",
    "load_reference",
    "load_exploit",
    "list_exploits",
]


def __getattr__(name: str):
    if name == "RayVerifierPool":
        from rlvr_lab.verifier.ray_pool import RayVerifierPool

        return RayVerifierPool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
