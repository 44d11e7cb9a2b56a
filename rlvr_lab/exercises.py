"""The exercises of section 17.14 as data: one declarative spec per exercise, public, with no answer in it.

From these specs (their form: :mod:`rlvr_lab.exercise_spec`) the student-side self-checks
(:mod:`rlvr_lab.checks`), the grader's key (``labs/exercises/solutions/exercise_key.py``, which computes the
expected values from the givens with the library) and the notebooks (``labs/exercises/build_notebooks.py``)
are built, so each part id, variable name and given is written here only. The reference solutions and the
rubrics are not here: they stay with the key. Exercise 9, whose parts ask for functions rather than values,
is specified beside the rules its functions obey, in :mod:`rlvr_lab.exercise_code`.
"""

from __future__ import annotations

from rlvr_lab.exercise_code import EX9
from rlvr_lab.exercise_spec import Answer, Part, exercise, number

__all__ = ["EXERCISES", "part", "part_ids", "EX1", "EX2", "EX3", "EX4", "EX5", "EX6", "EX7", "EX8", "EX9"]

_TRUE_FALSE = ": True/False"

EX1 = exercise(
    "ex1_false_accepts",
    "Exercise 1 - False accepts early and late in training (basic)",
    "false accepts early and late (chapter 2, eq `ch2-false-share`)",
    {"beta": 1.0, "alpha": 0.02, "rho_early": 0.04, "rho_late": 0.40, "target_share": 0.10},
    "A repair-task verifier accepts every criterion success (beta = {beta:g}) and a fraction alpha = {alpha} of "
    "criterion failures. The policy passes the reference criterion with rho = {rho_early} at the start of "
    "training and rho = {rho_late:.2f} after several hundred updates. Chapter 2, equation `ch2-false-share`: "
    "`rewards.false_accept_share(rho, alpha, beta)`.",
    (
        Part(
            "a",
            "false-accept share early and late",
            "Compute the false-accept share of rewarded rollouts (a fraction) at both pass rates.",
            (
                number(
                    "share_early",
                    "equation `ch2-false-share`, Pr(fail | accepted) = (1-rho)*alpha / (rho*beta + (1-rho)*alpha).",
                    ": share at rho = {rho_early}",
                    True,
                ),
                number(
                    "share_late",
                    "equation `ch2-false-share`, Pr(fail | accepted) = (1-rho)*alpha / (rho*beta + (1-rho)*alpha).",
                    ": share at rho = {rho_late:.2f}",
                    True,
                ),
            ),
        ),
        Part(
            "b",
            "largest alpha for a 10 % share",
            "Find the largest alpha that keeps the share at or below {target_share:.2f} when rho = {rho_early}.",
            (
                number(
                    "alpha_max",
                    "set equation `ch2-false-share` equal to {target_share:.2f} at rho = {rho_early} and solve for alpha.",
                    fraction=True,
                ),
            ),
        ),
        Part(
            "c",
            "when to harden the verifier",
            'One verifier-hardening effort is affordable: spend it `"before"` training starts or '
            '`"after"` the pass rate has risen? Decide, then argue from (a) and (b).',
            (
                Answer(
                    "harden_when",
                    "choice",
                    "compare the two shares from part (a): when does a 2 % false-accept rate claim most of the reward?",
                    ': "before" or "after"',
                    options=("before", "after"),
                ),
            ),
            argued=True,
        ),
    ),
)

