"""Runs one submitted notebook inside the grading sandbox and reports plain data (section 17.14, 17.7).

The only grading code on the student's side of the boundary; it holds no expected value and no secret.
Standard library only at import time, and never imported from the library a notebook sees: it is run by
path. :func:`serve` is loaded by the zygote as the sandbox's server (in place of
:mod:`rlvr_lab.verifier.proxy.server`) and becomes (``os.execve``) the course's interpreter running the
copy staged beside the library; :func:`main` runs the code cells in an IPython shell and sends, after
each cell, its outcome, the answer variables' values (:func:`encode`) and integrity evidence as a frame
(a 4-byte big-endian length and UTF-8 JSON). Forged frames can only claim values, as assigning them does.
"""

import json
import os
import struct
import sys
import time

#: Characters of each cell's output kept for the report.
OUTPUT_EXCERPT = 2000
#: Total characters of output a notebook may print through ``sys.stdout``/``sys.stderr``.
OUTPUT_CAP = 8 * 1024 * 1024
#: Longest list or tuple answer reported, and the deepest nesting.
MAX_ITEMS, MAX_DEPTH = 100, 2


def serve(rfd, wfd, workdir="."):
    """Stage 1 (zygote's sandbox process): replace this process with the executor. Never returns."""
    with open(os.path.join(workdir, "run.json"), encoding="utf-8") as handle:
        run = json.load(handle)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }
    library_path = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") + run.get("ld_path", []) if p]
    if library_path:  # the docker image's interpreter, and the host libraries numpy links against
        env["LD_LIBRARY_PATH"] = ":".join(library_path)
    os.set_inheritable(rfd, True)
    os.execve(
        run["python"],
        [
            run["python"],
            "-B",
            "-s",
            run["executor"],
            "--fd",
            str(rfd),
            "--workdir",
            os.path.abspath(workdir),
            "--lib",
            run["lib"],
            "--site",
            ":".join(run.get("site", [])),
        ],
        env,
    )


def encode(value, depth=0):
    """A student's answer as JSON-ready plain data; anything else is ``{"$unsupported": type}``.

    Exact types only (a subclass is unsupported): None, bool, int, float, str, Fraction, Decimal, numpy
    scalars and size-1 numeric arrays, and short lists/tuples of those.

    >>> from fractions import Fraction
    >>> encode([1, 2.5, True, Fraction(1, 3), float("nan")])
    [1, 2.5, True, {'$fraction': '1/3'}, {'$float': 'nan'}]
    >>> class Sneaky(float): pass
    >>> encode(Sneaky(1.0))
    {'$unsupported': 'Sneaky'}
    """
    kind = type(value)
    if value is None or kind is bool or kind is str and len(value) <= 1000:
        return value
    if kind is int:
        return value if value.bit_length() <= 4096 else {"$unsupported": "int (too large)"}
    if kind is float:
        return value if value == value and abs(value) != float("inf") else {"$float": repr(value)}
    if kind.__module__ == "fractions" and kind.__name__ == "Fraction":
        return {"$fraction": f"{int(value.numerator)}/{int(value.denominator)}"}
    if kind.__module__ == "decimal" and kind.__name__ == "Decimal":
        return {"$decimal": str(value)[:200]}
    if kind.__module__ == "numpy":
        dtype = getattr(value, "dtype", None)
        if dtype is not None and dtype.kind in "biuf" and int(value.size) == 1 and value.ndim <= 2:
            item = value.reshape(-1)[0].item() if kind.__name__ == "ndarray" else value.item()
            return encode(item, depth)
    if kind in (list, tuple) and depth < MAX_DEPTH and len(value) <= MAX_ITEMS:
        return (
            {"$tuple": [encode(v, depth + 1) for v in value]}
            if kind is tuple
            else [encode(v, depth + 1) for v in value]
        )
    return {"$unsupported": kind.__name__[:60]}


class _Writer:
    """Frames to the grader, through references taken before any student code runs."""

    def __init__(self, fd):
        self.fd, self.write, self.pack = fd, os.write, struct.pack
        self.dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode
        self.exit = os._exit

    def send(self, message):
        data = self.dumps(message).encode("ascii")
        data = self.pack(">I", len(data)) + data
        while data:
            data = data[self.write(self.fd, data) :]


class _Capture:
    """A bounded text sink standing in for sys.stdout/sys.stderr during a cell."""

    def __init__(self, on_cap):
        self.total, self.parts, self.kept, self.on_cap = 0, [], 0, on_cap

    def write(self, text):
        text = text if type(text) is str else str(text)
        self.total += len(text)
        if self.kept < OUTPUT_EXCERPT:
            self.parts.append(text[: OUTPUT_EXCERPT - self.kept])
            self.kept += len(self.parts[-1])
        if self.total > OUTPUT_CAP:
            self.on_cap()
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def text(self):
        return "".join(self.parts)


