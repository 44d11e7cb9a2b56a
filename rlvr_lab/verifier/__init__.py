"""The sandboxed pytest verifier (section 17.7)."""

from rlvr_lab.verifier.backend import SandboxUnavailable
from rlvr_lab.verifier.fixtures import list_exploits, list_fixtures, load_exploit, load_fixture, load_reference
from rlvr_lab.verifier.naive import NaiveVerifier
from rlvr_lab.verifier.pool import VerifierPool
from rlvr_lab.verifier.schema import VERDICTS, Candidate, Fixture, Limits, TrialResult, Verdict
from rlvr_lab.verifier.verifier import Verifier

__all__ = ["VERDICTS", "Candidate", "Fixture", "Limits", "TrialResult", "Verdict", "Verifier", "VerifierPool", "SandboxUnavailable",
           "NaiveVerifier", "load_fixture", "list_fixtures", "load_reference", "load_exploit", "list_exploits"]
