"""The sandboxed pytest verifier (section 17.7)."""

from rlvr_lab.verifier.schema import VERDICTS, Candidate, Fixture, Limits, TrialResult, Verdict

__all__ = ["VERDICTS", "Candidate", "Fixture", "Limits", "TrialResult", "Verdict"]
