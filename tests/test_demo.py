"""``rlvr-lab demo`` prints the chapter's worked numbers, computed by the library, grouped by section."""

import subprocess
import sys

from rlvr_lab import cli, demo
from rlvr_lab.equations import eq

EXPECTED = [
    "18.4%",
    "819.20 / 184.32",
    "232, 1,797,120, 117x",
    "16, 138,240, 9x",
    "0.11 / 0.16",
    "-0.707107, 1.414214, -0.707107",
    "3.87 / -0.26",
    "32x",
    "1.08",
    "+0.002",
    "62.9 M",
    "0.34, 23.8",
    "0.56, 28.6",
    "0.99, 8.1",
    "97.2%",
    "5.88%",
    "1.24 / 2.9404",
    "8.000 s / 4.515 s",
    "115,200 / 204,120",
    "1.77x",
    "65%",
    "256 / 768 / 960",
]


def test_demo_prints_every_worked_number(capsys):
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    missing = [x for x in EXPECTED if x not in out]
    assert not missing, missing
    titles = [line for line in out.splitlines() if line.startswith("17.")]
    assert [t.split()[0] for t in titles] == ["17.3", "17.4", "17.5", "17.5.4", "17.7.2", "17.9"]


def test_numpy_sections_do_not_need_torch():
    code = (
        "import sys; from rlvr_lab import demo; s = demo.worked_numbers(include_grpo=False); "
        "print(len(s), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["5", "False"]


def test_values_come_from_the_library(monkeypatch):
    # a changed library function changes the printed number: nothing is hard-coded
    from rlvr_lab import rewards

    monkeypatch.setattr(rewards, "false_accept_share", lambda rho, alpha, beta=1.0: 0.5)
    rows = dict(demo.worked_numbers(include_grpo=False)[0][1])
    assert rows[f"false-accept share of rewarded rollouts ({eq('ch2-false-share')})"] == "50.0%"
