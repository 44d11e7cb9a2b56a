#!/usr/bin/env bash
# One-time setup of the docker verifier backend: start dockerd if it is installed but not running,
# then build the sandbox image (rlvr-sandbox) with `docker import` from this machine's Python.
# Idempotent and quick when everything is in place. Never fails setup: without Docker it says why
# and exits 0 (the docker tests then skip with that reason; the local backend needs no daemon).
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
[ -x "$PY" ] || PY=python3
say() { echo "setup.d/docker.sh: $*"; }

engine_up() { timeout 10 "$PY" -c "from rlvr_lab.sandbox.docker_image import docker_client; docker_client()" >/dev/null 2>&1; }

if ! engine_up; then
  if [ -z "${DOCKER_HOST:-}" ] && command -v dockerd >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "starting dockerd (log: /var/log/rlvr-dockerd.log)"
    # no bridge and no iptables: sandbox containers run with network_mode=none anyway
    nohup dockerd --iptables=false --bridge=none >/var/log/rlvr-dockerd.log 2>&1 &
    for _ in $(seq 1 30); do engine_up && break; sleep 1; done
  fi
fi
if ! engine_up; then
  why=$(timeout 15 "$PY" -c "from rlvr_lab.sandbox.docker_image import docker_client; docker_client()" 2>&1 | tail -1)
  say "docker backend unavailable, skipping image build: ${why:-no answer}"
  exit 0
fi
if timeout 300 "$PY" -m rlvr_lab.sandbox.docker_image build; then
  exit 0
fi
say "building the sandbox image failed; the docker tests will say why and skip or fail"
exit 0
