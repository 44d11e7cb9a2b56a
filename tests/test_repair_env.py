"""The multi-turn repair environment: its task family, tools, context rule and episodes (issue 24's ground).

Every verdict here comes from the real sandboxed verifier: the fixed module of every task passes its hidden
tests and the buggy one fails them, and an episode's reward is the hidden tests' verdict.
"""

import pytest

from rlvr_lab.envs import context, repair, repair_tasks, tools
from rlvr_lab.envs.repair_tasks import BUG_KINDS, make_repair_suite
from rlvr_lab.verifier import Verifier
from rlvr_lab.verifier.schema import Candidate
from verifier_helpers import needs_local_sandbox


@pytest.fixture(scope="module")
def verifier():
    with Verifier(backend="auto", retries=1, seed=5) as v:
        yield v


def test_the_suite_covers_every_bug_kind_and_is_a_pure_function_of_its_seed():
    suite = make_repair_suite(seed=3)
    assert {t.bug_kind for t in suite} == set(BUG_KINDS)
    assert len({t.task_id for t in suite}) == len(suite)
    assert [t.fixture for t in suite] == [t.fixture for t in make_repair_suite(seed=3)]
    for t in suite:
        assert t.buggy != t.fixed and t.fixture.files == {"solution.py": t.buggy}
        assert "def test_case_" in t.fixture.public_tests["test_public.py"]
        assert t.fixture.hidden_tests["test_hidden.py"].count("def test_case_") >= 3


def test_splits_go_by_problem_and_by_bug_kind():
    suite = make_repair_suite(seed=0, heldout_fraction=0.3, heldout_kinds=("missing_case",))
    by_problem = {}
    for t in suite:
        by_problem.setdefault(t.problem_id, set()).add(t.split)
    assert all(len(splits) == 1 for splits in by_problem.values())  # every variant on one side
    assert {t.split for t in suite if t.bug_kind == "missing_case"} == {"heldout"}
    assert {"train", "heldout"} <= {t.split for t in suite if t.bug_kind != "missing_case"}
    with pytest.raises(ValueError, match="heldout_kinds must be among"):
        make_repair_suite(heldout_kinds=("typo",))
    with pytest.raises(ValueError, match="has no off_by_one bug"):
        repair_tasks.make_repair_task(repair_tasks.TEMPLATES[2], "off_by_one", 0, "train")


@needs_local_sandbox
@pytest.mark.slow
def test_every_fixed_module_passes_and_every_buggy_one_fails_in_the_sandbox(verifier):
    suite = make_repair_suite(seed=0, variants=1)
    for t in suite:
        fixed = verifier.verify(Candidate({"solution.py": t.fixed}), t.fixture)
        buggy = verifier.verify(Candidate({"solution.py": t.buggy}), t.fixture)
        public = verifier.verify(Candidate({"solution.py": t.buggy}), repair.public_fixture(t))
        assert (fixed.outcome, buggy.outcome, public.outcome) == ("pass", "fail", "fail"), t.task_id


def test_actions_parse_or_say_why_not():
    assert tools.parse_action("  SUBMIT  \n") == tools.Action("SUBMIT")
    assert tools.parse_action("DEF f\ndef f(x):\n    return x\n").body == "def f(x):\n    return x\n"
    for text, why in [
        ("", "empty action"),
        ("RUN now", "RUN takes nothing"),
        ("LINE zero\nx", "line number >= 1"),
        ("LINE 0\nx", "line number >= 1"),
        ("LINE 1 2\nx", "one argument"),
        ("DEF 1x\ndef f(): pass", "function name"),
        ("DEF f", "needs the new definition"),
    ]:
        with pytest.raises(tools.ActionError, match=why):
            tools.parse_action(text)


def test_edits_apply_exactly_and_refuse_what_does_not_exist():
    src = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    assert tools.replace_line(src, 2, "    return 9\n") == src.replace("return 1", "return 9")
    assert tools.replace_line(src, 2, "") == "def a():\n\n\ndef b():\n    return 2\n"
    assert tools.replace_function(src, "b", "def b():\n    return 3") == src.replace("return 2", "return 3")
    with pytest.raises(tools.ActionError, match="line 9 does not exist"):
        tools.replace_line(src, 9, "x\n")
    with pytest.raises(tools.ActionError, match="no function c"):
        tools.replace_function(src, "c", "def c():\n    pass\n")
    with pytest.raises(tools.ActionError, match="exactly one definition of b"):
        tools.replace_function(src, "b", "def a():\n    pass\n")
    with pytest.raises(tools.ActionError, match="does not parse"):
        tools.replace_function("def a(:\n", "a", "def a():\n    pass\n")


