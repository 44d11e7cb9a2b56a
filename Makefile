# The two commands of the README's quick start.
.PHONY: setup train test

setup:
	bash scripts/setup.sh

# The main job: set up, then train the tiny code model with GRPO on the CPU preset.
train: setup
	.venv/bin/rlvr-lab train --preset cpu

# Set up, then run every test: unit, property, doctest, red-team, smoke training,
# notebooks (nbval), the book build and the browser check.
test: setup
	.venv/bin/python -m pytest -n 2
