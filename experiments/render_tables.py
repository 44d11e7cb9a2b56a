"""Rewrite the recorded-result blocks of ``experiments/RESULTS.md`` from the stored results.

Each block sits between ``<!-- recorded:NAME -->`` and ``<!-- /recorded:NAME -->`` and holds the command,
the machine and load, and :func:`rlvr_lab.claims.table`. Prose around the blocks is left alone;
``tests/test_recorded_results.py`` checks the blocks against the stored files.

    PYTHONPATH=. python experiments/render_tables.py
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def block(name: str) -> str:
    from rlvr_lab import claims

    data = claims.load(name)
    m = data["machine"]
    return (
        f"<!-- recorded:{name} -->\n`{data['command']}` ({data['wall_s'] / 60:.0f} min; {m['cpus']} CPU "
        f"cores shared with other jobs, load average {m['load_avg_1_5_15'][0]} at the end, {m['when_utc']} "
        f"UTC)\n\n{claims.table(name)}\n<!-- /recorded:{name} -->"
    )


def main() -> int:
    from rlvr_lab import claims

    path = os.path.join(HERE, "RESULTS.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    for name in claims.NAMES:
        start, end = f"<!-- recorded:{name} -->", f"<!-- /recorded:{name} -->"
        if not os.path.exists(os.path.join(HERE, "results", f"{name}.json")):
            continue
        if start in text:
            text = text[: text.index(start)] + block(name) + text[text.index(end) + len(end) :]
        else:
            text += "\n" + block(name) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
