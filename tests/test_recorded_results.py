"""The recorded claim experiments (issue 14): stored results, the tables shown, and the book's numbers.

CI cannot afford the 3-seed training runs, so the course shows stored results. These tests check that what
is shown is what was recorded: both copies of each result are the same bytes, every summary interval is
recomputed from the per-seed values, ``experiments/RESULTS.md`` holds exactly the rendered tables and the
command that made them, and the figures draw the recorded numbers.
"""

from __future__ import annotations

import json
import math
import os
import statistics

import numpy as np
import pytest

from rlvr_lab import claims, rewards
from rlvr_lab.figures import experiments

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T95 = {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}  # two-sided 95 % t quantiles by degrees of freedom

# summary key -> how to read the per-seed value of one arm from a run row
PER_SEED = {
    "exploit_amplification": (
        ("naive", "isolated"),
        [
            "exploit_first",
            "exploit_last",
            "exploit_hard_first",
            "exploit_hard_last",
            "true_first",
            "true_last",
            "true_hard_first",
            "true_hard_last",
            "lone_share",
            "lone_share_step0",
            "lone_share_first5",
            "several_share",
            "lone_groups",
        ],
    ),
    "clip_higher": (
        ("symmetric", "clip_higher"),
        [
            "entropy_step0",
            "entropy_first",
            "entropy_last",
            "entropy_drop",
            "diversity_step0",
            "diversity_first",
            "diversity_last",
            "unsolved_diversity_last",
            "reward_first",
            "reward_last",
            "clip_high",
            "clip_high_of_positive",
            "clip_any",
            "eligible",
            "pass1_after",
        ],
    ),
    "length_norm": (
        ("sequence", "constant"),
        ["len_fail_first", "len_fail_last", "len_fail_change", "stop_length_last", "pass1_after"],
    ),
}


def _interval(xs):
    m = statistics.mean(xs)
    if len(xs) == 1:
        return m, None, None
    half = T95[len(xs) - 1] * statistics.stdev(xs) / math.sqrt(len(xs))
    return m, m - half, m + half


@pytest.mark.parametrize("name", claims.NAMES)
def test_both_copies_are_identical_and_have_three_seeds(name):
    with open(os.path.join(ROOT, "experiments", "results", f"{name}.json"), "rb") as fh:
        canonical = fh.read()
    with open(os.path.join(ROOT, "rlvr_lab", "claims", f"{name}.json"), "rb") as fh:
        assert fh.read() == canonical
    data = claims.load(name)
    seeds = [r["seed"] for r in data["runs"]]
    assert len(set(seeds)) == len(seeds) >= 3
    script = data["command"].split("python ")[1].split()[0]
    assert data["command"].startswith("PYTHONPATH=. nice -n 10 python experiments/")
    assert script.startswith(f"experiments/{name.split('_easy')[0]}") and os.path.exists(os.path.join(ROOT, script))
    assert data["machine"]["cpus"] >= 1 and len(data["machine"]["load_avg_1_5_15"]) == 3


@pytest.mark.parametrize("name", sorted(PER_SEED))
def test_arm_intervals_are_recomputed_from_the_seeds(name):
    data = claims.load(name)
    arms, keys = PER_SEED[name]
    for key in keys:
        for arm in arms:
            xs = [float(r[arm][key]) for r in data["runs"] if r[arm][key] is not None]
            got = data["summary"][key][arm]
            if not xs:  # e.g. the isolated run rewards no exploit: no share to average, stored as null
                assert got["n"] == 0 and got["mean"] is None, (key, arm)
                continue
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (key, arm)
        first, second = arms
        sign = (second, first) if name == "clip_higher" else (first, second)
        pairs = [(r[sign[0]][key], r[sign[1]][key]) for r in data["runs"]]
        diffs = [float(a) - float(b) for a, b in pairs if a is not None and b is not None]
        got = data["summary"][key]["difference"]
        if diffs:
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(diffs), abs=1e-9), key