EX2 = exercise(
    "ex2_reward_order",
    "Exercise 2 - Keeping the pass above the failure (basic)",
    "the composite reward's order (chapter 2)",
    {
        "w_format": 0.4,
        "w_length": 0.7,
        "cap": 8000,
        "pass_tokens": 7200,
        "pass_format": 0.5,
        "fail_tokens": 400,
        "fail_format": 1.0,
    },
    "Terminal score R = C + w_format F - w_length len with w_format = {w_format}, w_length = {w_length}, "
    "len = tokens / {cap} for an enforced cap of {cap:,} generated tokens. Chapter 2: "
    "`rewards.composite_reward(correct, format_score, length_frac, w_format, w_length)`, "
    "`rewards.pass_outranks_failure(w_format, w_length)`.",
    (
        Part(
            "a",
            "score the observed pair",
            "Score a pass of {pass_tokens:,} tokens with F = {pass_format} and a failure of {fail_tokens} tokens "
            "with F = {fail_format:g}. Does this pair keep the intended order (pass above failure)?",
            (
                number(
                    "pass_score",
                    "R = C + w_format*F - w_length*len with len = tokens / cap and C = 1 for the "
                    "pass, 0 for the failure.",
                ),
                number(
                    "fail_score",
                    "R = C + w_format*F - w_length*len with len = tokens / cap and C = 1 for the "
                    "pass, 0 for the failure.",
                ),
                Answer(
                    "pair_keeps_order",
                    "boolean",
                    "the intended order is pass above failure; compare your two scores.",
                    ": True/False",
                ),
            ),
        ),
        Part(
            "b",
            "worst pass and best failure",
            "Compute the lowest possible pass score and the highest possible failure score over "
            "F, len in [0, 1]. Does every pass outrank every failure?",
            (
                number("lowest_pass", "push F and len to the ends of [0, 1] that hurt a pass the most."),
                number("highest_fail", "push F and len to the ends of [0, 1] that help a failure the most."),
                Answer(
                    "every_pass_outranks",
                    "boolean",
                    "every pass outranks every failure only if the worst pass beats the best failure.",
                ),
            ),
        ),
        Part(
            "c",
            "safe range of the length weight",
            "Holding w_format = {w_format}, give the bound that w_length must stay strictly below "
            "(the range is 0 <= w_length < bound). Explain in the markdown cell why part (a) alone "
            "was no evidence that the original weights were safe.",
            (
                number(
                    "w_length_upper",
                    "the sufficient condition is strict: w_format + w_length < 1; give the "
                    "bound w_length must stay below.",
                ),
            ),
            argued=True,
        ),
    ),
)

EX3 = exercise(
    "ex3_all_pass_rule",
    "Exercise 3 - Sizing an all-pass rule (basic)",
    "the all-pass rule (chapter 6)",
    {"q_incorrect": 0.30, "q_correct": 0.95, "max_accept": 0.01},
    "A timing-sensitive fixture passes a fixed incorrect patch with per-trial probability q = {q_incorrect:.2f} "
    "and a fixed correct patch with q = {q_correct}. Trials are independent, acceptance requires K passes, "
    "and verification stops at the first rejection. Chapter 6: "
    "`rewards.all_pass_probability(q, trials)`, `rewards.expected_trials(q, trials)`.",
    (
        Part(
            "a",
            "smallest K",
            "Find the smallest K that brings the incorrect patch's acceptance probability below {max_accept}.",
            (
                Answer(
                    "trials_needed",
                    "integer",
                    "an incorrect patch is accepted with probability q^K; find the "
                    "first K where that is below {max_accept}.",
                ),
            ),
        ),
        Part(
            "b",
            "false rejection and expected trials",
            "At that K, compute the correct patch's false-rejection probability and the expected "
            "number of trials for each patch.",
            (
                number(
                    "false_rejection", "the correct patch is rejected unless all K trials pass: 1 - q^K.", fraction=True
                ),
                number("trials_correct", "with stop-on-first-rejection E[N | q] = sum over j < K of q^j."),
                number("trials_incorrect", "with stop-on-first-rejection E[N | q] = sum over j < K of q^j."),
            ),
        ),
        Part(
            "c",
            "trials or fixture repair first",
            "A lone false pass on a hard task receives the largest group coefficient. Should the loop "
            'first `"add_trials"` or `"repair_fixture"` (its timing sensitivity)? Argue below.',
            (
                Answer(
                    "first_action",
                    "choice",
                    "more trials multiply cost on every candidate and still falsely "
                    "reject correct patches; what removes the cause of both errors?",
                    ': "add_trials" or "repair_fixture"',
                    options=("add_trials", "repair_fixture"),
                ),
            ),
            argued=True,
        ),
    ),
)

