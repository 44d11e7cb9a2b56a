"""``rlvr-lab demo``: the chapter's worked numbers, computed by the library and grouped by section.

Every figure printed here comes from a call into :mod:`rlvr_lab.rewards`, :mod:`rlvr_lab.credit`,
:mod:`rlvr_lab.grpo` or :mod:`rlvr_lab.cycle_time` with the chapter's hypothetical inputs; nothing is
typed in as a result. ``tests/test_worked_numbers.py`` pins the same values.

>>> sections = worked_numbers()
>>> [title for title, _ in sections][:2]
['17.3 Verifiable rewards (napkin math 17.1)', '17.4 Credit across turns (napkin math 17.2, table 3)']
"""

from __future__ import annotations

from rlvr_lab.equations import eq


def _numpy_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    from rlvr_lab import credit, cycle_time, rewards

    n, rho, alpha = 8 * 1024, 0.10, 0.025
    share = rewards.false_accept_share(rho, alpha, 1.0)
    out = [
        (
            "17.3 Verifiable rewards (napkin math 17.1)",
            [
                ("rollouts, true pass rate, false-accept rate", f"{n:,}, {rho:.0%}, {alpha:.1%}"),
                ("expected true / false accepts", f"{n * rho:,.2f} / {n * (1 - rho) * alpha:,.2f}"),
                (f"false-accept share of rewarded rollouts ({eq('ch2-false-share')})", f"{share:.1%}"),
            ],
        )
    ]
    rows = [("base trajectory, 30 turns x 512 tokens", f"{credit.continuation_tokens(30, 512, 0, []):,} tokens")]
    for label, forks in (("every intermediate boundary", "all"), ("after turns 10 and 20", [10, 20])):
        rows.append(
            (
                f"{label}: branches, tokens, multiple of base",
                f"{credit.continuation_branches(30, 8, forks)}, "
                f"{credit.continuation_tokens(30, 512, 8, forks):,}, "
                f"{credit.continuation_multiple(30, 8, forks):.0f}x",
            )
        )
    rows += [
        (
            "M = 20: standard error per fork / of the difference",
            f"{credit.standard_error_bound(20):.2f} / {credit.difference_standard_error_bound(20):.2f}",
        ),
        ("debugger fork 0.05 -> 0.60 resolved (threshold 0.32)", str(credit.is_resolved(0.55, 20))),
    ]
    out.append(("17.4 Credit across turns (napkin math 17.2, table 3)", rows))
    rows = [
        (
            "30 turns x 512 tokens x 4,096 rollouts",
            f"{credit.continuation_tokens(30, 512, 0, []) * 4096 / 1e6:.1f} M tokens per step",
        ),
        ("G = 2, p = 10 %: contrast probability", f"{rewards.contrast_probability(2, 0.10):.2f}"),
        ("G = 8, p = 5 %: groups without reward gradient", f"{1 - rewards.contrast_probability(8, 0.05):.0%}"),
    ]
    for lever, g, p in (("current task mix", 8, 0.05), ("double the group", 16, 0.05), ("target difficulty", 8, 0.50)):
        rows.append(
            (
                f"table 5, {lever} (G = {g}, p = {p:.0%}): P_c, rollouts per informative group",
                f"{rewards.contrast_probability(g, p):.2f}, {rewards.rollouts_per_informative_group(g, p):.1f}",
            )
        )
    out.append(("17.5.4 Zero-contrast groups (napkin math 17.4, table 5)", rows))
    out.append(
        (
            "17.7.2 Repeated checks (napkin math 17.5)",
            [
                (
                    "16 incorrect candidates, one trial each: at least one false pass",
                    f"{1 - rewards.all_pass_probability(0.8, 16):.1%}",
                ),
                ("K = 3 all-pass: incorrect accepted (q = 0.20)", f"{rewards.all_pass_probability(0.20, 3):.1%}"),
                ("K = 3 all-pass: correct rejected (q = 0.98)", f"{1 - rewards.all_pass_probability(0.98, 3):.2%}"),
                (
                    "expected trials, stop on first rejection: q = 0.20 / 0.98",
                    f"{rewards.expected_trials(0.20, 3):.2f} / {rewards.expected_trials(0.98, 3):.4f}",
                ),
            ],
        )
    )
    cold, snap = cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 3.5), cycle_time.cycle_time(20, 0.12, 0.08, 0.5, 0.015)
    cap_cold, cap_snap = cycle_time.pool_capacity_per_hour(256, cold), cycle_time.pool_capacity_per_hour(256, snap)
    out.append(
        (
            "17.9 Environments and rollouts (napkin math 17.6)",
            [
                (f"slot cycle, cold reset 3.5 s / snapshot 15 ms ({eq('ch8-cycle')})", f"{cold:.3f} s / {snap:.3f} s"),
                ("256 slots: episodes per hour, cold / snapshot", f"{cap_cold:,.0f} / {cap_snap:,.0f}"),
                ("capacity ratio (Amdahl floor 4.5 s)", f"{cap_snap / cap_cold:.2f}x"),
                (
                    f"group of 4 from 0.2 s to 16.8 s: idle share under the barrier ({eq('ch8-barrier')})",
                    f"{cycle_time.barrier_idle_fraction([0.2, 3.0, 3.52, 16.8]):.0%}",
                ),
                (
                    f"verifier workers, 32 trajectories/s, 8 s trials: 1 trial / 3 trials / 3 at 80 % ({eq('ch8-workers')})",
                    f"{cycle_time.verifier_demand(32, 1, 8):.0f} / {cycle_time.verifier_demand(32, 3, 8):.0f} / "
                    f"{cycle_time.verifier_workers(32, 3, 8, 0.8)}",
                ),
            ],
        )
    )
    return out


