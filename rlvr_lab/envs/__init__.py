"""Environments the policy acts in (sections 17.2.1, 17.6): the multi-turn repair environment.

:mod:`.repair_tasks` generates the tasks (a small module with one bug, public and hidden tests),
:mod:`.tools` reads the policy's actions and applies its edits, :mod:`.context` builds the context the policy
sees under a token budget, and :mod:`.repair` is the environment itself (``reset`` -> observation,
``step(action)`` -> observation and whether the episode is done), the verdict from the sandboxed verifier.
"""
