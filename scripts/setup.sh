#!/usr/bin/env bash
# Set up everything RLVR Lab needs on a fresh Debian-like machine or a laptop.
#   scripts/setup.sh          library, trainer, book, test tools and the Ray fleet extra in .venv
# System packages (Chromium for the browser test, Node/npm for the widget JavaScript,
# docker.io for the docker backend) are installed with apt when we are root and apt exists;
# elsewhere the tests that need them say so and skip.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  need=()
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
  command -v npm >/dev/null 2>&1 || need+=(npm)
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
# Package sources given as PIP_* variables (a mirror, a folder holding the CPU torch wheel) are written into
# the venv's own pip.conf, so pip in this venv (and the install rehearsal of tests/test_install.py) finds
# the same packages from a later shell that lacks the variables.
conf=()
for var in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_TRUSTED_HOST; do
  if [ -n "${!var:-}" ]; then conf+=("$(echo "${var#PIP_}" | tr 'A-Z_' 'a-z-') = ${!var}"); fi
done
if [ ${#conf[@]} -gt 0 ]; then { echo "[global]"; printf '%s\n' "${conf[@]}"; } > .venv/pip.conf; fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
# The CPU build of torch first: a bare torch requirement would pull a multi-GB CUDA build.
python -c "import torch" 2>/dev/null || python -m pip install -q "torch==2.13.0" || python -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu
python -m pip install -q -e ".[all]"
# Extra one-time steps of each part of the project (widget JavaScript, sandbox images, ...).
for step in scripts/setup.d/*.sh; do
  [ -e "$step" ] && bash "$step"
done
echo "setup complete: $(python -c 'import rlvr_lab; print("rlvr_lab", rlvr_lab.__version__)')"
