"""Write the student and reference-solution notebooks of the section 17.14 exercises.

One source for both versions keeps their check cells byte-identical, which the grader relies on
(``rlvr-lab grade`` finds each check cell in a submission by its exact source). Run from the
repository root after editing an exercise here::

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

INTRO = (
    "Every given is a hypothetical input from section 17.14 of the chapter, not a measurement.\n\n"
    "**How to work.** Replace each `None` in a TODO cell with your answer (compute it in Python; "
    "`rlvr_lab` has the chapter's relations), then run the check cell below it. A check prints "
    "`correct` or raises `CheckFailed` with a hint (never the answer). **Keep the variable names**: "
    "`rlvr-lab grade` runs your notebook afresh in a sandbox and grades the final values of these "
    "variables itself; the check cells are for you, and editing them changes only what you see.\n\n"
    "Decision parts have a short variable for the decision (checked) and a markdown cell for your "
    "argument (read by the instructor against the rubric)."
)

SETUP = "from rlvr_lab import checks\nfrom rlvr_lab import rewards, credit, cycle_time"

# Each exercise: (file stem, title, givens markdown, [parts]); each part: (letter, prompt markdown,
# student TODO source, solution source, check source, rubric markdown or None).
EXERCISES = [
    (
        "ex1_false_accepts",
        "Exercise 1 - False accepts early and late in training (basic)",
        "A repair-task verifier accepts every criterion success (beta = 1) and a fraction alpha = 0.02 of "
        "criterion failures. The policy passes the reference criterion with rho = 0.04 at the start of "
        "training and rho = 0.40 after several hundred updates. Section 17.3.2, equation 1: "
        "`rewards.false_accept_share(rho, alpha, beta)`.",
        [
            ("a", "Compute the false-accept share of rewarded rollouts (a fraction) at both pass rates.",
             "share_early = None  # TODO: share at rho = 0.04\nshare_late = None  # TODO: share at rho = 0.40",
             "share_early = rewards.false_accept_share(0.04, 0.02, 1.0)\n"
             "share_late = rewards.false_accept_share(0.40, 0.02, 1.0)\nshare_early, share_late",
             "checks.ex1.part_a(share_early, share_late)", None),
            ("b", "Find the largest alpha that keeps the share at or below 0.10 when rho = 0.04.",
             "alpha_max = None  # TODO",
             "# Solve s = (1-rho) a / (rho + (1-rho) a) for a: a = s rho / ((1-s)(1-rho)).\n"
             "rho, s = 0.04, 0.10\nalpha_max = s * rho / ((1 - s) * (1 - rho))\n"
             "assert abs(rewards.false_accept_share(rho, alpha_max, 1.0) - s) < 1e-12\nalpha_max",
             "checks.ex1.part_b(alpha_max)", None),
            ("c", "One verifier-hardening effort is affordable: spend it `\"before\"` training starts or "
                  "`\"after\"` the pass rate has risen? Decide, then argue from (a) and (b).",
             "harden_when = None  # TODO: \"before\" or \"after\"",
             "harden_when = \"before\"",
             "checks.ex1.part_c(harden_when)",
             "**Rubric (part c).** A good answer: (1) notes that at rho = 0.04 about a third of rewarded "
             "rollouts are failures (0.32) while at rho = 0.40 it is about 3 %, so the damage is concentrated "
             "early; (2) uses (b): the verifier would need alpha <= 0.0046, a four-fold reduction, to keep "
             "the early share at 10 %; (3) explains that false accepts early are amplified (a lone hacked "
             "pass in a group gets the largest coefficient) and can teach the exploit before true passes "
             "exist, which later hardening cannot undo; (4) concludes: harden before training. "
             "Partial credit for the right decision argued only from the shares."),
        ],
    ),
    (
        "ex2_reward_order",
        "Exercise 2 - Keeping the pass above the failure (basic)",
        "Terminal score R = C + w_format F - w_length len with w_format = 0.4, w_length = 0.7, "
        "len = tokens / 8000 for an enforced cap of 8,000 generated tokens. Section 17.3.3: "
        "`rewards.composite_reward(correct, format_score, length_frac, w_format, w_length)`, "
        "`rewards.pass_outranks_failure(w_format, w_length)`.",
        [
            ("a", "Score a pass of 7,200 tokens with F = 0.5 and a failure of 400 tokens with F = 1. "
                  "Does this pair keep the intended order (pass above failure)?",
             "pass_score = None  # TODO\nfail_score = None  # TODO\npair_keeps_order = None  # TODO: True/False",
             "pass_score = rewards.composite_reward(1, 0.5, 7200 / 8000, 0.4, 0.7)\n"
             "fail_score = rewards.composite_reward(0, 1.0, 400 / 8000, 0.4, 0.7)\n"
             "pair_keeps_order = bool(pass_score > fail_score)\npass_score, fail_score, pair_keeps_order",
             "checks.ex2.part_a(pass_score, fail_score, pair_keeps_order)", None),
            ("b", "Compute the lowest possible pass score and the highest possible failure score over "
                  "F, len in [0, 1]. Does every pass outrank every failure?",
             "lowest_pass = None  # TODO\nhighest_fail = None  # TODO\nevery_pass_outranks = None  # TODO",
             "lowest_pass = rewards.composite_reward(1, 0.0, 1.0, 0.4, 0.7)\n"
             "highest_fail = rewards.composite_reward(0, 1.0, 0.0, 0.4, 0.7)\n"
             "every_pass_outranks = bool(rewards.pass_outranks_failure(0.4, 0.7))\n"
             "lowest_pass, highest_fail, every_pass_outranks",
             "checks.ex2.part_b(lowest_pass, highest_fail, every_pass_outranks)", None),
            ("c", "Holding w_format = 0.4, give the bound that w_length must stay strictly below "
                  "(the range is 0 <= w_length < bound). Explain in the markdown cell why part (a) alone "
                  "was no evidence that the original weights were safe.",
             "w_length_upper = None  # TODO",
             "w_length_upper = 1 - 0.4\nassert rewards.pass_outranks_failure(0.4, w_length_upper - 1e-9)\n"
             "assert not rewards.pass_outranks_failure(0.4, w_length_upper)\nw_length_upper",
             "checks.ex2.part_c(w_length_upper)",
             "**Rubric (part c).** A good answer: gives 0 <= w_length < 0.6 and says the inequality is strict "
             "(equality lets the worst pass tie the best failure); explains that (a) checked one observed "
             "pair, whereas safety is a statement about *all* passes and failures - the worst pass (long, "
             "badly formatted: 0.3) and the best failure (short, perfectly formatted: 0.4) decide it, and "
             "here they invert; adds that the bound holds only while the runtime enforces the 8,000-token "
             "cap so that len stays in [0, 1]."),
        ],
    ),
    (
        "ex3_all_pass_rule",
        "Exercise 3 - Sizing an all-pass rule (basic)",
        "A timing-sensitive fixture passes a fixed incorrect patch with per-trial probability q = 0.30 "
        "and a fixed correct patch with q = 0.95. Trials are independent, acceptance requires K passes, "
        "and verification stops at the first rejection. Section 17.7.2: "
        "`rewards.all_pass_probability(q, trials)`, `rewards.expected_trials(q, trials)`.",
        [
            ("a", "Find the smallest K that brings the incorrect patch's acceptance probability below 0.01.",
             "trials_needed = None  # TODO",
             "trials_needed = 1\nwhile rewards.all_pass_probability(0.30, trials_needed) >= 0.01:\n"
             "    trials_needed += 1\ntrials_needed",
             "checks.ex3.part_a(trials_needed)", None),
            ("b", "At that K, compute the correct patch's false-rejection probability and the expected "
                  "number of trials for each patch.",
             "false_rejection = None  # TODO\ntrials_correct = None  # TODO\ntrials_incorrect = None  # TODO",
             "false_rejection = 1 - rewards.all_pass_probability(0.95, trials_needed)\n"
             "trials_correct = rewards.expected_trials(0.95, trials_needed)\n"
             "trials_incorrect = rewards.expected_trials(0.30, trials_needed)\n"
             "false_rejection, trials_correct, trials_incorrect",
             "checks.ex3.part_b(false_rejection, trials_correct, trials_incorrect)", None),
            ("c", "A lone false pass on a hard task receives the largest group coefficient. Should the loop "
                  "first `\"add_trials\"` or `\"repair_fixture\"` (its timing sensitivity)? Argue below.",
             "first_action = None  # TODO: \"add_trials\" or \"repair_fixture\"",
             "first_action = \"repair_fixture\"",
             "checks.ex3.part_c(first_action)",
             "**Rubric (part c).** A good answer: notes that K = 4 already costs about 3.7 trials per correct "
             "patch and still rejects about 18.5 % of correct patches, so adding trials trades false accepts "
             "for false rejections and verifier load; that a false pass surviving the trials is still "
             "amplified (lone pass, coefficient sqrt(G-1)); that the noise is a property of the fixture "
             "(timing sensitivity), so fixing it lowers q for incorrect patches and raises it for correct "
             "ones at once; concludes: repair the fixture first, keep repeated trials as a guard sized from "
             "re-measured q."),
        ],
    ),
    (
        "ex4_silent_groups",
        "Exercise 4 - A mixed task pool and its silent groups (intermediate)",
        "An update samples groups of G = 8 over 256 tasks. Half the tasks belong to a family the policy "
        "passes with p = 0.02, the other half to a family it passes with p = 0.60. Runs are independent "
        "and rewards binary. Sections 17.5.1 and 17.5.4: `rewards.contrast_probability(group_size, p)`, "
        "`grpo.lone_pass_coefficient(group_size, eps)` (needs torch; equation 3, the lone pass's coefficient).",
        [
            ("a", "Compute P_c for each family, the expected number of informative groups per update, and "
                  "the rollouts spent per informative group across the whole pool.",
             "contrast_hard = None  # TODO\ncontrast_easy = None  # TODO\ninformative_groups = None  # TODO\n"
             "rollouts_per_informative = None  # TODO",
             "contrast_hard = rewards.contrast_probability(8, 0.02)\n"
             "contrast_easy = rewards.contrast_probability(8, 0.60)\n"
             "informative_groups = 128 * contrast_hard + 128 * contrast_easy\n"
             "rollouts_per_informative = 256 * 8 / informative_groups\n"
             "contrast_hard, contrast_easy, informative_groups, rollouts_per_informative",
             "checks.ex4.part_a(contrast_hard, contrast_easy, informative_groups, rollouts_per_informative)",
             None),
            ("b", "Compute P_c from the pool-average pass rate instead, and the informative groups it "
                  "predicts. Explain the size of the error in the markdown cell.",
             "contrast_pooled = None  # TODO\ninformative_pooled = None  # TODO",
             "contrast_pooled = rewards.contrast_probability(8, (0.02 + 0.60) / 2)\n"
             "informative_pooled = 256 * contrast_pooled\ncontrast_pooled, informative_pooled",
             "checks.ex4.part_b(contrast_pooled, informative_pooled)",
             "**Rubric (part b).** A good answer: the pooled rate 0.31 gives P_c of about 0.95 and about 243 "
             "informative groups against about 145 from the families, an overestimate of roughly 68 %; the "
             "error comes from P_c being strongly non-linear in p (near zero at p = 0.02, near one at 0.60), "
             "so averaging p before applying P_c hides the hard family's silent groups; contrast must be "
             "computed per difficulty bucket."),
            ("c", "Compute the coefficient a lone pass receives in the hard family with eps -> 0. A colleague "
                  "proposes dropping the hard family: is dropping it acceptable (`drop_hard_family`)? "
                  "Critique it and propose an alternative.",
             "lone_pass_coefficient = None  # TODO\ndrop_hard_family = None  # TODO: True/False",
             "from rlvr_lab import grpo\n"
             "lone_pass_coefficient = grpo.lone_pass_coefficient(8, 0.0)  # equation 3\n"
             "drop_hard_family = False\nlone_pass_coefficient",
             "checks.ex4.part_c(lone_pass_coefficient, drop_hard_family)",
             "**Rubric (part c).** A good answer: gives sqrt(7) = 2.65 for the lone pass; says dropping the "
             "family changes the training distribution (the policy stops seeing the tasks it most needs to "
             "learn, and evaluation on them drifts) and throws away the rare, strongly weighted passes that "
             "carry the hard family's signal; proposes raising contrast without discarding it, e.g. a larger "
             "group only for the hard family, easier variants or hints (a curriculum) for it, or "
             "difficulty-targeted sampling that keeps the family at a logged share; notes the task mixture "
             "and group sizes must be recorded with the run."),
        ],
    ),
    (
        "ex5_continuation_budget",
        "Exercise 5 - A continuation-sampling budget (intermediate)",
        "A repair trajectory runs H = 40 turns of 400 generated tokens. At most 30 times the base "
        "trajectory's generated tokens (including the base) may be spent on credit estimation. "
        "Continuations are independent binary returns, not recursively forked. Section 17.4.3: "
        "`credit.continuation_multiple(horizon, continuations, forks)`, `credit.standard_error_bound(M)`, "
        "`credit.difference_standard_error_bound(M)`, `credit.is_resolved(difference, M)`.",
        [
            ("a", "Compute the generation multiple for exhaustive forking with M = 16, and for forks after "
                  "turns 10, 20 and 30 only.",
             "multiple_exhaustive = None  # TODO\nmultiple_three_forks = None  # TODO",
             "multiple_exhaustive = credit.continuation_multiple(40, 16, \"all\")\n"
             "multiple_three_forks = credit.continuation_multiple(40, 16, [10, 20, 30])\n"
             "multiple_exhaustive, multiple_three_forks",
             "checks.ex5.part_a(multiple_exhaustive, multiple_three_forks)", None),
            ("b", "Find the M that brings the per-fork standard-error bound to 0.05, and the multiple that M "
                  "costs at the three forks.",
             "m_for_target = None  # TODO\nmultiple_for_target = None  # TODO",
             "m_for_target = 1\nwhile credit.standard_error_bound(m_for_target) > 0.05 + 1e-12:\n"
             "    m_for_target += 1\n"
             "multiple_for_target = credit.continuation_multiple(40, m_for_target, [10, 20, 30])\n"
             "m_for_target, multiple_for_target",
             "checks.ex5.part_b(m_for_target, multiple_for_target)", None),
            ("c", "Find the largest M the budget allows at those three forks, its standard-error bound, and "
                  "whether this schedule can resolve a value difference of 0.20.",
             "m_budget = None  # TODO\nse_budget = None  # TODO\ncan_resolve = None  # TODO: True/False",
             "m_budget = 0\nwhile credit.continuation_multiple(40, m_budget + 1, [10, 20, 30]) <= 30:\n"
             "    m_budget += 1\nse_budget = credit.standard_error_bound(m_budget)\n"
             "can_resolve = bool(credit.is_resolved(0.20, m_budget))\nm_budget, se_budget, can_resolve",
             "checks.ex5.part_c(m_budget, se_budget, can_resolve)", None),
            ("d", "Redesign the schedule within the same 30x budget so that it resolves 0.20: give the fork "
                  "turns and M. Explain the trade-off in the markdown cell.",
             "redesign_forks = None  # TODO: a list of completed-turn indices\nredesign_m = None  # TODO",
             "redesign_m = 1\nwhile not credit.is_resolved(0.20, redesign_m):\n    redesign_m += 1\n"
             "# One fork late enough that M continuations of the remaining turns fit the budget.\n"
             "redesign_forks = [20]\n"
             "assert credit.continuation_multiple(40, redesign_m, redesign_forks) <= 30\n"
             "redesign_forks, redesign_m, credit.continuation_multiple(40, redesign_m, redesign_forks)",
             "checks.ex5.part_d(redesign_forks, redesign_m)",
             "**Rubric (part d).** A good answer: shows M = 19 gives a per-fork bound of 0.115 and a "
             "resolution threshold of 0.32 > 0.20, so the three-fork schedule cannot decide; computes that "
             "resolving 0.20 needs M >= 50; spends the budget on fewer, later forks (the cost of a fork "
             "after turn k grows with the remaining H - k turns), e.g. one fork after turn 20 with M = 50 "
             "(multiple 26) or two late forks whose remaining turns sum to at most 23; names what is lost "
             "(no value estimate at early turns) and that the choice of forks should follow where the "
             "decisive actions are suspected."),
        ],
    ),
    (
        "ex6_reset",
        "Exercise 6 - Reset for a short-horizon support agent (intermediate)",
        "Support-agent refund tasks: H = 4 decisions of 0.6 s model service and 0.1 s record lookup each, "
        "then 0.2 s assessment. Cold reset 6.0 s, snapshot restore 0.3 s. 64 slots; the shared model "
        "service sustains at most 40,000 episodes per hour. Section 17.9.2, equation 6: "
        "`cycle_time.cycle_time(horizon, t_model, t_tool, t_assess, t_reset)`, "
        "`cycle_time.pool_capacity_per_hour(slots, cycle_s)`.",
        [
            ("a", "Compute the cycle time (s), the reset share of the cycle, and the idealised pool capacity "
                  "(episodes per hour) for both resets.",
             "cycle_cold = None  # TODO\ncycle_snapshot = None  # TODO\nreset_share_cold = None  # TODO\n"
             "reset_share_snapshot = None  # TODO\ncapacity_cold = None  # TODO\ncapacity_snapshot = None  # TODO",
             "cycle_cold = cycle_time.cycle_time(4, 0.6, 0.1, 0.2, 6.0)\n"
             "cycle_snapshot = cycle_time.cycle_time(4, 0.6, 0.1, 0.2, 0.3)\n"
             "reset_share_cold = 6.0 / cycle_cold\nreset_share_snapshot = 0.3 / cycle_snapshot\n"
             "capacity_cold = cycle_time.pool_capacity_per_hour(64, cycle_cold)\n"
             "capacity_snapshot = cycle_time.pool_capacity_per_hour(64, cycle_snapshot)\n"
             "cycle_cold, cycle_snapshot, reset_share_cold, reset_share_snapshot, capacity_cold, capacity_snapshot",
             "checks.ex6.part_a(cycle_cold, cycle_snapshot, reset_share_cold, reset_share_snapshot, "
             "capacity_cold, capacity_snapshot)", None),
            ("b", "Compute the capacity gain (a ratio) the shared model service actually permits. Which should "
                  "come next: `\"snapshot\"` work or added `\"model_service\"` capacity?",
             "permitted_gain = None  # TODO\nnext_step = None  # TODO: \"snapshot\" or \"model_service\"",
             "cap = 40_000\npermitted_gain = min(capacity_snapshot, cap) / min(capacity_cold, cap)\n"
             "next_step = \"snapshot\"\npermitted_gain",
             "checks.ex6.part_b(permitted_gain, next_step)",
             "**Rubric (part b).** A good answer: the snapshot pool could run about 69,800 episodes/h but the "
             "service caps it at 40,000, so the permitted gain is 40,000 / 25,600 = 1.56x rather than 2.7x; "
             "today the cold pool (25,600/h) is below the service cap, so adding model service buys nothing "
             "until reset shrinks: do the snapshot work first, after which the model service becomes the "
             "binding constraint and is the next investment."),
            ("c", "Is reset the lever here (`reset_is_lever`)? Would a local snapshot restore a refund that "
                  "reached an external payment service (`snapshot_restores_external_refund`)? Explain which "
                  "term of equation 6 makes reset the lever.",
             "reset_is_lever = None  # TODO: True/False\nsnapshot_restores_external_refund = None  # TODO",
             "reset_is_lever = bool(reset_share_cold > 0.5)\nsnapshot_restores_external_refund = False",
             "checks.ex6.part_c(reset_is_lever, snapshot_restores_external_refund)",
             "**Rubric (part c).** A good answer: cold reset is two thirds of this cycle against under half in "
             "the chapter's repair pool; the active term H (t_model + t_tool) is small because H = 4, so the "
             "fixed per-episode t_reset dominates (Amdahl: shrinking the largest term pays most); a snapshot "
             "restores only local state (customer record, refund history in the fixture) - a refund that "
             "reached an external payment service is a side effect outside the sandbox, which must be "
             "prevented by a fake or sandboxed payment endpoint, not undone by reset."),
        ],
    ),
    (
        "ex7_staleness_provisioning",
        "Exercise 7 - Staleness bounds and verifier provisioning (advanced)",
        "A trainer steps every T_step = 40 s and admits a record only if its version lag is <= 2. Rollouts "
        "take 30 s (70 %), 90 s (25 %) or 200 s (5 %) from first token to admission. 256 trajectories per "
        "step need up to K = 3 verification trials of 10 s; the pool targets 80 % utilisation. Sections "
        "17.9.4-17.9.5, equations 8-9: `cycle_time.version_lag(age_s, step_s)`, `cycle_time.admit(...)`, "
        "`cycle_time.verifier_workers(arrival_per_s, trials, trial_s, target_utilization)`, "
        "`rewards.expected_trials(q, trials)`.",
        [
            ("a", "Compute the version lag of each duration class and the fraction of rollouts excluded. "
                  "Explain in the markdown cell why that fraction understates the damage to hard tasks.",
             "lag_30 = None  # TODO\nlag_90 = None  # TODO\nlag_200 = None  # TODO\nexcluded_fraction = None  # TODO",
             "lag_30, lag_90, lag_200 = (cycle_time.version_lag(t, 40.0) for t in (30.0, 90.0, 200.0))\n"
             "classes = [(0.70, 30.0), (0.25, 90.0), (0.05, 200.0)]\n"
             "excluded_fraction = sum(w for w, t in classes if not cycle_time.admit(t, 40.0, 2))\n"
             "lag_30, lag_90, lag_200, excluded_fraction",
             "checks.ex7.part_a(lag_30, lag_90, lag_200, excluded_fraction)",
             "**Rubric (part a).** A good answer: lags 0, 2 and 5, so 5 % are excluded; the long rollouts are "
             "disproportionately the hard tasks (long repairs, many turns), so exclusion removes most of the "
             "hard family's samples and nearly all its rare passes, biasing the admitted data toward easy "
             "tasks - the per-task damage is far larger than 5 %."),
            ("b", "Find the step time (s) above which the 200 s rollouts are admitted, and the duration (s) "
                  "below which a rollout is admitted at the current 40 s step. Compare the three remedies in "
                  "the markdown cell.",
             "step_threshold_s = None  # TODO\nadmit_below_s = None  # TODO",
             "step_threshold_s = 200.0 / 3  # floor(200 / T) <= 2  <=>  T > 200 / 3\n"
             "admit_below_s = 3 * 40.0        # floor(tau / 40) <= 2  <=>  tau < 120\n"
             "assert cycle_time.admit(200.0, step_threshold_s + 1e-6, 2)\n"
             "assert not cycle_time.admit(200.0, step_threshold_s - 1e-6, 2)\n"
             "assert cycle_time.admit(admit_below_s - 1e-6, 40.0, 2) and not cycle_time.admit(admit_below_s, 40.0, 2)\n"
             "step_threshold_s, admit_below_s",
             "checks.ex7.part_b(step_threshold_s, admit_below_s)",
             "**Rubric (part b).** A good answer: T_step above 66.7 s admits the 200 s class, rollouts under "
             "120 s are admitted now; slowing the trainer by two thirds costs every update's throughput to "
             "rescue 5 % of rollouts; capping rollout duration turns long repairs into censored failures "
             "(biasing hard tasks the same way); shortening the time to admission (faster tools, "
             "verification, queueing) attacks the cause and is preferred, with the bound kept explicit."),
            ("c", "Size the verifier pool when all three trials execute, then under stop-on-first-rejection "
                  "when 60 % of candidates are incorrect with q = 0.10 and the rest correct with q = 0.97.",
             "workers_all_trials = None  # TODO\nworkers_stop_first = None  # TODO",
             "arrival = 256 / 40.0\nworkers_all_trials = cycle_time.verifier_workers(arrival, 3, 10.0, 0.8)\n"
             "mixture_trials = 0.6 * rewards.expected_trials(0.10, 3) + 0.4 * rewards.expected_trials(0.97, 3)\n"
             "workers_stop_first = cycle_time.verifier_workers(arrival, mixture_trials, 10.0, 0.8)\n"
             "workers_all_trials, mixture_trials, workers_stop_first",
             "checks.ex7.part_c(workers_all_trials, workers_stop_first)", None),
            ("d", "Size the stop-on-first-rejection pool again by substituting the population's mean pass "
                  "probability into every power. Does that pool under-provision (`underprovisioned`)?",
             "workers_mean_q = None  # TODO\nunderprovisioned = None  # TODO: True/False",
             "mean_q = 0.6 * 0.10 + 0.4 * 0.97\n"
             "workers_mean_q = cycle_time.verifier_workers(arrival, rewards.expected_trials(mean_q, 3), 10.0, 0.8)\n"
             "underprovisioned = bool(workers_mean_q < workers_stop_first)\nworkers_mean_q, underprovisioned",
             "checks.ex7.part_d(workers_mean_q, underprovisioned)",
             "**Rubric (part d).** A good answer: the mean q of 0.448 gives about 1.65 expected trials "
             "against the mixture's 1.83, so 132 workers instead of 147; because E[N | q] is convex in q "
             "(Jensen), plugging in the mean always underestimates demand; the pool would run at about "
             "89 % utilisation instead of 80 %, queues and verification latency grow, and that latency "
             "feeds back into version lag (part a)."),
        ],
    ),
    (
        "ex8_lengthening_policy",
        "Exercise 8 - Diagnosing a lengthening policy (advanced, critique and redesign)",
        "During GRPO training with per-rollout token averaging, the mean length of failing rollouts grows "
        "from 2,000 to 6,000 tokens while acceptance stays flat. The team proposes adding w_length len with "
        "w_length = 0.4 and w_format = 0.2, where len = tokens / 4,000 is normalised by a nominal cap that "
        "the runtime does not enforce. Sections 17.5.3 and 17.8.2, equation 5; "
        "`rewards.composite_reward(...)`.",
        [
            ("a", "Using equation 5, compute the ratio of per-token penalties, the 2,000-token failure's over "
                  "the 6,000-token failure's, when both share the same advantage.",
             "penalty_ratio = None  # TODO",
             "# Per-token weight A_i / |o_i| (equation 5); the advantage cancels in the ratio.\n"
             "advantage = -1.0\npenalty_ratio = (advantage / 2000) / (advantage / 6000)\npenalty_ratio",
             "checks.ex8.part_a(penalty_ratio)", None),
            ("b", "Score a 9,000-token pass with F = 0 and a 500-token failure with F = 1 under the proposal. "
                  "Find the pass length (tokens) beyond which a pass with F = 0 scores below the best-scoring "
                  "failure.",
             "pass_score = None  # TODO\nfail_score = None  # TODO\npass_length_limit = None  # TODO",
             "pass_score = rewards.composite_reward(1, 0.0, 9000 / 4000, 0.2, 0.4)\n"
             "fail_score = rewards.composite_reward(0, 1.0, 500 / 4000, 0.2, 0.4)\n"
             "best_failure = rewards.composite_reward(0, 1.0, 0.0, 0.2, 0.4)\n"
             "pass_length_limit = (1 - best_failure) * 4000 / 0.4\n"
             "pass_score, fail_score, pass_length_limit",
             "checks.ex8.part_b(pass_score, fail_score, pass_length_limit)", None),
            ("c", "Critique and redesign. Which diagnostic runs before any penalty is added "
                  "(`\"loss_normalization\"`, `\"length_penalty_sweep\"` or `\"larger_group\"`)? Must the runtime "
                  "enforce the cap (`runtime_enforces_cap`)? What bound must w_length of any surviving length "
                  "term stay below, with w_format = 0.2 (`w_length_upper`)?",
             "first_diagnostic = None  # TODO\nruntime_enforces_cap = None  # TODO: True/False\n"
             "w_length_upper = None  # TODO",
             "first_diagnostic = \"loss_normalization\"\nruntime_enforces_cap = True\nw_length_upper = 1 - 0.2",
             "checks.ex8.part_c(first_diagnostic, runtime_enforces_cap, w_length_upper)",
             "**Rubric (part c).** A good answer: part (a) shows per-sequence averaging gives a 2,000-token "
             "failure three times the per-token penalty of a 6,000-token one, so the loss itself rewards "
             "stretching failures; the first diagnostic is to plot length by outcome and check the loss "
             "normalisation, switching to a constant denominator before touching the reward; the proposal "
             "breaks the ordering bound because len is unbounded (a 9,000-token pass scores 0.10 < a short "
             "failure's 0.15; every pass beyond 8,000 tokens loses to the best failure), so the runtime must "
             "enforce the cap with hard termination; any surviving length term needs w_format + w_length < 1 "
             "with len in [0, 1] (here w_length < 0.8), and its effect must be re-measured."),
        ],
    ),
]


def _cell(kind: str, source: str) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def notebook(exercise, solution: bool) -> dict:
    """Return one exercise notebook (nbformat 4 JSON) in its student or solution version."""
    stem, title, givens, parts = exercise
    version = "reference solution" if solution else "student notebook"
    cells = [
        _cell("markdown", f"# {title}\n\n*{version}*\n\n**Givens.** {givens}\n\n{INTRO}"),
        _cell("code", SETUP),
    ]
    for letter, prompt, todo, answer, check, rubric in parts:
        cells.append(_cell("markdown", f"## Part ({letter})\n\n{prompt}"))
        cells.append(_cell("code", answer if solution else todo))
        cells.append(_cell("code", check))
        if rubric is not None:
            if solution:
                cells.append(_cell("markdown", rubric))
            else:
                cells.append(_cell("markdown", f"**Your argument (part {letter}).** *Write it here.*"))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "rlvr_lab": {"exercise": stem.split("_")[0], "version": "solution" if solution else "student"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_all(root: str = HERE) -> list:
    """Write every student and solution notebook under ``root``; return the paths written."""
    written = []
    for exercise in EXERCISES:
        for solution, folder in ((False, "student"), (True, "solutions")):
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            path = os.path.join(root, folder, exercise[0] + ".ipynb")
            nb = notebook(exercise, solution)
            for i, cell in enumerate(nb["cells"]):
                cell["id"] = f"{exercise[0][:3]}-{i:02d}"
            nb["cells"].insert(0, install_cell_json())  # the Colab install cell (rlvr_lab.colab)
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(nb, handle, indent=1, ensure_ascii=False)
                handle.write("\n")
            written.append(path)
    return written


if __name__ == "__main__":
    for path in write_all():
        print(path)
