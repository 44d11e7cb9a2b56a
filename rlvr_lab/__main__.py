"""``python -m rlvr_lab`` is the same as the ``rlvr-lab`` command."""

import sys

from rlvr_lab.cli import main

sys.exit(main())