def test_pass_at_k_curves_are_recomputed_from_the_stored_counts():
    data = claims.load("pass_at_k")
    ks = data["regime"]["ks"]
    for r in data["runs"]:
        for arm in ("base", "trained"):
            counts = r[arm]["counts"]
            assert len(counts) == r["tasks"]
            for k in ks:
                want = np.mean([rewards.pass_at_k(n, c, min(k, n)) for n, c in counts.values()])
                assert r[arm]["curve"][str(k)] == pytest.approx(want, abs=1e-12)
        diff = [r["trained"]["curve"][str(k)] - r["base"]["curve"][str(k)] for k in ks]
        want_k = next((k for k, d in zip(ks, diff) if d <= 0), None)
        assert r["catch_up_k"] == want_k
    for k in ks:
        xs = [r["trained"]["curve"][str(k)] - r["base"]["curve"][str(k)] for r in data["runs"]]
        got = data["summary"][str(k)]["difference"]
        assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9)


@pytest.mark.parametrize("name", claims.NAMES)
def test_results_md_shows_exactly_the_recorded_table_and_command(name):
    with open(os.path.join(ROOT, "experiments", "RESULTS.md"), encoding="utf-8") as fh:
        text = fh.read()
    start, end = f"<!-- recorded:{name} -->", f"<!-- /recorded:{name} -->"
    assert start in text and end in text, name
    block = text[text.index(start) + len(start) : text.index(end)]
    assert claims.table(name).strip() in block
    assert claims.load(name)["command"] in block


def test_figures_draw_the_recorded_means():
    data = claims.load("length_norm")
    fig = experiments.recorded_length_figure(data)
    mean_line = [ln for ln in fig.axes[0].lines if ln.get_linewidth() == 2][0]
    curves = [r["sequence"]["len_fail"] for r in data["runs"]]
    width = min(len(c) for c in curves)
    want = np.nanmean([[np.nan if x is None else x for x in c[:width]] for c in curves], axis=0)
    np.testing.assert_allclose(mean_line.get_ydata(), want)
    assert len(experiments.recorded_pass_at_k_figure().axes) == 2
    assert len(experiments.recorded_clip_figure().axes) == 3
    ex = claims.load("exploit_amplification")
    fig = experiments.recorded_exploit_figure(ex)
    assert len(fig.axes) == 3
    stacked = sum(p.get_height() for p in fig.axes[2].patches)
    want = sum(
        sum(r["naive"]["advantage_by_step"][k]) for r in ex["runs"] for k in ("lone", "several", "beside_honest")
    )
    assert stacked == pytest.approx(want)


def test_unknown_recorded_name_is_a_clear_error():
    with pytest.raises(ValueError, match="name must be one of"):
        claims.load("nope")


def test_chapter_1_group_size_numbers_come_from_the_library():
    # ch1 states: at p = 0.05, G / P_c is about 21, 24, 40 rollouts for G = 2, 8, 32, P_c = 0.10, 0.34,
    # 0.81 and 0.96 at G = 64; and G / P_c grows with G at every pass rate.
    import json

    with open(os.path.join(ROOT, "book", "01_learning_from_a_check.ipynb"), encoding="utf-8") as fh:
        text = "".join("".join(c["source"]) for c in json.load(fh)["cells"])
    cost = {g: rewards.rollouts_per_informative_group(g, 0.05) for g in (2, 8, 32)}
    assert [round(cost[g]) for g in (2, 8, 32)] == [21, 24, 40]
    assert "about 21 rollouts for $G = 2$, 24 for $G = 8$, 40 for $G = 32$" in text
    pc = [round(float(rewards.contrast_probability(g, 0.05)), 2) for g in (2, 8, 32, 64)]
    assert pc == [0.10, 0.34, 0.81, 0.96]
    assert "0.81 for $G = 32$, 0.96 for $G = 64$" in text
    for p in (0.01, 0.05, 0.1, 0.3, 0.5, 0.9):
        costs = [rewards.rollouts_per_informative_group(g, p) for g in (2, 4, 8, 16, 32, 64)]
        assert all(a < b for a, b in zip(costs, costs[1:])), p


