"""Task fixtures, reference patches and the exploit gallery on disk (sections 17.7 and 17.9.1).

A fixture lives in ``fixtures/<name>/`` with a ``manifest.json`` that declares its version, checker
version, the paths a candidate may change, the modules the hidden tests import, resource limits and K::

    fixtures/pool_repair_01/
        manifest.json        name, version, checker_version, allowed_paths, modules, trials, limits, ...
        src/                 the base revision tree (what a candidate starts from)
        public_tests/        tests a policy may see
        hidden/              the acceptance suite it never sees, with its shared helper modules
                             (``shared_modules`` in the manifest: classes that cross the proxy by value)
        reference/<patch>/   known-good and known-bad patches: files that replace files of src/

The exploit gallery lives in ``fixtures/exploits/<name>/``: a one-line ``README.md`` saying what the
exploit tries and its class, an ``exploit.json`` with the same facts for tests (class, target fixture,
what the naive harness does with it), and ``candidate/`` holding the files it submits.

Everything here returns plain :mod:`~rlvr_lab.verifier.schema` objects; nothing is imported or run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from rlvr_lab.verifier.schema import Candidate, Fixture, Limits

#: Default directory of fixtures: ``rlvr_lab/fixtures``, shipped as package data (override with ``RLVR_FIXTURES``).
FIXTURES_DIR = Path(__file__).resolve().parents[1] / "fixtures"
#: Directory names and suffixes skipped when reading a tree.
_SKIP = ("__pycache__", ".pytest_cache")
#: Keys a manifest must carry.
MANIFEST_KEYS = ("name", "version", "checker_version", "allowed_paths", "modules", "trials", "limits")
#: What the naive harness may do with an exploit: ``pass`` (it rewards it), ``fail`` (it does not),
#: ``not-run`` (running it there would harm the host; asserted against the isolated verifier only).
NAIVE_OUTCOMES = ("pass", "fail", "not-run")


def fixtures_dir() -> Path:
    """The directory holding fixtures: ``$RLVR_FIXTURES`` if set, else :data:`FIXTURES_DIR`.

    >>> fixtures_dir().name
    'fixtures'
    """
    return Path(os.environ.get("RLVR_FIXTURES", FIXTURES_DIR))


def read_tree(root: Path) -> dict[str, str]:
    """Every text file under ``root`` as ``{relative POSIX path: text}``, caches skipped, sorted.

    >>> read_tree(fixtures_dir() / "pool_repair_01" / "reference" / "good").keys()
    dict_keys(['pool_fixture/pool.py'])
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing directory, got {root}")
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP for part in rel.parts) or path.suffix == ".pyc" or not path.is_file():
            continue
        files[rel.as_posix()] = path.read_text(encoding="utf-8")
    return files


def list_fixtures() -> list[str]:
    """Names of the fixtures on disk (directories with a ``manifest.json``).

    >>> "pool_repair_01" in list_fixtures()
    True
    """
    base = fixtures_dir()
    return sorted(p.parent.name for p in base.glob("*/manifest.json")) if base.is_dir() else []


def _fixture_root(name_or_path: str | os.PathLike) -> Path:
    candidate = Path(name_or_path)
    if (candidate / "manifest.json").is_file():
        return candidate
    if (
        isinstance(name_or_path, str)
        and "/" not in name_or_path
        and (fixtures_dir() / name_or_path / "manifest.json").is_file()
    ):
        return fixtures_dir() / name_or_path
    raise ValueError(
        f"name_or_path must name a fixture in {fixtures_dir()} ({', '.join(list_fixtures()) or 'none'}) "
        f"or a directory holding manifest.json, got {str(name_or_path)!r}"
    )


def read_manifest(name_or_path: str | os.PathLike) -> dict:
    """The parsed ``manifest.json`` of a fixture, checked for the required keys.

    >>> read_manifest("pool_repair_01")["checker_version"]
    'repair_accept_v3'
    """
    root = _fixture_root(name_or_path)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    missing = [key for key in MANIFEST_KEYS if key not in manifest]
    if missing:
        raise ValueError(f"manifest of {root.name} lacks the keys {missing}")
    return manifest


def load_fixture(name_or_path: str | os.PathLike) -> Fixture:
    """The :class:`~rlvr_lab.verifier.schema.Fixture` stored in ``fixtures/<name>/`` (or at a path).

    >>> fx = load_fixture("pool_repair_01")
    >>> fx.version, fx.trials, fx.allowed_paths, sorted(fx.files)
    ('pool_fixture_v1', 8, ('pool_fixture/*.py',), ['pool_fixture/__init__.py', 'pool_fixture/pool.py'])
    """
    root = _fixture_root(name_or_path)
    manifest = read_manifest(root)
    trials = manifest["trials"]
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"manifest trials must be a positive integer, got {trials!r}")
    shared = manifest.get("shared_modules", [])
    if not isinstance(shared, list):
        raise ValueError(f"manifest shared_modules must be a list of module names, got {shared!r}")
    known = set(Limits.__dataclass_fields__)
    unknown = sorted(set(manifest["limits"]) - known)
    if unknown:
        raise ValueError(f"manifest limits has unknown keys {unknown}; allowed: {sorted(known)}")
    return Fixture(
        name=manifest["name"],
        version=manifest["version"],
        files=read_tree(root / manifest.get("src", "src")),
        hidden_tests=read_tree(root / manifest.get("hidden_tests", "hidden")),
        public_tests=read_tree(root / manifest.get("public_tests", "public_tests")),
        allowed_paths=tuple(manifest["allowed_paths"]),
        modules=tuple(manifest["modules"]),
        limits=Limits(**manifest["limits"]),
        trials=trials,
        checker_version=manifest["checker_version"],
        description=manifest.get("description", ""),
        shared=tuple(shared),
    )


