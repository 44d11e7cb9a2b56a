"""Write the student and reference-solution notebooks of the chapter 10 exercises.

Everything a student sees -- givens, prompts, TODO lines, check cells -- comes from the public spec of each
exercise (:mod:`rlvr_lab.exercises`); this module adds the shared introduction and the reference cells
(solution code and rubrics, never shipped with the package). One source for both versions keeps their
check cells byte-identical, which the grader relies on (``rlvr-lab grade`` finds each check cell in a
submission by its exact source). Run from the repository root after editing an exercise::

    python labs/exercises/build_notebooks.py

Importing this module does nothing; only running it writes the notebooks.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the checkout's rlvr_lab (install cell)
from rlvr_lab.colab import cell_json as install_cell_json  # noqa: E402
from rlvr_lab.exercises import EXERCISES as SPECS  # noqa: E402

INTRO = (
    "Every given is a hypothetical input from the exercises of chapter 10, not a measurement.\n\n"
    "**How to work.** Replace each `None` in a TODO cell with your answer (compute it in Python; "
    "`rlvr_lab` has the chapter's relations), then run the check cell below it. A check prints "
    "`correct` or raises `CheckFailed` with a hint (never the answer). **Keep the variable names**: "
    "`rlvr-lab grade` runs your notebook afresh in a sandbox and grades the final values of these "
    "variables itself; the check cells are for you, and editing them changes only what you see.\n\n"
    "Decision parts have a short variable for the decision (checked) and a markdown cell for your "
    "argument (read by the instructor against the rubric)."
)

#: The introduction of an exercise whose parts ask for functions (exercise 9).
CODE_INTRO = (
    "**How to work.** Replace each stub's `raise NotImplementedError` with your implementation, then run "
    "the check cell below it: it runs the part's public examples (the table above the cell) and the "
    "grader's rules (`math` and the standard library's other numeric helpers only; no `open`, `eval`, "
    "`getattr` or dunder names) and prints `correct` or raises `CheckFailed` naming the example that "
    "failed. **Keep the function names and signatures**, and keep each function with the helpers it calls "
    "in one cell: `rlvr-lab grade` takes that cell (the last one that defines the function) and verifies "
    "it against hidden tests. Passing the public examples is not passing the hidden tests: try the edge "
    "cases the docstring names yourself."
)

SETUP = "from rlvr_lab import checks\nfrom rlvr_lab import rewards, credit, cycle_time"

#: The reference cells, in the order of the specs' exercises and parts: per part (solution source, rubric
#: markdown or None); a part has a rubric exactly when its spec says it is ``argued``.
REFERENCE = (
    (  # exercise 1
        (
            "share_early = rewards.false_accept_share(0.04, 0.02, 1.0)\n"
            "share_late = rewards.false_accept_share(0.40, 0.02, 1.0)\nshare_early, share_late",
            None,
        ),
        (
            "# Solve s = (1-rho) a / (rho + (1-rho) a) for a: a = s rho / ((1-s)(1-rho)).\n"
            "rho, s = 0.04, 0.10\nalpha_max = s * rho / ((1 - s) * (1 - rho))\n"
            "assert abs(rewards.false_accept_share(rho, alpha_max, 1.0) - s) < 1e-12\nalpha_max",
            None,
        ),
        (
            'harden_when = "before"',
            "**Rubric (part c).** A good answer: (1) notes that at rho = 0.04 about a third of rewarded "
            "rollouts are failures (0.32) while at rho = 0.40 it is about 3 %, so the damage is concentrated "
            "early; (2) uses (b): the verifier would need alpha <= 0.0046, a four-fold reduction, to keep "
            "the early share at 10 %; (3) explains that false accepts early are amplified (a lone hacked "
            "pass in a group gets the largest coefficient) and can teach the exploit before true passes "
            "exist, which later hardening cannot undo; (4) concludes: harden before training. "
            "Partial credit for the right decision argued only from the shares.",
        ),
    ),
    (  # exercise 2
        (
            "pass_score = rewards.composite_reward(1, 0.5, 7200 / 8000, 0.4, 0.7)\n"
            "fail_score = rewards.composite_reward(0, 1.0, 400 / 8000, 0.4, 0.7)\n"
            "pair_keeps_order = bool(pass_score > fail_score)\npass_score, fail_score, pair_keeps_order",
            None,
        ),
        (
            "lowest_pass = rewards.composite_reward(1, 0.0, 1.0, 0.4, 0.7)\n"
            "highest_fail = rewards.composite_reward(0, 1.0, 0.0, 0.4, 0.7)\n"
            "every_pass_outranks = bool(rewards.pass_outranks_failure(0.4, 0.7))\n"
            "lowest_pass, highest_fail, every_pass_outranks",
            None,
        ),
        (
            "w_length_upper = 1 - 0.4\nassert rewards.pass_outranks_failure(0.4, w_length_upper - 1e-9)\n"
            "assert not rewards.pass_outranks_failure(0.4, w_length_upper)\nw_length_upper",
            "**Rubric (part c).** A good answer: gives 0 <= w_length < 0.6 and says the inequality is strict "
            "(equality lets the worst pass tie the best failure); explains that (a) checked one observed "
            "pair, whereas safety is a statement about *all* passes and failures - the worst pass (long, "
            "badly formatted: 0.3) and the best failure (short, perfectly formatted: 0.4) decide it, and "
            "here they invert; adds that the bound holds only while the runtime enforces the 8,000-token "
            "cap so that len stays in [0, 1].",
        ),
    ),
    (  # exercise 3
        (
            "trials_needed = 1\nwhile rewards.all_pass_probability(0.30, trials_needed) >= 0.01:\n"
            "    trials_needed += 1\ntrials_needed",
            None,
        ),
        (
            "false_rejection = 1 - rewards.all_pass_probability(0.95, trials_needed)\n"
            "trials_correct = rewards.expected_trials(0.95, trials_needed)\n"
            "trials_incorrect = rewards.expected_trials(0.30, trials_needed)\n"
            "false_rejection, trials_correct, trials_incorrect",
            None,
        ),
        (
            'first_action = "repair_fixture"',
            "**Rubric (part c).** A good answer: notes that K = 4 already costs about 3.7 trials per correct "
            "patch and still rejects about 18.5 % of correct patches, so adding trials trades false accepts "
            "for false rejections and verifier load; that a false pass surviving the trials is still "
            "amplified (lone pass, coefficient sqrt(G-1)); that the noise is a property of the fixture "
            "(timing sensitivity), so fixing it lowers q for incorrect patches and raises it for correct "
            "ones at once; concludes: repair the fixture first, keep repeated trials as a guard sized from "
            "re-measured q.",
        ),
    ),
    (  # exercise 4
        (
            "contrast_hard = rewards.contrast_probability(8, 0.02)\n"
            "contrast_easy = rewards.contrast_probability(8, 0.60)\n"
            "informative_groups = 128 * contrast_hard + 128 * contrast_easy\n"
            "rollouts_per_informative = 256 * 8 / informative_groups\n"
            "contrast_hard, contrast_easy, informative_groups, rollouts_per_informative",
            None,
        ),
        (
            "contrast_pooled = rewards.contrast_probability(8, (0.02 + 0.60) / 2)\n"
            "informative_pooled = 256 * contrast_pooled\ncontrast_pooled, informative_pooled",
            "**Rubric (part b).** A good answer: the pooled rate 0.31 gives P_c of about 0.95 and about 243 "
            "informative groups against about 145 from the families, an overestimate of roughly 68 %; the "
            "error comes from P_c being strongly non-linear in p (near zero at p = 0.02, near one at 0.60), "
            "so averaging p before applying P_c hides the hard family's silent groups; contrast must be "
            "computed per difficulty bucket.",
        ),
        (
            "from rlvr_lab import grpo\n"
            "lone_pass_coefficient = grpo.lone_pass_coefficient(8, 0.0)  # the lone pass's coefficient\n"
            "drop_hard_family = False\nlone_pass_coefficient",
            "**Rubric (part c).** A good answer: gives sqrt(7) = 2.65 for the lone pass; says dropping the "
            "family changes the training distribution (the policy stops seeing the tasks it most needs to "
            "learn, and evaluation on them drifts) and throws away the rare, strongly weighted passes that "
            "carry the hard family's signal; proposes raising contrast without discarding it, e.g. a larger "
            "group only for the hard family, easier variants or hints (a curriculum) for it, or "
            "difficulty-targeted sampling that keeps the family at a logged share; notes the task mixture "
            "and group sizes must be recorded with the run.",
        ),
    ),
    (  # exercise 5
        (
            'multiple_exhaustive = credit.continuation_multiple(40, 16, "all")\n'
            "multiple_three_forks = credit.continuation_multiple(40, 16, [10, 20, 30])\n"
            "multiple_exhaustive, multiple_three_forks",
            None,
        ),
        (
            "m_for_target = 1\nwhile credit.standard_error_bound(m_for_target) > 0.05 + 1e-12:\n"
            "    m_for_target += 1\n"
            "multiple_for_target = credit.continuation_multiple(40, m_for_target, [10, 20, 30])\n"
            "m_for_target, multiple_for_target",
            None,
        ),
        (
            "m_budget = 0\nwhile credit.continuation_multiple(40, m_budget + 1, [10, 20, 30]) <= 30:\n"
            "    m_budget += 1\nse_budget = credit.standard_error_bound(m_budget)\n"
            "can_resolve = bool(credit.is_resolved(0.20, m_budget))\nm_budget, se_budget, can_resolve",
            None,
        ),
        (
            "redesign_m = 1\nwhile not credit.is_resolved(0.20, redesign_m):\n    redesign_m += 1\n"
            "# One fork late enough that M continuations of the remaining turns fit the budget.\n"
            "redesign_forks = [20]\n"
            "assert credit.continuation_multiple(40, redesign_m, redesign_forks) <= 30\n"
            "redesign_forks, redesign_m, credit.continuation_multiple(40, redesign_m, redesign_forks)",
            "**Rubric (part d).** A good answer: shows M = 19 gives a per-fork bound of 0.115 and a "
            "resolution threshold of 0.32 > 0.20, so the three-fork schedule cannot decide; computes that "
            "resolving 0.20 needs M >= 50; spends the budget on fewer, later forks (the cost of a fork "
            "after turn k grows with the remaining H - k turns), e.g. one fork after turn 20 with M = 50 "
            "(multiple 26) or two late forks whose remaining turns sum to at most 23; names what is lost "
            "(no value estimate at early turns) and that the choice of forks should follow where the "
            "decisive actions are suspected.",
        ),
    ),
    (  # exercise 6
        (
            "cycle_cold = cycle_time.cycle_time(4, 0.6, 0.1, 0.2, 6.0)\n"
            "cycle_snapshot = cycle_time.cycle_time(4, 0.6, 0.1, 0.2, 0.3)\n"
            "reset_share_cold = 6.0 / cycle_cold\nreset_share_snapshot = 0.3 / cycle_snapshot\n"
            "capacity_cold = cycle_time.pool_capacity_per_hour(64, cycle_cold)\n"
            "capacity_snapshot = cycle_time.pool_capacity_per_hour(64, cycle_snapshot)\n"
            "cycle_cold, cycle_snapshot, reset_share_cold, reset_share_snapshot, capacity_cold, capacity_snapshot",
            None,
        ),
        (
            "cap = 40_000\npermitted_gain = min(capacity_snapshot, cap) / min(capacity_cold, cap)\n"
            'next_step = "snapshot"\npermitted_gain',
            "**Rubric (part b).** A good answer: the snapshot pool could run about 69,800 episodes/h but the "
            "service caps it at 40,000, so the permitted gain is 40,000 / 25,600 = 1.56x rather than 2.7x; "
            "today the cold pool (25,600/h) is below the service cap, so adding model service buys nothing "
            "until reset shrinks: do the snapshot work first, after which the model service becomes the "
            "binding constraint and is the next investment.",
        ),
        (
            "reset_is_lever = bool(reset_share_cold > 0.5)\nsnapshot_restores_external_refund = False",
            "**Rubric (part c).** A good answer: cold reset is two thirds of this cycle against under half in "
            "the chapter's repair pool; the active term H (t_model + t_tool) is small because H = 4, so the "
            "fixed per-episode t_reset dominates (Amdahl: shrinking the largest term pays most); a snapshot "
            "restores only local state (customer record, refund history in the fixture) - a refund that "
            "reached an external payment service is a side effect outside the sandbox, which must be "
            "prevented by a fake or sandboxed payment endpoint, not undone by reset.",
        ),
    ),
    (  # exercise 7
        (
            "lag_30, lag_90, lag_200 = (cycle_time.version_lag(t, 40.0) for t in (30.0, 90.0, 200.0))\n"
            "classes = [(0.70, 30.0), (0.25, 90.0), (0.05, 200.0)]\n"
            "excluded_fraction = sum(w for w, t in classes if not cycle_time.admit(t, 40.0, 2))\n"
            "lag_30, lag_90, lag_200, excluded_fraction",
            "**Rubric (part a).** A good answer: lags 0, 2 and 5, so 5 % are excluded; the long rollouts are "
            "disproportionately the hard tasks (long repairs, many turns), so exclusion removes most of the "
            "hard family's samples and nearly all its rare passes, biasing the admitted data toward easy "
            "tasks - the per-task damage is far larger than 5 %.",
        ),
        (
            "step_threshold_s = 200.0 / 3  # floor(200 / T) <= 2  <=>  T > 200 / 3\n"
            "admit_below_s = 3 * 40.0        # floor(tau / 40) <= 2  <=>  tau < 120\n"
            "assert cycle_time.admit(200.0, step_threshold_s + 1e-6, 2)\n"
            "assert not cycle_time.admit(200.0, step_threshold_s - 1e-6, 2)\n"
            "assert cycle_time.admit(admit_below_s - 1e-6, 40.0, 2) and not cycle_time.admit(admit_below_s, 40.0, 2)\n"
            "step_threshold_s, admit_below_s",
            "**Rubric (part b).** A good answer: T_step above 66.7 s admits the 200 s class, rollouts under "
            "120 s are admitted now; slowing the trainer by two thirds costs every update's throughput to "
            "rescue 5 % of rollouts; capping rollout duration turns long repairs into censored failures "
            "(biasing hard tasks the same way); shortening the time to admission (faster tools, "
            "verification, queueing) attacks the cause and is preferred, with the bound kept explicit.",
        ),
        (
            "arrival = 256 / 40.0\nworkers_all_trials = cycle_time.verifier_workers(arrival, 3, 10.0, 0.8)\n"
            "mixture_trials = 0.6 * rewards.expected_trials(0.10, 3) + 0.4 * rewards.expected_trials(0.97, 3)\n"
            "workers_stop_first = cycle_time.verifier_workers(arrival, mixture_trials, 10.0, 0.8)\n"
            "workers_all_trials, mixture_trials, workers_stop_first",
            None,
        ),
        (
            "mean_q = 0.6 * 0.10 + 0.4 * 0.97\n"
            "workers_mean_q = cycle_time.verifier_workers(arrival, rewards.expected_trials(mean_q, 3), 10.0, 0.8)\n"
            "underprovisioned = bool(workers_mean_q < workers_stop_first)\nworkers_mean_q, underprovisioned",
            "**Rubric (part d).** A good answer: the mean q of 0.448 gives about 1.65 expected trials "
            "against the mixture's 1.83, so 132 workers instead of 147; because E[N | q] is convex in q "
            "(Jensen), plugging in the mean always underestimates demand; the pool would run at about "
            "89 % utilisation instead of 80 %, queues and verification latency grow, and that latency "
            "feeds back into version lag (part a).",
        ),
    ),
    (  # exercise 8
        (
            "# Per-token weight A_i / |o_i|; the advantage cancels in the ratio.\n"
            "advantage = -1.0\npenalty_ratio = (advantage / 2000) / (advantage / 6000)\npenalty_ratio",
            None,
        ),
        (
            "pass_score = rewards.composite_reward(1, 0.0, 9000 / 4000, 0.2, 0.4)\n"
            "fail_score = rewards.composite_reward(0, 1.0, 500 / 4000, 0.2, 0.4)\n"
            "best_failure = rewards.composite_reward(0, 1.0, 0.0, 0.2, 0.4)\n"
            "pass_length_limit = (1 - best_failure) * 4000 / 0.4\n"
            "pass_score, fail_score, pass_length_limit",
            None,
        ),
        (
            'first_diagnostic = "loss_normalization"\nruntime_enforces_cap = True\nw_length_upper = 1 - 0.2',
            "**Rubric (part c).** A good answer: part (a) shows per-sequence averaging gives a 2,000-token "
            "failure three times the per-token penalty of a 6,000-token one, so the loss itself rewards "
            "stretching failures; the first diagnostic is to plot length by outcome and check the loss "
            "normalisation, switching to a constant denominator before touching the reward; the proposal "
            "breaks the ordering bound because len is unbounded (a 9,000-token pass scores 0.10 < a short "
            "failure's 0.15; every pass beyond 8,000 tokens loses to the best failure), so the runtime must "
            "enforce the cap with hard termination; any surviving length term needs w_format + w_length < 1 "
            "with len in [0, 1] (here w_length < 0.8), and its effect must be re-measured.",
        ),
    ),
    (  # exercise 9: functions, graded by the verifier against the key's hidden tests
        (
            "import math\n\n\n"
            "def group_advantages(rewards, eps=1e-8):\n"
            '    """The group-relative advantages of one group: a list of G floats, A_i = (R_i - mean) / (std + eps)."""\n'
            "    if len(rewards) == 0:\n"
            '        raise ValueError("rewards must hold at least one reward")\n'
            "    if eps < 0:\n"
            '        raise ValueError(f"eps must be >= 0, got {eps}")\n'
            "    if max(rewards) == min(rewards):  # a tied group: no contrast, zero advantages (never 0 / 0)\n"
            "        return [0.0] * len(rewards)\n"
            "    mean = sum(rewards) / len(rewards)\n"
            "    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))  # population: divide by G\n"
            "    return [(r - mean) / (std + eps) for r in rewards]",
            None,
        ),
        (
            "def clipped_surrogate(ratios, advantages, eps_low, eps_high):\n"
            '    """Per token, min(r * A, clip(r, 1 - eps_low, 1 + eps_high) * A): a list of floats."""\n'
            "    if len(ratios) != len(advantages):\n"
            '        raise ValueError(f"ratios and advantages must have the same length, got {len(ratios)} and "\n'
            '                         f"{len(advantages)}")\n'
            "    if not 0 < eps_low < 1 or eps_high < 0:\n"
            '        raise ValueError(f"need 0 < eps_low < 1 and eps_high >= 0, got {eps_low} and {eps_high}")\n'
            "    low, high = 1.0 - eps_low, 1.0 + eps_high\n"
            "    return [min(r * a, min(max(r, low), high) * a) for r, a in zip(ratios, advantages)]",
            None,
        ),
        (
            "import math\n\n\n"
            "def pass_at_k(n, c, k):\n"
            '    """Unbiased pass@k from n samples with c passes: 1 - C(n - c, k) / C(n, k), a float."""\n'
            "    if not 0 <= c <= n or not 1 <= k <= n:\n"
            '        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")\n'
            "    return 1.0 - math.comb(n - c, k) / math.comb(n, k)  # exact integers, one correctly rounded division",
            None,
        ),
        (
            "import math\n\n\n"
            "def version_lag(age_s, step_s):\n"
            '    """The version lag: floor(age_s / step_s), an int. age_s >= 0, step_s > 0 (else ValueError)."""\n'
            "    if step_s <= 0:\n"
            '        raise ValueError(f"step_s must be > 0, got {step_s}")\n'
            "    if age_s < 0:\n"
            '        raise ValueError(f"age_s must be >= 0, got {age_s}")\n'
            "    return int(math.floor(age_s / step_s))\n\n\n"
            "def admit(age_s, step_s, max_lag):\n"
            '    """True iff version_lag(age_s, step_s) <= max_lag (an int >= 0, else ValueError)."""\n'
            "    if max_lag < 0 or max_lag != int(max_lag):\n"
            '        raise ValueError(f"max_lag must be a whole number >= 0, got {max_lag}")\n'
            "    return version_lag(age_s, step_s) <= max_lag",
            None,
        ),
    ),
)

#: Each exercise as ``(spec, reference cells)``.
EXERCISES = list(zip(SPECS, REFERENCE, strict=True))


def _cell(kind: str, source: str) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _examples(part) -> str:
    """A code part's public examples as a markdown table (the self-check runs these; the grader, hidden tests)."""
    if not part.is_code:
        return ""
    rows = ["| call | returns |", "| --- | --- |"]
    for a in part.answers:
        for args, want in a.examples:
            shown = f"raises `{want.__name__}`" if isinstance(want, type) else f"`{want!r}`"
            rows.append(f"| `{a.name}({', '.join(map(repr, args))})` | {shown} |")
    return (
        "\n\n**Public examples** (floats within 1e-6; your check cell runs exactly these):\n\n"
        + "\n".join(rows)
        + "\n\nThe grader runs hidden tests as well: edge cases and properties checked "
        "against the library on generated inputs, in the course's verifier."
    )


