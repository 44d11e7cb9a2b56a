"""One rollout slot's cycle, measured on repair episodes (section 17.9.2, equation 6).

Equation 6 says a serial slot spends ``T_cycle = H (t_model + t_tool) + t_assess + t_reset`` seconds per
episode: H turns of a policy call and a tool call, then the assessment (the hidden tests) and a reset.
:func:`timed_episode` plays one :class:`~rlvr_lab.envs.repair.RepairEnv` episode the way one slot would,
policy call after tool call, and clocks each stage separately from the episode's own wall time, so the two
sides of equation 6 can be set against each other (:func:`cycle_rows`):

- ``t_reset``: ``env.reset()`` and the first prompt's tokens. The sandbox itself needs no reset between
  episodes: every verification runs in a fresh one (:mod:`rlvr_lab.sandbox`), so its set-up is inside
  ``t_tool`` (``RUN``) and ``t_assess``.
- ``t_model``: one policy call (:func:`rlvr_lab.policy.sample`, batch of one, KV cache) per turn.
- ``t_tool``: the environment's step minus the assessment: the public tests through the verifier for
  ``RUN``, a string edit for ``LINE``/``DEF``/``SHOW``, nothing for ``SUBMIT``.
- ``t_assess``: the hidden tests' verdict through the verifier at the end of the episode.

What equation 6 leaves out (appending observation tokens, bookkeeping) is the residual
``wall - T_cycle`` of each episode.
"""

from __future__ import annotations

import copy
import statistics
import time
from dataclasses import dataclass, field

from rlvr_lab.cycle_time import cycle_time
from rlvr_lab.envs.repair import RepairEnv
from rlvr_lab.policy import sample
from rlvr_lab.train.episodes import ACTION_MARK, observation_tokens
from rlvr_lab.train.rollout import completion_text, prompt_ids


@dataclass(frozen=True)
class EpisodeTiming:
    """One episode's stages, in seconds, and what it came to."""

    task_id: str
    turns: int
    """H: policy calls in the episode (SUBMIT included)."""
    reset_s: float
    model_s: tuple[float, ...]
    """Seconds of each policy call, one per turn."""
    tool_s: tuple[float, ...]
    """Seconds of each turn's tool, the assessment left out, one per turn."""
    assess_s: float
    wall_s: float
    """The whole episode, reset to verdict, on one clock."""
    verdict: str
    tools: tuple[str, ...]
    """The tool each turn named (``""`` for an action that named none)."""
    prefixes: tuple = field(default=(), repr=False, compare=False)
    """The exact token context before each turn (what a fork after turn k restores as the policy's
    context: ``prefixes[k]``)."""
    states: tuple = field(default=(), repr=False, compare=False)
    """A copy of the environment's :class:`~rlvr_lab.envs.repair.Episode` after each turn that did not end
    the episode (``states[k - 1]``: the state after turn k)."""

    def eq6_s(self) -> float:
        """Equation 6 with this episode's own H and mean stage times (equal to the sum of its stages)."""
        return float(
            cycle_time(
                self.turns,
                statistics.fmean(self.model_s),
                statistics.fmean(self.tool_s),
                self.assess_s,
                self.reset_s,
            )
        )


class _Clocked:
    """A verifier that notes how long each verification of ``hidden`` (the assessment) took."""

    def __init__(self, verifier, hidden):
        self.verifier, self.hidden, self.assess_s = verifier, hidden, 0.0

    def verify(self, candidate, fixture):
        start = time.perf_counter()
        verdict = self.verifier.verify(candidate, fixture)
        if fixture is self.hidden:
            self.assess_s += time.perf_counter() - start
        return verdict


def timed_episode(
    model,
    tokenizer,
    sampling,
    task,
    verifier,
    generator,
    horizon: int = 4,
    context_tokens: int = 512,
    observation_chars: int = 300,
) -> EpisodeTiming:
    """Play one episode of ``task`` as one serial slot and clock its stages (see the module docstring).

    ``sampling`` is a :class:`~rlvr_lab.policy.SamplingConfig`, ``verifier`` anything with
    ``verify(candidate, fixture)``. The context is the append-only token context of
    :func:`~rlvr_lab.train.episodes.collect_episodes`; an episode whose context would overflow
    ``context_tokens`` is graded as it stands (that grading is its assessment).
    """
    clocked = _Clocked(verifier, task.fixture)
    start = time.perf_counter()
    env = RepairEnv(task, clocked, horizon, observation_chars)
    prefix = prompt_ids(tokenizer, env.reset() + ACTION_MARK.lstrip("\n"))
    reset_s = time.perf_counter() - start
    model_s, tool_s, tools, prefixes, states = [], [], [], [], []
    while True:
        prefixes.append(prefix)
        t = time.perf_counter()
        drawn = sample(model, [prefix], sampling, tokenizer.eos_token_id, tokenizer.pad_token_id, generator)[0]
        model_s.append(time.perf_counter() - t)
        before = clocked.assess_s
        step = env.step(completion_text(tokenizer, drawn.completion_ids))
        tool_s.append(step.seconds - (clocked.assess_s - before))
        tools.append(step.tool)
        if step.done:
            break
        states.append(copy.deepcopy(env.episode))
        prefix = drawn.prompt_ids + drawn.completion_ids + observation_tokens(tokenizer, step.observation)
        if len(prefix) + sampling.max_new_tokens > context_tokens:
            env.grade()
            break
    wall_s = time.perf_counter() - start
    return EpisodeTiming(
        task.task_id,
        len(model_s),
        reset_s,
        tuple(model_s),
        tuple(tool_s),
        clocked.assess_s,
        wall_s,
        env.episode.verdict.outcome,
        tuple(tools),
        tuple(prefixes),
        tuple(states),
    )


def cycle_rows(timings: list[EpisodeTiming]) -> dict:
    """Means over episodes of each stage and of H, equation 6 from those means, the measured mean cycle,
    and the mean residual ``wall - eq 6`` of the episodes one by one (seconds; ``turn_s`` per turn)."""
    if not timings:
        raise ValueError("cycle_rows needs at least one episode")
    turns = [t.turns for t in timings]
    model = [s for t in timings for s in t.model_s]
    tool = [s for t in timings for s in t.tool_s]
    mean = {
        "episodes": len(timings),
        "H": statistics.fmean(turns),
        "t_model_s": statistics.fmean(model),
        "t_tool_s": statistics.fmean(tool),
        "t_assess_s": statistics.fmean(t.assess_s for t in timings),
        "t_reset_s": statistics.fmean(t.reset_s for t in timings),
        "measured_s": statistics.fmean(t.wall_s for t in timings),
        "residual_s": statistics.fmean(t.wall_s - t.eq6_s() for t in timings),
        "repaired": sum(t.verdict == "pass" for t in timings) / len(timings),
        "run_share": sum(x == "RUN" for t in timings for x in t.tools) / len(model),
    }
    # eq 6 with a mean H (cycle_time itself takes a whole number of turns)
    mean["eq6_s"] = mean["H"] * (mean["t_model_s"] + mean["t_tool_s"]) + mean["t_assess_s"] + mean["t_reset_s"]
    return mean
