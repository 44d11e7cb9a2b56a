"""Stored results of the claim experiments (five seeds for each of the four claims),
``experiments/*.py``: loading, and the tables shown.

Each experiment writes ``experiments/results/<name>.json`` and this package's copy ``<name>.json``, so an
installed wheel (and Colab) shows runs that CI cannot afford to repeat. :func:`table` renders the markdown
table of ``experiments/RESULTS.md``, chapter 7 and labs 4-5. Intervals: mean +- t(0.975, n-1) sd / sqrt(n).

>>> sorted(load("pass_at_k")["summary"])[:2]
['1', '16']
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os

NAMES = (
    "exploit_amplification",
    "clip_higher",
    "length_norm",
    "pass_at_k",
    "loss_variants",
)
#: Results stored without a fingerprint of their code (none now: every stored result carries one, and a
#: result added here would be listed by ``regenerate.py --stale`` until it is made again).
UNFINGERPRINTED: tuple[str, ...] = ()
_HERE = os.path.dirname(os.path.abspath(__file__))


def source_digest(path: str) -> str:
    r"""SHA-256 of a Python file's syntax tree without its docstrings and other lone strings (a dataclass's
    field docs; comments never reach the tree): a change of code changes it, a reworded comment or
    docstring or a reformat does not.

    >>> import tempfile
    >>> a, b = (tempfile.mktemp(suffix=".py") for _ in range(2))
    >>> _ = open(a, "w").write("def f(x):\n    'Twice.'\n    return 2 * x  # doubled\n")
    >>> _ = open(b, "w").write("def f(x):\n    return 2*x\n")
    >>> source_digest(a) == source_digest(b)
    True
    """
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), filename=path)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):  # a string on a line of its own does nothing: docstrings, field docs
            kept = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                            and isinstance(s.value.value, str))]  # fmt: skip
            node.body = kept or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()


def fingerprint(paths, config: dict, root: str | None = None) -> dict:
    """What a stored result came from: ``{"code": {path: source_digest}, "config": sha256}`` for the code
    ``paths`` (relative to the checkout ``root``, by default the one holding this package) and the JSON of
    ``config``. ``tests/test_recorded_results.py`` recomputes the code digests: a result whose code changed
    since it was made fails there until it is made again."""
    root = root or os.path.dirname(os.path.dirname(_HERE))
    code = {p: source_digest(os.path.join(root, p)) for p in sorted(paths)}
    text = json.dumps(config, sort_keys=True, default=list)
    return {"code": code, "config": hashlib.sha256(text.encode()).hexdigest()}


def stale_code(data: dict, root: str | None = None) -> list[str]:
    """The paths of a stored result's fingerprint whose code differs now (empty: the result is current)."""
    root = root or os.path.dirname(os.path.dirname(_HERE))
    stored = data["fingerprint"]["code"]
    return [
        p
        for p, digest in sorted(stored.items())
        if not os.path.exists(os.path.join(root, p)) or source_digest(os.path.join(root, p)) != digest
    ]


#: Stored measurements of one real run that the book follows step by step (not seed-interval claims), each
#: with a fingerprint like the claims; read with :func:`load_measurement`.
MEASUREMENTS = ("repair_group",)


