"""How a task meets a pretrained policy: chat template, stop strings, the code in a reply (17.6.1, 17.10).

The course's own model continues a function's signature and docstring and ends with ``<eos>``. A pretrained
model needs the conventions it was trained with. An instruct model (its tokenizer has a ``chat_template``)
gets the task as a user turn through ``apply_chat_template`` and answers in a fenced code block, ending its
turn with one of its end tokens (the tokenizer's eos and the ``generation_config``'s). A base model
continues the prompt as the course's does, but would write on past the function; generation stops at the
first of the usual HumanEval stop strings (a new top-level ``def``, ``class``, ``if``, ``print`` or comment).
The tokens sampled up to and including a stop are what the record holds (their log-probs are the
behaviour log-probs); the candidate text is cut before the stop string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr_lab.verifier.schema import Candidate

#: Stop strings of a base (non-chat) model completing a function body (HumanEval's usual set).
BASE_STOPS = ("\ndef ", "\nclass ", "\nif ", "\nprint(", "\n#")
#: The instruction of a chat turn; the task's prompt follows in a code block.
INSTRUCTION = (
    "Complete the following Python function. Reply with the complete function, and nothing "
    "else, in one ```python code block."
)
_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class PromptFormat:
    """How prompts are built and completions end for one policy (:func:`prompt_format`)."""

    chat: bool = False
    """True: the task is a user turn of the tokenizer's chat template and the reply holds a code block."""
    stop_strings: tuple[str, ...] = ()
    """Sampling of a rollout stops once its text contains one of these; the candidate is cut before it."""
    stop_ids: tuple[int, ...] = ()
    """Token ids that end a rollout besides the tokenizer's eos (an instruct model's other end tokens)."""


def prompt_format(config, tokenizer, model=None) -> PromptFormat:
    """The :class:`PromptFormat` of a run: ``config.chat_template`` (``auto``: on when the tokenizer has a
    template), ``config.stop_strings`` (empty: :data:`BASE_STOPS` for a pretrained base model, none for
    the course's model or a chat model) and the end tokens of the model's ``generation_config``."""
    has_template = bool(getattr(tokenizer, "chat_template", None))
    if config.chat_template == "on" and not has_template:
        raise ValueError("chat_template is 'on' but the tokenizer has no chat_template; use 'auto' or 'off'")
    chat = has_template and config.chat_template != "off"
    if chat and config.multi_turn:
        raise ValueError(
            "multi_turn with a chat template is not supported (the feedback turn is plain text); "
            "pass --chat-template off or --no-multi-turn"
        )
    stops = tuple(config.stop_strings) or (BASE_STOPS if config.model and not chat else ())
    ends = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ends = [ends] if isinstance(ends, int) else list(ends or [])
    return PromptFormat(chat, stops, tuple(sorted({int(i) for i in ends} - {tokenizer.eos_token_id})))


def chat_message(prompt: str) -> str:
    """The user turn of a task whose prompt is code to complete (a function's signature and docstring).

    >>> print(chat_message("def f(x):\\n"))  # doctest: +NORMALIZE_WHITESPACE
    Complete the following Python function. Reply with the complete function, and nothing else, in one
    ```python code block.
    <BLANKLINE>
    ```python
    def f(x):
    ```
    """
    return f"{INSTRUCTION}\n\n```python\n{prompt.rstrip()}\n```"


def prompt_text(tokenizer, task, fmt: PromptFormat) -> str:
    """What the policy is shown for ``task``: its prompt, or the chat template around it (the generation
    prompt of the assistant's turn included). A task that is not code to complete (``keep_prompt`` off,
    e.g. MBPP) goes into the turn as it is."""
    if not fmt.chat:
        return task.prompt
    content = chat_message(task.prompt) if task.keep_prompt else task.prompt
    return tokenizer.apply_chat_template(
        [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=True
    )


def cut_at_stop(text: str, stops: tuple[str, ...]) -> str:
    """``text`` before the first of the stop strings (whole when none occurs).

    >>> cut_at_stop("    return x\\n\\ndef g():", ("\\ndef ",))
    '    return x\\n'
    """
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))
    return text[:cut]


def code_from_reply(reply: str) -> str:
    """The first fenced code block of a chat reply (an unclosed one runs to the end); the reply itself
    when it has none.

    >>> code_from_reply("Here:\\n```python\\ndef f(x):\\n    return x\\n```\\nDone.")
    'def f(x):\\n    return x\\n'
    """
    match = _FENCE.search(reply)
    return match.group(1) if match else reply


def candidate_for(task, text: str, fmt: PromptFormat) -> Candidate:
    """The candidate file of a completion. Plain: ``task.candidate(text)``. Chat: the reply's code; a task
    whose file keeps its prompt gets the prompt (imports, helpers, the stub) followed by the reply's whole
    function, or by the reply as a body when it defines no top-level function."""
    if not fmt.chat:
        return task.candidate(text)
    code = code_from_reply(text)
    if not task.keep_prompt:
        return Candidate({task.target: code})
    if re.search(r"^(async\s+)?def\s", code, re.MULTILINE):
        return Candidate({task.target: task.prompt.rstrip() + "\n\n\n" + code})
    return task.candidate(code)