def test_the_context_rule_keeps_the_header_and_the_newest_turns_within_the_budget():
    header = "Repair f.\n1 | def f(x):\n"
    turns = [context.Turn(f"RUN {i}", f"observation {i} " + "z" * 200) for i in range(6)]
    for budget in (len(header), 60, 300, 600, 1000, 10_000):
        text = context.build_context(header, turns, budget)
        assert text.startswith(header) and len(text) <= budget, budget
        shown = [i for i in range(6) if f"observation {i} " in text]
        assert shown == list(range(6 - len(shown), 6))  # the newest, whole
    assert context.DROPPED in context.build_context(header, turns, 600)  # older turns keep their action
    assert context.build_context(header, turns, 10_000).count(context.DROPPED) == 0
    with pytest.raises(ValueError, match="header alone"):
        context.build_context(header, turns, 5)
    words = context.build_context(header, turns, 40, count=lambda s: len(s.split()))  # any token count
    assert len(words.split()) <= 40


@needs_local_sandbox
def test_an_episode_runs_the_public_tests_edits_and_is_graded_by_the_hidden_ones(verifier):
    task = next(t for t in make_repair_suite(variants=1) if t.task_id == "clamp/wrong_branch/v0")
    env = repair.RepairEnv(task, verifier, horizon=8, observation_chars=300)
    first = env.reset()
    assert "1 | def clamp(x, lo, hi):" in first and task.fixed not in first
    run = env.step("RUN")
    assert run.ok and run.observation.startswith("public tests: failed") and len(run.observation) <= 300
    assert "test_hidden" not in run.observation  # the hidden tests never reach the agent
    bad = env.step("LINE 40\n    return lo")
    assert not bad.ok and "does not exist" in bad.observation and not bad.done
    line = next(i for i, s in enumerate(task.buggy.splitlines(), 1) if s.strip() == "return hi")
    assert env.step(f"LINE {line}\n        return lo").ok
    assert env.step("RUN").observation == "public tests: all passed"
    done = env.step("SUBMIT")
    assert done.done and env.episode.verdict.outcome == "pass" and env.episode.reward == 1.0
    assert [s.tool for s in env.episode.steps] == ["RUN", "LINE", "LINE", "RUN", "SUBMIT"]
    assert all(s.seconds >= 0 for s in env.episode.steps)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step("RUN")


@needs_local_sandbox
def test_running_a_module_an_edit_broke_shows_why_it_does_not_compile(verifier):
    """An edit may leave a module that does not parse: the verifier fails it before any trial, and RUN
    shows that reason (a policy's edit crashed the environment here before)."""
    task = next(t for t in make_repair_suite(variants=1) if t.bug_kind == "off_by_one")
    env = repair.RepairEnv(task, verifier, horizon=4)
    env.reset()
    assert env.step("LINE 1\ndef broken(:").ok
    run = env.step("RUN")
    assert run.ok and run.observation.startswith("public tests: failed\ndoes not compile") and not run.done
    assert env.step("SUBMIT").done and env.episode.verdict.outcome == "fail"


@needs_local_sandbox
def test_an_episode_that_runs_out_of_turns_is_graded_as_it_stands(verifier):
    task = next(t for t in make_repair_suite(variants=1) if t.bug_kind == "off_by_one")
    env = repair.RepairEnv(task, verifier, horizon=2)
    env.reset()
    assert not env.step("SHOW").done
    last = env.step("nonsense")
    assert last.done and not last.ok and last.tool == ""
    assert env.episode.verdict.outcome == "fail" and env.episode.reward == 0.0
    with pytest.raises(ValueError, match="horizon must be in"):
        repair.RepairEnv(task, verifier, horizon=9)


@pytest.mark.parametrize("horizon", [1, 4, 8])
def test_the_shaped_reward_keeps_every_pass_above_every_failure_or_is_refused(horizon):
    for cost in (0.0, 0.01, 0.05, 0.1, 0.124, 0.2, 0.5):
        if cost * horizon >= 1:
            with pytest.raises(ValueError, match="no higher than a quick failure"):
                repair.shaped_reward(1.0, horizon, horizon, cost)
            continue
        slowest_pass = min(repair.shaped_reward(1.0, t, horizon, cost) for t in range(1, horizon + 1))
        quickest_fail = max(repair.shaped_reward(0.0, t, horizon, cost) for t in range(1, horizon + 1))
        assert slowest_pass > quickest_fail, (cost, horizon)
        assert repair.shaped_reward(None, 1, horizon, cost) is None  # unresolved stays unresolved


