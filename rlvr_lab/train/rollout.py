"""Collecting rollouts and their verdicts (sections 17.6, 17.7, 17.9.3).

:func:`collect` samples G completions per task from the current weights, optionally runs a second turn in
which the policy sees public-test feedback (17.6.1-17.6.2), sends every final candidate to the isolated
verifier through a :class:`VerdictCache`, and returns one :class:`~rlvr_lab.records.RolloutRecord` per rollout.
It is :func:`start_collect` (sample, submit, return at once) followed by :func:`finish_collect` (wait for
the verdicts); the trainer calls the two halves apart so that the verifier works while the policy updates.
Rewards come only from verdicts; a verdict that does not arrive is recorded as ``unknown``, never 0 or 1.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace

from rlvr_lab.policy import SamplingConfig, sample
from rlvr_lab.records import Invocation, RolloutRecord
from rlvr_lab.tasks import CodeTask
from rlvr_lab.train.precision import Precision
from rlvr_lab.train.prompting import PromptFormat, candidate_for, cut_at_stop, prompt_text
from rlvr_lab.verifier.schema import Candidate, Fixture, Verdict


def _unavailable(candidate: Candidate, fixture: Fixture, why: str) -> Verdict:
    return Verdict(
        outcome="unknown",
        candidate_digest=candidate.digest,
        fixture=fixture.name,
        fixture_version=fixture.version,
        checker_version=fixture.checker_version,
        backend="trainer",
        stop_reason=why,
    )


class VerdictCache:
    """The trainer's side of the verifier boundary: submits to a VerifierPool, waits, caches verdicts.

    Formerly ``Grader`` (a deprecated alias until 0.2), renamed apart from :mod:`rlvr_lab.grading`'s grader.

    ``pool`` is anything with ``submit(candidate, fixture) -> Future[Verdict]`` (a
    :class:`rlvr_lab.verifier.VerifierPool`; its ``submit_many`` is used when present, one entry per
    fixture). With ``cache`` on, a resolved verdict is reused for a byte-identical candidate on the same
    fixture name, version and checker version (a task's public and hidden tests are different checkers);
    unresolved verdicts are never cached.
    """

    def __init__(self, pool, cache: bool = True, timeout_s: float = 120.0):
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self.pool, self.cache_on, self.timeout_s = pool, cache, timeout_s
        self.cache: dict[tuple[str, str, str, str], Verdict] = {}
        self.submitted = 0
        self.cache_hits = 0
        self.seconds = 0.0

    def submit(self, items: list[tuple[Candidate, Fixture]]) -> PendingGrades:
        """Send the (candidate, fixture) pairs the cache cannot answer to the pool; returns at once."""
        keys = [(f.name, f.version, f.checker_version, c.digest) for c, f in items]
        by_fixture: dict[tuple[str, str, str], list[tuple[tuple[str, str, str, str], Candidate, Fixture]]] = {}
        seen = set()
        for key, (cand, fx) in zip(keys, items):
            if (self.cache_on and key in self.cache) or key in seen:
                continue
            seen.add(key)
            by_fixture.setdefault(key[:3], []).append((key, cand, fx))
        futures = {}
        for todo in by_fixture.values():  # one queue entry per fixture: a slot collects its tests once
            if hasattr(self.pool, "submit_many"):
                futs = self.pool.submit_many([c for _, c, _ in todo], todo[0][2])
            else:
                futs = [self.pool.submit(c, fx) for _, c, fx in todo]
            futures.update({key: (f, cand, fx) for (key, cand, fx), f in zip(todo, futs)})
            self.submitted += len(todo)
        return PendingGrades(keys, futures)

    def wait(self, pending: PendingGrades) -> list[tuple[Verdict, bool]]:
        """Verdicts of a :meth:`submit`, in order, each with a ``cached`` flag; seconds spent waiting are
        added to :attr:`seconds`."""
        start = time.perf_counter()
        fresh: dict[tuple[str, str, str, str], Verdict] = {}
        for key, (fut, cand, fx) in pending.futures.items():
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
        for key in pending.keys:
            if key in fresh:
                out.append((fresh[key], False))
            else:
                self.cache_hits += 1
                out.append((self.cache[key], True))
        self.seconds += time.perf_counter() - start
        return out

    def grade(self, items: list[tuple[Candidate, Fixture]]) -> list[tuple[Verdict, bool]]:
        """Verdicts for (candidate, fixture) pairs, in order, each with a ``cached`` flag."""
        return self.wait(self.submit(items))


@dataclass
class PendingGrades:
    """Verifier requests in flight: the cache key of every pair, in order, and per distinct uncached key
    its future with the candidate and fixture it was submitted for."""

    keys: list[tuple[str, str, str, str]]
    futures: dict


@dataclass
class PolicyHandle:
    """What collection needs from the policy: model, tokenizer, version and the sampling configuration."""

    model: object
    tokenizer: object
    version: int
    sampling: SamplingConfig
    tokenizer_digest: str
    fmt: PromptFormat = PromptFormat()
    """Chat template or plain prompt, stop strings and end tokens (:mod:`~rlvr_lab.train.prompting`)."""
    precision: Precision = Precision()
    """The compute dtype sampling runs in (autocast; float32 weights)."""


def tokenizer_digest(tokenizer) -> str:
    """SHA-256 of the tokenizer's serialized JSON (17.6.1: ids mean nothing without it)."""
    return hashlib.sha256(tokenizer.backend_tokenizer.to_str().encode()).hexdigest()


def prompt_ids(tokenizer, text: str, bos: bool = True) -> list[int]:
    """``<bos>`` (when the tokenizer has one and ``bos``) + the tokens of ``text``: the exact prefix of a
    first call (a chat template writes its own start tokens: ``bos=False``)."""
    bos = [] if tokenizer.bos_token_id is None or not bos else [tokenizer.bos_token_id]
    return bos + tokenizer(text, add_special_tokens=False)["input_ids"]


def completion_text(tokenizer, ids: list[int], fmt: PromptFormat = PromptFormat()) -> str:
    """Decoded completion without the final ``<eos>`` (or other end token), cut before a stop string."""
    if ids and (ids[-1] == tokenizer.eos_token_id or ids[-1] in fmt.stop_ids):
        ids = ids[:-1]
    return cut_at_stop(tokenizer.decode(ids, skip_special_tokens=True), fmt.stop_strings)


def public_fixture(fixture: Fixture) -> Fixture:
    """The same fixture graded by its public tests only: the feedback a policy may see (17.6.1)."""
    return replace(
        fixture, hidden_tests=dict(fixture.public_tests), checker_version=fixture.checker_version + "-public"
    )


def observation_text(verdict: Verdict, task: CodeTask) -> str:
    """Feedback shown before the revision turn, followed by the prompt again so the policy rewrites the body."""
    detail = verdict.trials[0].reason if verdict.trials else verdict.stop_reason
    return f"# public test: {verdict.outcome} ({detail})\n" + task.prompt


@dataclass
class Collection:
    """A sampled batch whose final candidates are with the verifier (see :func:`start_collect`).

    ``records`` already hold everything but the assessment: verdict ``unknown`` and reward None until
    :func:`finish_collect` fills in the verifier's answer, so a batch that is never finished can only be
    read as unresolved, never as scored.
    """

    records: list[RolloutRecord]
    pending: PendingGrades
    times: dict


def start_collect(
    policy: PolicyHandle,
    tasks: list[CodeTask],
    group_size: int,
    grader: VerdictCache,
    step: int,
    generator,
    multi_turn: bool = False,
    id_prefix: str = "s",
) -> Collection:
    """Sample ``group_size`` rollouts per task and submit every final candidate to the verifier.

    Returns as soon as the requests are queued, so the caller can do other work (score the batch under
    the reference model, or update on the previous batch) while the verifier runs (17.9.5). With
    ``multi_turn`` the first turn is graded by the public tests before the second is sampled.
    Rollout ids are ``{id_prefix}{step}-g{task index}-r{member}``; they are stable across a resume because
    the task choice and the sampling generator are seeded by the step.
    """
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    tok, cfg, fmt = policy.tokenizer, policy.sampling, policy.fmt
    if multi_turn and fmt.chat:
        raise ValueError("multi_turn with a chat template is not supported; pass chat_template='off'")
    t0 = time.perf_counter()
    prompts, owners = [], []
    for g, task in enumerate(tasks):
        ids = prompt_ids(tok, prompt_text(tok, task, fmt), bos=not fmt.chat)
        for r in range(group_size):
            prompts.append(ids)
            owners.append((g, r, task))

    def draw(prefixes):
        with policy.precision.autocast():
            return sample(
                policy.model,
                prefixes,
                cfg,
                tok.eos_token_id,
                tok.pad_token_id,
                generator,
                fmt.stop_ids,
                fmt.stop_strings,
                tok.decode,
            )

    samples = draw(prompts)
    calls = [
        [Invocation(0, s.prompt_ids, s.completion_ids, s.behaviour_logprobs, policy.version, s.stop_reason)]
        for s in samples
    ]
    t_sample = time.perf_counter() - t0
    t_verify = 0.0
    if multi_turn:
        t1 = time.perf_counter()
        first = grader.grade(
            [
                (candidate_for(task, completion_text(tok, s.completion_ids, fmt), fmt), public_fixture(task.fixture))
                for s, (_, _, task) in zip(samples, owners)
            ]
        )
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
            second = draw(prefixes)
            for i, s in zip(retry, second):
                calls[i].append(
                    Invocation(1, s.prompt_ids, s.completion_ids, s.behaviour_logprobs, policy.version, s.stop_reason)
                )
            t_sample += time.perf_counter() - t2
    finals = [completion_text(tok, c[-1].completion_ids, fmt) for c in calls]
    pending = grader.submit(
        [(candidate_for(task, text, fmt), task.fixture) for text, (_, _, task) in zip(finals, owners)]
    )
    records = [
        new_record(
            task, f"{id_prefix}{step}-g{g}", r, step, cfg, policy.tokenizer_digest, call_list, text, policy.version
        )
        for (g, r, task), call_list, text in zip(owners, calls, finals)
    ]
    return Collection(records, pending, {"sample_s": t_sample, "verify_s": t_verify})


def new_record(
    task, group_id: str, member: int, step: int, cfg, digest: str, calls: list[Invocation], text: str, version: int
) -> RolloutRecord:
    """A rollout record of ``task`` (a function or repair task) awaiting its verdict: ``unknown`` with no
    reward until the caller writes the verifier's answer in (never scored by default)."""
    return RolloutRecord(
        rollout_id=f"{group_id}-r{member}",
        group_id=group_id,
        task_id=task.task_id,
        problem_id=task.problem_id,
        split=task.split,
        step=step,
        fixture=task.fixture.name,
        fixture_version=task.fixture.version,
        sampling=cfg.to_dict(),
        tokenizer_digest=digest,
        invocations=calls,
        completion_text=text,
        verdict="unknown",
        reward=None,
        evidence={"stop_reason": "awaiting the verifier"},
        stop_reason=calls[-1].stop_reason,
        prompt_tokens=len(calls[0].prefix_ids),
        completion_tokens=sum(len(c.completion_ids) for c in calls),
        policy_version=version,
    )


def finish_collect(collection: Collection, grader: VerdictCache) -> tuple[list[RolloutRecord], dict]:
    """Wait for a :class:`Collection`'s verdicts and write them into its records; returns the records and
    timings in seconds (``verify_s`` counts only the time spent waiting here and on a first turn)."""
    t0 = time.perf_counter()
    verdicts = grader.wait(collection.pending)
    times = dict(collection.times)
    times["verify_s"] += time.perf_counter() - t0
    for record, (verdict, cached) in zip(collection.records, verdicts):
        evidence = verdict.to_dict()
        evidence["cached"] = cached
        record.verdict, record.reward, record.evidence = verdict.outcome, verdict.reward, evidence
    return collection.records, times


def collect(
    policy: PolicyHandle,
    tasks: list[CodeTask],
    group_size: int,
    grader: VerdictCache,
    step: int,
    generator,
    multi_turn: bool = False,
    id_prefix: str = "s",
) -> tuple[list[RolloutRecord], dict]:
    """Sample ``group_size`` rollouts per task, grade them, return records and timings (seconds):
    :func:`start_collect` followed at once by :func:`finish_collect`."""
    return finish_collect(
        start_collect(policy, tasks, group_size, grader, step, generator, multi_turn, id_prefix), grader
    )


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


def __getattr__(name: str):
    """``Grader``, the old name of :class:`VerdictCache`, until 0.2."""
    if name == "Grader":
        warnings.warn(
            "rlvr_lab.train.rollout.Grader is now VerdictCache; the old name goes in 0.2",
            DeprecationWarning,
            stacklevel=2,
        )
        return VerdictCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
