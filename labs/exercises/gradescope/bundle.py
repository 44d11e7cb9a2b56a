"""Build the Gradescope autograder zip for the section 17.14 exercises: ``setup.sh``, ``run_autograder`` and
the key folder as ``key/`` at the zip's root (Gradescope unzips it into ``/autograder/source``).

    python labs/exercises/gradescope/bundle.py autograder.zip [--key DIR] [--exercises ex1,ex7]

``--exercises`` names what the assignment asks for (a missing notebook then shows as failed tests).
The zip holds the answer key: upload it to Gradescope only, never hand it out.
"""

from __future__ import annotations

import argparse
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = os.path.join(os.path.dirname(HERE), "solutions")


def bundle(out: str, key: str = KEY, exercises: str = "") -> list:
    """Write the zip to ``out``; return the names it holds."""
    if not os.path.isfile(os.path.join(key, "exercise_key.py")):
        raise ValueError(f"key must be the key folder holding exercise_key.py, got {key!r}")
    names = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for script in ("setup.sh", "run_autograder"):
            info = zipfile.ZipInfo(script)
            info.external_attr = 0o755 << 16  # executable once unzipped
            with open(os.path.join(HERE, script), "rb") as handle:
                zf.writestr(info, handle.read())
            names.append(script)
        for name in sorted(os.listdir(key)):
            if name.endswith((".py", ".ipynb")):
                zf.write(os.path.join(key, name), f"key/{name}")
                names.append(f"key/{name}")
        if exercises:
            info = zipfile.ZipInfo("exercises")
            info.external_attr = 0o644 << 16
            zf.writestr(info, exercises.strip() + "\n")
            names.append("exercises")
    return names


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the zip to write")
    parser.add_argument("--key", default=KEY, help="the key folder (default labs/exercises/solutions)")
    parser.add_argument("--exercises", default="", help="exercises the assignment asks for, e.g. ex1,ex7")
    args = parser.parse_args()
    try:
        print("\n".join(bundle(args.out, args.key, args.exercises)))
    except ValueError as exc:
        sys.exit(f"bundle: {exc}")
