"""The multi-turn repair environment (sections 17.2.1, 17.6, 17.9): ``reset`` -> observation, ``step``.

An episode starts from a :class:`~.repair_tasks.RepairTask`'s buggy module. Each turn the policy writes one
action (:mod:`.tools`): ``RUN`` sends the current module and the *public* tests to the sandboxed verifier and
shows the first failure, truncated to ``observation_chars``; ``SHOW`` prints the module; ``LINE`` and ``DEF``
edit it; ``SUBMIT`` ends the episode. An episode that reaches ``horizon`` turns without submitting is graded as
it stands. The reward is the verdict of the *hidden* tests through the same verifier: one of the four
outcomes, 1.0 only for ``pass``, None while unresolved (the trainer's closure rule decides what happens to
the group). Every step records the tool, whether it was carried out and its seconds (table 6's timings).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace

from rlvr_lab.envs.context import Turn
from rlvr_lab.envs.repair_tasks import RepairTask
from rlvr_lab.envs.tools import ActionError, numbered, parse_action, replace_function, replace_line
from rlvr_lab.verifier.schema import Candidate

#: Most turns an episode may take (the chapter's agent works in a handful of turns).
MAX_HORIZON = 8


@dataclass(frozen=True)
class Step:
    """What one ``step`` returns."""

    observation: str
    done: bool
    tool: str
    """The tool the action named (``""`` when it named none)."""
    ok: bool
    """False when the action could not be carried out (malformed, an edit that does not apply)."""
    seconds: float
    """Wall time of the tool (the verifier's, for RUN and the final grading)."""


@dataclass
class Episode:
    """The state of one episode, readable while it runs and after."""

    source: str
    turns: list[Turn] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    verdict: object = None
    """The hidden tests' :class:`~rlvr_lab.verifier.schema.Verdict` once the episode is done."""

    @property
    def reward(self) -> float | None:
        return None if self.verdict is None else self.verdict.reward


def public_fixture(task: RepairTask):
    """The task's fixture judged by its public tests: what ``RUN`` may show (17.6.1)."""
    fx = task.fixture
    return replace(fx, hidden_tests=dict(fx.public_tests), checker_version=fx.checker_version + "-public")


def shaped_reward(reward: float | None, turns: int, horizon: int, cost_per_turn: float) -> float | None:
    """A cost per turn on top of the verdict (17.3): ``reward - cost_per_turn * turns``, offered only when
    every pass still scores above every failure, i.e. ``cost_per_turn * horizon < 1``; None stays None.

    >>> shaped_reward(1.0, 8, 8, 0.1), shaped_reward(0.0, 1, 8, 0.1), shaped_reward(None, 3, 8, 0.1)
    (0.2, -0.1, None)
    >>> shaped_reward(1.0, 8, 8, 0.2)
    Traceback (most recent call last):
    ...
    ValueError: cost_per_turn 0.2 x horizon 8 >= 1: a slow pass would score no higher than a quick failure
    """
    if cost_per_turn < 0:
        raise ValueError(f"cost_per_turn must be >= 0, got {cost_per_turn}")
    if cost_per_turn * horizon >= 1:
        raise ValueError(
            f"cost_per_turn {cost_per_turn} x horizon {horizon} >= 1: a slow pass would score no higher than "
            "a quick failure"
        )
    if not 1 <= turns <= horizon:
        raise ValueError(f"turns must be in [1, {horizon}], got {turns}")
    return None if reward is None else round(reward - cost_per_turn * turns, 12)


class RepairEnv:
    """One repair episode on ``task``, graded by ``verifier`` (anything with ``verify(candidate, fixture)``:
    a :class:`~rlvr_lab.verifier.Verifier` or a pool's client)."""

    def __init__(self, task: RepairTask, verifier, horizon: int = MAX_HORIZON, observation_chars: int = 400):
        if not 1 <= horizon <= MAX_HORIZON:
            raise ValueError(f"horizon must be in [1, {MAX_HORIZON}], got {horizon}")
        if observation_chars < 40:
            raise ValueError(f"observation_chars must be >= 40, got {observation_chars}")
        self.task, self.verifier = task, verifier
        self.horizon, self.observation_chars = horizon, observation_chars
        self.episode: Episode | None = None

    def header(self) -> str:
        """The task statement and the module as first shown: the head of every context (:mod:`.context`)."""
        return (
            f"{self.task.fixture.description} Tools: RUN, SHOW, LINE n, DEF name, SUBMIT.\n"
            f"{numbered(self.task.buggy)}\n"
        )

    def reset(self) -> str:
        """Start the episode from the buggy module; returns the first observation (the header)."""
        self.episode = Episode(self.task.buggy)
        return self.header()

    def _truncate(self, text: str) -> str:
        limit = self.observation_chars
        return text if len(text) <= limit else text[: limit - 14] + " [truncated]"

    def _carry_out(self, text: str) -> tuple[str, str, bool, bool]:
        """(tool, observation, ok, submit) for one action on the current module."""
        ep = self.episode
        try:
            action = parse_action(text)
        except ActionError as exc:
            return "", f"error: {exc}", False, False
        try:
            if action.tool == "RUN":
                verdict = self.verifier.verify(Candidate({"solution.py": ep.source}), public_fixture(self.task))
                if verdict.outcome in ("pending", "unknown"):
                    return "RUN", f"public tests could not be run ({verdict.stop_reason})", False, False
                if verdict.outcome == "pass":
                    return "RUN", "public tests: all passed", True, False
                # the failing trial's detail; a module that does not compile fails before any trial
                said = verdict.trials[-1].detail if verdict.trials else verdict.stop_reason
                detail = re.sub(r"tests/[0-9a-f]{8,}/", "", said)  # the runner's folder
                return "RUN", f"public tests: failed\n{detail}", True, False
            if action.tool == "SHOW":
                return "SHOW", numbered(ep.source), True, False
            if action.tool == "LINE":
                ep.source = replace_line(ep.source, int(action.arg), action.body)
                return "LINE", f"line {action.arg} replaced", True, False
            if action.tool == "DEF":
                ep.source = replace_function(ep.source, action.arg, action.body)
                return "DEF", f"function {action.arg} replaced", True, False
        except ActionError as exc:
            return action.tool, f"error: {exc}", False, False
        return "SUBMIT", "submitted", True, True

    def grade(self):
        """End the episode where it stands (a trainer's context window ran out): the hidden tests' verdict
        of the current module, which ``episode.verdict`` keeps."""
        if self.episode is None:
            raise RuntimeError("call reset() before grade()")
        if self.episode.verdict is None:
            self.episode.verdict = self.verifier.verify(
                Candidate({"solution.py": self.episode.source}), self.task.fixture
            )
        return self.episode.verdict

    def step(self, action: str) -> Step:
        """Carry out one action; the episode is done after SUBMIT or the ``horizon``-th turn, and then
        the hidden tests grade the module as it stands (``episode.verdict``)."""
        ep = self.episode
        if ep is None:
            raise RuntimeError("call reset() before step()")
        if ep.verdict is not None:
            raise RuntimeError("the episode is over: call reset() for a new one")
        start = time.perf_counter()
        tool, observation, ok, submit = self._carry_out(action)
        done = submit or len(ep.turns) + 1 >= self.horizon
        if done:
            ep.verdict = self.verifier.verify(Candidate({"solution.py": ep.source}), self.task.fixture)
            observation = self._truncate(observation) + f"\nepisode over: {ep.verdict.outcome}"
        step = Step(
            self._truncate(observation) if not done else observation, done, tool, ok, time.perf_counter() - start
        )
        ep.turns.append(Turn(action, step.observation))
        ep.steps.append(step)
        return step
