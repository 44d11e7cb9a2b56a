"""Rollout records, group closure and staleness admission (sections 17.6.1, 17.9.3, 17.9.4; table 6).

A :class:`RolloutRecord` keeps what the update needs to be computed on what the policy actually saw: each
invocation's exact delivered prefix and sampled token ids, the behaviour log-probs under the recorded
sampling configuration, the policy version, the verdict with its evidence, and why collection stopped.
Records are JSON Lines. :func:`flatten` turns a record into one token sequence and a score mask in which
observation tokens are context only (17.6.2). :func:`close_group` is the declared complete-group rule:
a group enters the update only when every member is resolved and within the version-lag bound; an unresolved
member is never coerced to 0 or 1.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field


@dataclass
class Invocation:
    """One call of the policy inside a rollout."""

    call_id: int
    """0 for the first turn, 1 for the revision turn, ..."""
    prefix_ids: list[int]
    """Exact delivered input token ids of this call (for call > 0: the previous prefix, its sampled tokens
    and the observation)."""
    completion_ids: list[int]
    """Token ids sampled in this call, including a final ``<eos>`` when the policy stopped."""
    behaviour_logprobs: list[float]
    """Per sampled token, log-prob under the transformed sampling distribution (nats)."""
    policy_version: int
    """Version of the weights that sampled this call."""
    stop_reason: str
    """``eos`` or ``length`` (budget exhausted: a task failure, 17.6.3)."""
    observation_ids: list[int] = field(default_factory=list)
    """Tokens the harness appended after this call (public-test feedback); context, never scored."""
    observation: str = ""
    """The observation as text, for a human reading the record."""
    tool: str = ""
    """The tool this call's action named in a multi-turn environment (``RUN``, ``LINE``, ...; ``""``: none)."""
    tool_ok: bool = True
    """Whether the environment could carry the action out (False: malformed, or an edit that did not apply)."""
    tool_s: float = 0.0
    """Seconds the tool took (the verifier's, for a test run or the final grading)."""


@dataclass
class RolloutRecord:
    """One rollout (table 6): identity, invocations, behaviour distribution, assessment, admission."""

    rollout_id: str
    """Unique and stable across resumes: ``s{step}-g{group}-r{member}``."""
    group_id: str
    """``s{step}-g{group}``: the planned cohort the group-relative baseline is computed over."""
    task_id: str
    problem_id: str
    split: str
    step: int
    """Training step that collected the rollout (-1 for evaluation)."""
    fixture: str
    fixture_version: str
    sampling: dict
    """The :class:`~rlvr_lab.policy.SamplingConfig` as a dict: it defines ``pi_old``."""
    tokenizer_digest: str
    """SHA-256 of the tokenizer's JSON: token ids mean nothing without it (17.6.1)."""
    invocations: list[Invocation]
    completion_text: str
    """Decoded text of the final call's completion (what was sent to the verifier)."""
    verdict: str
    """One of pass, fail, pending, unknown."""
    reward: float | None
    """1.0, 0.0, or None while unresolved."""
    evidence: dict
    """The verifier's verdict dict (digest, versions, backend, trials, stop reason)."""
    stop_reason: str
    """Why the rollout ended: the last call's stop reason."""
    prompt_tokens: int
    completion_tokens: int
    """Scored policy tokens over all calls."""
    policy_version: int
    """Version of the first call's weights (the rollout is pinned to one version in this loop)."""
    admitted: bool | None = None
    """Whether the rollout's group entered the update (None: not decided, e.g. evaluation)."""
    exclusion_reason: str = ""
    version_lag: int = 0
    """Trainer version minus sampling version at admission (equation 8's lag, counted exactly)."""
    age_s: float = 0.0
    """Seconds from the first sampled token of the batch to admission (equation 8's tau_admit)."""

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict) -> RolloutRecord:
        """Inverse of ``asdict``."""
        data = dict(data)
        data["invocations"] = [Invocation(**c) for c in data["invocations"]]
        return cls(**data)


def write_records(path: str, records: list[RolloutRecord]) -> int:
    """Append records as JSON Lines and fsync; returns the file size in bytes afterwards.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "r.jsonl")
    >>> write_records(p, []) == 0
    True
    """
    with open(path, "a", encoding="utf-8") as fh:
        for record in records:
            fh.write(record.to_json() + "\n")
        fh.flush()
        os.fsync(fh.fileno())
        return fh.tell()