def test_norm_constant_is_validated():
    from rlvr_lab.train import TrainConfig

    assert TrainConfig(norm="constant", norm_constant=11.5).norm_constant == 11.5
    with pytest.raises(ValueError, match="norm_constant must be >= 0"):
        TrainConfig(norm_constant=-1.0)
    with pytest.raises(ValueError, match="norm_constant must be 0 with engine='trl'"):
        TrainConfig(engine="trl", norm="constant", norm_constant=11.5)


def test_pass_at_k_prose_counts_match_the_stored_counts():
    # RESULTS.md and chapter 7: tasks the base solves at least once and the trained policy never.
    data = claims.load("pass_at_k")
    lost = [
        sum(1 for t, (_, c) in r["base"]["counts"].items() if c > 0 and r["trained"]["counts"][t][1] == 0)
        for r in data["runs"]
    ]
    gained = [
        sum(1 for t, (_, c) in r["base"]["counts"].items() if c == 0 and r["trained"]["counts"][t][1] > 0)
        for r in data["runs"]
    ]
    assert (lost, gained) == ([7, 4, 2, 4, 3], [1, 1, 0, 2, 3])  # ch7: "two to seven held-out tasks"
    assert data["catch_up_k"] == [8, 16, 16, 32, 32]


def test_exploit_group_counts_and_advantage_split_cover_every_group():
    data = claims.load("exploit_amplification")
    g = data["regime"]["group_size"]
    for r in data["runs"]:
        for arm in ("naive", "isolated"):
            a = r[arm]
            hist = a["groups_by_exploit_count"]
            assert len(hist) == g + 1 and sum(hist) == len(a["exploit"]) * data["regime"]["tasks_per_step"]
            adv = a["advantage"]
            assert sum(adv["advantage"].values()) == pytest.approx(adv["total"])
            for kind in ("lone", "several", "beside_honest"):
                assert sum(a["advantage_by_step"][kind]) == pytest.approx(adv["advantage"][kind])
            assert a["lone_groups"] == adv["groups"]["lone"] <= hist[1]
        assert r["isolated"]["advantage"]["total"] == 0.0  # the isolated verifier never rewards the exploit
        assert r["naive"]["exploit"][0] == r["isolated"]["exploit"][0]  # one warm start, one first batch


def test_prose_facts_in_chapters_and_labs_hold_for_the_stored_runs():
    # ch4 / lab 4 / RESULTS.md: the exploit "rose under the naive reward in every seed", from "0 to 12.5 % of
    # rollouts" at step 0; it faded under isolation; the naive - isolated difference excludes zero, the true
    # pass difference includes it; groups with several exploits carried more advantage than lone passes.
    # ch7 / lab 5: "eligible ... 1-2 %"; "failures stop after 7 to 19 tokens" is checked from the records
    # when the result was made (RESULTS.md), the rest here.
    ex = claims.load("exploit_amplification")
    assert all(r["naive"]["exploit_last"] > r["naive"]["exploit_first"] for r in ex["runs"])
    assert all(r["isolated"]["exploit_last"] <= r["isolated"]["exploit_first"] for r in ex["runs"])
    assert [round(r["naive"]["exploit"][0], 3) for r in ex["runs"]] == [0.083, 0.125, 0.0, 0.042, 0.021]
    s = ex["summary"]
    assert (
        s["exploit_last"]["difference"]["lo"] > 0
        and s["true_last"]["difference"]["lo"] < 0 < s["true_last"]["difference"]["hi"]
    )
    assert s["several_share"]["naive"]["lo"] > s["lone_share"]["naive"]["hi"] - 0.1
    assert s["several_share"]["naive"]["mean"] > 4 * s["lone_share"]["naive"]["mean"]
    assert s["true_hard_last"]["naive"]["mean"] < s["true_hard_first"]["naive"]["mean"]
    clip = claims.load("clip_higher")
    sym = clip["summary"]
    # ch7 / lab 5 / RESULTS.md: the symmetric clip collapses entropy by at least half in every seed, action
    # diversity falls with it, clip-higher - symmetric intervals include zero, the upper clip binds on well
    # under 1 % of tokens
    assert all(0.5 <= r["symmetric"]["entropy_drop"] for r in clip["runs"])
    assert sym["entropy_drop"]["symmetric"]["lo"] > 0.5
    assert all(r["symmetric"]["diversity_last"] < r["symmetric"]["diversity_step0"] for r in clip["runs"])
    for key in ("entropy_drop", "entropy_last", "diversity_last"):
        d = sym[key]["difference"]
        assert d["lo"] < 0 < d["hi"], key  # "every interval includes zero"
    assert sym["clip_high"]["symmetric"]["hi"] < 0.01 and 0.005 < sym["eligible"]["symmetric"]["mean"] < 0.015
    ln = claims.load("length_norm")
    assert sum(r["sequence"]["len_fail_change"] > 0 for r in ln["runs"]) == 4  # "in four seeds of five"
    for key in ("len_fail_change", "len_fail_last"):
        d = ln["summary"][key]["difference"]
        assert d["lo"] < 0 < d["hi"], key


