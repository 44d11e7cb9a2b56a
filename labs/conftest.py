"""nbval collects the lab notebooks and the exercise *solutions*; student notebooks are graded, not tested."""

collect_ignore_glob = ["exercises/student/*", "**/.ipynb_checkpoints/*"]
