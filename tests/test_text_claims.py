"""Sentences of the book that state a number or an ordering, checked against the library (issue 22's text
errors). Each test reads the chapter's source, finds the sentence, and recomputes what it says."""

from pathlib import Path

import pytest

from rlvr_lab import rewards

BOOK = Path(__file__).resolve().parents[1] / "book"


def text(chapter: str) -> str:
    """The chapter's jupytext source with comment markers and line breaks removed."""
    lines = (BOOK / f"{chapter}.py").read_text().splitlines()
    return " ".join(line.removeprefix("#").strip() for line in lines)


def test_ch1_cost_per_informative_group_never_falls_and_pairs_tie_with_triples():
    assert "pair and a triple cost exactly the same at every pass rate" in text("01_learning_from_a_check")
    for p in (0.01, 0.05, 0.3, 0.5, 0.9, 0.99):
        cost = [rewards.rollouts_per_informative_group(g, p) for g in range(2, 65)]
        assert cost[0] == pytest.approx(cost[1]) == pytest.approx(1 / (p * (1 - p)))
        assert all(later > earlier for earlier, later in zip(cost[1:], cost[2:]))


def test_ch2_partial_credit_example_holds_as_stated():
    assert (
        "scores 3/10, more than an honest attempt whose one wrong edge case breaks eight of the tests (2/10)"
        in text("02_verifiable_rewards")
    )
    suite, special_cased, broken_by_edge_case = 10, 3, 8
    assert special_cased / suite > (suite - broken_by_edge_case) / suite


def test_ch2_process_rewards_may_shape_where_a_check_exists():
    assert "shaping; never the deciding score where a check exists" in text("02_verifiable_rewards")


def test_ch5_preemption_with_a_retry_left_is_pending():
    t = text("05_multi_turn")
    assert "or the node was reclaimed, and a retry is still possible | infrastructure | `pending`" in t
    assert "| The same, with no retry left | infrastructure | `unknown` |" in t


def test_ch9_pass_hat_k_is_the_unbiased_estimate():
    t = text("09_case_study")
    assert "rewards.pass_hat_k_unbiased(n, c, 5)" in t and "n, c = 20, 15" in t
    unbiased, plug_in = rewards.pass_hat_k_unbiased(20, 15, 5), rewards.pass_hat_k(15 / 20, 5)
    assert round(unbiased, 3) == 0.194 and round(plug_in, 3) == 0.237 and plug_in > unbiased


def test_ch9_names_the_acceptance_suite_the_fixture_ships():
    from rlvr_lab.verifier import load_fixture

    version = load_fixture("pool_repair_01").checker_version
    assert version == "repair_accept_v3" and f"acceptance suite, `{version}`" in text("09_case_study")