def notebook(exercise, solution: bool) -> dict:
    """Return one exercise notebook (nbformat 4 JSON) in its student or solution version."""
    spec, reference = exercise
    version = "reference solution" if solution else "student notebook"
    code = all(part.is_code for part in spec.parts)
    cells = [
        _cell(
            "markdown",
            f"# {spec.title}\n\n*{version}*\n\n{spec.setting}\n\n{CODE_INTRO}"
            if code
            else f"# {spec.title}\n\n*{version}*\n\n**Givens.** {spec.setting}\n\n{INTRO}",
        ),
        _cell("code", SETUP),
    ]
    for part, (answer, rubric) in zip(spec.parts, reference, strict=True):
        if part.argued != (rubric is not None):
            raise ValueError(f"{spec.part_id(part)}: a rubric is needed exactly when the part is argued")
        if part.is_code:  # exercise 9: the stub of each function, with its public examples above it
            todo = "\n\n\n".join(a.stub for a in part.answers)
        else:
            todo = "\n".join(f"{a.name} = None  # TODO{a.todo}" for a in part.answers)
        cells.append(_cell("markdown", f"## Part ({part.letter})\n\n{part.prompt}{_examples(part)}"))
        cells.append(_cell("code", answer if solution else todo))
        check = _cell("code", f"checks.{spec.id}.{part.name}({', '.join(part.names)})")
        if not solution:
            # Unanswered, the check raises CheckFailed with its hint: the book executes the student notebook
            # as it is handed out and shows that message, so the error is expected (raises-exception).
            check["metadata"]["tags"] = ["raises-exception"]
        cells.append(check)
        if part.argued:
            if solution:
                cells.append(_cell("markdown", rubric))
            else:
                cells.append(_cell("markdown", f"**Your argument (part {part.letter}).** *Write it here.*"))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "rlvr_lab": {"exercise": spec.id, "version": "solution" if solution else "student"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_all(root: str = HERE) -> list:
    """Write every student and solution notebook under ``root``; return the paths written."""
    written = []
    for exercise in EXERCISES:
        stem = exercise[0].stem
        for solution, folder in ((False, "student"), (True, "solutions")):
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            path = os.path.join(root, folder, stem + ".ipynb")
            nb = notebook(exercise, solution)
            for i, cell in enumerate(nb["cells"]):
                cell["id"] = f"{stem[:3]}-{i:02d}"
            nb["cells"].insert(0, install_cell_json())  # the Colab install cell (rlvr_lab.colab)
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(nb, handle, indent=1, ensure_ascii=False)
                handle.write("\n")
            written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all():
        print(path)
