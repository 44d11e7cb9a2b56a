"""``rlvr-lab grade``: grade section 17.14 exercise notebooks without trusting them.

Threat model. A submission is untrusted code. It may crash its kernel, loop forever, redefine or
monkeypatch a checker, replace ``rlvr_lab.checks`` in ``sys.modules``, edit a check cell, print
``correct`` itself, or ship stored outputs that look like passes. The design:

1. **Never read the submission's outputs.** The grader copies each notebook, strips every stored
   output and cell metadata, and executes it afresh with nbval (``pytest --nbval-lax``), in parallel
   over submissions with pytest-xdist (``--dist loadfile``: one kernel per notebook).
2. **Check cells come from the key.** Each part's check cell is located in the submission by its exact
   source as it appears in the key notebook (``--key``, default ``labs/exercises/solutions``). A part
   whose check cell is missing or edited scores zero ("tampered: check cell edited").
3. **Record cells are injected at grading time.** Right after each check cell the grader inserts a
   record cell that the student has never seen, tagged with a fresh random nonce. It serialises the
   part's named variables to plain JSON (numbers, booleans, strings, lists) together with integrity
   evidence: whether ``sys.modules['rlvr_lab.checks']`` is the installed file, whether the notebook's
   ``checks`` name is that module, and a hash of the code of every function in ``rlvr_lab.checks`` and
   the math modules it uses.
4. **The verdict is computed by the grader, not by the kernel.** A pytest plugin running in the pytest
   process (not in the kernel) reads the output of exactly the injected cell, immediately after it ran,
   and keeps only the line carrying the nonce. The grader then calls :func:`rlvr_lab.checks.verify` in
   its own process on those plain values. Patching a checker in the kernel therefore changes only the
   student's own printout; printing ``correct`` changes nothing.
5. **Tampering is also flagged.** Evidence that differs from the grader's own fingerprint, or a static
   pattern in a student cell (assigning into ``checks``/``rlvr_lab``, ``sys.modules``, ``setattr``,
   builtins, IPython event hooks, ``exec``), zeroes the parts checked after it.
6. **Time limits.** Every notebook has a budget (``--timeout``, seconds): nbval interrupts a cell that
   runs past it, the plugin skips the notebook's remaining cells once its budget is spent, and an outer
   wall-clock guard kills the whole pytest run if needed. Parts without a record score zero; the other
   submissions are unaffected.

Limits: the kernel runs with the grader's user rights (grade inside a container for isolation), and a
student who rewrites ``json``/``print`` in the kernel can forge the *values* in the record -- which
requires knowing the right values, i.e. solving the exercise.
"""

from __future__ import annotations

import glob
import inspect
import json
import math
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

RECORD_TAG = "# RLVR-GRADER-RECORD"
RECORD_PREFIX = "RLVR-RECORD"
CONFIG_ENV = "RLVR_GRADER_CONFIG"
DEFAULT_KEY = os.path.join("labs", "exercises", "solutions")
#: Modules whose code the integrity evidence covers (only those imported in the kernel are compared).
WATCHED_MODULES = ("rlvr_lab.checks", "rlvr_lab.rewards", "rlvr_lab.credit", "rlvr_lab.cycle_time",
                   "rlvr_lab.grpo")
_CHECK_CALL = re.compile(r"checks\.(ex\d+)\.(part_[a-z])\(")
#: Static patterns that mark a student cell as tampering with the grading machinery.
TAMPER_PATTERNS = (
    (re.compile(r"\bsys\.modules\b"), "touches sys.modules"),
    (re.compile(r"^\s*(?:rlvr_lab\.)?checks(?:\.\w+)*\s*(?:=|\+=)(?!=)", re.M), "assigns to checks"),
    (re.compile(r"^\s*rlvr_lab(?:\.\w+)+\s*=(?!=)", re.M), "assigns into rlvr_lab"),
    (re.compile(r"\b(?:setattr|delattr)\s*\("), "uses setattr/delattr"),
    (re.compile(r"\b__builtins__\b|\bimport\s+builtins\b|\bfrom\s+builtins\b"), "touches builtins"),
    (re.compile(r"\bevents\.register\b|\binput_transformers\b|\bast_transformers\b"), "installs IPython hooks"),
    (re.compile(r"(?<![\w.])(?:exec|compile)\s*\("), "uses exec/compile"),
    (re.compile(r"\bimportlib\.reload\b|\bunittest\.mock\b|\bmonkeypatch\b"), "reloads or mocks modules"),
    (re.compile(RECORD_PREFIX + "|" + RECORD_TAG.lstrip("# ")), "imitates a grader record"),
)