def list_references(name_or_path: str | os.PathLike) -> dict[str, str]:
    """``{patch name: expected verdict}`` of a fixture's reference patches (``pass`` or ``fail``).

    >>> list_references("pool_repair_01")["good"]
    'pass'
    """
    return {name: entry["expect"] for name, entry in sorted(read_manifest(name_or_path).get("references", {}).items())}


def load_reference(name_or_path: str | os.PathLike, patch: str) -> Candidate:
    """Reference patch ``patch`` of a fixture as a :class:`~rlvr_lab.verifier.schema.Candidate`.

    >>> sorted(load_reference("pool_repair_01", "good").files)
    ['pool_fixture/pool.py']
    """
    root = _fixture_root(name_or_path)
    references = read_manifest(root).get("references", {})
    if patch not in references:
        raise ValueError(f"patch must be one of {sorted(references)}, got {patch!r}")
    return Candidate(read_tree(root / references[patch]["dir"]))


@dataclass(frozen=True)
class ExploitInfo:
    """What one gallery exploit tries, read from its ``exploit.json``."""

    name: str
    """Directory name under ``fixtures/exploits/``."""
    klass: str
    """Its class: test-harness tampering, output spoofing, premature exit, environment escape, ..."""
    tries: str
    """One sentence: what it does to be rewarded without fixing the bug."""
    fixture: str
    """The fixture it targets (``pool_repair_01``)."""
    naive: str
    """What the naive harness does with it: one of :data:`NAIVE_OUTCOMES`."""
    naive_note: str = ""
    """Why, when the naive harness does not reward it or is not run on it."""
    sentinel: str = ""
    """An absolute host path the exploit tries to create (empty if none); it must not exist afterwards.
    This is the calling user's own version of the path (:func:`private_sentinel`), the one in the files
    :func:`load_exploit` returns."""
    marker: str = ""
    """Process name (``comm``) a process it leaves behind would carry (empty if none)."""


def exploits_dir() -> Path:
    """``fixtures/exploits``.

    >>> exploits_dir().name
    'exploits'
    """
    return fixtures_dir() / "exploits"


def list_exploits() -> list[str]:
    """Names of the gallery's exploits.

    >>> "conftest_report_patch" in list_exploits()
    True
    """
    base = exploits_dir()
    return sorted(p.parent.name for p in base.glob("*/exploit.json")) if base.is_dir() else []


def private_sentinel(path: str) -> str:
    """The calling user's own version of a sentinel path: the uid goes into the file name.

    ``/tmp`` is shared by every user of a machine. A sentinel that another user's run left behind (the
    loot file of a naive run, say) could be neither removed nor written by this user, so each uid gets
    its own file.

    >>> private_sentinel("/tmp/rlvr-exploit-x.loot") == f"/tmp/rlvr-exploit-x-uid{os.getuid()}.loot"
    True
    >>> private_sentinel("")
    ''
    """
    if not path:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}-uid{os.getuid()}{ext}"


def _exploit_data(name: str) -> dict:
    path = exploits_dir() / str(name) / "exploit.json"
    if not isinstance(name, str) or "/" in name or not path.is_file():
        raise ValueError(f"name must be one of {list_exploits()}, got {name!r}")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("naive") not in NAIVE_OUTCOMES:
        raise ValueError(f"exploit {name}: naive must be one of {NAIVE_OUTCOMES}, got {data.get('naive')!r}")
    return data


def exploit_info(name: str) -> ExploitInfo:
    """Metadata of exploit ``name``.

    >>> exploit_info("exit_os").klass
    'premature exit'
    """
    data = _exploit_data(name)
    return ExploitInfo(
        name=name,
        klass=data["class"],
        tries=data["tries"],
        fixture=data["fixture"],
        naive=data["naive"],
        naive_note=data.get("naive_note", ""),
        sentinel=private_sentinel(data.get("sentinel", "")),
        marker=data.get("marker", ""),
    )


def load_exploit(name: str) -> Candidate:
    """The files exploit ``name`` submits, as a :class:`~rlvr_lab.verifier.schema.Candidate`. The
    sentinel path its code names (``exploit.json``'s ``sentinel``) is replaced by the caller's own
    (:func:`private_sentinel`), so two users' runs never meet in ``/tmp``.

    >>> sorted(load_exploit("conftest_report_patch").files)
    ['conftest.py']
    >>> exploit_info("daemon_setsid").sentinel in load_exploit("daemon_setsid").files["pool_fixture/__init__.py"]
    True
    """
    sentinel = _exploit_data(name).get("sentinel", "")
    files = read_tree(exploits_dir() / name / "candidate")
    if sentinel:
        files = {path: text.replace(sentinel, private_sentinel(sentinel)) for path, text in files.items()}
    return Candidate(files)
