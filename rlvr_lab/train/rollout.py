"""Collecting rollouts and their verdicts (sections 17.6, 17.7, 17.9.3).

:func:`collect` samples G completions per task from the current weights, optionally runs a second turn in
which the policy sees public-test feedback (17.6.1-17.6.2), sends every final candidate to the isolated
verifier through a :class:`Grader`, and returns one :class:`~rlvr_lab.records.RolloutRecord` per rollout.
Rewards come only from verdicts; a verdict that does not arrive is recorded as ``unknown``, never 0 or 1.
"""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace

from rlvr_lab.policy import SamplingConfig, sample
from rlvr_lab.records import Invocation, RolloutRecord
from rlvr_lab.tasks import CodeTask
from rlvr_lab.verifier.schema import Candidate, Fixture, Verdict


def _unavailable(candidate: Candidate, fixture: Fixture, why: str) -> Verdict:
    return Verdict(outcome="unknown", candidate_digest=candidate.digest, fixture=fixture.name,
                   fixture_version=fixture.version, checker_version=fixture.checker_version,
                   backend="trainer", stop_reason=why)


class Grader:
    """The trainer's side of the verifier boundary: submits to a VerifierPool, waits, caches.

    ``pool`` is anything with ``submit(candidate, fixture) -> Future[Verdict]`` (a
    :class:`rlvr_lab.verifier.VerifierPool`). With ``cache`` on, a resolved verdict is reused for a
    byte-identical candidate on the same fixture name and version; unresolved verdicts are never cached.
    """

    def __init__(self, pool, cache: bool = True, timeout_s: float = 120.0):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self.pool, self.cache_on, self.timeout_s = pool, cache, timeout_s
        self.cache: dict[tuple[str, str, str], Verdict] = {}
        self.submitted = 0
        self.cache_hits = 0
        self.seconds = 0.0

    def grade(self, items: list[tuple[Candidate, Fixture]]) -> list[tuple[Verdict, bool]]:
        """Verdicts for (candidate, fixture) pairs, in order, each with a ``cached`` flag."""
        start = time.perf_counter()
        keys = [(f.name, f.version, c.digest) for c, f in items]
        futures = {}
        for key, (cand, fx) in zip(keys, items):
            if (self.cache_on and key in self.cache) or key in futures:
                continue
            futures[key] = self.pool.submit(cand, fx)
            self.submitted += 1
        fresh: dict[tuple[str, str, str], Verdict] = {}
        for key, fut in futures.items():
            cand, fx = items[keys.index(key)]
            try:
                verdict = fut.result(timeout=self.timeout_s)
            except FutureTimeout:
                verdict = _unavailable(cand, fx, f"trainer: no verdict within {self.timeout_s} s")
            except Exception as exc:  # the pool or the verifier faulted: infrastructure, not the policy
                verdict = _unavailable(cand, fx, f"trainer: verifier raised {type(exc).__name__}: {exc}")
            fresh[key] = verdict
            if self.cache_on and verdict.resolved:
                self.cache[key] = verdict
        out = []
        for key in keys:
            if key in fresh:
                out.append((fresh[key], False))
            else:
                self.cache_hits += 1
                out.append((self.cache[key], True))
        self.seconds += time.perf_counter() - start
        return out


@dataclass
class PolicyHandle:
    """What collection needs from the policy: model, tokenizer, version and the sampling configuration."""

    model: object
    tokenizer: object
    version: int
    sampling: SamplingConfig
    tokenizer_digest: str


def tokenizer_digest(tokenizer) -> str:
    """SHA-256 of the tokenizer's serialized JSON (17.6.1: ids mean nothing without it)."""
    return hashlib.sha256(tokenizer.backend_tokenizer.to_str().encode()).hexdigest()


def prompt_ids(tokenizer, text: str) -> list[int]:
    """``<bos>`` (when the tokenizer has one) + the tokens of ``text``: the exact prefix of a first call."""
    bos = [] if tokenizer.bos_token_id is None else [tokenizer.bos_token_id]
    return bos + tokenizer(text, add_special_tokens=False)["input_ids"]


def completion_text(tokenizer, ids: list[int]) -> str:
    """Decoded completion without the final ``<eos>``."""
    if ids and ids[-1] == tokenizer.eos_token_id:
        ids = ids[:-1]
    return tokenizer.decode(ids, skip_special_tokens=True)


def public_fixture(fixture: Fixture) -> Fixture:
    """The same fixture graded by its public tests only: the feedback a policy may see (17.6.1)."""
    return replace(fixture, hidden_tests=dict(fixture.public_tests), checker_version=fixture.checker_version + "-public")