def recorded_pools() -> dict:
    """The ``recorded`` dict of chapter 8's Little's-law cell, read from the chapter's source."""
    import ast

    tree = ast.parse((BOOK / "08_environments_and_rollouts.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "recorded")
    return eval(compile(ast.Expression(node.value), "ch8", "eval"), {"dict": dict})


def test_ch8_littles_law_numbers_come_from_the_recorded_run_and_the_library():
    import json

    from rlvr_lab import cycle_time

    results = Path(__file__).resolve().parents[1] / "experiments" / "results" / "littles_law.json"
    rows = {row["pool"]: row["measured"] for row in json.loads(results.read_text())["rows"]}
    t = text("08_environments_and_rollouts")
    for name, m in recorded_pools().items():
        run = rows[name.split(" ")[0]]
        assert m["arrival_per_s"] == pytest.approx(run["arrival_per_s"], abs=5e-4)
        assert m["service_s"] == pytest.approx(run["service_s"], abs=5e-5)
        assert m["wait_s"] == pytest.approx(run["wait_s"], abs=5e-5)
        assert (m["rho_probe"], m["rho_probe_se"]) == (
            round(run["utilization_sampled"], 3),
            round(run["utilization_sampled_se"], 3),
        )
        assert (m["in_system_probe"], m["in_system_probe_se"]) == (
            round(run["in_system_sampled"], 2),
            round(run["in_system_sampled_se"], 2),
        )
        rho = cycle_time.verifier_utilization(m["arrival_per_s"], 1, m["service_s"], m["workers"])
        little = m["arrival_per_s"] * m["wait_s"]
        assert f"{rho:.3f}" in t and f"{little:.2f}" in t
        assert f"{m['rho_probe']:.3f} ± {m['rho_probe_se']:.3f}" in t
        assert f"{m['in_system_probe']:.2f} ± {m['in_system_probe_se']:.2f}" in t
    local = recorded_pools()["VerifierPool (2 slots)"]
    rho = cycle_time.verifier_utilization(local["arrival_per_s"], 1, local["service_s"], 2)
    assert abs(rho - local["rho_probe"]) < local["rho_probe_se"]  # "within one standard error"
    assert abs(local["arrival_per_s"] * local["wait_s"] - local["in_system_probe"]) < local["in_system_probe_se"]


def test_ch8_says_what_the_default_closure_does_with_a_lost_verdict():
    t = text("08_environments_and_rollouts")
    assert "retried, never dropped" not in t
    assert "the default, `exclude`, drops that member's whole group from the update" in t
    from rlvr_lab.train import TrainConfig

    assert TrainConfig().closure == "exclude"


def test_ch4_quotes_the_recorded_loss_variant_comparison():
    """Chapter 4's three-recipe paragraph states the stored paired intervals and what they support."""
    from rlvr_lab import claims

    s = claims.load("loss_variants")["summary"]
    ch4 = text("04_grpo")

    def interval(c, digits=3):
        return f"{c['mean']:+.{digits}f} [{c['lo']:.{digits}f}, {c['hi']:.{digits}f}]".lstrip("+")

    dr, dapo = s["gain"]["dr_grpo-grpo"], s["gain"]["dapo-grpo"]
    assert f"Dr. GRPO minus GRPO is {interval(dr)}" in ch4
    assert f"DAPO minus GRPO is +{interval(dapo)}" in ch4
    assert dr["lo"] < 0 < dr["hi"] and dapo["lo"] < 0 < dapo["hi"]  # "both intervals include zero"
    extra = s["rollouts"]["dapo-grpo"]
    assert f"{extra['mean']:,.0f} [{extra['lo']:,.0f}, {extra['hi']:,.0f}] more rollouts per run" in ch4
    assert 0.4 < extra["mean"] / s["rollouts"]["grpo"]["mean"] < 0.6  # "about half as many again"
    tied = 1 - s["contrast_share"]["grpo"]["mean"]
    assert f"had {tied:.0%} of their groups tied" in ch4.replace(" %", "%")
    runs = claims.load("loss_variants")["runs"]
    assert all(r[arm]["gain"] > 0 for r in runs for arm in ("grpo", "dr_grpo", "dapo"))  # "in every seed"


def test_ch7_states_every_pass_at_k_interval_it_leans_on():
    """Chapter 7 quotes the pass@1, 2, 4, 8 gains and the k = 32 gap with their intervals, as stored, and
    says which exclude zero."""
    from rlvr_lab import claims

    data = claims.load("pass_at_k")
    s = data["summary"]
    ch7 = text("07_training_pathologies")
    gain = s["1"]["difference"]
    assert f"The pass@1 gain is {claims.ci(gain)}" in ch7 and gain["lo"] > 0
    assert f"{claims.ci(s['2']['difference'])} and {claims.ci(s['4']['difference'])}, also exclude zero" in ch7
    assert s["2"]["difference"]["lo"] > 0 and s["4"]["difference"]["lo"] > 0
    k8 = s["8"]["difference"]
    assert f"at $k = 8$ it is {claims.ci(k8)}" in ch7 and k8["lo"] < 0 < k8["hi"]
    behind = s["32"]["difference"]
    ahead = {"mean": -behind["mean"], "lo": -behind["hi"], "hi": -behind["lo"]}
    assert f"ahead by {claims.ci(ahead)}, an interval that just includes zero" in ch7
    assert ahead["lo"] < 0 < ahead["hi"]
    assert data["catch_up_k"] == [8, 16, 16, 32, 32]
    assert "(at $k = 8$, 16, 16, 32 and 32)" in ch7


def test_ch4_and_results_md_state_the_exploit_intervals_as_stored():
    """Chapter 4's recorded exploit section quotes each interval as stored, and says what each supports."""
    from rlvr_lab import claims

    s = claims.load("exploit_amplification")["summary"]
    ch4 = text("04_grpo")
    with open(BOOK.parent / "experiments" / "RESULTS.md", encoding="utf-8") as fh:
        results = " ".join(fh.read().split())
    for where in (ch4, results):
        assert f"{claims.ci(s['exploit_last']['naive'])}" in where
        assert f"{claims.ci(s['exploit_last']['isolated'])}" in where
        assert f"{claims.ci(s['exploit_last']['difference'])}" in where
        assert f"{claims.ci(s['lone_share']['naive'], 2)}" in where
        assert f"{claims.ci(s['lone_share_step0']['naive'], 2)}" in where
        assert f"{claims.ci(s['several_share']['naive'], 2)}" in where
        hard = (s["true_hard_first"]["naive"]["mean"], s["true_hard_last"]["naive"]["mean"])
        assert f"{hard[0]:.3f}" in where and f"{hard[1]:.3f}" in where
    assert f"{claims.ci(s['true_last']['difference'])} that includes zero" in results
    assert s["exploit_last"]["difference"]["lo"] > 0  # "well above zero"
    assert "0 to 12.5 % of rollouts" in ch4
    runs = claims.load("exploit_amplification")["runs"]
    assert min(r["naive"]["exploit"][0] for r in runs) == 0.0 and max(r["naive"]["exploit"][0] for r in runs) == 0.125
    g = 8
    assert [round((k * (g - k)) ** 0.5, 2) for k in (1, 2, 4)] == [2.65, 3.46, 4.0]
    assert "2.65 for one pass at $G = 8$, 3.46 for two, 4.00 for four" in ch4


def test_ch7_states_the_entropy_collapse_and_length_intervals_as_stored():
    from rlvr_lab import claims

    ch7 = text("07_training_pathologies")
    c = claims.load("clip_higher")["summary"]
    for key, arm in (
        ("entropy_step0", "symmetric"),
        ("entropy_last", "symmetric"),
        ("entropy_drop", "symmetric"),
        ("diversity_step0", "symmetric"),
        ("diversity_last", "symmetric"),
        ("entropy_last", "difference"),
        ("diversity_last", "difference"),
    ):
        assert claims.ci(c[key][arm]).replace("-", "-") in ch7.replace("+", ""), (key, arm)
    assert f"drop {claims.ci(c['entropy_drop']['difference'])}" in ch7
    assert f"from {c['reward_first']['symmetric']['mean']:.2f} to {c['reward_last']['symmetric']['mean']:.2f}" in ch7
    assert round(c["entropy_drop"]["symmetric"]["mean"] * 3) == 2  # "about two thirds"
    assert 0.005 < c["eligible"]["symmetric"]["mean"] < 0.015 and 0.0025 < c["clip_high"]["symmetric"]["mean"] < 0.0035
    ln = claims.load("length_norm")["summary"]
    assert f"by {claims.ci(ln['len_fail_change']['sequence'], 2)} tokens under per-sequence" in ch7
    assert f"by {claims.ci(ln['len_fail_change']['constant'], 2)} under the constant" in ch7
    assert f"{claims.ci(ln['len_fail_change']['difference'], 2)} tokens, and in the final failing length" in ch7
    assert f"final failing length, {claims.ci(ln['len_fail_last']['difference'], 2)}, both" in ch7
    assert f"about {ln['constant_denominator']['mean']:.1f} tokens" in ch7


def _recorded(chapter: str, name: str):
    """The literal assigned to ``name`` in a chapter's source (a recorded measurement)."""
    import ast

    tree = ast.parse((BOOK / f"{chapter}.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == name)
    return eval(compile(ast.Expression(node.value), chapter, "eval"), {"dict": dict})


def _stored(name: str) -> dict:
    """The stored measurement ``experiments/results/<name>.json``."""
    import json

    return json.loads((Path(__file__).resolve().parents[1] / "experiments" / "results" / f"{name}.json").read_text())


def _repair_episodes() -> dict:
    return _stored("repair_episodes")


def test_ch8_repair_agent_cycle_comes_from_the_recorded_run():
    """Chapter 8's measured slot: every figure is the recorded run's, rounded; its sentences state what
    equation 6 computes from them."""
    from rlvr_lab import cycle_time

    summary = _repair_episodes()["summary"]["cycle"]
    t = text("08_environments_and_rollouts")
    for name, m in _recorded("08_environments_and_rollouts", "slot").items():
        run = summary[name]
        assert m["H"] == round(run["H"][0], 2)
        for key in ("t_model", "t_tool", "t_assess", "t_reset", "measured", "residual"):
            assert m[key] == round(run[key + "_s"][0], 4), (name, key)
        assert (m["ratio"], m["ratio_ci"]) == (round(run["ratio"][0], 3), round(run["ratio"][1], 3))
        eq6 = m["H"] * (m["t_model"] + m["t_tool"]) + m["t_assess"] + m["t_reset"]
        # equation 6 holds on a serial slot: within 2 % per seed (the stored mean of each seed's eq 6); fed
        # the means over seeds it may drift a little further, as H and the model time vary together by seed
        assert abs(run["eq6_s"][0] - run["measured_s"][0]) / run["measured_s"][0] < 0.02
        assert abs(eq6 - m["measured"]) / m["measured"] < 0.03
        assert f"{m['H'] * m['t_model'] / eq6:.0%}".rstrip("%") + " %" in t
        assert cycle_time.pool_capacity_per_hour(1, eq6) > 0
    warm = _recorded("08_environments_and_rollouts", "slot")["warm start, H <= 4"]
    eq6 = warm["H"] * (warm["t_model"] + warm["t_tool"]) + warm["t_assess"] + warm["t_reset"]
    assert f"gives {eq6:.3f} s per cycle" in t and f"the slot took {warm['measured']:.3f} s" in t
    assert f"{warm['ratio']:.3f} ± {warm['ratio_ci']:.3f} times the equation" in t
    assert f"The {warm['residual'] * 1000:.1f} ms the equation does not name" in t


def test_ch3_repair_agent_forks_come_from_the_recorded_run():
    """Chapter 3's forks: counts, errors and the resolved edits are the recorded run's, and the sentences
    about the bounds say what the library computes."""
    import math

    from rlvr_lab import credit

    data = _repair_episodes()
    summary = data["summary"]["forks"]
    m = _recorded("03_credit_across_turns", "forks")
    everyone = [f for seed in data["per_seed"].values() for f in seed["forks"]]
    assert m["count"] == len(everyone) == summary["totals"]["forks"]
    assert m["strictly_between"] == sum(0 < f["a"] < 1 for f in everyone)
    assert m["plug_in_se"] == round(summary["plug_in_se"][0], 3)
    assert (m["rms_a_minus_b"], m["rms_a_minus_b_ci"]) == tuple(round(x, 3) for x in summary["rms_a_minus_b"])
    assert m["edits"] == summary["totals"]["edit_pairs"]
    assert (m["edit_credit"], m["edit_credit_ci"]) == tuple(round(x, 3) for x in summary["edit_credit"])
    resolved = []
    for seed in data["per_seed"].values():
        by_task: dict = {}
        for f in seed["forks"]:
            by_task.setdefault(f["task"], {})[f["k"]] = f
        for task, pair in by_task.items():
            if 1 in pair and 2 in pair and pair[1]["tool_k"] == "RUN" and pair[2]["tool_k"] in ("LINE", "DEF"):
                if credit.is_resolved(pair[2]["a"] - pair[1]["a"], 20):
                    resolved.append((task, round(pair[1]["a"], 2), round(pair[2]["a"], 2), pair[2]["base_verdict"]))
    assert sorted(_recorded("03_credit_across_turns", "resolved")) == sorted(resolved)
    assert len(resolved) == summary["totals"]["edits_resolved"]
    t = text("03_credit_across_turns")
    assert f"{m['count'] - m['strictly_between']} of the {m['count']} forks" in t
    assert f"$1/(2\\sqrt M) = {credit.standard_error_bound(20):.3f}$" in t
    assert f"allows {credit.difference_standard_error_bound(20):.3f}" in t
    assert (
        f"Only {len(resolved)} differences clear twice their bound ({2 * math.sqrt(2) / (2 * math.sqrt(20)):.3f})" in t
    )
    assert m["plug_in_se"] < credit.standard_error_bound(20)
    assert m["rms_a_minus_b"] + m["rms_a_minus_b_ci"] < credit.difference_standard_error_bound(20)


def test_ch5_and_ch9_follow_the_recorded_repair_group():
    """The real group of chapters 5 and 9: every figure their prose quotes is the stored run's, recomputed
    here from its records (advantages, gap growth, the observation's length) or read from its update."""
    import numpy as np

    from rlvr_lab import claims
    from rlvr_lab.grpo import group_advantages
    from rlvr_lab.records import RolloutRecord, close_group, flatten

    real = claims.load_measurement("repair_group")
    group = [RolloutRecord.from_dict(r) for r in real["records"]]
    passed = np.array([r.verdict == "pass" for r in group])
    assert len(group) == real["group_size"] == 8 and passed.sum() == 5 and len(real["draws"]) == 1
    assert {r.verdict for r in group} == {"pass", "fail"} and close_group(group, 8, 0, 1) == (True, "")
    adv = group_advantages([r.reward for r in group])
    assert np.allclose(adv, real["advantages"])
    t9, t5 = text("09_case_study"), text("05_multi_turn")
    assert f"give ${adv[passed][0]:+.3f}$ to each pass and ${adv[~passed][0]:+.3f}$ to each failure" in t9
    before, after = np.array(real["action_logprob_before"]), np.array(real["action_logprob_after"])
    growth = (after[passed].mean() - after[~passed]) - (before[passed].mean() - before[~passed])
    assert f"gained {growth.min():.1f} to {growth.max():.1f} nats on each failure" in t9
    assert np.ptp(before[passed]) < 1e-9 and np.ptp(after[passed]) < 1e-9  # the five passes are one repair
    assert f"from ${before[passed][0]:.2f}$ to ${after[passed][0]:.2f}$ nats" in t9
    assert (after < before).all()  # every member became less likely, as the prose says
    assert f"{real['update']['kl_mean']:.1f} nats per token" in t9
    assert round(real["update"]["clip_low_fraction"], 1) == 0.1 and "clips a tenth of the tokens" in t9
    episode = group[1]
    assert episode.verdict == "fail" and "LINE RUN" in real["actions"][1]
    flatten(episode)  # the prefixes are exact, as chapter 5 says
    assert episode.invocations[0].tool == "RUN"
    assert f"The {len(episode.invocations[0].observation_ids)} tokens of test output after `RUN`" in t5


def test_ch9_quotes_the_recorded_repair_learning_probe():
    """Chapter 9's paragraph on twenty steps: its changes and intervals are the stored probe's, and the
    largest first-step KL it names is the preset arm's."""
    import json

    path = Path(__file__).resolve().parents[1] / "experiments" / "results" / "repair_learning.json"
    data = json.loads(path.read_text())
    t = text("09_case_study")
    assert data["config"]["seeds"] == [0, 1, 2] and f"{data['config']['steps']} of the trainer's own steps" in t
    preset, warmup = data["summary"]["preset"], data["summary"]["warmup"]
    trained, unseen = preset["trained"], preset["unseen"]
    assert f"changes by {trained['mean']:+.3f} on average" in t
    assert f"interval of {trained['lo']:.3f} to {trained['hi']:+.3f} over the seeds" in t
    assert f"lose {-unseen['mean']:.3f} ({unseen['lo']:.3f} to {unseen['hi']:.3f})" in t
    assert f"gains nothing either ({warmup['trained']['mean']:+.3f} on the trained tasks)" in t
    assert abs(warmup["trained"]["mean"]) < 0.01 and trained["lo"] < 0 < trained["hi"] and unseen["hi"] < 0
    passes = data["summary"]["passes"]
    assert f"the trained tasks gain {passes['trained']['mean']:+.3f}" in t
    assert f"({passes['trained']['lo']:+.3f} to {passes['trained']['hi']:+.3f})" in t
    assert f"the renamed copies {passes['unseen']['mean']:+.3f} ({passes['unseen']['lo']:+.3f} to" in t
    assert f"{passes['unseen']['hi']:+.3f})" in t and passes["unseen"]["lo"] > 0
    first = max(r["arms"]["preset"]["steps"][0]["kl_mean"] for r in data["runs"])
    assert f"a KL of up to {first:.2f} nats per token" in t
    assert max(r["arms"]["warmup"]["steps"][0]["kl_mean"] for r in data["runs"]) < 0.01


def test_ch9_quotes_the_recorded_trainer_heldout_figure():
    """Chapter 9's paragraph on the trainer's held-out tasks: the seeds, the warm start's range, each arm's
    mean change and interval, and the longest run are the stored experiments/repair_heldout.py result's."""
    import json

    path = Path(__file__).resolve().parents[1] / "experiments" / "results" / "repair_heldout.json"
    data = json.loads(path.read_text())
    t = " ".join(text("09_case_study").split())
    assert data["config"]["seeds"] == [0, 1, 2] and f"--steps {data['config']['steps']}`" in t
    befores = [r["arms"]["eq2"]["before"]["repair_rate"] for r in data["runs"]]
    assert f"repairs {round(min(befores) * 100)} to {round(max(befores) * 100)} % of the held-out tasks" in t
    eq2, passes = data["summary"]["eq2"]["gain"], data["summary"]["passes"]["gain"]
    assert f"the change is {eq2['mean']:+.3f}" in t and f"interval {eq2['lo']:+.3f} to {eq2['hi']:+.3f})" in t
    assert f"{passes['mean']:+.3f} ({passes['lo']:+.3f} to {passes['hi']:+.3f}) with the passes only" in t
    walls = [a["wall_s"] for r in data["runs"] for a in r["arms"].values()]
    assert max(walls) < 8 * 60 and "each in under eight minutes" in t
    assert all(a["problems_after"]["repair_rate"] == 0 for r in data["runs"] for a in r["arms"].values())
    assert eq2["hi"] < 0.10 and passes["mean"] < 0.10  # the issue's +10 points: the text says it is not reached


def test_ch9_quotes_the_recorded_demo_split_probe():
    """Chapter 9's paragraph on what GRPO learns beyond its demonstrations: the passes arm's three changes and
    intervals are the stored experiments/repair_demo_split.py result's, and the undemonstrated gain is resolved."""
    import json

    path = Path(__file__).resolve().parents[1] / "experiments" / "results" / "repair_demo_split.json"
    data = json.loads(path.read_text())
    t = " ".join(text("09_case_study").split())
    assert data["config"]["seeds"] == [0, 1, 2] and "seeds 0, 1 and 2, reinforcing the passes only" in t
    p = data["summary"]["passes"]
    u, d, h = p["undemonstrated"], p["demonstrated"], p["heldout"]
    assert f"variants gain {u['mean']:+.3f} (95 % interval {u['lo']:+.3f} to {u['hi']:+.3f})" in t and u["lo"] > 0
    assert f"the demonstrated ones {d['mean']:+.3f} ({d['lo']:+.3f} to {d['hi']:+.3f})" in t
    assert f"the held-out variant {h['mean']:+.3f} ({h['lo']:+.3f} to {h['hi']:+.3f})" in t and h["lo"] < 0


def test_ch9_quotes_the_recorded_many_names_probe():
    """Chapter 9's paragraph on generic entry names: the seeds, the warm start's held-out range and the two
    changes with their intervals are the stored experiments/repair_many_names.py result's, and the held-out
    interval includes zero (the text does not claim the issue's +10 points)."""
    data = _stored("repair_many_names")
    t = " ".join(text("09_case_study").split())
    cfg = data["config"]
    assert cfg["seeds"] == [0, 1, 2] and "Over seeds 0, 1 and 2 the warm start already repairs" in t
    assert cfg["arms"] == ["passes"] and cfg["steps"] == 40 and cfg["max_new_tokens"] == 32
    assert "reinforces the passes only, takes forty steps and allows 32 tokens per action" in t
    befores = [r["before"]["heldout"]["repair_rate"] for r in data["runs"]]
    assert f"repairs {round(min(befores) * 100)} to {round(max(befores) * 100)} % of the held-out names" in t
    p = data["summary"]["passes"]
    tr, h = p["trained"], p["heldout"]
    assert f"trained tasks {tr['mean']:+.3f} (95 % interval {tr['lo']:+.3f} to {tr['hi']:+.3f})" in t
    assert f"held-out names {h['mean']:+.3f} ({h['lo']:+.3f} to {h['hi']:+.3f})" in t and h["lo"] < 0
    assert p["problems"]["mean"] == 0 and "The held-out problems stay at zero." in t


def test_ch9_quotes_the_recorded_dynamic_sampling_probe():
    """Chapter 9's paragraph on dynamic sampling: the groups sampled and with contrast, the GRPO seconds, the
    two changes and the paired difference against repair_many_names' passes arm (recomputed here from both
    stored results) are the stored figures; the text claims neither the +10 points nor a resolved cause."""
    import statistics

    from test_recorded_results import _interval

    data = _stored("repair_dynamic")
    plain = {r["seed"]: r for r in _stored("repair_many_names")["runs"]}
    t = " ".join(text("09_case_study").split())
    cfg = data["config"]
    assert cfg["seeds"] == [0, 1, 2] and cfg["steps"] == 40 and cfg["rounds"] == 3
    assert "up to three more rounds of fresh training tasks until sixteen groups have contrast" in t
    groups = [statistics.mean(s["groups"] for s in r["steps"]) for r in data["runs"]]
    contrast = [statistics.mean(s["contrast"] for s in r["steps"]) for r in data["runs"]]
    grpo = [r["grpo_s"] for r in data["runs"]]
    assert f"sampled {round(min(groups))} to {round(max(groups))} groups to find" in t
    assert f"find {round(min(contrast))} to {round(max(contrast))} with contrast" in t
    assert f"took {round(min(grpo))} to {round(max(grpo))} s of GRPO per seed" in t and max(grpo) <= 600
    h, tr = data["summary"]["heldout"], data["summary"]["trained"]
    assert f"held-out names gain {h['mean']:+.3f} (95 % interval {h['lo']:+.3f} to {h['hi']:+.3f})" in t
    assert f"the trained tasks {tr['mean']:+.3f} ({tr['lo']:+.3f} to {tr['hi']:+.3f})" in t
    assert h["lo"] > 0 and h["hi"] > 0.10 and h["mean"] < 0.10 and "Eight points is short of the ten" in t

    def change(run, after, k):
        return after[k]["repair_rate"] - run["before"][k]["repair_rate"]

    diffs = [
        change(r, r["after"], "heldout") - change(r, plain[r["seed"]]["arms"]["passes"]["after"], "heldout")
        for r in data["runs"]
    ]
    m, lo, hi = _interval(diffs)
    assert f"dynamic sampling adds {m:+.3f} ({lo:+.3f} to {hi:+.3f})" in t and lo < 0
    assert f"lifted the stalled seed 2 by {diffs[2]:+.3f}" in t
    assert data["summary"]["problems"]["mean"] == 0 and "the held-out problems still stay at zero" in t