@pytest.fixture(scope="module")
def tiny_policy():
    """The course's tiny model, untrained, with a tokenizer that knows the repair modules and the tools."""
    from rlvr_lab.policy import SamplingConfig, build_model, train_tokenizer
    from rlvr_lab.train.rollout import PolicyHandle, tokenizer_digest

    suite = make_repair_suite(variants=1)
    corpus = [t.buggy + t.fixed for t in suite] + ["RUN\nSHOW\nLINE 3\nDEF f\nSUBMIT\npublic tests: failed\n"] * 5
    tok = train_tokenizer(corpus, vocab_size=400)
    model = build_model(tok, "tiny", seed=1).eval()
    return PolicyHandle(model, tok, 0, SamplingConfig(max_new_tokens=10), tokenizer_digest(tok))


@needs_local_sandbox
def test_episodes_become_records_whose_every_invocation_replays(tiny_policy, verifier):
    """Two tasks x G 2 episodes with the policy in the loop: one record per episode, one invocation per turn,
    each holding the exact prefix it saw (the previous prefix, its tokens and the observation's), the tool
    and its seconds; the observations are context in the loss, and every invocation replays its record."""
    import torch

    from rlvr_lab.records import flatten
    from rlvr_lab.train.episodes import collect_episodes, episode_seconds, observation_tokens
    from rlvr_lab.train.rollout import replay_max_deviation

    tasks = make_repair_suite(variants=1)[:2]
    gen = torch.Generator().manual_seed(0)
    records = collect_episodes(tiny_policy, tasks, 2, verifier, step=0, generator=gen, horizon=3)
    assert [r.group_id for r in records] == ["e0-g0", "e0-g0", "e0-g1", "e0-g1"]
    tok = tiny_policy.tokenizer
    for r in records:
        calls = r.invocations
        assert 1 <= len(calls) <= 3 and r.stop_reason in ("submit", "horizon", "context")
        assert r.verdict in ("pass", "fail", "pending", "unknown")
        assert r.reward == {"pass": 1.0, "fail": 0.0}.get(r.verdict)
        for a, b in zip(calls, calls[1:]):
            assert b.prefix_ids == a.prefix_ids + a.completion_ids + a.observation_ids
            assert a.observation_ids == observation_tokens(tok, a.observation)
        assert all(c.tool in ("", "RUN", "SHOW", "LINE", "DEF", "SUBMIT") and c.tool_s >= 0 for c in calls)
        ids, mask, _ = flatten(r)
        scored = sum(len(c.completion_ids) for c in calls)
        assert sum(mask) == scored == r.completion_tokens  # observation tokens are context only
    assert replay_max_deviation(tiny_policy.model, records, tok.pad_token_id) < 1e-4
    assert set(episode_seconds(records)) <= {"invalid", "RUN", "SHOW", "LINE", "DEF", "SUBMIT"}
    with pytest.raises(ValueError, match="leaving no room"):
        collect_episodes(tiny_policy, tasks, 1, verifier, step=0, generator=gen, context_tokens=20)


@needs_local_sandbox
def test_one_episode_step_updates_the_learner_that_episode_learner_builds(tiny_policy, verifier):
    """episode_learner: a frozen copy of the model as the reference, the episode's token budget as eq 5's
    constant (unless one is set); episode_step: G episodes per task, every group closed by the complete-group
    rule, one update on the admitted ones (the version moves by the passes), and the step's row."""
    import copy

    from rlvr_lab.train.config import TrainConfig
    from rlvr_lab.train.repair_loop import episode_learner, episode_step

    config = TrainConfig.preset("ci", env="repair", group_size=2, horizon=3, max_new_tokens=10)
    model = copy.deepcopy(tiny_policy.model)
    learner, run_config = episode_learner(model, tiny_policy.tokenizer, config)
    assert learner.ref_model is not model and not any(p.requires_grad for p in learner.ref_model.parameters())
    assert run_config.norm_constant == 10 * 3
    assert (
        episode_learner(model, tiny_policy.tokenizer, config.with_overrides(norm_constant=7.0))[1].norm_constant == 7.0
    )
    tasks = make_repair_suite(variants=1)[:2]
    records, row = episode_step(learner, tasks, run_config, tiny_policy.sampling, verifier, step=0)
    assert len(records) == 4 and all(r.admitted is not None for r in records)
    assert {r.group_id for r in records} == {"e0-g0", "e0-g1"}
    admitted = [r for r in records if r.admitted]
    assert learner.version == (config.passes if admitted else 0)
    assert row["step"] == 0 and row["episodes"] == 4 and row["step_s"] > 0
    if admitted:
        assert row["replay_max_dev"] < 1e-4


