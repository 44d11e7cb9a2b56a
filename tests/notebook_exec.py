"""Run a notebook's code cells in order in this process, without Jupyter (as a fresh install would).

``python notebook_exec.py NOTEBOOK [--cells N] [--colab]``: executes the first N code cells (all by
default) in one namespace, from the current directory, with ``display`` falling back to ``print`` and
matplotlib on Agg. ``--colab`` makes ``import google.colab`` succeed (an empty stand-in module), so the
install cell runs its Colab branch. Used by tests/test_install.py in fresh venvs, where neither Jupyter
nor nbval is installed; prints ``cell N ok`` after each cell and exits non-zero at the first error.
"""

from __future__ import annotations

import json
import os
import sys
import time
import types


def main(argv: list[str]) -> int:
    path = argv[0]
    limit = int(argv[argv.index("--cells") + 1]) if "--cells" in argv else None
    if "--colab" in argv:
        google = sys.modules.setdefault("google", types.ModuleType("google"))
        google.__path__ = getattr(google, "__path__", [])
        sys.modules["google.colab"] = google.colab = types.ModuleType("google.colab")
    os.environ.setdefault("MPLBACKEND", "Agg")
    with open(path, encoding="utf-8") as handle:
        cells = [c for c in json.load(handle)["cells"] if c["cell_type"] == "code"]
    namespace = {"__name__": "__main__", "display": print}
    for i, cell in enumerate(cells[:limit]):
        source = "".join(cell["source"])
        if any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
            raise SystemExit(f"cell {i} uses IPython syntax; this runner executes plain Python only")
        start = time.monotonic()
        exec(compile(source, f"{os.path.basename(path)}[cell {i}]", "exec"), namespace)
        print(f"cell {i} ok ({time.monotonic() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
