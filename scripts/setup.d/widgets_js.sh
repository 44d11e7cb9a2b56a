#!/usr/bin/env bash
# JavaScript for the static book, served from the site itself (no CDN):
#   - @jupyter-widgets/html-manager (embed-amd.js renders the saved widget state) and requirejs (its loader);
#   - MathJax 3 (the equations), so pages render offline too.
# Fetched from the npm registry with `npm pack` and unpacked into book/_static/widgets-js/ (gitignored).
# _config.yml points myst-nb's nb_ipywidgets_js and Sphinx's mathjax_path there.
# Idempotent: does nothing when the pinned versions are already in place.
set -euo pipefail
cd "$(dirname "$0")/../.."
HTML_MANAGER_VERSION=1.0.15
REQUIREJS_VERSION=2.3.8
MATHJAX_VERSION=3.2.2
dest=book/_static/widgets-js
stamp="$dest/VERSIONS"
want="html-manager=$HTML_MANAGER_VERSION requirejs=$REQUIREJS_VERSION mathjax=$MATHJAX_VERSION"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dest/embed-amd.js" ] && [ -f "$dest/require.min.js" ] \
   && [ -f "$dest/mathjax/tex-mml-chtml.js" ] && compgen -G "$dest/@jupyter-widgets/*.woff2" >/dev/null; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "widgets_js.sh: npm not found; install Node.js/npm to serve widget JavaScript from the book" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION" "requirejs@$REQUIREJS_VERSION" \
   "mathjax@$MATHJAX_VERSION" >/dev/null)
mkdir -p "$work/hm" "$work/rq" "$work/mj"
tar -xzf "$work"/jupyter-widgets-html-manager-*.tgz -C "$work/hm"
tar -xzf "$work"/requirejs-*.tgz -C "$work/rq"
tar -xzf "$work"/mathjax-*.tgz -C "$work/mj"
rm -rf "$dest"
# embed-amd.js bundles the base, controls and output widgets. Its webpack public path is the directory of
# its AMD module id under requirejs' baseUrl (book/_static/rlvr-widgets.js sets baseUrl to this folder),
# so the icon fonts its CSS names go under @jupyter-widgets/html-manager/dist/.
fonts="$dest/@jupyter-widgets/html-manager/dist"
mkdir -p "$fonts"
cp "$work/hm/package/dist/embed-amd.js" "$dest/"
for f in "$work"/hm/package/dist/*.woff2 "$work"/hm/package/dist/*.woff "$work"/hm/package/dist/*.ttf \
         "$work"/hm/package/dist/*.eot "$work"/hm/package/dist/*.svg; do
  [ -e "$f" ] && cp "$f" "$fonts/"
done
# The bundle's other AMD modules (e.g. @jupyter-widgets/controls) derive their public path from their own
# module id, one folder up; whichever loads the icon CSS first decides, so the fonts live in both places.
cp "$fonts"/* "$dest/@jupyter-widgets/"
cp "$work/rq/package/require.js" "$dest/require.min.js"
# MathJax: the combined TeX+MathML+CHTML component, its fonts, and the pieces it loads on demand.
mj="$work/mj/package/es5"
mkdir -p "$dest/mathjax/input/tex"
cp "$mj/tex-mml-chtml.js" "$dest/mathjax/"
cp -R "$mj/output" "$mj/ui" "$mj/a11y" "$dest/mathjax/"
cp -R "$mj/input/tex/extensions" "$dest/mathjax/input/tex/"
for pkg in hm rq mj; do
  [ -f "$work/$pkg/package/LICENSE" ] && cp "$work/$pkg/package/LICENSE" "$dest/LICENSE.$pkg"
done
echo "$want" > "$stamp"
echo "site JavaScript in $dest ($want)"