def _watchlist(checks_module):
    """(label, getter, original) for every piece of grading machinery a cell could replace."""
    import builtins
    import hashlib
    import math

    items = []
    for mod, names in (
        (builtins, ("print", "isinstance", "type", "float", "int", "str", "open", "__import__")),
        (math, ("isclose", "isfinite", "floor", "ceil", "log10")),
        (json, ("dumps", "loads")),
        (hashlib, ("pbkdf2_hmac",)),
        (os, ("write",)),
    ):
        for name in names:
            items.append((f"{mod.__name__}.{name}", (lambda m=mod, n=name: getattr(m, n, None)), getattr(mod, name)))
    if checks_module is not None:
        items.append(("sys.modules['rlvr_lab.checks']", lambda: sys.modules.get("rlvr_lab.checks"), checks_module))
        for ex in [n for n in getattr(checks_module, "__all__", ()) if n.startswith("ex")]:
            cls = getattr(checks_module, ex)
            for part in sorted(k for k in vars(cls) if k.startswith("part_")):
                fn = getattr(cls, part)
                items.append((f"rlvr_lab.checks.{ex}.{part}", (lambda c=cls, p=part: getattr(c, p, None)), fn))
        for name in ("self_check", "answer_hash", "_check_value", "_matches", "_numbers_near", "_load_table"):
            fn = getattr(checks_module, name)
            items.append((f"rlvr_lab.checks.{name}", (lambda n=name: getattr(checks_module, n, None)), fn))
            items.append((f"rlvr_lab.checks.{name}.__code__", (lambda f=fn: f.__code__), fn.__code__))
    return items


def _evidence(watch, shell, checks_module, seen):
    """New integrity findings after a cell (each reported once)."""
    found = []
    for label, get, original in watch:
        try:
            same = get() is original
        except BaseException:
            same = False
        if not same:
            found.append(f"{label} was replaced")
    if checks_module is not None and "checks" in shell.user_ns and shell.user_ns.get("checks") is not checks_module:
        found.append("the name `checks` no longer names rlvr_lab.checks")
    if sys.getprofile() is not None or sys.gettrace() is not None:
        found.append("a sys.setprofile/settrace hook is installed")
    new = [f for f in found if f not in seen]
    seen.update(new)
    return new


def main(argv=None):
    """Stage 2: run the notebook's cells in an InteractiveShell and report each one to the grader."""
    argv = sys.argv[1:] if argv is None else argv
    opts = dict(zip(argv[::2], argv[1::2]))
    out = _Writer(int(opts["--fd"]))
    sys.path[:] = [opts["--lib"]] + [p for p in sys.path[1:] if p] + [p for p in opts.get("--site", "").split(":") if p]
    with open(os.path.join(opts["--workdir"], "cells.json"), encoding="utf-8") as handle:
        spec = json.load(handle)
    import tempfile

    os.chdir(tempfile.mkdtemp(prefix="notebook-", dir="/tmp"))
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.xmode = "Plain"
    shell = InteractiveShell.instance(config=config)
    try:
        import rlvr_lab.checks as checks_module
    except ImportError:
        checks_module = None
    watch, seen = _watchlist(checks_module), set()
    names = list(spec["names"])
    out.send({"t": "ready", "cells": len(spec["cells"])})
    for index, source in enumerate(spec["cells"]):
        sink = _Capture(lambda i=index: (out.send({"t": "output_cap", "i": i}), out.exit(0)))
        sys.stdout = sys.stderr = sink
        started = time.monotonic()
        error = None
        try:
            result = shell.run_cell(source, store_history=False)
            failure = result.error_before_exec or result.error_in_exec
            if failure is not None:
                try:
                    error = f"{type(failure).__name__}: {failure}"[:300]
                except BaseException:
                    error = type(failure).__name__
        except BaseException as exc:  # IPython itself failed on this cell
            error = f"{type(exc).__name__} while running the cell"
        elapsed = time.monotonic() - started
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        values = {}
        for name in names:
            try:
                values[name] = encode(shell.user_ns[name]) if name in shell.user_ns else {"$missing": True}
            except BaseException as exc:
                values[name] = {"$unsupported": type(exc).__name__}
        out.send(
            {
                "t": "cell",
                "i": index,
                "error": error,
                "out": sink.text(),
                "chars": sink.total,
                "s": round(elapsed, 4),
                "values": values,
                "evidence": _evidence(watch, shell, checks_module, seen),
            }
        )
    out.send({"t": "done"})
    out.exit(0)


if __name__ == "__main__":
    main()
