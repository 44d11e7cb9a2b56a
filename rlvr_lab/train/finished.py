"""A finished run read back from its folder (sections 17.8, 17.10).

``rlvr-lab train`` asked again for a run that its ``out_dir`` already holds, finished, would resume at the
end, take no step and report the warm start as the result after GRPO. :func:`finished_result` rebuilds the
run's result from what it stored instead (the last checkpoint's lineage, ``metrics.jsonl``, the warm start's
lineage and ``summary.json``), so that :func:`rlvr_lab.train.train` returns it and the CLI prints it again.
"""

from __future__ import annotations

import json
import os

from rlvr_lab.train import checkpoint as ckpt
from rlvr_lab.train.grpo_loop import TrainResult
from rlvr_lab.train.metrics import MetricsLog


def _trajectory(config_dict: dict, keys) -> str:
    """Canonical JSON of ``config_dict``'s values for ``keys`` (a stored config compares with a live one)."""
    return json.dumps({k: config_dict.get(k) for k in keys}, sort_keys=True, default=list)


def finished_result(config):
    """The :class:`~rlvr_lab.train.grpo_loop.TrainResult` of the run of ``config`` that ``config.out_dir``
    already holds, finished; None when it holds none, an unfinished one, or another configuration's.

    Finished means the latest checkpoint is the last GRPO step's, saved by a configuration with the same
    trajectory (:meth:`~rlvr_lab.train.config.TrainConfig.digest_json`: everything but I/O knobs), and
    ``metrics.jsonl`` holds that step's held-out evaluation. *Before* is the warm start's evaluation (its
    lineage), *after* that last evaluation; wall time, phases and rollouts come from ``summary.json`` when
    it belongs to the same run, else they are zero (the process that trained was killed before its report).
    """
    latest = ckpt.latest_checkpoint(config.out_dir)
    warm = os.path.join(config.out_dir, "warmstart")  # Run.warm_dir, without building a Run
    if config.grpo_steps < 1 or latest is None or not os.path.exists(os.path.join(warm, "lineage.json")):
        return None
    lineage, wanted = ckpt.read_lineage(latest), json.loads(config.digest_json())
    target = _trajectory(wanted, wanted)
    if lineage.get("step") != config.grpo_steps - 1 or _trajectory(lineage.get("config", {}), wanted) != target:
        return None
    try:
        rows = MetricsLog(config.out_dir).rows()
    except ValueError:  # a torn line: a resume (which cuts the log back to its checkpoint) must decide
        return None
    last = [r for r in rows if r.get("step") == config.grpo_steps - 1 and "heldout_pass1" in r]
    if not last:
        return None
    after = {k[len("heldout_") :]: v for k, v in last[-1].items() if k.startswith("heldout_")}
    before = ckpt.read_lineage(warm)["heldout"]
    stored = {}
    path = os.path.join(config.out_dir, "summary.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            stored = json.load(fh)
        if _trajectory(stored.get("config", {}), wanted) != target or stored.get("after") != after:
            stored = {}
    return TrainResult(
        config.out_dir,
        before,
        after,
        float(stored.get("wall_s", 0.0)),
        dict(stored.get("timing", {})),
        config.grpo_steps,
        int(stored.get("rollouts", 0)),
        rows,
    )