EX4 = exercise(
    "ex4_silent_groups",
    "Exercise 4 - A mixed task pool and its silent groups (intermediate)",
    "silent groups (chapter 4)",
    {"group_size": 8, "tasks": 256, "p_hard": 0.02, "p_easy": 0.60},
    "An update samples groups of G = {group_size} over {tasks} tasks. Half the tasks belong to a family the "
    "policy passes with p = {p_hard}, the other half to a family it passes with p = {p_easy:.2f}. Runs are "
    "independent and rewards binary. Chapter 4: `rewards.contrast_probability(group_size, p)`, "
    "`grpo.lone_pass_coefficient(group_size, eps)` (needs torch; equation `ch4-lone-pass`, the lone pass's coefficient).",
    (
        Part(
            "a",
            "contrast per family and rollouts per informative group",
            "Compute P_c for each family, the expected number of informative groups per update, and "
            "the rollouts spent per informative group across the whole pool.",
            (
                number("contrast_hard", "P_c(G, p) = 1 - p^G - (1-p)^G, one group per task.", fraction=True),
                number("contrast_easy", "P_c(G, p) = 1 - p^G - (1-p)^G, one group per task.", fraction=True),
                number(
                    "informative_groups",
                    "each family has 128 tasks; add the expected informative groups of both families.",
                ),
                number(
                    "rollouts_per_informative",
                    "divide all rollouts of the update (tasks x G) by the expected informative groups.",
                ),
            ),
        ),
        Part(
            "b",
            "contrast from the pooled pass rate",
            "Compute P_c from the pool-average pass rate instead, and the informative groups it "
            "predicts. Explain the size of the error in the markdown cell.",
            (
                number(
                    "contrast_pooled",
                    "use the pool-average pass rate (the mean of the two families) in P_c.",
                    fraction=True,
                ),
                number("informative_pooled", "all {tasks} groups with the pooled contrast probability."),
            ),
            argued=True,
        ),
        Part(
            "c",
            "lone-pass coefficient and the drop proposal",
            "Compute the coefficient a lone pass receives in the hard family with eps -> 0. A colleague "
            "proposes dropping the hard family: is dropping it acceptable (`drop_hard_family`)? "
            "Critique it and propose an alternative.",
            (
                number("lone_pass_coefficient", "equation `ch4-lone-pass` with eps -> 0: (1 - 1/G) / (sqrt(G-1)/G)."),
                Answer(
                    "drop_hard_family",
                    "boolean",
                    "what would the policy then never be trained on, and what does a rare pass on it carry?",
                    _TRUE_FALSE,
                ),
            ),
            argued=True,
        ),
    ),
)

EX5 = exercise(
    "ex5_continuation_budget",
    "Exercise 5 - A continuation-sampling budget (intermediate)",
    "the continuation budget (chapter 3)",
    {
        "horizon": 40,
        "tokens_per_turn": 400,
        "budget": 30.0,
        "continuations": 16,
        "forks": (10, 20, 30),
        "target_se": 0.05,
        "difference": 0.20,
    },
    "A repair trajectory runs H = {horizon} turns of {tokens_per_turn} generated tokens. At most {budget:g} times "
    "the base trajectory's generated tokens (including the base) may be spent on credit estimation. "
    "Continuations are independent binary returns, not recursively forked. Chapter 3: "
    "`credit.continuation_multiple(horizon, continuations, forks)`, `credit.standard_error_bound(M)`, "
    "`credit.difference_standard_error_bound(M)`, `credit.is_resolved(difference, M)`.",
    (
        Part(
            "a",
            "multiples for exhaustive and three forks",
            "Compute the generation multiple for exhaustive forking with M = {continuations}, and for forks after "
            "turns {forks[0]}, {forks[1]} and {forks[2]} only.",
            (
                number(
                    "multiple_exhaustive", "the multiple of the base is 1 + (M/H) * sum over fork turns k of (H - k)."
                ),
                number(
                    "multiple_three_forks", "the multiple of the base is 1 + (M/H) * sum over fork turns k of (H - k)."
                ),
            ),
        ),
        Part(
            "b",
            "M for a {target_se} bound and its cost",
            "Find the M that brings the per-fork standard-error bound to {target_se}, and the multiple that M "
            "costs at the three forks.",
            (
                Answer("m_for_target", "integer", "solve 1 / (2 sqrt(M)) = {target_se} for M."),
                number(
                    "multiple_for_target",
                    "the same multiple formula as part (a) at the forks after turns "
                    "{forks[0]}, {forks[1]} and {forks[2]}.",
                ),
            ),
        ),
        Part(
            "c",
            "largest affordable M and resolution",
            "Find the largest M the budget allows at those three forks, its standard-error bound, and "
            "whether this schedule can resolve a value difference of {difference:.2f}.",
            (
                Answer(
                    "m_budget", "integer", "the largest whole M whose multiple at the three forks stays <= {budget:g}."
                ),
                number("se_budget", "the per-fork bound 1 / (2 sqrt(M))."),
                Answer(
                    "can_resolve",
                    "boolean",
                    "a difference is resolved only if it is at least twice sqrt(2) / (2 sqrt(M)).",
                    _TRUE_FALSE,
                ),
            ),
        ),
        Part(
            "d",
            "a schedule that resolves {difference:.2f} within budget",
            "Redesign the schedule within the same {budget:g}x budget so that it resolves {difference:.2f}: give "
            "the fork turns and M. Explain the trade-off in the markdown cell.",
            (
                Answer("redesign_forks", "custom", "", ": a list of completed-turn indices"),
                Answer("redesign_m", "custom", ""),
            ),
            argued=True,
        ),
    ),
)