def observation_text(verdict: Verdict, task: CodeTask) -> str:
    """Feedback shown before the revision turn, followed by the prompt again so the policy rewrites the body."""
    detail = verdict.trials[0].reason if verdict.trials else verdict.stop_reason
    return f"# public test: {verdict.outcome} ({detail})\n" + task.prompt


def collect(policy: PolicyHandle, tasks: list[CodeTask], group_size: int, grader: Grader, step: int,
            generator, multi_turn: bool = False, id_prefix: str = "s") -> tuple[list[RolloutRecord], dict]:
    """Sample ``group_size`` rollouts per task, grade them, return records and timings (seconds).

    Rollout ids are ``{id_prefix}{step}-g{task index}-r{member}``; they are stable across a resume because
    the task choice and the sampling generator are seeded by the step.
    """
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    tok, cfg = policy.tokenizer, policy.sampling
    t0 = time.perf_counter()
    prompts, owners = [], []
    for g, task in enumerate(tasks):
        ids = prompt_ids(tok, task.prompt)
        for r in range(group_size):
            prompts.append(ids)
            owners.append((g, r, task))
    samples = sample(policy.model, prompts, cfg, tok.eos_token_id, tok.pad_token_id, generator)
    calls = [[Invocation(0, s.prompt_ids, s.completion_ids, s.behaviour_logprobs, policy.version, s.stop_reason)]
             for s in samples]
    t_sample = time.perf_counter() - t0
    t_verify = 0.0
    if multi_turn:
        t1 = time.perf_counter()
        first = grader.grade([(task.candidate(completion_text(tok, s.completion_ids)), public_fixture(task.fixture))
                              for s, (_, _, task) in zip(samples, owners)])
        t_verify += time.perf_counter() - t1
        retry = [i for i, (v, _) in enumerate(first) if v.outcome != "pass"]
        if retry:
            t2 = time.perf_counter()
            prefixes = []
            for i in retry:
                obs = observation_text(first[i][0], owners[i][2])
                obs_ids = tok(obs, add_special_tokens=False)["input_ids"]
                calls[i][0].observation_ids, calls[i][0].observation = obs_ids, obs
                prefixes.append(samples[i].prompt_ids + samples[i].completion_ids + obs_ids)
            second = sample(policy.model, prefixes, cfg, tok.eos_token_id, tok.pad_token_id, generator)
            for i, s in zip(retry, second):
                calls[i].append(Invocation(1, s.prompt_ids, s.completion_ids, s.behaviour_logprobs, policy.version,
                                           s.stop_reason))
            t_sample += time.perf_counter() - t2
    finals = [completion_text(tok, c[-1].completion_ids) for c in calls]
    t3 = time.perf_counter()
    verdicts = grader.grade([(task.candidate(text), task.fixture) for text, (_, _, task) in zip(finals, owners)])
    t_verify += time.perf_counter() - t3
    records = []
    for (g, r, task), call_list, text, (verdict, cached) in zip(owners, calls, finals, verdicts):
        evidence = verdict.to_dict()
        evidence["cached"] = cached
        records.append(RolloutRecord(
            rollout_id=f"{id_prefix}{step}-g{g}-r{r}", group_id=f"{id_prefix}{step}-g{g}", task_id=task.task_id,
            problem_id=task.problem_id, split=task.split, step=step, fixture=task.fixture.name,
            fixture_version=task.fixture.version, sampling=cfg.to_dict(), tokenizer_digest=policy.tokenizer_digest,
            invocations=call_list, completion_text=text, verdict=verdict.outcome, reward=verdict.reward,
            evidence=evidence, stop_reason=call_list[-1].stop_reason, prompt_tokens=len(call_list[0].prefix_ids),
            completion_tokens=sum(len(c.completion_ids) for c in call_list), policy_version=policy.version))
    return records, {"sample_s": t_sample, "verify_s": t_verify}


def replay_max_deviation(model, records: list[RolloutRecord], pad_id: int) -> float:
    """Replay check (17.6.1): recompute every scored token's log-prob from the recorded ids and sampling
    configuration and return the largest absolute deviation from the recorded behaviour log-prob (nats).

    Meaningful for records sampled by the weights ``model`` holds now (same policy version).
    """
    import torch

    from rlvr_lab.records import flatten
    from rlvr_lab.policy import completion_logprobs

    if not records:
        raise ValueError("records must hold at least one rollout record")
    worst = 0.0
    for r in records:
        ids, mask, old = flatten(r)
        with torch.no_grad():
            logp, m = completion_logprobs(model, [ids], [mask], SamplingConfig(**r.sampling), pad_id)
        dev = (logp[0] - torch.tensor(old[1:], dtype=logp.dtype, device=logp.device)).abs() * m[0]
        worst = max(worst, float(dev.max()))
    return worst