@needs_local_sandbox
@pytest.mark.slow
def test_every_scripted_repair_repairs_through_the_environment(verifier, tiny_policy):
    """The warm start's scripts (RUN, one LINE or DEF edit, SUBMIT) pass every task of every bug kind, played
    through the environment, and their loss mask covers the actions only."""
    from rlvr_lab.train.repair_loop import demonstration_episode, expert_actions

    tok = tiny_policy.tokenizer
    for task in make_repair_suite(variants=1):
        actions = expert_actions(task)
        assert actions[0] == "RUN" and actions[-1] == "SUBMIT" and actions[1].split()[0] in ("LINE", "DEF")
        ids, mask = demonstration_episode(task, tok, verifier, horizon=4)
        assert len(ids) == len(mask) and 0 < sum(mask) < len(ids), task.task_id
        assert sum(mask) == sum(len(tok(a, add_special_tokens=False)["input_ids"]) + 1 for a in actions)


@needs_local_sandbox
def test_rlvr_lab_train_env_repair_runs_end_to_end_on_the_ci_preset(tmp_path, capsys):
    """``rlvr-lab train --env repair``: warm start, GRPO over episodes, held-out evaluation, the report's
    lines; records hold whole episodes that replayed at each update (the update checks it)."""
    import json

    from rlvr_lab.cli import main
    from rlvr_lab.records import read_records

    from rlvr_lab.train.repair_loop import HELDOUT_VARIANT, TRAINER_UPDATE

    out = tmp_path / "run"
    argv = ["train", "--preset", "ci", "--env", "repair", "--out", str(out), "--steps", "2"]
    assert main(argv + ["--lr-warmup-steps", "2"]) == 0
    text = capsys.readouterr().out
    assert "held-out repair rate:" in text and "turns per episode:" in text and "tool calls:" in text
    assert "held-out problems:" in text
    summary = json.load(open(out / "summary.json"))
    assert summary["env"] == "repair" and 0.0 <= summary["after"]["repair_rate"] <= 1.0
    assert summary["after"]["repair_lo"] <= summary["after"]["repair_rate"] <= summary["after"]["repair_hi"]
    assert summary["update"] == {"negative_weight": TRAINER_UPDATE.negative_weight, "lr_warmup_steps": 2}
    # held out by task: variant HELDOUT_VARIANT of every training problem, evaluated and never trained on
    n_eval = summary["config"]["eval_samples"]
    assert summary["before"]["episodes"] == summary["heldout_tasks"] * n_eval > 0
    assert summary["problems_before"]["episodes"] == summary["heldout_problem_tasks"] * n_eval > 0
    records = read_records(str(out / "records.jsonl"))
    assert len(records) == 2 * summary["config"]["tasks_per_step"] * summary["config"]["group_size"]
    assert all(1 <= len(r.invocations) <= summary["config"]["horizon"] for r in records)
    assert not any(r.task_id.endswith(f"/v{HELDOUT_VARIANT}") for r in records)
    rows = [json.loads(line) for line in open(out / "metrics.jsonl")]
    assert [r["step"] for r in rows] == [0, 1]
    with pytest.raises(ValueError, match="env must be 'functions' with engine='trl'"):
        from rlvr_lab.train import TrainConfig

        TrainConfig(env="repair", engine="trl")


def test_the_episode_update_scales_only_negative_advantages_and_warms_the_rate_up():
    """EpisodeUpdate: a factor on the failures' advantages in [0, 1] and a linear warmup; the CLI refuses a
    bad value, or either flag without --env repair, naming the flag (exit 2, nothing trained)."""
    import torch

    from rlvr_lab.cli import main
    from rlvr_lab.train.repair_loop import EpisodeUpdate, weigh_negatives

    adv = torch.tensor([1.29, -0.77, -0.77, 0.0])
    assert torch.equal(weigh_negatives(adv, 1.0), adv)
    assert weigh_negatives(adv, 0.0).tolist() == pytest.approx([1.29, 0.0, 0.0, 0.0])
    assert weigh_negatives(adv, 0.5).tolist() == pytest.approx([1.29, -0.385, -0.385, 0.0])
    assert [EpisodeUpdate().lr_scale(s) for s in (0, 5)] == [1.0, 1.0]
    assert [EpisodeUpdate(lr_warmup_steps=8).lr_scale(s) for s in (0, 3, 7, 30)] == [0.125, 0.5, 1.0, 1.0]
    for bad in (dict(negative_weight=-0.1), dict(negative_weight=1.5), dict(lr_warmup_steps=-1)):
        with pytest.raises(ValueError, match=next(iter(bad))):
            EpisodeUpdate(**bad)
    assert main(["train", "--preset", "ci", "--env", "repair", "--negative-weight", "2"]) == 2
    assert main(["train", "--preset", "ci", "--lr-warmup-steps", "3"]) == 2