EX6 = exercise(
    "ex6_reset",
    "Exercise 6 - Reset for a short-horizon support agent (intermediate)",
    "reset and cycle time (chapter 8, eq `ch8-cycle`)",
    {
        "horizon": 4,
        "t_model": 0.6,
        "t_tool": 0.1,
        "t_assess": 0.2,
        "reset_cold": 6.0,
        "reset_snapshot": 0.3,
        "slots": 64,
        "service_cap_per_hour": 40_000.0,
    },
    "Support-agent refund tasks: H = {horizon} decisions of {t_model} s model service and {t_tool} s record "
    "lookup each, then {t_assess} s assessment. Cold reset {reset_cold} s, snapshot restore {reset_snapshot} s. "
    "{slots} slots; the shared model service sustains at most {service_cap_per_hour:,.0f} episodes per hour. "
    "Chapter 8, equation `ch8-cycle`: `cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, t_reset)`, "
    "`cycle_time.pool_capacity_per_hour(slots, cycle_s)`.",
    (
        Part(
            "a",
            "cycle, reset share and capacity",
            "Compute the cycle time (s), the reset share of the cycle, and the idealised pool capacity "
            "(episodes per hour) for both resets.",
            (
                number("cycle_cold", "equation `ch8-cycle`: T_cycle = H (t_model + t_tool) + t_assess + t_reset."),
                number("cycle_snapshot", "equation `ch8-cycle`: T_cycle = H (t_model + t_tool) + t_assess + t_reset."),
                number("reset_share_cold", "the reset share is t_reset / T_cycle.", fraction=True),
                number("reset_share_snapshot", "the reset share is t_reset / T_cycle.", fraction=True),
                number("capacity_cold", "capacity is slots / T_cycle, converted to episodes per hour."),
                number("capacity_snapshot", "capacity is slots / T_cycle, converted to episodes per hour."),
            ),
        ),
        Part(
            "b",
            "permitted gain and next step",
            "Compute the capacity gain (a ratio) the shared model service actually permits. Which should "
            'come next: `"snapshot"` work or added `"model_service"` capacity?',
            (
                number(
                    "permitted_gain",
                    "the pool cannot run faster than the model service allows: cap the snapshot capacity first.",
                ),
                Answer(
                    "next_step",
                    "choice",
                    "which constraint binds today, at the cold-reset capacity?",
                    ': "snapshot" or "model_service"',
                    options=("snapshot", "model_service"),
                ),
            ),
            argued=True,
        ),
        Part(
            "c",
            "reset as the lever; external state",
            "Is reset the lever here (`reset_is_lever`)? Would a local snapshot restore a refund that "
            "reached an external payment service (`snapshot_restores_external_refund`)? Explain which "
            "term of equation `ch8-cycle` makes reset the lever.",
            (
                Answer(
                    "reset_is_lever",
                    "boolean",
                    "compare the reset share with the chapter's repair pool, where cold reset was under half.",
                    _TRUE_FALSE,
                ),
                Answer(
                    "snapshot_restores_external_refund",
                    "boolean",
                    "a snapshot restores the local fixture; where does an issued payment live?",
                ),
            ),
            argued=True,
        ),
    ),
)