def load_measurement(name: str) -> dict:
    """The stored measurement ``name`` (one of :data:`MEASUREMENTS`), e.g. the repair group of chapters 5
    and 9 (``experiments/repair_group.py``)."""
    if name not in MEASUREMENTS:
        raise ValueError(f"name must be one of {MEASUREMENTS}, got {name!r}")
    with open(os.path.join(_HERE, f"{name}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def load(name: str) -> dict:
    """The stored result ``name`` (one of :data:`NAMES`)."""
    if name not in NAMES:
        raise ValueError(f"name must be one of {NAMES}, got {name!r}")
    with open(os.path.join(_HERE, f"{name}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def ci(c: dict, digits: int = 3) -> str:
    """``mean [lo, hi]`` of a summary entry."""

    def f(x):
        return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"

    return f"{f(c['mean'])} [{f(c['lo'])}, {f(c['hi'])}]"


def _arrow(a, b, digits=3) -> str:
    def f(x):
        return "n/a" if x is None else f"{x:.{digits}f}"

    return f"{f(a)} -> {f(b)}"


def table(name: str, data: dict | None = None) -> str:
    """Markdown table of one recorded experiment: one row per seed and arm, then mean [95 % CI] rows."""
    data = data or load(name)
    return {
        "exploit_amplification": _exploit,
        "clip_higher": _clip,
        "length_norm": _length,
        "pass_at_k": _pass_at_k,
        "loss_variants": _variants,
    }[name](data)


def _exploit(d: dict) -> str:
    out = [
        "| seed | rewarded by | exploit rate (first 5 -> last 5 steps) | on the hard family | true pass rate "
        "| groups with 0 / 1 / 2 to G-1 / G exploits | exploit's advantage: lone / several / beside honest "
        "| lone share, first step |",
        "| ---: | --- | --- | --- | --- | --- | --- | ---: |",
    ]
    for r in d["runs"]:
        for arm in ("naive", "isolated"):
            a = r[arm]
            share = a["advantage"]["share"]
            split = " / ".join(_num(share[k], 2) for k in ("lone", "several", "beside_honest"))
            out.append(
                f"| {r['seed']} | {arm} | {_arrow(a['exploit_first'], a['exploit_last'])} | "
                f"{_arrow(a['exploit_hard_first'], a['exploit_hard_last'])} | "
                f"{_arrow(a['true_first'], a['true_last'])} | {_spread(a.get('groups_by_exploit_count'))} | "
                f"{split} of {a['advantage']['total']:.1f} | {_num(a['lone_share_step0'], 2)} |"
            )
    s = d["summary"]
    for arm in ("naive", "isolated", "difference"):
        label = "naive - isolated" if arm == "difference" else arm
        out.append(
            f"| mean [95 % CI] | {label} | last 5: {ci(s['exploit_last'][arm])} | last 5: "
            f"{ci(s['exploit_hard_last'][arm])} | last 5: {ci(s['true_last'][arm])} | | "
            f"lone {ci(s['lone_share'][arm], 2)}, several {ci(s['several_share'][arm], 2)} | "
            f"{ci(s['lone_share_step0'][arm], 2)} |"
        )
    return "\n".join(out)


def _num(x, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _spread(hist) -> str:
    if not hist:
        return "n/a"
    return f"{hist[0]} / {hist[1]} / {sum(hist[2:-1])} / {hist[-1]}"


def _clip(d: dict) -> str:
    out = [
        "| seed | clip | entropy, nats (step 0 -> last 5) | drop | distinct / G, all groups (step 0 -> last 5) "
        "| training reward (first 5 -> last 5) | upper clip | eligible (A > 0, p < 1/(1+eps_high)) | any clip |",
        "| ---: | --- | --- | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for r in d["runs"]:
        for arm in ("symmetric", "clip_higher"):
            a = r[arm]
            out.append(
                f"| {r['seed']} | {arm} | {_arrow(a['entropy_step0'], a['entropy_last'])} | {a['entropy_drop']:.2f} | "
                f"{_arrow(a['diversity_step0'], a['diversity_last'], 2)} | "
                f"{_arrow(a['reward_first'], a['reward_last'], 2)} | {a['clip_high']:.4f} | {a['eligible']:.4f} | "
                f"{a['clip_any']:.4f} |"
            )
    s = d["summary"]
    for arm in ("symmetric", "clip_higher", "difference"):
        label = "clip-higher - symmetric" if arm == "difference" else arm
        out.append(
            f"| mean [95 % CI] | {label} | last 5: {ci(s['entropy_last'][arm])} | {ci(s['entropy_drop'][arm], 2)} | "
            f"last 5: {ci(s['diversity_last'][arm], 2)} | last 5: {ci(s['reward_last'][arm], 2)} | "
            f"{ci(s['clip_high'][arm], 4)} | {ci(s['eligible'][arm], 4)} | {ci(s['clip_any'][arm], 4)} |"
        )
    return "\n".join(out)


def _length(d: dict) -> str:
    out = [
        "| seed | normalisation | failing length, tokens (first 5 -> last 5) | change | at the token budget "
        "(last 5) | held-out pass@1 |",
        "| ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for r in d["runs"]:
        for arm in ("sequence", "constant"):
            a = r[arm]
            label = arm if arm == "sequence" else f"constant L = {r['constant_denominator']:.1f}"
            out.append(
                f"| {r['seed']} | {label} | {_arrow(a['len_fail_first'], a['len_fail_last'], 1)} | "
                f"{a['len_fail_change']:+.2f} | {a['stop_length_last']:.3f} | {a['pass1_after']:.3f} |"
            )
    s = d["summary"]
    for arm in ("sequence", "constant", "difference"):
        label = "sequence - constant" if arm == "difference" else arm
        out.append(
            f"| mean [95 % CI] | {label} | last 5: {ci(s['len_fail_last'][arm], 1)} | "
            f"{ci(s['len_fail_change'][arm], 2)} | {ci(s['stop_length_last'][arm])} | "
            f"{ci(s['pass1_after'][arm])} |"
        )
    return "\n".join(out)


def _variants(d: dict) -> str:
    out = [
        "| seed | recipe | held-out pass@1 (warm -> after) | gain | groups with contrast | rollouts sampled | wall s |",
        "| ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    arms = [a for a in ("grpo", "dr_grpo", "dapo") if a in d["arms"]]
    for r in d["runs"]:
        for arm in arms:
            a = r[arm]
            out.append(
                f"| {r['seed']} | {arm} | {_arrow(r['warm_pass1'], a['pass1_after'])} | {a['gain']:+.3f} | "
                f"{a['contrast_share']:.3f} | {a['rollouts']} | {a['wall_s']:.0f} |"
            )
    s = d["summary"]
    for arm in [*arms, "dr_grpo-grpo", "dapo-grpo"]:
        label = arm.replace("-", " - ")
        out.append(
            f"| mean [95 % CI] | {label} | after: {ci(s['pass1_after'][arm])} | {ci(s['gain'][arm])} | "
            f"{ci(s['contrast_share'][arm])} | {ci(s['rollouts'][arm], 0)} | {ci(s['wall_s'][arm], 1)} |"
        )
    return "\n".join(out)


def _pass_at_k(d: dict) -> str:
    ks = d["regime"]["ks"]
    out = [
        "| seed | " + " | ".join(f"pass@{k} base -> trained" for k in ks) + " | base catches up at k |",
        "| ---: | " + " | ".join("---" for _ in ks) + " | ---: |",
    ]
    for r in d["runs"]:
        cells = [_arrow(r["base"]["curve"][str(k)], r["trained"]["curve"][str(k)]) for k in ks]
        out.append(f"| {r['seed']} | " + " | ".join(cells) + f" | {r['catch_up_k'] or 'not by ' + str(ks[-1])} |")
    s = d["summary"]
    for arm in ("base", "trained", "difference"):
        label = "trained - base" if arm == "difference" else arm
        out.append(f"| {label}, mean [95 % CI] | " + " | ".join(ci(s[str(k)][arm]) for k in ks) + " | |")
    return "\n".join(out)
