"""An ordinary command line for a sandbox's processes (section 17.7; standard library only).

``/proc/PID/cmdline`` is not a copy: the kernel reads it from the process's own memory, the argument
area between ``arg_start`` and ``arg_end`` of ``/proc/PID/stat``. The zygote starts as ``python3 -I -S -B
.../rlvr_lab/sandbox/zygote.py`` and every local sandbox process is a fork of it, so without this the first
file a candidate reads about itself names the verifier. :func:`write_title` overwrites that area: a sandbox's init does it first thing after its fork
(the zygote itself keeps its command line, so that ``ps`` still tells an operator what it is), a docker
sandbox at its start, so that every process of every sandbox reads as a plain ``python3``.

What it cannot hide: the memory of the candidate's own process (the server module is loaded there,
``sys.flags`` shows ``-I -S -B``); chapter 6 lists what a behavioural check cannot close.
"""

import sys

#: What ``/proc/PID/cmdline`` and ``ps`` show for a sandbox's processes.
TITLE = b"python3"


def argument_area(stat: bytes) -> tuple[int, int]:
    """``(arg_start, arg_end)`` from the text of ``/proc/PID/stat`` (fields 48 and 49; the command name,
    field 2, is in parentheses and may hold spaces, so fields are counted after its closing one).

    >>> argument_area(b"7 (a b) S" + b" 0" * 44 + b" 100 180 0 0 0")
    (100, 180)
    """
    fields = stat[stat.rindex(b")") + 2 :].split()
    return int(fields[45]), int(fields[46])


def own_argument_area() -> tuple[int, int]:
    """This process's ``(arg_start, arg_end)``; a fork has its argument area at the same addresses."""
    with open("/proc/self/stat", "rb") as handle:
        return argument_area(handle.read())


def write_title(area: tuple[int, int], title: bytes = TITLE) -> bool:
    """Overwrite the argument area ``area`` of this process so that ``/proc/self/cmdline`` reads ``title``:
    ``title``, then NULs, then one non-NUL last byte, which tells the kernel to show the area only up to its
    first NUL (the convention ``setproctitle`` uses). The area keeps its size. Also sets ``sys.argv`` and
    ``sys.orig_argv``. False (nothing written) when ``title`` does not fit."""
    start, end = area
    if end - start < len(title) + 2:
        return False
    with open("/proc/self/mem", "r+b", buffering=0) as memory:
        memory.seek(start)
        memory.write(title + b"\0" * (end - start - len(title) - 1) + b".")
    sys.argv = [title.decode()]
    sys.orig_argv = [title.decode()]
    return True


def plain_command_line(title: bytes = TITLE) -> bool:
    """:func:`write_title` for this process (a docker sandbox's entry point, which is not a fork)."""
    return write_title(own_argument_area(), title)