@needs_local_sandbox
def test_a_timed_episode_clocks_every_stage_of_equation_6(tiny_policy, verifier):
    """One slot's episode: a policy call and a tool per turn, the assessment and the reset apart; the stages
    add up to equation 6 and to the episode's wall time less a residual of bookkeeping; each turn's context
    extends the previous one, and the states are copies taken after each turn."""
    import torch

    from rlvr_lab.cycle_time import cycle_time
    from rlvr_lab.train.episode_cycle import cycle_rows, timed_episode

    tok, cfg = tiny_policy.tokenizer, tiny_policy.sampling
    tasks = make_repair_suite(variants=1)[:2]
    gen = torch.Generator().manual_seed(0)
    timings = [timed_episode(tiny_policy.model, tok, cfg, t, verifier, gen, horizon=3) for t in tasks]
    for t in timings:
        assert 1 <= t.turns <= 3 and len(t.model_s) == len(t.tool_s) == len(t.tools) == len(t.prefixes) == t.turns
        assert min(t.model_s) > 0 and min(t.tool_s) >= 0 and t.assess_s > 0 and t.reset_s > 0
        assert t.verdict in ("pass", "fail")
        stages = sum(t.model_s) + sum(t.tool_s) + t.assess_s + t.reset_s
        assert t.eq6_s() == pytest.approx(stages, rel=1e-9)
        assert t.eq6_s() == pytest.approx(
            cycle_time(t.turns, sum(t.model_s) / t.turns, sum(t.tool_s) / t.turns, t.assess_s, t.reset_s)
        )
        assert stages <= t.wall_s < stages + 0.5  # the residual is bookkeeping, not a stage left out
        for a, b in zip(t.prefixes, t.prefixes[1:]):
            assert b[: len(a)] == a and len(b) > len(a)
        assert len(t.states) in (t.turns - 1, t.turns) and all(s.verdict is None for s in t.states)
    rows = cycle_rows(timings)
    assert rows["episodes"] == 2 and rows["eq6_s"] == pytest.approx(
        rows["H"] * (rows["t_model_s"] + rows["t_tool_s"]) + rows["t_assess_s"] + rows["t_reset_s"]
    )
    with pytest.raises(ValueError, match="at least one episode"):
        cycle_rows([])


@needs_local_sandbox
def test_forks_restore_the_episode_and_estimate_its_value(tiny_policy, verifier):
    """A fork restores the module as edited so far: from a state whose module was already repaired every
    continuation of a policy that writes no valid edit passes, from the buggy start every one fails; a
    state that has ended, or has no turn left, or no continuation asked for, is refused."""
    import copy

    import torch

    from rlvr_lab.train.episode_forks import fork_rewards
    from rlvr_lab.train.episodes import ACTION_MARK
    from rlvr_lab.train.repair_loop import expert_actions
    from rlvr_lab.train.rollout import prompt_ids

    tok, cfg = tiny_policy.tokenizer, tiny_policy.sampling
    task = next(t for t in make_repair_suite(variants=1) if t.bug_kind == "off_by_one")
    env = repair.RepairEnv(task, verifier, horizon=3)
    prefix = prompt_ids(tok, env.reset() + ACTION_MARK.lstrip("\n"))
    start = copy.deepcopy(env.episode)
    env.step(expert_actions(task)[1])  # the scripted edit repairs the module
    repaired = copy.deepcopy(env.episode)
    gen = torch.Generator().manual_seed(0)
    run = lambda state, m=3, horizon=3: fork_rewards(  # noqa: E731
        tiny_policy.model, tok, cfg, task, verifier, state, prefix, m, gen, horizon
    )
    assert run(repaired) == [1.0, 1.0, 1.0]
    assert run(start) == [0.0, 0.0, 0.0]
    assert repaired.verdict is None and len(repaired.turns) == 1  # the forks played on copies
    with pytest.raises(ValueError, match="continuations must be >= 1"):
        run(start, m=0)
    with pytest.raises(ValueError, match="none left of horizon 1"):
        run(repaired, horizon=1)
    env.step("SUBMIT")
    with pytest.raises(ValueError, match="already ended"):
        run(env.episode)