EX7 = exercise(
    "ex7_staleness_provisioning",
    "Exercise 7 - Staleness bounds and verifier provisioning (advanced)",
    "staleness and provisioning (chapter 8)",
    {
        "step_s": 40.0,
        "max_lag": 2,
        "durations_s": (30.0, 90.0, 200.0),
        "duration_shares_pct": (70, 25, 5),
        "per_step": 256,
        "trials": 3,
        "trial_s": 10.0,
        "utilization_pct": 80,
        "incorrect_pct": 60,
        "q_incorrect": 0.10,
        "q_correct": 0.97,
    },
    "A trainer steps every T_step = {step_s:g} s and admits a record only if its version lag is <= {max_lag}. "
    "Rollouts take {durations_s[0]:g} s ({duration_shares_pct[0]} %), {durations_s[1]:g} s "
    "({duration_shares_pct[1]} %) or {durations_s[2]:g} s ({duration_shares_pct[2]} %) from first token to "
    "admission. {per_step} trajectories per step need up to K = {trials} verification trials of {trial_s:g} s; "
    "the pool targets {utilization_pct} % utilisation. Chapter 8, equations `ch8-lag` and `ch8-workers`: "
    "`cycle_time.version_lag(age_s, step_s)`, `cycle_time.admit(...)`, "
    "`cycle_time.verifier_workers(arrival_per_s, trials, trial_s, target_utilization)`, "
    "`rewards.expected_trials(q, trials)`.",
    (
        Part(
            "a",
            "version lags and excluded fraction",
            "Compute the version lag of each duration class and the fraction of rollouts excluded. "
            "Explain in the markdown cell why that fraction understates the damage to hard tasks.",
            (
                Answer("lag_30", "integer", "equation `ch8-lag`: the lag is floor(tau_admit / T_step)."),
                Answer("lag_90", "integer", "equation `ch8-lag`: the lag is floor(tau_admit / T_step)."),
                Answer("lag_200", "integer", "equation `ch8-lag`: the lag is floor(tau_admit / T_step)."),
                number(
                    "excluded_fraction",
                    "add the shares of the duration classes whose lag exceeds {max_lag}.",
                    fraction=True,
                ),
            ),
            argued=True,
        ),
        Part(
            "b",
            "step-time and duration thresholds",
            "Find the step time (s) above which the {durations_s[2]:g} s rollouts are admitted, and the duration "
            "(s) below which a rollout is admitted at the current {step_s:g} s step. Compare the three remedies "
            "in the markdown cell.",
            (
                number(
                    "step_threshold_s",
                    "floor({durations_s[2]:g} / T_step) <= {max_lag} holds once "
                    "{durations_s[2]:g} / T_step drops below 3.",
                ),
                number("admit_below_s", "floor(tau / {step_s:g}) <= {max_lag} holds while tau stays below 3 steps."),
            ),
            argued=True,
        ),
        Part(
            "c",
            "verifier workers, all trials and stop-first",
            "Size the verifier pool when all three trials execute, then under stop-on-first-rejection "
            "when {incorrect_pct} % of candidates are incorrect with q = {q_incorrect:.2f} and the rest correct "
            "with q = {q_correct}.",
            (
                Answer(
                    "workers_all_trials",
                    "integer",
                    "equation `ch8-workers`: W = ceil(lambda K t_v / rho_target) with lambda "
                    "= {per_step} trajectories per {step_s:g} s step. Floating-point trap: a product that is "
                    "mathematically whole can come out a hair above it in floats (0.1 * 3 / 0.3 gives "
                    "1.0000000000000002), and a ceiling then adds a whole worker; round before the ceiling "
                    "(ceil(round(x, 9))) or compute in integers or fractions.Fraction.",
                ),
                Answer(
                    "workers_stop_first",
                    "integer",
                    "replace K by the mixture average of E[N | q] = sum over j < K of q^j, each class with its q.",
                ),
            ),
        ),
        Part(
            "d",
            "workers from the mean q",
            "Size the stop-on-first-rejection pool again by substituting the population's mean pass "
            "probability into every power. Does that pool under-provision (`underprovisioned`)?",
            (
                Answer(
                    "workers_mean_q",
                    "integer",
                    "plug the population's mean q (0.6 x {q_incorrect:.2f} + 0.4 x "
                    "{q_correct}) into E[N | q] and size as before.",
                ),
                Answer(
                    "underprovisioned",
                    "boolean",
                    "E[N | q] is convex in q; compare this pool with the one from part (c).",
                    _TRUE_FALSE,
                ),
            ),
            argued=True,
        ),
    ),
)