def test_the_old_recorded_path_reads_the_claims_data_with_a_warning():
    import importlib
    import sys

    sys.modules.pop("rlvr_lab.recorded", None)
    with pytest.warns(DeprecationWarning, match="rlvr_lab.recorded moved to rlvr_lab.claims"):
        recorded = importlib.import_module("rlvr_lab.recorded")
    assert recorded.load("pass_at_k") == claims.load("pass_at_k")
    assert recorded.table("clip_higher") == claims.table("clip_higher")
    assert not os.path.exists(os.path.join(ROOT, "rlvr_lab", "recorded", "pass_at_k.json"))


@pytest.mark.parametrize("name", [n for n in claims.NAMES if n not in claims.UNFINGERPRINTED])
def test_a_fingerprinted_result_comes_from_the_code_beside_it(name):
    """A stored result names the code it came from; when that code changes, this fails until the result
    is made again with its recorded command (docstrings, comments and formatting do not count)."""
    data = claims.load(name)
    assert data["fingerprint"]["code"], name
    assert claims.stale_code(data, ROOT) == [], f"{name} is stale: rerun `{data['command']}`"


def test_a_changed_module_makes_a_stored_result_stale(tmp_path):
    (tmp_path / "m.py").write_text('"""A module."""\n\n\ndef f(x):\n    return x + 1\n')
    data = {"fingerprint": claims.fingerprint(["m.py"], {"lr": 1e-3}, root=str(tmp_path))}
    (tmp_path / "m.py").write_text('"""Reworded."""\n\n\ndef f(x):  # same code\n    return x + 1\n')
    assert claims.stale_code(data, str(tmp_path)) == []
    (tmp_path / "m.py").write_text('"""A module."""\n\n\ndef f(x):\n    return x + 2\n')
    assert claims.stale_code(data, str(tmp_path)) == ["m.py"]
    field = "class C:\n    lr: float = 1e-3\n    {doc}\n"  # a dataclass field's doc is a lone string: no code
    (tmp_path / "c.py").write_text(field.format(doc='"""The rate."""'))
    with_doc = {"fingerprint": claims.fingerprint(["c.py"], {}, root=str(tmp_path))}
    (tmp_path / "c.py").write_text(field.format(doc='"""The learning rate, eq (13)."""'))
    assert claims.stale_code(with_doc, str(tmp_path)) == []
    (tmp_path / "m.py").unlink()
    assert claims.stale_code(data, str(tmp_path)) == ["m.py"]


def test_the_loss_variant_intervals_are_recomputed_from_the_seeds():
    data = claims.load("loss_variants")
    for key in ("pass1_after", "gain", "contrast_share", "rollouts", "wall_s"):
        for arm in data["arms"]:
            xs = [float(r[arm][key]) for r in data["runs"]]
            got = data["summary"][key][arm]
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (key, arm)
        for arm in ("dr_grpo", "dapo"):
            xs = [float(r[arm][key]) - float(r["grpo"][key]) for r in data["runs"]]
            got = data["summary"][key][f"{arm}-grpo"]
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (key, arm)


