#!/usr/bin/env bash
# Widget JavaScript for the static book, served from the site itself (no CDN).
# Fetches @jupyter-widgets/html-manager (the embed bundle that renders saved widget state) and
# requirejs (its loader) from the npm registry and copies the files the pages load into
# book/_static/widgets-js/ (gitignored). _config.yml points myst-nb's nb_ipywidgets_js there.
# Idempotent: does nothing when the pinned versions are already in place.
set -euo pipefail
cd "$(dirname "$0")/../.."
HTML_MANAGER_VERSION=1.0.15
REQUIREJS_VERSION=2.3.8
dest=book/_static/widgets-js
stamp="$dest/VERSIONS"
want="html-manager=$HTML_MANAGER_VERSION requirejs=$REQUIREJS_VERSION"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dest/embed-amd.js" ] && [ -f "$dest/require.min.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "widgets_js.sh: npm not found; install Node.js/npm to serve widget JavaScript from the book" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION" "requirejs@$REQUIREJS_VERSION" >/dev/null)
mkdir -p "$work/hm" "$work/rq"
tar -xzf "$work"/jupyter-widgets-html-manager-*.tgz -C "$work/hm"
tar -xzf "$work"/requirejs-*.tgz -C "$work/rq"
rm -rf "$dest"
mkdir -p "$dest"
# embed-amd.js bundles the base, controls and output widgets; the icon fonts its CSS names sit beside it.
cp "$work/hm/package/dist/embed-amd.js" "$dest/"
for f in "$work"/hm/package/dist/*.woff2 "$work"/hm/package/dist/*.woff "$work"/hm/package/dist/*.ttf \
         "$work"/hm/package/dist/*.eot "$work"/hm/package/dist/*.svg; do
  [ -e "$f" ] && cp "$f" "$dest/"
done
cp "$work/rq/package/require.js" "$dest/require.min.js"
cp "$work/hm/package/LICENSE" "$dest/LICENSE.html-manager" 2>/dev/null || true
cp "$work/rq/package/LICENSE" "$dest/LICENSE.requirejs" 2>/dev/null || true
echo "$want" > "$stamp"
echo "widget JavaScript in $dest ($want)"
