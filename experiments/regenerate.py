"""Make every stored result again from the code at HEAD: one command (``make results``).

Each stored result (``rlvr_lab/claims/<name>.json``) records the command that made it; this runs those
commands one after another (seeded, so deterministic on the CPU), then rewrites the recorded blocks of
``RESULTS.md`` (:mod:`render_tables`). ``--stale`` runs only the results that are out of date: those whose
fingerprinted code changed since (:func:`rlvr_lab.claims.stale_code`) and those stored before fingerprints
existed. Besides the claims (:data:`rlvr_lab.claims.NAMES`) it remakes the measurements in :data:`EXTRA`
(chapter 8's Little's-law run, the repair agent's cycle and forks of chapters 3 and 8, the one repair
group that chapters 5 and 9 follow, the probe of how fast GRPO moves the repair agent, the repair
trainer's held-out figure over seeds, the probes of what it learns beyond its demonstrations and under
many entry names, and the same with dynamic sampling). ``--dry-run`` prints the commands. The whole set took
about four hours on a quiet 2-core machine before the three probes of 7 Dec, which add about 1 h 50 min.

    PYTHONPATH=. python experiments/regenerate.py [--stale] [--only NAME ...] [--dry-run]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: Stored measurements that are not claim results: ``experiments/results/<name>.json``, each with its
#: recorded ``command`` and ``fingerprint``.
EXTRA = (
    "littles_law",
    "repair_episodes",
    "repair_group",
    "repair_learning",
    "repair_heldout",
    "repair_demo_split",
    "repair_many_names",
    "repair_dynamic",
)


def load_extra(name: str) -> dict:
    """The stored measurement ``name`` of :data:`EXTRA`."""
    import json

    with open(os.path.join(HERE, "results", f"{name}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def plan(names=None, stale_only: bool = False) -> list[tuple[str, str]]:
    """``(name, recorded command)`` for every stored result (or ``names``), stale ones only if asked."""
    from rlvr_lab import claims

    chosen = []
    for name in names or claims.NAMES + EXTRA:
        data = load_extra(name) if name in EXTRA else claims.load(name)
        if stale_only and "fingerprint" in data and not claims.stale_code(data, ROOT):
            continue
        chosen.append((name, data["command"]))
    return chosen


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", help="result names (default: all)")
    parser.add_argument("--stale", action="store_true", help="only results whose code changed, or unfingerprinted")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = parser.parse_args(argv)
    todo = plan(args.only, args.stale)
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for name, command in todo:
        print(f"{name}: {command}", flush=True)
        if not args.dry_run:
            subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, check=True)
    if not args.dry_run and todo:
        subprocess.run([sys.executable, os.path.join(HERE, "render_tables.py")], cwd=ROOT, env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
