"""One build of the course book shared by tests/test_book_build.py and tests/test_browser.py.

The first caller (in any pytest-xdist worker) builds the book with ``jupyter-book build . -W -n
--keep-going`` into a directory under pytest's shared base temp; every other caller waits on a file
lock and reuses the result, so the suite executes the chapters once.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WIDGET_JS = ROOT / "book" / "_static" / "widgets-js"


@dataclass
class BookBuild:
    """The outcome of one book build."""

    returncode: int
    """Exit status of ``jupyter-book build``."""
    log: str
    """Its combined stdout and stderr."""
    html: Path
    """The built site (``.../_build/html``)."""
    seconds: float
    """Wall-clock build time."""


def toc_files() -> list[str]:
    """Every document the table of contents names, root first (paths without suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part.get("chapters", [])]
    files += [c["file"] for c in toc.get("chapters", [])]
    return files


def source_of(doc: str) -> Path:
    """The source file (.ipynb or .md) of a toc entry."""
    for suffix in (".ipynb", ".md"):
        if (ROOT / (doc + suffix)).exists():
            return ROOT / (doc + suffix)
    raise FileNotFoundError(f"no .ipynb or .md source for toc entry {doc!r}")


#: Files a static host sends as they are (already compressed); it gzips the rest (HTML, scripts, styles).
COMPRESSED_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".woff", ".woff2", ".ico")


def sent_bytes(path: Path) -> int:
    """The bytes a gzip-compressing static host (GitHub Pages) sends for one file of the site."""
    import gzip

    data = path.read_bytes()
    return len(data) if path.suffix in COMPRESSED_SUFFIXES else len(gzip.compress(data, 6))


def ensure_widget_js() -> None:
    """Fetch the widget JavaScript (scripts/setup.d/widgets_js.sh) if ``make setup`` has not yet."""
    if (WIDGET_JS / "embed-amd.js").exists() and (WIDGET_JS / "require.min.js").exists():
        return
    subprocess.run(["bash", str(ROOT / "scripts" / "setup.d" / "widgets_js.sh")], check=True, cwd=ROOT)


def shared_dir(tmp_path_factory) -> Path:
    """A directory this test session shares between its xdist workers, and only with them.

    ``RLVR_BOOK_DIR`` names such a directory explicitly, kept between runs. Under pytest-xdist every
    worker's base temp sits in the session's own ``pytest-N`` folder, so its
    parent is shared by the workers of this run; without xdist the base temp itself is this run's.
    """
    if os.environ.get("RLVR_BOOK_DIR"):
        # A directory kept between runs: the first run builds, later runs reuse its book-build.json
        # (delete that file to build again).
        return Path(os.environ["RLVR_BOOK_DIR"]).resolve()
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "rlvr-book"


def own_network(cmd: list[str]) -> list[str]:
    """``cmd`` run in a network namespace of its own (with its own loopback up) where this machine allows it.

    Chapter 6 runs the exploit gallery through a naive harness, and its network exploit connects to
    127.0.0.1:47811, the port where tests/test_redteam.py and tests/test_backends.py listen to catch a
    sandboxed candidate reaching the host. A book built beside those tests on the host's loopback would be
    counted as such a breach; in its own namespace it reaches nothing of theirs. Elsewhere (not root, no
    ``unshare`` or ``ip``) the command runs as it is.
    """
    if os.geteuid() != 0 or not all(shutil.which(tool) for tool in ("unshare", "ip")):
        return cmd
    probe = subprocess.run(["unshare", "--net", "ip", "link", "set", "lo", "up"], capture_output=True)
    if probe.returncode != 0:
        return cmd
    return ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *cmd]


def build_book(shared_dir: Path) -> BookBuild:
    """Build the book once into ``shared_dir/book``; later calls (any process) reuse the result.

    If ``RLVR_BOOK_HTML`` names an already built site (the Pages workflow builds first, then runs the
    browser test), that site is used as is and nothing is rebuilt.
    """
    prebuilt = os.environ.get("RLVR_BOOK_HTML")
    if prebuilt:
        html = Path(prebuilt).resolve()
        if not (html / "book" / "intro.html").exists():
            raise FileNotFoundError(f"RLVR_BOOK_HTML={prebuilt} holds no built book (book/intro.html missing)")
        return BookBuild(0, "prebuilt site from RLVR_BOOK_HTML; build succeeded", html, 0.0)
    shared_dir.mkdir(parents=True, exist_ok=True)
    out = shared_dir / "book"
    result = shared_dir / "book-build.json"
    with open(shared_dir / "book-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if result.exists():
                data = json.loads(result.read_text())
                return BookBuild(data["returncode"], data["log"], Path(data["html"]), data["seconds"])
            ensure_widget_js()
            jb = Path(sys.executable).with_name("jupyter-book")
            cmd = [
                str(jb) if jb.exists() else "jupyter-book",
                "build",
                str(ROOT),
                "--path-output",
                str(out),
                "-W",
                "-n",
                "--keep-going",
                "--all",
            ]
            env = dict(os.environ, MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1")
            start = time.monotonic()
            proc = subprocess.run(own_network(cmd), cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500)
            seconds = time.monotonic() - start
            build = BookBuild(proc.returncode, proc.stdout + proc.stderr, out / "_build" / "html", seconds)
            result.write_text(
                json.dumps(
                    {
                        "returncode": build.returncode,
                        "log": build.log,
                        "html": str(build.html),
                        "seconds": build.seconds,
                    }
                )
            )
            return build
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
