#!/usr/bin/env bash
# Gradescope runs this once when it builds the autograder image (Ubuntu, as root): Python and rlvr-lab with
# the runtime extra (numpy, torch, ...), the packages a student notebook imports. Pin the course's version
# by editing RLVR_LAB_SOURCE (a git URL with @tag, or a wheel copied into the bundle).
set -euo pipefail
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-pip python3-venv git
RLVR_LAB_SOURCE="${RLVR_LAB_SOURCE:-git+https://github.com/rlvr-lab/rlvr-lab}"
python3 -m pip install --break-system-packages "rlvr-lab[runtime] @ ${RLVR_LAB_SOURCE}" \
  || python3 -m pip install "rlvr-lab[runtime] @ ${RLVR_LAB_SOURCE}"
