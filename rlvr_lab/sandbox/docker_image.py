"""The docker backend's sandbox image: a Python interpreter and its standard library, nothing else (section 17.7).

:func:`build_image` makes :data:`IMAGE` once with ``docker import`` from a tar stream of this machine's
own interpreter (:func:`rootfs_tar`): no registry, no base image, no shell. :func:`docker_client` is the
engine's client for :mod:`~rlvr_lab.sandbox.docker`, which runs one container of this image per
trial. Command line: ``python -m rlvr_lab.sandbox.docker_image build [--force]``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from rlvr_lab.sandbox.backend import SandboxUnavailable

#: Tag of the sandbox image built by :func:`build_image`.
IMAGE = "rlvr-sandbox:py311-v2"
#: Where the interpreter lives inside the image.
PY_PREFIX = "/opt/python"
#: Standard-library parts left out of the image (large and never needed by a candidate's server).
STDLIB_EXCLUDE = (
    "site-packages",
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "ensurepip",
    "lib2to3",
    "pydoc_data",
    "unittest/test",
)
#: Extension modules left out (GUI, terminal and CPython self-tests).
DYNLOAD_EXCLUDE = ("_tkinter", "_test", "_xxtest", "_curses", "readline", "_ctypes_test", "xxlimited")


def docker_client(timeout_s: float = 10.0):
    """A docker SDK client for the engine at ``$DOCKER_HOST`` (default socket); raises SandboxUnavailable.

    The engine must answer a ping; the message names the address and the error otherwise.
    """
    try:
        import docker
    except ImportError as exc:  # the docker extra is not installed
        raise SandboxUnavailable(f"the docker SDK is not installed ({exc}); pip install 'rlvr-lab[docker]'") from None
    address = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=int(timeout_s))
        client.ping()
    except Exception as exc:  # DockerException, ConnectionError, ...
        raise SandboxUnavailable(f"no Docker engine answers at {address}: {exc}") from None
    return client


def _base_prefix() -> Path:
    """Installation prefix of the real interpreter behind this environment.

    >>> (_base_prefix() / "lib").is_dir()
    True
    """
    return Path(sys.base_prefix).resolve()


def _shared_libs(paths: list[Path]) -> set[Path]:
    """Absolute paths of the shared libraries ``ldd`` lists for ``paths`` (the loader included)."""
    libs: set[Path] = set()
    out = subprocess.run(["ldd", *map(str, paths)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            target = parts[parts.index("=>") + 1]
            if target.startswith("/"):
                libs.add(Path(target))
        elif parts and parts[0].startswith("/") and not parts[0].endswith(":"):
            libs.add(Path(parts[0]))
    return libs


def rootfs_tar(out: io.BufferedIOBase) -> int:
    """Write the sandbox root filesystem as a tar stream to ``out``; returns the number of members.

    Contents: the interpreter at ``/opt/python/bin/python3``, its standard library (without the
    parts in :data:`STDLIB_EXCLUDE`/:data:`DYNLOAD_EXCLUDE`), the shared libraries ``ldd`` lists at
    their host paths, a passwd/group naming ``nobody``, and empty mount points.
    """
    prefix = _base_prefix()
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    binary = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    stdlib = prefix / "lib" / version
    dynload = [
        p
        for p in sorted((stdlib / "lib-dynload").glob("*.so"))
        if not any(p.name.startswith(x) for x in DYNLOAD_EXCLUDE)
    ]
    libs = _shared_libs([binary, *dynload])
    count = 0
    with tarfile.open(fileobj=out, mode="w|") as tar:

        def add_dir(name: str, mode: int = 0o755) -> None:
            nonlocal count
            info = tarfile.TarInfo(name.lstrip("/"))
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, mode, 0
            tar.addfile(info)
            count += 1

        def add_file(src: Path, name: str) -> None:
            nonlocal count
            info = tar.gettarinfo(str(src), arcname=name.lstrip("/"))
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode = (info.mode & 0o755) | 0o444
            with open(src, "rb") as f:
                tar.addfile(info, f)
            count += 1

        def add_text(name: str, text: str) -> None:
            nonlocal count
            data = text.encode()
            info = tarfile.TarInfo(name.lstrip("/"))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
            count += 1

        for d in (
            "/etc",
            "/tmp",
            "/home",
            "/home/user",
            "/home/user/project",
            "/run",
            "/run/app",
            "/opt",
            "/opt/app",
            PY_PREFIX,
            f"{PY_PREFIX}/bin",
            f"{PY_PREFIX}/lib",
            "/proc",
            "/sys",
            "/dev",
        ):
            add_dir(d, 0o1777 if d == "/tmp" else 0o755)
        add_text(
            "/etc/passwd",
            "root:x:0:0:root:/root:/bin/false\nuser:x:1000:1000:user:/home/user:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
        )
        add_text("/etc/group", "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n")
        add_file(binary, f"{PY_PREFIX}/bin/python3")
        made = set()
        for lib in sorted(libs):
            for parent in reversed(lib.parents[:-1]):
                if str(parent) not in made:
                    made.add(str(parent))
                    add_dir(str(parent))
            add_file(Path(os.path.realpath(lib)), str(lib))
        for root, dirs, files in os.walk(stdlib):
            rel_root = Path(root).relative_to(stdlib)
            dirs[:] = sorted(
                d for d in dirs if (rel_root / d).as_posix() not in STDLIB_EXCLUDE and not d.startswith("config-")
            )
            add_dir(f"{PY_PREFIX}/lib/{version}/{rel_root.as_posix()}".rstrip("/."))
            for name in sorted(files):
                src = Path(root) / name
                if rel_root.as_posix() == "lib-dynload" and src not in dynload:
                    continue
                if name.endswith(".pyc") and ".opt-" in name:
                    continue
                if src.is_symlink() and not src.exists():
                    continue
                add_file(src, f"{PY_PREFIX}/lib/{version}/{rel_root.as_posix()}/{name}".replace("/./", "/"))
    return count


def image_present(client) -> bool:
    """True when :data:`IMAGE` exists in the engine."""
    import docker

    try:
        client.images.get(IMAGE)
        return True
    except docker.errors.ImageNotFound:
        return False


def build_image(client=None, force: bool = False) -> str:
    """Build :data:`IMAGE` with ``docker import`` from :func:`rootfs_tar` (idempotent); returns the tag."""
    client = client or docker_client()
    if not force and image_present(client):
        return IMAGE
    buf = io.BytesIO()
    rootfs_tar(buf)
    repo, tag = IMAGE.split(":")
    # the SDK's images.import_image wants a file or URL; the low-level API takes the bytes directly
    client.api.import_image_from_data(buf.getvalue(), repository=repo, tag=tag)
    if not image_present(client):
        raise SandboxUnavailable(f"docker import did not produce {IMAGE}")
    return IMAGE


def main(argv: list[str] | None = None) -> int:
    """``python -m rlvr_lab.sandbox.docker_image build``: build the sandbox image if it is missing."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] != ["build"]:
        print("usage: python -m rlvr_lab.sandbox.docker_image build [--force]", file=sys.stderr)
        return 2
    try:
        tag = build_image(force="--force" in argv)
    except SandboxUnavailable as exc:
        print(f"docker sandbox image not built: {exc}")
        return 1
    print(f"docker sandbox image ready: {tag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
