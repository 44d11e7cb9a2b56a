"""What every lab sets up first: the preset it sizes itself by, the machine it reports, its run folders.

The five labs (``labs/lab*.py``: GRPO training 17.5, the verifier red team 17.7.1, noisy rewards 17.7.2,
reward hacking 17.5.1, pathologies 17.8) open with the same set-up cell::

    from rlvr_lab.lab_setup import start_lab
    PRESET, HARDWARE = start_lab()

The preset is ``RLVR_LAB_PRESET`` when set (``ci``: seconds, what the test suite runs; ``cpu``: minutes on
a laptop; ``gpu``: a Colab GPU), else ``gpu`` where CUDA is available and ``cpu`` otherwise. Every number
a lab's closing note quotes is printed with :func:`hardware`'s line, so it describes the machine it ran on.

>>> choose_preset() in PRESETS
True
>>> series([{"step": 0}, {"step": 1, "x": 0.5}], "x")
array([nan, 0.5])
"""

from __future__ import annotations

import os
import platform
import shutil
import tempfile

import numpy as np

from rlvr_lab.train.config import PRESETS, default_preset


def choose_preset() -> str:
    """``RLVR_LAB_PRESET`` if set (ValueError unless it names a preset), else :func:`default_preset`."""
    preset = os.environ.get("RLVR_LAB_PRESET") or default_preset()
    if preset not in PRESETS:
        raise ValueError(f"RLVR_LAB_PRESET must be 'ci', 'cpu' or 'gpu', got {preset!r}")
    return preset


def hardware() -> str:
    """One line naming the machine: architecture, system, CPU cores, Python version."""
    return f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"


def start_lab() -> tuple[str, str]:
    """A lab's first step: print and return ``(preset, hardware line)``."""
    preset, machine = choose_preset(), hardware()
    print("preset:", preset, "|", machine)
    return preset, machine


def fresh_dir(name: str, preset: str) -> str:
    """An empty folder ``<tmp>/rlvr-labs-<uid>/<name>-<preset>`` for one run (a leftover would be resumed).

    Runs live in a folder of your own: the temporary directory is shared by every user of the machine, and
    another user's folder of the same name could neither be emptied nor written by you.
    """
    root = os.path.join(tempfile.gettempdir(), f"rlvr-labs-{os.getuid()}")
    os.makedirs(root, mode=0o700, exist_ok=True)
    if os.lstat(root).st_uid != os.getuid():
        raise PermissionError(f"{root} belongs to another user; set TMPDIR to a folder of your own")
    path = os.path.join(root, name + "-" + preset)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def series(rows: list[dict], key: str) -> np.ndarray:
    """The training metrics' column ``key`` as floats, NaN where a step did not log it."""
    return np.array([r.get(key, np.nan) for r in rows], dtype=float)