def _grpo_section() -> tuple[str, list[tuple[str, str]]]:
    from rlvr_lab import grpo

    adv = grpo.group_advantages([0.0, 1.0, 0.0], eps=1e-8)
    lone = grpo.lone_pass_group_coefficients(16, eps=1e-8)
    w = grpo.per_token_weights([-1.0, -1.0], [128, 4096], "sequence")
    _, high_dominant = grpo.clip_probability_bounds(0.9, 0.2)
    _, high_rare = grpo.clip_probability_bounds(0.01, 0.2)
    return (
        "17.5 GRPO (napkin math 17.3; 17.8.3)",
        [
            (f"rewards [0, 1, 0]: coefficients ({eq('ch4-advantage')})", ", ".join(f"{a:.6f}" for a in adv)),
            (f"G = 16, lone pass: pass / each failure ({eq('ch4-lone-pass')})", f"{lone[0]:.2f} / {lone[1]:.2f}"),
            (f"failures of 128 vs 4,096 tokens: per-token weight ratio ({eq('ch7-weight')})", f"{w[0] / w[1]:.0f}x"),
            ("eps = 0.2, token at p = 0.9: clip threshold in probability", f"{high_dominant:.2f} (> 1, never binds)"),
            ("eps = 0.2, token at p = 0.01: headroom before the clip", f"+{high_rare - 0.01:.3f}"),
        ],
    )


def worked_numbers(include_grpo: bool = True) -> list[tuple[str, list[tuple[str, str]]]]:
    """The chapter's worked numbers as ``[(section title, [(label, formatted value), ...]), ...]``.

    ``include_grpo=False`` skips the torch-backed GRPO section (for a numpy-only install).

    >>> dict(worked_numbers(include_grpo=False)[0][1])["false-accept share of rewarded rollouts (eq (3))"]
    '18.4%'
    """
    sections = _numpy_sections()
    if include_grpo:
        sections.insert(2, _grpo_section())
    return sections


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="print the chapter's worked numbers, computed by rlvr_lab")
    parser.set_defaults(func=run)


def run(args) -> int:
    import importlib.util

    import rlvr_lab

    have_torch = importlib.util.find_spec("torch") is not None
    print(f"RLVR Lab {rlvr_lab.__version__}: chapter 17's worked numbers, computed by the library")
    for title, rows in worked_numbers(include_grpo=have_torch):
        print(f"\n{title}")
        for label, value in rows:
            print(f"  {label:<86} {value}")
    if not have_torch:
        print("\n(17.5 GRPO skipped: torch is not installed; pip install 'rlvr-lab[train]')")
    return 0
