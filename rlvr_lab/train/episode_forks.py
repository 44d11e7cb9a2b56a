"""Continuation-based credit on repair episodes (section 17.4.3, equation ch3-se).

To ask what turn k of an episode was worth, restore the episode as it stood after turn k and let the
policy finish it M times; the mean of the M terminal rewards estimates the value ``V(h_k)`` of that history,
with a standard error of at most ``1/(2 sqrt M)`` (:func:`rlvr_lab.credit.standard_error_bound`). The
difference of two forks' values is that stretch of turns' credit.

Restoring "the state" here means everything the rest of the episode depends on: the module as edited so
far and the turns taken (the environment's :class:`~rlvr_lab.envs.repair.Episode`, copied), the exact
token context the policy saw (not re-tokenised text), the policy's weights and the verifier. The sandbox
needs no restoring: every verification starts a fresh one. :func:`fork_rewards` plays the M continuations
in one batch, turn by turn, like :func:`~rlvr_lab.train.episodes.collect_episodes`.
"""

from __future__ import annotations

import copy

from rlvr_lab.envs.repair import RepairEnv
from rlvr_lab.policy import sample
from rlvr_lab.train.episodes import observation_tokens
from rlvr_lab.train.rollout import completion_text


def fork_rewards(
    model,
    tokenizer,
    sampling,
    task,
    verifier,
    state,
    prefix: list[int],
    continuations: int,
    generator,
    horizon: int = 4,
    context_tokens: int = 512,
    observation_chars: int = 300,
) -> list[float]:
    """Terminal rewards (1.0 for ``pass``, else 0.0) of ``continuations`` episodes of ``task`` restored
    to ``state`` (an :class:`~rlvr_lab.envs.repair.Episode` that has not ended) with the policy's context
    ``prefix`` (token ids), each played to its end by the policy.

    An unresolved verdict (``pending``/``unknown``) is refused, not counted as a failure: a value estimate
    with a silent zero in it would be biased low.
    """
    if continuations < 1:
        raise ValueError(f"continuations must be >= 1, got {continuations}")
    if state.verdict is not None:
        raise ValueError("the state to fork from has already ended")
    if len(state.turns) >= horizon:
        raise ValueError(f"the state has taken {len(state.turns)} turns, none left of horizon {horizon}")
    envs = []
    for _ in range(continuations):
        env = RepairEnv(task, verifier, horizon, observation_chars)
        env.episode = copy.deepcopy(state)
        envs.append(env)
    prefixes = [list(prefix) for _ in envs]
    active = list(range(len(envs)))
    while active:
        drawn = sample(
            model, [prefixes[i] for i in active], sampling, tokenizer.eos_token_id, tokenizer.pad_token_id, generator
        )
        still = []
        for i, d in zip(active, drawn):
            step = envs[i].step(completion_text(tokenizer, d.completion_ids))
            if step.done:
                continue
            prefixes[i] = d.prompt_ids + d.completion_ids + observation_tokens(tokenizer, step.observation)
            if len(prefixes[i]) + sampling.max_new_tokens > context_tokens:
                envs[i].grade()
            else:
                still.append(i)
        active = still
    rewards = []
    for env in envs:
        verdict = env.episode.verdict
        if verdict.outcome not in ("pass", "fail"):
            raise RuntimeError(f"a continuation of {task.task_id} ended unresolved ({verdict.outcome})")
        rewards.append(1.0 if verdict.outcome == "pass" else 0.0)
    return rewards
