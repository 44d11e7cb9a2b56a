"""The repair agent's tools and their action syntax (sections 17.2.1, 17.6).

One action per turn; its first line names the tool, the lines after it (if any) are its text:

========================  ==============================================================================
``RUN``                   run the public tests; the observation is the first failing test and its message
``SHOW``                  show the current module with line numbers
``LINE n``                replace line ``n`` (1-based) by the lines that follow (none: delete it)
``DEF name``              replace the function ``name`` by the definition that follows
``SUBMIT``                end the episode; the hidden tests decide
========================  ==============================================================================

:func:`parse_action` turns text into an :class:`Action` or raises :class:`ActionError` with a message for the
observation (a malformed action costs a turn, never crashes the episode); :func:`replace_line` and
:func:`replace_function` apply edits to the source, pure functions of text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: The tools, as the first word of an action.
TOOLS = ("RUN", "SHOW", "LINE", "DEF", "SUBMIT")


class ActionError(ValueError):
    """An action the environment cannot carry out; its message is the observation."""


@dataclass(frozen=True)
class Action:
    """A parsed action: the tool, its argument (line number or function name) and the text after it."""

    tool: str
    arg: str = ""
    body: str = ""


def parse_action(text: str) -> Action:
    """Read one action from the policy's text (surrounding blank lines and trailing spaces ignored).

    >>> parse_action("LINE 3\\n    return lo\\n")
    Action(tool='LINE', arg='3', body='    return lo\\n')
    >>> parse_action("RUN")
    Action(tool='RUN', arg='', body='')
    >>> parse_action("FIX it")
    Traceback (most recent call last):
    ...
    rlvr_lab.envs.tools.ActionError: unknown tool 'FIX': use one of RUN, SHOW, LINE n, DEF name, SUBMIT
    """
    lines = [line.rstrip() for line in text.strip("\n").splitlines()]
    if not lines or not lines[0].strip():
        raise ActionError("empty action: use one of RUN, SHOW, LINE n, DEF name, SUBMIT")
    head, body = lines[0].split(), "".join(line + "\n" for line in lines[1:])
    tool, args = head[0], head[1:]
    if tool not in TOOLS:
        raise ActionError(f"unknown tool {tool!r}: use one of RUN, SHOW, LINE n, DEF name, SUBMIT")
    if tool in ("RUN", "SHOW", "SUBMIT"):
        if args or body:
            raise ActionError(f"{tool} takes nothing after it")
        return Action(tool)
    if len(args) != 1:
        raise ActionError(f"{tool} takes one argument: {'a line number' if tool == 'LINE' else 'a function name'}")
    if tool == "LINE" and not (args[0].isdigit() and int(args[0]) >= 1):
        raise ActionError(f"LINE needs a line number >= 1, got {args[0]!r}")
    if tool == "DEF" and not args[0].isidentifier():
        raise ActionError(f"DEF needs a function name, got {args[0]!r}")
    if tool == "DEF" and not body.strip():
        raise ActionError(f"DEF {args[0]} needs the new definition on the lines after it")
    return Action(tool, args[0], body)


def numbered(source: str) -> str:
    """The source with 1-based line numbers, as ``SHOW`` prints it.

    >>> print(numbered("a = 1\\nb = 2\\n"))
    1 | a = 1
    2 | b = 2
    """
    lines = source.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


def replace_line(source: str, n: int, body: str) -> str:
    """``source`` with line ``n`` (1-based) replaced by ``body``'s lines (an empty body deletes it).

    >>> replace_line("a\\nb\\nc\\n", 2, "x\\ny\\n")
    'a\\nx\\ny\\nc\\n'
    """
    lines = source.splitlines(keepends=True)
    if not 1 <= n <= len(lines):
        raise ActionError(f"line {n} does not exist: the module has {len(lines)} lines")
    new = body.splitlines(keepends=True)
    if new and not new[-1].endswith("\n"):
        new[-1] += "\n"
    return "".join(lines[: n - 1] + new + lines[n:])


def replace_function(source: str, name: str, body: str) -> str:
    """``source`` with the top-level function ``name`` replaced by ``body`` (a whole ``def``).

    >>> replace_function("def f():\\n    return 1\\n\\n\\ndef g():\\n    return 2\\n", "f", "def f():\\n    return 3\\n")
    'def f():\\n    return 3\\n\\n\\ndef g():\\n    return 2\\n'
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ActionError(f"the module does not parse (line {exc.lineno}): fix it with LINE first") from None
    try:
        new = ast.parse(body)
    except SyntaxError as exc:
        raise ActionError(f"the new definition does not parse (line {exc.lineno}): {exc.msg}") from None
    if len(new.body) != 1 or not isinstance(new.body[0], ast.FunctionDef) or new.body[0].name != name:
        raise ActionError(f"DEF {name} must be followed by exactly one definition of {name}")
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        raise ActionError(f"the module has no function {name}")
    node = found[0]
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = source.splitlines(keepends=True)
    text = body if body.endswith("\n") else body + "\n"
    return "".join(lines[: first - 1]) + text + "".join(lines[node.end_lineno :])
