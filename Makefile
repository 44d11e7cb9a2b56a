# The two commands of the README's quick start.
.PHONY: setup train test test-fast lint results

setup:
	bash scripts/setup.sh

# The main job: set up, then train the tiny code model with GRPO on the CPU preset.
train: setup
	.venv/bin/rlvr-lab train --preset cpu

# Set up, then run every test: unit, property, doctest, red-team, smoke training,
# notebooks (nbval), the book build and the browser check.
test: setup
	.venv/bin/python -m pytest -n 2

# The fast lane, before a commit: unit, property, doctest and red-team tests on the local verifier backend;
# no notebooks, book build, browser, docker or slow-marked tests (under 5 minutes on 2 cores).
test-fast: setup lint
	.venv/bin/python -m pytest -n 2 -m "not slow and not book and not browser and not docker" tests rlvr_lab

# Format and lint check (ruff; configured in pyproject.toml). `.venv/bin/ruff format .` applies the format.
lint: setup
	.venv/bin/ruff format --check rlvr_lab tests benchmarks experiments scripts labs conftest.py
	.venv/bin/ruff check rlvr_lab tests benchmarks experiments scripts labs conftest.py

# Make every stored result of experiments/ again from the code at HEAD (about an hour on 2 cores);
# `.venv/bin/python experiments/regenerate.py --stale` runs only the out-of-date ones.
results: setup
	PYTHONPATH=. .venv/bin/python experiments/regenerate.py