EX8 = exercise(
    "ex8_lengthening_policy",
    "Exercise 8 - Diagnosing a lengthening policy (advanced, critique and redesign)",
    "the lengthening policy (chapters 4 and 7, eq `ch7-weight`)",
    {
        "short": 2000,
        "long": 6000,
        "w_length": 0.4,
        "w_format": 0.2,
        "nominal_cap": 4000,
        "pass_tokens": 9000,
        "fail_tokens": 500,
    },
    "During GRPO training with per-rollout token averaging, the mean length of failing rollouts grows "
    "from {short:,} to {long:,} tokens while acceptance stays flat. The team proposes adding w_length len with "
    "w_length = {w_length} and w_format = {w_format}, where len = tokens / {nominal_cap:,} is normalised by a "
    "nominal cap that the runtime does not enforce. Chapters 4 and 7, equation `ch7-weight`; "
    "`rewards.composite_reward(...)`.",
    (
        Part(
            "a",
            "per-token penalty ratio",
            "Using equation `ch7-weight`, compute the ratio of per-token penalties, the {short:,}-token failure's over "
            "the {long:,}-token failure's, when both share the same advantage.",
            (
                number(
                    "penalty_ratio",
                    "equation `ch7-weight` gives each token the weight A_i / |o_i|; divide the short "
                    "failure's per-token weight by the long one's.",
                ),
            ),
        ),
        Part(
            "b",
            "scores and the pass-length limit",
            "Score a {pass_tokens:,}-token pass with F = 0 and a {fail_tokens}-token failure with F = 1 under the "
            "proposal. Find the pass length (tokens) beyond which a pass with F = 0 scores below the "
            "best-scoring failure.",
            (
                number(
                    "pass_score",
                    "len = tokens / {nominal_cap} is not capped at 1 because the runtime does not enforce the cap.",
                ),
                number(
                    "fail_score",
                    "len = tokens / {nominal_cap} is not capped at 1 because the runtime does not enforce the cap.",
                ),
                number(
                    "pass_length_limit",
                    "the best-scoring failure has F = 1 and len -> 0; solve 1 - w_length * "
                    "L / {nominal_cap} = that score for L.",
                ),
            ),
        ),
        Part(
            "c",
            "diagnose, enforce, bound",
            "Critique and redesign. Which diagnostic runs before any penalty is added "
            '(`"loss_normalization"`, `"length_penalty_sweep"` or `"larger_group"`)? Must the runtime '
            "enforce the cap (`runtime_enforces_cap`)? What bound must w_length of any surviving length "
            "term stay below, with w_format = {w_format} (`w_length_upper`)?",
            (
                Answer(
                    "first_diagnostic",
                    "choice",
                    "part (a) names a cause of growing failures that lies in the loss, not in the reward.",
                    options=("loss_normalization", "length_penalty_sweep", "larger_group"),
                ),
                Answer(
                    "runtime_enforces_cap", "boolean", "the ordering bound assumes len stays in [0, 1].", _TRUE_FALSE
                ),
                number(
                    "w_length_upper",
                    "any surviving length term must keep w_format + w_length < 1; give the bound on w_length.",
                ),
            ),
            argued=True,
        ),
    ),
)

#: Every exercise of section 17.14, in order.
EXERCISES = (EX1, EX2, EX3, EX4, EX5, EX6, EX7, EX8, EX9)


def part_ids() -> list:
    """Every checked part's id (``ex1.part_a`` ...), in exercise order."""
    return [e.part_id(p) for e in EXERCISES for p in e.parts]


def part(part_id: str) -> tuple:
    """``(exercise, part)`` for ``part_id``; a ValueError names the valid ids.

    >>> part("ex3.part_a")[1].names
    ('trials_needed',)
    """
    for e in EXERCISES:
        for p in e.parts:
            if e.part_id(p) == part_id:
                return e, p
    raise ValueError(f"part_id must be one of {sorted(part_ids())}, got {part_id!r}")
