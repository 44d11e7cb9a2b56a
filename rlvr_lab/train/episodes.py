"""Whole repair episodes as rollout records (sections 17.2.1, 17.6, table 6).

:func:`collect_episodes` runs ``group_size`` episodes of :class:`~rlvr_lab.envs.repair.RepairEnv` per task
with the policy in the loop: each turn the policy samples one action from its context (recording behaviour
log-probs), the environment carries it out (the verifier runs the public tests for ``RUN``), and the
observation's tokens are appended to the context. Each policy call is one
:class:`~rlvr_lab.records.Invocation` holding the exact prefix it saw, the sampled tokens, their log-probs,
the policy version, the tool it called, the observation (as tokens and text) and the tool's seconds, so the
record of an episode replays exactly (:func:`~rlvr_lab.train.rollout.replay_max_deviation`) and the loss
scores only the policy's own tokens (observations are context, 17.6.2).

The context is append-only at the token level: call k's prefix is call k-1's prefix, its sampled tokens and
the observation's tokens, so nothing is re-tokenised and the prefixes are the ones the policy saw. An
episode whose next prefix would not leave ``max_new_tokens`` of room in ``context_tokens`` ends there
(``stop_reason`` ``context``) and is graded as it stands, like one that reaches its horizon.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from rlvr_lab.envs.repair import RepairEnv
from rlvr_lab.policy import sample
from rlvr_lab.records import Invocation, RolloutRecord
from rlvr_lab.train.rollout import completion_text, new_record, prompt_ids

#: What follows each observation in the context: the policy's next action comes after it.
ACTION_MARK = "\n> "


def observation_tokens(tokenizer, observation: str) -> list[int]:
    """The tokens appended after an action: the observation on lines of its own, then the action mark."""
    return tokenizer("\n" + observation + ACTION_MARK, add_special_tokens=False)["input_ids"]


def collect_episodes(
    policy,
    tasks: list,
    group_size: int,
    verifier,
    step: int,
    generator,
    horizon: int = 8,
    context_tokens: int = 512,
    observation_chars: int = 300,
    workers: int = 2,
    id_prefix: str = "e",
) -> list[RolloutRecord]:
    """``group_size`` episodes per task, sampled turn by turn in one batch; returns one record per episode
    (group ``{id_prefix}{step}-g{task index}``) with its verdict from the hidden tests.

    ``policy`` is a :class:`~rlvr_lab.train.rollout.PolicyHandle`; ``verifier`` anything with
    ``verify(candidate, fixture)``, called from ``workers`` threads (a
    :class:`~rlvr_lab.verifier.VerifierPool`'s slots run them at once).
    """
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    tok, cfg = policy.tokenizer, policy.sampling
    if context_tokens <= cfg.max_new_tokens:
        raise ValueError(f"context_tokens ({context_tokens}) must exceed max_new_tokens ({cfg.max_new_tokens})")
    envs, owners = [], []
    for g, task in enumerate(tasks):
        for r in range(group_size):
            envs.append(RepairEnv(task, verifier, horizon, observation_chars))
            owners.append((g, r, task))
    prefixes = [prompt_ids(tok, env.reset() + ACTION_MARK.lstrip("\n")) for env in envs]
    for p, (_, _, task) in zip(prefixes, owners):
        if len(p) + cfg.max_new_tokens > context_tokens:
            raise ValueError(
                f"{task.task_id}: its first context takes {len(p)} tokens, leaving no room for an action in "
                f"context_tokens {context_tokens}"
            )
    calls: list[list[Invocation]] = [[] for _ in envs]
    active, ended = list(range(len(envs))), {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for turn in range(horizon):
            if not active:
                break
            with policy.precision.autocast():
                drawn = sample(
                    policy.model, [prefixes[i] for i in active], cfg, tok.eos_token_id, tok.pad_token_id, generator
                )
            actions = [completion_text(tok, s.completion_ids) for s in drawn]
            steps = list(pool.map(lambda pair: envs[pair[0]].step(pair[1]), zip(active, actions)))
            still = []
            for i, s, st in zip(active, drawn, steps):
                obs_ids = [] if st.done else observation_tokens(tok, st.observation)
                calls[i].append(
                    Invocation(
                        turn,
                        s.prompt_ids,
                        s.completion_ids,
                        s.behaviour_logprobs,
                        policy.version,
                        s.stop_reason,
                        obs_ids,
                        st.observation,
                        tool=st.tool,
                        tool_ok=st.ok,
                        tool_s=st.seconds,
                    )
                )
                if st.done:
                    ended[i] = "submit" if st.tool == "SUBMIT" else "horizon"
                    continue
                prefixes[i] = s.prompt_ids + s.completion_ids + obs_ids
                if len(prefixes[i]) + cfg.max_new_tokens > context_tokens:
                    ended[i] = "context"
                else:
                    still.append(i)
            active = still
        # an episode stopped by its context window is graded as it stands
        late = [i for i, why in ended.items() if why == "context"]
        list(pool.map(lambda i: envs[i].grade(), late))
    records = []
    for i, (env, (g, r, task)) in enumerate(zip(envs, owners)):
        record = new_record(
            task, f"{id_prefix}{step}-g{g}", r, step, cfg, policy.tokenizer_digest, calls[i], env.episode.source,
            policy.version,
        )  # fmt: skip
        verdict = env.episode.verdict
        record.verdict, record.reward, record.evidence = verdict.outcome, verdict.reward, verdict.to_dict()
        record.stop_reason = ended.get(i, "horizon")
        records.append(record)
    return records


def episode_seconds(records: list[RolloutRecord]) -> dict:
    """Where an episode's time went, summed over ``records``: tool seconds by tool (table 6's timings)."""
    out: dict[str, float] = {}
    for r in records:
        for c in r.invocations:
            out[c.tool or "invalid"] = out.get(c.tool or "invalid", 0.0) + c.tool_s
    return out