# ---------------------------------------------------------------- integrity fingerprint


def module_fingerprint(module) -> dict:
    """Hash the code and simple constants of ``module`` (the grader's integrity evidence, section 17.14).

    Returns ``{"__file__": path, name: sha256 hex}`` for every function, every function inside a class,
    and every number/string/tuple/dict constant defined in the module. The same source is injected into
    the student kernel, so the two sides compute the same fingerprint of an untouched module.

    >>> import rlvr_lab.checks as c
    >>> fp = module_fingerprint(c)
    >>> fp["__file__"].endswith("checks.py") and len(fp["ex1.part_a"]) == 64
    True
    """
    import hashlib as _hashlib

    def code_text(code):
        consts = [code_text(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
        return repr((code.co_code, code.co_names, code.co_varnames, code.co_freevars, consts))

    def code_hash(fn):
        code = getattr(fn, "__code__", None)
        if code is None:
            return "not-a-function:" + type(fn).__name__
        return _hashlib.sha256(code_text(code).encode()).hexdigest()

    out = {"__file__": str(getattr(module, "__file__", None))}
    for name, value in sorted(vars(module).items()):
        if name.startswith("__"):
            continue
        if isinstance(value, type) and value.__module__ == module.__name__:
            for attr, member in sorted(vars(value).items()):
                if attr.startswith("__"):
                    continue
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if callable(member):
                    out[name + "." + attr] = code_hash(member)
        elif callable(value) and getattr(value, "__module__", None) == module.__name__:
            out[name] = code_hash(value)
        elif isinstance(value, (int, float, str, tuple, dict)) and " at 0x" not in repr(value):
            out[name] = _hashlib.sha256(repr(value).encode()).hexdigest()
    return out


def _record_cell(nonce: str, part_id: str, names: tuple) -> str:
    """Source of the record cell injected after the check cell of ``part_id``."""
    fingerprint_src = inspect.getsource(module_fingerprint)
    return f'''{RECORD_TAG} {nonce} {part_id}
def __rlvr_grader_record():
    import json, sys
{_indent(fingerprint_src)}
    def plain(value, depth=0):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value) if value == value and abs(value) != float("inf") else repr(value)
        if hasattr(value, "item") and getattr(value, "size", 2) == 1:
            return plain(value.item(), depth)
        if isinstance(value, (list, tuple)) and depth < 2 and len(value) <= 100:
            return [plain(v, depth + 1) for v in value]
        return {{"__unsupported__": type(value).__name__}}
    ns = globals()
    values = {{name: plain(ns.get(name)) for name in {list(names)!r}}}
    evidence = {{"modules": {{}}}}
    for mod_name in {list(WATCHED_MODULES)!r}:
        mod = sys.modules.get(mod_name)
        if mod is not None:
            try:
                evidence["modules"][mod_name] = module_fingerprint(mod)
            except Exception as exc:
                evidence["modules"][mod_name] = {{"__error__": repr(exc)}}
    user_checks = ns.get("checks", None)
    evidence["checks_is_module"] = user_checks is None or user_checks is sys.modules.get("rlvr_lab.checks")
    line = json.dumps({{"part": "{part_id}", "values": values, "evidence": evidence}})
    print("{RECORD_PREFIX} {nonce} " + line)
__rlvr_grader_record()
del __rlvr_grader_record
'''


def _indent(text: str, prefix: str = "    ") -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(True))


# ---------------------------------------------------------------- key and submissions


def _read_notebook(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        nb = json.load(handle)
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError(f"submission {path!r} is not a notebook (no cell list)")
    return nb


def _source(cell) -> str:
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(src) if isinstance(src, list) else str(src)


def key_check_cells(key_path: str) -> dict:
    """Return ``{part_id: check-cell source}`` of one key (reference-solution) notebook, in order.

    >>> cells = key_check_cells("labs/exercises/solutions/ex1_false_accepts.ipynb")
    >>> list(cells)
    ['ex1.part_a', 'ex1.part_b', 'ex1.part_c']
    """
    out = {}
    for cell in _read_notebook(key_path)["cells"]:
        if cell.get("cell_type") != "code":
            continue
        src = _source(cell).strip()
        match = _CHECK_CALL.search(src)
        if match and src.count("\n") == 0:
            out[f"{match.group(1)}.{match.group(2)}"] = src
    return out


def load_key(key_dir: str) -> dict:
    """Return ``{stem: {part_id: check source}}`` for every notebook in ``key_dir``.

    >>> sorted(load_key("labs/exercises/solutions"))[:2]
    ['ex1_false_accepts', 'ex2_reward_order']
    """
    if not os.path.isdir(key_dir):
        raise ValueError(f"key must be a directory of reference-solution notebooks, got {key_dir!r}")
    key = {}
    for path in sorted(glob.glob(os.path.join(key_dir, "*.ipynb"))):
        cells = key_check_cells(path)
        if cells:
            key[os.path.splitext(os.path.basename(path))[0]] = cells
    if not key:
        raise ValueError(f"key directory {key_dir!r} holds no notebook with check cells")
    return key


def collect_submissions(paths) -> list:
    """Expand files and folders into a sorted list of ``.ipynb`` paths (checkpoints excluded)."""
    found = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
                found += [os.path.join(root, f) for f in sorted(files) if f.endswith(".ipynb")]
        elif os.path.isfile(path) and path.endswith(".ipynb"):
            found.append(path)
        else:
            raise ValueError(f"submission must be a .ipynb file or a folder, got {path!r}")
    if not found:
        raise ValueError("submission: no .ipynb notebook found in " + ", ".join(map(repr, paths)))
    return found


def match_exercise(nb: dict, path: str, key: dict) -> str | None:
    """Pick the key notebook a submission answers: by file name, else by the most matching check cells."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem in key:
        return stem
    sources = {_source(c).strip() for c in nb["cells"] if isinstance(c, dict)}
    best, hits = None, 0
    for name, cells in key.items():
        n = sum(src in sources for src in cells.values())
        if n > hits:
            best, hits = name, n
    return best


def static_findings(source: str) -> list:
    """Return the tampering patterns a student cell matches (empty for an honest cell).

    >>> static_findings("import sys\\nsys.modules['rlvr_lab.checks'] = None")
    ['touches sys.modules']
    >>> static_findings("share_early = rewards.false_accept_share(0.04, 0.02)")
    []
    >>> static_findings("pattern = re.compile('x')"), static_findings("exec('checks = 1')")
    ([], ['uses exec/compile'])
    """
    return [reason for pattern, reason in TAMPER_PATTERNS if pattern.search(source)]


def prepare(nb: dict, checks: dict, nonce: str) -> tuple:
    """Build the notebook the grader executes, and note what it found.

    Returns ``(prepared notebook, located parts, static tampering)`` where located parts maps part id to
    the index of its check cell, and static tampering maps part id to the reasons found in student cells
    that run before that part's check.
    """
    from rlvr_lab.checks import PARTS

    clean_cells, located, static, seen = [], {}, {}, []
    wanted = {src: part for part, src in checks.items()}
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = _source(cell)
        part = wanted.get(src.strip())
        new = {"cell_type": "code", "metadata": {}, "source": src, "outputs": [], "execution_count": None}
        clean_cells.append(new)
        if part is not None and part not in located:
            located[part] = len(clean_cells) - 1
            if seen:
                static[part] = sorted(set(seen))
            clean_cells.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                "source": _record_cell(nonce, part, PARTS[part].names)})
        else:
            seen += static_findings(src)
    prepared = {"cells": clean_cells, "nbformat": 4, "nbformat_minor": 5,
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    return prepared, located, static


# ---------------------------------------------------------------- grading (grader process side)


def _trusted_fingerprints() -> dict:
    import importlib

    out = {}
    for name in WATCHED_MODULES:
        try:
            out[name] = module_fingerprint(importlib.import_module(name))
        except ImportError:
            continue
    return out


def tampering_in(record: dict, trusted: dict) -> list:
    """Return reasons why a record's integrity evidence shows tampering (empty when clean)."""
    reasons = []
    evidence = record.get("evidence") if isinstance(record, dict) else None
    if not isinstance(evidence, dict) or not isinstance(evidence.get("modules"), dict):
        return ["record carries no integrity evidence"]
    if evidence.get("checks_is_module") is not True:
        reasons.append("the name `checks` is not rlvr_lab.checks")
    for name, fingerprint in evidence["modules"].items():
        if name not in trusted:
            continue
        if fingerprint != trusted[name]:
            if not isinstance(fingerprint, dict) or fingerprint.get("__file__") != trusted[name]["__file__"]:
                reasons.append(f"{name} was replaced")
            else:
                changed = sorted(k for k in set(fingerprint) | set(trusted[name])
                                 if fingerprint.get(k) != trusted[name].get(k))
                reasons.append(f"{name} was modified ({', '.join(changed[:3])})")
    if "rlvr_lab.checks" in trusted and "rlvr_lab.checks" not in evidence["modules"]:
        reasons.append("rlvr_lab.checks is not loaded")
    return reasons


def score_submission(parts: list, located: dict, static: dict, events: list, trusted: dict) -> dict:
    """Score one executed submission from the records the plugin captured."""
    from rlvr_lab.checks import PARTS, verify

    records = {}
    for event in events:
        if event.get("event") == "record" and event["part"] not in records:
            records[event["part"]] = event.get("record")
    notes = sorted({e["event"] for e in events if e.get("event") in ("budget", "timeout")})
    result = {}
    for part in parts:
        entry = {"score": 0, "max": 1, "title": PARTS[part].title}
        if part not in located:
            entry.update(status="tampered", detail="check cell missing or edited")
        elif static.get(part):
            entry.update(status="tampered", detail="student code " + "; ".join(static[part]))
        elif records.get(part) is None:
            entry.update(status="not run", detail="no record: " + (", ".join(notes) if notes else
                                                                   "the record cell did not run"))
        else:
            reasons = tampering_in(records[part], trusted)
            if reasons:
                entry.update(status="tampered", detail="; ".join(reasons))
            else:
                values = records[part].get("values", {})
                try:
                    problems = verify(part, values if isinstance(values, dict) else {})
                except Exception as exc:  # a value the checker cannot handle is a wrong answer, not a crash
                    problems = [f"the checker could not evaluate the values ({type(exc).__name__}: {exc})"]
                if problems:
                    unanswered = all(v is None for v in values.values()) if values else True
                    entry.update(status="unanswered" if unanswered else "wrong", detail=" ".join(problems))
                else:
                    entry.update(status="correct", score=1, detail="")
        result[part] = entry
    return result


def _pytest_command(work: str, n_notebooks: int, workers: int, budget_s: float) -> list:
    cmd = [sys.executable, "-m", "pytest", "-c", os.path.join(work, "pytest.ini"), "--rootdir", work,
           "-p", "rlvr_lab.grading_plugin", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
           f"--nbval-cell-timeout={max(1, int(math.ceil(budget_s)))}", "-q", "--no-header", "-rN"]
    if workers > 1 and n_notebooks > 1:
        cmd += ["-n", str(min(workers, n_notebooks)), "--dist", "loadfile"]
    return cmd + [os.path.join(work, "nb")]


def grade(submissions, key_dir: str = DEFAULT_KEY, workers: int = 2, timeout_s: float = 120.0) -> dict:
    """Grade notebooks against the key; return the report (see ``rlvr-lab grade --json``).

    ``submissions`` are notebook paths or folders; ``timeout_s`` is each notebook's budget in seconds.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
    key = load_key(key_dir)
    paths = collect_submissions(submissions)
    nonce = secrets.token_hex(16)
    work = tempfile.mkdtemp(prefix="rlvr-grade-")
    entries = []
    try:
        os.makedirs(os.path.join(work, "nb"))
        os.makedirs(os.path.join(work, "results"))
        with open(os.path.join(work, "pytest.ini"), "w", encoding="utf-8") as handle:
            handle.write("[pytest]\naddopts =\n")
        for index, path in enumerate(paths):
            entry = {"path": path, "exercise": None, "nb_id": f"s{index:04d}", "error": None}
            entries.append(entry)
            try:
                nb = _read_notebook(path)
            except (OSError, ValueError) as exc:
                entry["error"] = f"unreadable notebook: {exc}"
                continue
            stem = match_exercise(nb, path, key)
            if stem is None:
                entry["error"] = "matches no exercise of the key"
                continue
            entry["exercise"] = stem
            prepared, entry["located"], entry["static"] = prepare(nb, key[stem], nonce)
            folder = os.path.join(work, "nb", entry["nb_id"])
            os.makedirs(folder)
            with open(os.path.join(folder, stem + ".ipynb"), "w", encoding="utf-8") as handle:
                json.dump(prepared, handle)
        runnable = [e for e in entries if e["error"] is None]
        config_path = os.path.join(work, "config.json")
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump({"nonce": nonce, "results": os.path.join(work, "results"), "budget_s": timeout_s}, handle)
        started = time.monotonic()
        if runnable:
            env = dict(os.environ, **{CONFIG_ENV: config_path})
            env["PYTHONPATH"] = os.pathsep.join(
                [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
                + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
            rounds = math.ceil(len(runnable) / max(1, min(workers, len(runnable))))
            guard = rounds * (timeout_s + 30) + 60
            proc = subprocess.Popen(_pytest_command(work, len(runnable), workers, timeout_s), cwd=work, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                proc.communicate(timeout=guard)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                for e in runnable:
                    with open(os.path.join(work, "results", e["nb_id"] + ".jsonl"), "a", encoding="utf-8") as handle:
                        handle.write(json.dumps({"event": "timeout"}) + "\n")
        elapsed = time.monotonic() - started
        trusted = _trusted_fingerprints()
        report = {"key": key_dir, "timeout_s": timeout_s, "workers": workers, "elapsed_s": round(elapsed, 1),
                  "submissions": []}
        for e in entries:
            item = {"path": e["path"], "exercise": e["exercise"], "error": e["error"], "parts": {}}
            if e["error"] is None:
                events = []
                results = os.path.join(work, "results", e["nb_id"] + ".jsonl")
                if os.path.exists(results):
                    with open(results, encoding="utf-8") as handle:
                        events = [json.loads(line) for line in handle if line.strip()]
                item["parts"] = score_submission(list(key[e["exercise"]]), e["located"], e["static"], events,
                                                 trusted)
            item["score"] = sum(p["score"] for p in item["parts"].values())
            item["max"] = sum(p["max"] for p in item["parts"].values())
            item["percent"] = round(100.0 * item["score"] / item["max"], 1) if item["max"] else 0.0
            report["submissions"].append(item)
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def format_table(report: dict) -> str:
    """Render the report as a plain-text score table: one row per submission and part."""
    lines = []
    for sub in report["submissions"]:
        lines.append(f"{sub['path']}  [{sub['exercise'] or '?'}]  {sub['score']}/{sub['max']}  "
                     f"({sub['percent']:.0f} %)")
        if sub["error"]:
            lines.append(f"    error: {sub['error']}")
        for part, entry in sub["parts"].items():
            detail = f"  {entry['detail']}" if entry["detail"] else ""
            lines.append(f"    {part:<11} {entry['score']}/{entry['max']}  {entry['status']:<10}{detail[:160]}")
    total = sum(s["score"] for s in report["submissions"])
    most = sum(s["max"] for s in report["submissions"])
    lines.append(f"total {total}/{most} over {len(report['submissions'])} notebooks "
                 f"in {report['elapsed_s']} s")
    return "\n".join(lines)


def register(subparsers) -> None:
    """Add ``rlvr-lab grade SUBMISSION... [--key DIR] [--json OUT]`` to the CLI."""
    parser = subparsers.add_parser("grade", help="grade section 17.14 exercise notebooks (nbval, tamper-proof)",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="notebooks or folders of notebooks")
    parser.add_argument("--key", default=DEFAULT_KEY, metavar="DIR",
                        help=f"folder of reference-solution notebooks (default {DEFAULT_KEY})")
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the full report as JSON")
    parser.add_argument("--workers", type=int, default=2, help="notebooks executed in parallel (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="budget per notebook in seconds (default 120)")
    parser.set_defaults(func=run)


def run(args) -> int:
    """Grade, print the table, optionally write JSON; exit code 0 (grading never fails on a bad submission)."""
    key = args.key
    if key == DEFAULT_KEY and not os.path.isdir(key):  # run outside the repository root: use the checkout's key
        key = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), DEFAULT_KEY)
    try:
        report = grade(args.submissions, key_dir=key, workers=args.workers, timeout_s=args.timeout)
    except ValueError as exc:
        print(f"rlvr-lab grade: {exc}", file=sys.stderr)
        return 2
    print(format_table(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    return 0