def read_records(path: str) -> list[RolloutRecord]:
    """All records of a JSON Lines file (an empty list when it does not exist)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [RolloutRecord.from_dict(json.loads(line)) for line in fh if line.strip()]


def file_digest(path: str, size: int | None = None) -> str:
    """SHA-256 of the first ``size`` bytes of a file (all of it when None): the record digest in lineage.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x"); _ = open(p, "w").write("ab")
    >>> file_digest(p, 1) == hashlib.sha256(b"a").hexdigest()
    True
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read() if size is None else fh.read(size))
    return h.hexdigest()


def flatten(record: RolloutRecord) -> tuple[list[int], list[int], list[float]]:
    """One sequence for the loss: (token ids, score mask, behaviour log-probs aligned to the ids).

    The first call's prefix and every observation are context (mask 0); sampled tokens are scored (mask 1).
    Raises ValueError when a later call's recorded prefix is not the exact continuation of the earlier ones.

    >>> inv = Invocation(0, [1, 2], [3, 4], [-0.1, -0.2], 0, "eos")
    >>> r = RolloutRecord("r", "g", "t", "p", "train", 0, "f", "v", {}, "", [inv], "", "fail", 0.0, {},
    ...                   "eos", 2, 2, 0)
    >>> flatten(r)
    ([1, 2, 3, 4], [0, 0, 1, 1], [0.0, 0.0, -0.1, -0.2])
    """
    first = record.invocations[0]
    ids = list(first.prefix_ids)
    mask = [0] * len(ids)
    logps = [0.0] * len(ids)
    for call in record.invocations:
        if call.prefix_ids != ids:
            raise ValueError(
                f"record {record.rollout_id}: prefix of call {call.call_id} is not the exact "
                "delivered context (earlier prefix + sampled tokens + observation)"
            )
        ids += call.completion_ids
        mask += [1] * len(call.completion_ids)
        logps += list(call.behaviour_logprobs)
        ids += call.observation_ids
        mask += [0] * len(call.observation_ids)
        logps += [0.0] * len(call.observation_ids)
    return ids, mask, logps


def close_group(
    members: list[RolloutRecord], planned: int, trainer_version: int, max_lag: int, rule: str = "exclude"
) -> tuple[bool, str]:
    """The declared complete-group rule (17.9.3, 17.10): may this group enter the update?

    Eligible only if all ``planned`` members reported, every verdict is resolved (pass/fail) and every
    member's version lag is within ``max_lag``. Otherwise the group is excluded whole, with the reason,
    never re-normalised over a subset and never with an unresolved reward coerced. ``rule`` is ``exclude``
    (close now without the group) or ``wait`` (report that the group must wait for retries).

    >>> inv = Invocation(0, [1], [2], [-0.5], 0, "eos")
    >>> mk = lambda v: RolloutRecord("r", "g", "t", "p", "train", 0, "f", "v", {}, "", [inv], "", v,
    ...                              {"pass": 1.0, "fail": 0.0}.get(v), {}, "eos", 1, 1, 0)
    >>> close_group([mk("pass"), mk("fail")], 2, 0, 1)
    (True, '')
    >>> close_group([mk("pass"), mk("pending")], 2, 0, 1)
    (False, 'excluded: 1 unresolved member(s) (pending)')
    """
    if rule not in ("exclude", "wait"):
        raise ValueError(f"rule must be 'exclude' or 'wait', got {rule!r}")
    if max_lag < 0:
        raise ValueError(f"max_lag must be >= 0, got {max_lag}")
    verb = "excluded" if rule == "exclude" else "waiting"
    if len(members) < planned:
        return False, f"{verb}: {planned - len(members)} member(s) missing"
    unresolved = [m.verdict for m in members if m.reward is None]
    if unresolved:
        return False, f"{verb}: {len(unresolved)} unresolved member(s) ({', '.join(sorted(set(unresolved)))})"
    stale = [trainer_version - m.policy_version for m in members if trainer_version - m.policy_version > max_lag]
    if stale:
        return False, f"excluded: version lag {max(stale)} > max_lag {max_lag}"
    return True, ""
