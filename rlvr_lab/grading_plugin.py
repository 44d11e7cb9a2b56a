"""The pytest plugin that ``rlvr-lab grade`` loads into its nbval run (section 17.14 grading).

It runs in the pytest process (and in each pytest-xdist worker), never in a notebook's kernel. It does
two things, and only when the grader's configuration is present in the environment:

* it enforces each notebook's time budget: once a notebook has used its budget, the plugin stops that
  notebook's kernel and skips its remaining cells;
* after each record cell that :mod:`rlvr_lab.grading` injected (tagged with the run's nonce), it reads
  that cell's own output as nbval captured it and appends the record to the notebook's results file.
  Output of any other cell is never read, so a notebook that prints a record itself gains nothing.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from rlvr_lab.grading import CONFIG_ENV, RECORD_PREFIX, RECORD_TAG

_NB_START: dict = {}


def _config():
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        return None
    with open(raw, encoding="utf-8") as handle:
        return json.load(handle)


def notebook_id(path: str) -> str | None:
    """The grader's id of a prepared notebook: the name of the folder that holds it.

    >>> notebook_id("/tmp/rlvr-grade-x/nb/s0003/ex1_false_accepts.ipynb")
    's0003'
    >>> notebook_id("/tmp/test_x.py") is None
    True
    """
    return os.path.basename(os.path.dirname(path)) if path.endswith(".ipynb") else None


def parse_record(source: str, outputs, nonce: str):
    """Return ``(part_id, record)`` of an injected record cell, or None if the cell is not one.

    ``record`` is None when the cell printed no well-formed record for its own part.

    >>> src = "# RLVR-GRADER-RECORD abc ex1.part_c\\nprint()"
    >>> out = [{"output_type": "stream", "text": 'RLVR-RECORD abc {"part": "ex1.part_c", "values": {}}\\n'}]
    >>> parse_record(src, out, "abc")
    ('ex1.part_c', {'part': 'ex1.part_c', 'values': {}})
    >>> parse_record(src, out, "other") is None
    True
    """
    first = source.split("\n", 1)[0].split()
    if not source.startswith(RECORD_TAG) or len(first) < 4 or first[2] != nonce:
        return None
    part, record, prefix = first[3], None, f"{RECORD_PREFIX} {nonce} "
    for out in outputs or []:
        if out.get("output_type") != "stream":
            continue
        for line in str(out.get("text", "")).splitlines():
            if line.startswith(prefix) and record is None:
                try:
                    record = json.loads(line[len(prefix):])
                except ValueError:
                    record = None
    if not isinstance(record, dict) or record.get("part") != part:
        record = None
    return part, record


def _append(config: dict, nb_id: str, event: dict) -> None:
    with open(os.path.join(config["results"], nb_id + ".jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(event) + "\n")


def pytest_runtest_setup(item):
    """Skip a notebook's remaining cells once its time budget is spent."""
    config = _config()
    nb_id = notebook_id(str(getattr(item, "fspath", "")))
    if config is None or nb_id is None:
        return
    start = _NB_START.setdefault(nb_id, time.monotonic())
    if time.monotonic() - start > config["budget_s"]:
        kernel = getattr(item.parent, "kernel", None)
        if kernel is not None and kernel.is_alive():
            kernel.stop()
        _append(config, nb_id, {"event": "budget", "cell": item.name})
        pytest.skip("notebook time budget exhausted")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """After an injected record cell ran, store its record, read from that cell's own output."""
    report = yield
    config = _config()
    nb_id = notebook_id(str(getattr(item, "fspath", "")))
    if config is None or nb_id is None or call.when != "call":
        return report
    source = getattr(getattr(item, "cell", None), "source", "")
    parsed = parse_record(source, getattr(item, "test_outputs", None), config["nonce"])
    if parsed is None:
        if report.failed:
            error = str(call.excinfo.value)[:300] if call.excinfo else ""
            _append(config, nb_id, {"event": "cell_error", "cell": item.name, "error": error})
        return report
    part, record = parsed
    _append(config, nb_id, {"event": "record", "part": part, "record": record, "failed": bool(report.failed)})
    return report