def test_one_command_regenerates_every_stored_result():
    """``make results`` runs experiments/regenerate.py: a plan with every stored result's recorded command,
    and with --stale exactly the out-of-date ones (here: those stored before fingerprints)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("regenerate", os.path.join(ROOT, "experiments", "regenerate.py"))
    regenerate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regenerate)
    assert [n for n, _ in regenerate.plan()] == list(claims.NAMES) + [
        "littles_law",
        "repair_episodes",
        "repair_group",
        "repair_learning",
        "repair_heldout",
        "repair_demo_split",
        "repair_many_names",
        "repair_dynamic",
    ]
    assert all(cmd == claims.load(n)["command"] for n, cmd in regenerate.plan() if n in claims.NAMES)
    little = regenerate.load_extra("littles_law")
    assert dict(regenerate.plan())["littles_law"] == little["command"]
    assert little["command"].startswith("PYTHONPATH=. nice -n 10 python experiments/littles_law.py")
    assert claims.stale_code(little, ROOT) == [], "littles_law is stale: rerun its recorded command"
    episodes = regenerate.load_extra("repair_episodes")
    assert dict(regenerate.plan())["repair_episodes"] == episodes["command"]
    assert episodes["command"].startswith("PYTHONPATH=. nice -n 10 python experiments/repair_episodes.py")
    assert claims.stale_code(episodes, ROOT) == [], "repair_episodes is stale: rerun its recorded command"
    group = regenerate.load_extra("repair_group")
    assert group == claims.load_measurement("repair_group")  # the book reads the package's copy
    assert dict(regenerate.plan())["repair_group"] == group["command"]
    assert claims.stale_code(group, ROOT) == [], "repair_group is stale: rerun its recorded command"
    probe = regenerate.load_extra("repair_learning")
    assert dict(regenerate.plan())["repair_learning"] == probe["command"]
    assert claims.stale_code(probe, ROOT) == [], "repair_learning is stale: rerun its recorded command"
    heldout = regenerate.load_extra("repair_heldout")
    assert dict(regenerate.plan())["repair_heldout"] == heldout["command"]
    assert claims.stale_code(heldout, ROOT) == [], "repair_heldout is stale: rerun its recorded command"
    split = regenerate.load_extra("repair_demo_split")
    assert dict(regenerate.plan())["repair_demo_split"] == split["command"]
    assert claims.stale_code(split, ROOT) == [], "repair_demo_split is stale: rerun its recorded command"
    names = regenerate.load_extra("repair_many_names")
    assert dict(regenerate.plan())["repair_many_names"] == names["command"]
    assert claims.stale_code(names, ROOT) == [], "repair_many_names is stale: rerun its recorded command"
    dynamic = regenerate.load_extra("repair_dynamic")
    assert dict(regenerate.plan())["repair_dynamic"] == dynamic["command"]
    assert claims.stale_code(dynamic, ROOT) == [], "repair_dynamic is stale: rerun its recorded command"
    assert [n for n, _ in regenerate.plan(stale_only=True)] == list(claims.UNFINGERPRINTED)
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as fh:
        assert "experiments/regenerate.py" in fh.read()


def test_the_repair_learning_probe_intervals_are_recomputed_from_its_seeds():
    """experiments/repair_learning.py: each arm's change (after minus before, per task set) over the three
    seeds, with the same t interval, from the per-seed rates it stores; the rates are counts over episodes."""
    with open(os.path.join(ROOT, "experiments", "results", "repair_learning.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    assert [r["seed"] for r in data["runs"]] == [0, 1, 2]
    for run in data["runs"]:
        assert len(run["trained_tasks"]) == 3 and len(run["unseen_tasks"]) == 6
        for which in ("trained", "unseen"):
            rows = [run["before"][which]] + [run["arms"][a]["after"][which] for a in ("preset", "warmup", "passes")]
            for row in rows:
                assert row["repair_rate"] * row["episodes"] == pytest.approx(
                    round(row["repair_rate"] * row["episodes"])
                )
                assert row["repair_lo"] <= row["repair_rate"] <= row["repair_hi"]
        for arm in ("preset", "warmup", "passes"):
            assert len(run["arms"][arm]["steps"]) == data["config"]["steps"]
    for arm in ("preset", "warmup", "passes"):
        for which in ("trained", "unseen"):
            xs = [
                r["arms"][arm]["after"][which]["repair_rate"] - r["before"][which]["repair_rate"] for r in data["runs"]
            ]
            got = data["summary"][arm][which]
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (arm, which)


def test_the_repair_heldout_intervals_are_recomputed_from_its_seeds():
    """experiments/repair_heldout.py: per seed and arm, the held-out tasks are variant 2 of the training
    problems, evaluated before and after on the same episodes; the rates are counts; each arm's mean change
    and its t interval over the three seeds come from the per-seed rates it stores."""
    with open(os.path.join(ROOT, "experiments", "results", "repair_heldout.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    assert [r["seed"] for r in data["runs"]] == [0, 1, 2] and set(data["config"]["arms"]) == {"eq2", "passes"}
    for run in data["runs"]:
        for arm, a in run["arms"].items():
            assert a["update"] == data["config"]["arms"][arm]
            assert len(a["steps"]) == data["config"]["steps"]
            assert a["before"]["episodes"] == a["after"]["episodes"] > 0
            for row in (a["before"], a["after"], a["problems_before"], a["problems_after"]):
                assert row["repair_rate"] * row["episodes"] == pytest.approx(
                    round(row["repair_rate"] * row["episodes"])
                )
                assert row["repair_lo"] <= row["repair_rate"] <= row["repair_hi"]
            assert a["gain"] == pytest.approx(a["after"]["repair_rate"] - a["before"]["repair_rate"])
    for arm in data["config"]["arms"]:
        arms = [r["arms"][arm] for r in data["runs"]]
        for key, xs in (
            ("gain", [a["gain"] for a in arms]),
            ("wall_s", [a["wall_s"] for a in arms]),
            ("problems_gain", [a["problems_after"]["repair_rate"] - a["problems_before"]["repair_rate"] for a in arms]),
        ):
            got = data["summary"][arm][key]
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (key, arm)


def test_the_repair_demo_split_intervals_are_recomputed_from_its_seeds():
    """experiments/repair_demo_split.py: per seed, the demonstrated set is variant 0 only, the undemonstrated
    set variant 1 of the same problems and the held-out set variant 2; every rate is a count over the same
    episodes before and after; each arm's mean change per set, with its t interval, comes from the seeds."""
    with open(os.path.join(ROOT, "experiments", "results", "repair_demo_split.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    sets = ("demonstrated", "undemonstrated", "heldout")
    assert [r["seed"] for r in data["runs"]] == [0, 1, 2] and set(data["config"]["arms"]) == {"eq2", "passes"}
    for run in data["runs"]:
        for k, suffix in zip(sets, ("/v0", "/v1", "/v2")):
            assert run["sets"][k] and all(t.endswith(suffix) for t in run["sets"][k]), k
        problems = {t.rsplit("/", 1)[0] for t in run["sets"]["demonstrated"]}
        assert {t.rsplit("/", 1)[0] for t in run["sets"]["undemonstrated"]} == problems
        for a in run["arms"].values():
            assert len(a["steps"]) == data["config"]["steps"]
            for k in sets:
                b, row = run["before"][k], a["after"][k]
                assert b["episodes"] == row["episodes"] == 4 * len(run["sets"][k])
                for r in (b, row):
                    assert r["repair_rate"] * r["episodes"] == pytest.approx(round(r["repair_rate"] * r["episodes"]))
                    assert r["repair_lo"] <= r["repair_rate"] <= r["repair_hi"]
    for arm in data["config"]["arms"]:
        for k in sets:
            xs = [r["arms"][arm]["after"][k]["repair_rate"] - r["before"][k]["repair_rate"] for r in data["runs"]]
            got = data["summary"][arm][k]
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (arm, k)


def test_the_repair_many_names_intervals_are_recomputed_from_its_seeds():
    """experiments/repair_many_names.py: per seed, no held-out task's entry name is a trained task's, the
    held-out set is every training problem's held-out variants and the problem set only held-out problems;
    every rate is a count over the same episodes before and after; each arm's mean change per set, with its
    t interval, comes from the seeds."""
    with open(os.path.join(ROOT, "experiments", "results", "repair_many_names.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    cfg = data["config"]
    sets = ("trained", "heldout", "problems")
    assert [r["seed"] for r in data["runs"]] == cfg["seeds"] and len(cfg["seeds"]) >= 3
    for run in data["runs"]:
        trained = {t.rsplit("/", 1)[0] for t in run["sets"]["trained"]}
        assert all(t.endswith("/v0") for t in run["sets"]["trained"])
        held_variants = {int(t.rsplit("/v", 1)[1]) for t in run["sets"]["heldout"]}
        assert held_variants == set(range(cfg["train_variants"], cfg["train_variants"] + cfg["heldout_variants"]))
        assert {t.rsplit("/", 1)[0] for t in run["sets"]["heldout"]} == trained
        assert not trained & {t.rsplit("/", 1)[0] for t in run["sets"]["problems"]}
        held_names = {run["names"][t] for t in run["sets"]["heldout"]}
        assert not held_names & {run["names"][t] for t in run["sets"]["trained"]}
        for a in run["arms"].values():
            assert len(a["steps"]) == cfg["steps"]
            for k in sets:
                b, row = run["before"][k], a["after"][k]
                assert b["episodes"] == row["episodes"] == 4 * len(run["sets"][k])
                for r in (b, row):
                    assert r["repair_rate"] * r["episodes"] == pytest.approx(round(r["repair_rate"] * r["episodes"]))
                    assert r["repair_lo"] <= r["repair_rate"] <= r["repair_hi"]
    for arm in cfg["arms"]:
        for k in sets:
            xs = [r["arms"][arm]["after"][k]["repair_rate"] - r["before"][k]["repair_rate"] for r in data["runs"]]
            got = data["summary"][arm][k]
            assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), (arm, k)


def test_the_repair_dynamic_probe_is_the_many_names_run_refilled():
    """experiments/repair_dynamic.py: each seed starts from the warm start of repair_many_names.json (the same
    three sets, so the same "before" rates); every step samples at least tasks_per_step groups, uses at most
    the configured refill rounds and updates on at most 16 groups, all with contrast; the GRPO seconds are the
    steps' sum; every rate is a count over the same episodes before and after; the mean change per set, with
    its t interval, comes from the seeds."""
    with open(os.path.join(ROOT, "experiments", "results", "repair_dynamic.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    with open(os.path.join(ROOT, "experiments", "results", "repair_many_names.json"), encoding="utf-8") as fh:
        names = json.load(fh)
    cfg = data["config"]
    sets = ("trained", "heldout", "problems")
    assert [r["seed"] for r in data["runs"]] == cfg["seeds"] and len(cfg["seeds"]) >= 3
    assert cfg["arm"] in names["config"]["arms"] and cfg["max_new_tokens"] == names["config"]["max_new_tokens"]
    plain = {r["seed"]: r for r in names["runs"]}
    for run in data["runs"]:
        assert run["before"] == plain[run["seed"]]["before"], "not the many-names warm start"
        assert len(run["steps"]) == cfg["steps"]
        for row in run["steps"]:
            assert 16 <= row["groups"] and 0 <= row["rounds"] <= cfg["rounds"]
            assert row["kept"] == min(16, row["contrast"]) and row["contrast"] <= row["groups"]
        assert run["grpo_s"] == pytest.approx(sum(r["step_s"] for r in run["steps"]))
        for k in sets:
            b, row = run["before"][k], run["after"][k]
            assert b["episodes"] == row["episodes"] == 4 * len(plain[run["seed"]]["sets"][k])
            assert row["repair_rate"] * row["episodes"] == pytest.approx(round(row["repair_rate"] * row["episodes"]))
            assert row["repair_lo"] <= row["repair_rate"] <= row["repair_hi"]
    for k in sets:
        xs = [r["after"][k]["repair_rate"] - r["before"][k]["repair_rate"] for r in data["runs"]]
        got = data["summary"][k]
        assert (got["mean"], got["lo"], got["hi"]) == pytest.approx(_interval(xs), abs=1e-9), k
