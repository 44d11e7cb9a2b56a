"""What the repair agent sees before each action: its context under a token budget (section 17.2.1).

An episode's text grows with every turn, and tool output is long, so the context is rebuilt before each
invocation by one documented rule, :func:`build_context`:

1. the header (the task statement and the module as first shown) is always kept whole;
2. the turns follow in order; the newest turns are kept whole, as many as fit in the budget;
3. each older turn keeps its action but its observation becomes :data:`DROPPED` (what the agent did stays
   visible; what it saw then is usually superseded by a newer observation);
4. if even those do not fit, the oldest turns go entirely, and one line says how many.

The rule is a pure function of the header, the turns and the budget, so the exact prefix of every
invocation can be rebuilt from a rollout record and checked (17.6.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: What replaces an older turn's observation.
DROPPED = "[observation dropped to fit the context]"


@dataclass(frozen=True)
class Turn:
    """One exchange: the action the policy wrote and the observation the environment answered."""

    action: str
    observation: str


def render_turn(turn: Turn, keep_observation: bool = True) -> str:
    """A turn as it appears in the context.

    >>> print(render_turn(Turn("RUN", "public tests: pass")), end="")
    > RUN
    public tests: pass
    """
    return f"> {turn.action.strip()}\n{turn.observation if keep_observation else DROPPED}\n"


def build_context(header: str, turns: list[Turn], budget: int, count: Callable[[str], int] = len) -> str:
    """The context before the next action: ``header`` and ``turns`` under ``budget`` (in the units of
    ``count``: characters by default, a tokenizer's ``len(encode(text))`` in training), by the rule above.

    >>> turns = [Turn("SHOW", "x" * 50), Turn("RUN", "y" * 50)]
    >>> ctx = build_context("H\\n", turns, budget=110)
    >>> DROPPED in ctx, "y" * 50 in ctx, "x" * 50 in ctx
    (True, True, False)
    >>> print(build_context("H\\n", turns, budget=90), end="")  # no room for the older turn at all
    H
    [1 earlier turn dropped]
    > RUN
    yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    used = count(header)
    if used > budget:
        raise ValueError(f"the header alone takes {used} of a budget of {budget}: raise the budget")
    whole = [False] * len(turns)
    for i in range(len(turns) - 1, -1, -1):  # newest first, whole while they fit
        cost = count(render_turn(turns[i]))
        if used + cost > budget:
            break
        whole[i], used = True, used + cost

    def text(kept: list[int]) -> str:
        gone = len(turns) - len(kept)
        note = f"[{gone} earlier turn{'s' if gone > 1 else ''} dropped]\n" if gone else ""
        return header + note + "".join(render_turn(turns[i], whole[i]) for i in kept)

    kept = list(range(len(turns)))
    while kept and count(text(kept)) > budget:  # the oldest go first (the note of how many costs too)
        kept.pop(0)
    return text(kept) if count(text(kept)) <= budget else header  # no room even for the note
