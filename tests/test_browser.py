"""The built book in a real browser: headless Chromium opens every page of the site and finds no
JavaScript error or failed request, every saved widget rendered (its DOM present, sized, with its
figure loaded), every figure loaded, and no request leaving the site. Then, on the static page, one slider
of every dashboard is moved and its readout must become what rlvr_lab computes for the new settings
(nine dashboards of nine), with the figure redrawn. Then every control of every dashboard is slid a step,
to both ends and typed into, and after each action every number shown must equal rlvr_lab's at the values
the controls hold, the redrawn panels citing their equations' rendered numbers. At 390 px (a phone) and
1280 px no page overflows sideways, every figure fits its column with text >= 9 px, no slider label is
clipped, and no display equation is clipped.
Full-page screenshots of every page at both widths are kept in artifacts/screenshots/ (DOC@390.png,
DOC@1280.png)."""

import base64
import functools
import inspect
import math
import re
import http.server
import shutil
import threading
import time

import pytest

from book_site import ROOT, build_book, sent_bytes, shared_dir, toc_files

pytestmark = [pytest.mark.slow, pytest.mark.book, pytest.mark.browser]

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
DRIVER = shutil.which("chromedriver")
SHOTS = ROOT / "artifacts" / "screenshots"
WIDTHS = (390, 1280)
# The smallest text in the book's figures is 10 pt at 100 dpi (13.9 px at natural size, see
# rlvr_lab.figures.style); at a display scale of 0.65 it is 9.0 px. The static page's own SVG panels use
# 11 px text in a 380-unit-wide viewBox.
MIN_IMG_SCALE = 0.65
SVG_FONT, SVG_WIDTH = 11.0, 380.0
KINDS_MOVED: set = set()
SITE_ROOT: list = []  # the built site's folder, set by the site fixture
MAX_PAGE_BYTES = 3_000_000  # a page's weight as sent compressed (tests/test_book_build.py)
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--window-size=1280,1000",
]


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    book = build_book(shared_dir(tmp_path_factory))
    assert book.returncode == 0, "the book did not build; see tests/test_book_build.py"
    SITE_ROOT.append(book.html)
    handler = functools.partial(_QuietHandler, directory=str(book.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium binary found (chromium, chromium-browser or google-chrome on PATH)")
    if DRIVER is None:
        pytest.fail("Chromium is installed but chromedriver is not: apt-get install chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


# Collects uncaught errors and rejected promises from the first script on, before the page's own scripts.
_ERROR_HOOK = """
window.__rlvrErrors = [];
window.addEventListener('error', e => window.__rlvrErrors.push(String(e.message || e.type) + ' @ ' +
    (e.filename || (e.target && (e.target.src || e.target.href)) || '')), true);
window.addEventListener('unhandledrejection', e => window.__rlvrErrors.push('unhandled rejection: ' + e.reason));
"""

_WIDGET_STATE = """
const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
const boxes = Array.from(document.querySelectorAll('.rlvr-dashboard'));
const rendered = boxes.map(b => {
  const r = b.getBoundingClientRect();
  const img = b.querySelector('img');
  return {w: r.width, h: r.height, sliders: b.querySelectorAll('.widget-slider, .slider-container, input[type=range], .noUi-target').length,
          text: b.innerText.length, img: img ? img.naturalWidth : 0, imgComplete: img ? img.complete : false};
});
return {views: views, rendered: rendered};
"""

_FIGURES = """
const imgs = Array.from(document.querySelectorAll('main img, article img, .bd-article img'));
return imgs.map(i => ({src: (i.currentSrc || i.src).slice(0, 120), w: i.naturalWidth, complete: i.complete}));
"""


def _pages():
    return [doc for doc in toc_files()]


@pytest.mark.parametrize("doc", _pages())
def test_page_renders_in_chromium(site, browser, doc):
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _ERROR_HOOK})
    browser.get_log("browser")  # drop entries of earlier pages
    browser.get(f"{site}/{doc}.html")
    deadline = time.monotonic() + 45
    state = browser.execute_script(_WIDGET_STATE)
    while time.monotonic() < deadline:
        state = browser.execute_script(_WIDGET_STATE)
        done = len(state["rendered"]) >= state["views"] and all(r["img"] > 0 for r in state["rendered"])
        if done and browser.execute_script("return document.readyState") == "complete":
            break
        time.sleep(0.5)
    time.sleep(0.5)

    errors = browser.execute_script("return window.__rlvrErrors || []")
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors and not severe, f"{doc}: JavaScript errors {errors + severe}"

    # Every saved widget view was rendered by the html-manager: present, sized, with sliders, text and figure.
    assert len(state["rendered"]) == state["views"], (
        f"{doc}: {state['views']} widget views, {len(state['rendered'])} dashboards rendered"
    )
    for r in state["rendered"]:
        assert r["w"] > 300 and r["h"] > 200 and r["text"] > 40 and r["sliders"] >= 1, f"{doc}: blank widget {r}"
        assert r["img"] > 0, f"{doc}: a dashboard figure did not load"

    figures = browser.execute_script(_FIGURES)
    broken = [f for f in figures if not (f["complete"] and f["w"] > 0)]
    assert not broken, f"{doc}: figures that did not load: {broken}"

    origins = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    outside = [u for u in origins if not u.startswith(site) and not u.startswith("data:")]
    assert not outside, f"{doc}: requests leaving the site (no CDN allowed): {outside[:5]}"

    # Page weight: every file this page made the browser fetch (the page, scripts, styles, fonts, images and
    # what the scripts loaded later), as stored and as a gzip-compressing host (GitHub Pages) sends it.
    raw = sent = 0
    for url in {f"{site}/{doc}.html", *origins}:
        if not url.startswith(site + "/"):
            continue
        path = SITE_ROOT[0] / url[len(site) + 1 :].split("?")[0].split("#")[0]
        if path.is_file():
            raw, sent = raw + path.stat().st_size, sent + sent_bytes(path)
    print(f"{doc}: fetched {raw / 1e6:.2f} MB stored, {sent / 1e6:.2f} MB sent compressed")
    assert sent <= MAX_PAGE_BYTES, f"{doc}: the browser fetched {sent / 1e6:.2f} MB (compressed), over 3 MB"


def _screenshot(browser, doc, width):
    """Full-page PNG at ``width`` CSS px: size the viewport to the page's height, capture, restore."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    _set_width(browser, width)
    height = min(int(browser.execute_script("return document.documentElement.scrollHeight")), 16000)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    try:
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        _set_width(browser, width)
    (SHOTS / f"{doc.replace('/', '__')}@{width}.png").write_bytes(base64.b64decode(shot["data"]))


def _set_width(browser, width):
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    time.sleep(0.4)  # let layout (and MathJax's re-layout) settle


# Elements wider than the viewport that are not inside a box that scrolls sideways, and display equations
# that are cut off (wider than their box without a scrollable ancestor), and figure text scale.
_LAYOUT = """
const vw = document.documentElement.clientWidth;
function scrollsX(el) {
  for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
    const o = getComputedStyle(e).overflowX;
    if ((o === 'auto' || o === 'scroll') && e.getBoundingClientRect().right <= vw + 1) return true;
  }
  return false;
}
// Off-canvas drawers (the theme's sidebars on a phone) sit in fixed layers outside the page flow.
function onCanvasLayer(el) {
  for (let e = el; e && e !== document.body; e = e.parentElement) {
    if (getComputedStyle(e).position === 'fixed') return true;
  }
  return false;
}
const page = {scrollWidth: document.documentElement.scrollWidth, vw: vw};
const wide = [];
for (const el of document.querySelectorAll('.bd-main *')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.right <= vw + 1 || getComputedStyle(el).visibility === 'hidden') continue;
  if (onCanvasLayer(el) || el.closest('mjx-assistive-mml')) continue;  // (screen-reader copy, clipped by design)
  if (scrollsX(el)) continue;
  wide.push((el.tagName + '.' + (el.className && el.className.baseVal === undefined ? el.className : '')).slice(0, 80)
            + ' right=' + Math.round(r.right));
}
const eqs = Array.from(document.querySelectorAll('mjx-container[display="true"]')).filter(m => !m.parentElement.closest('mjx-container')).map(m => {
  const box = m.closest('div.math') || m.parentElement;
  const ov = getComputedStyle(m).overflowX, bov = getComputedStyle(box).overflowX;
  const scrollable = ['auto', 'scroll'].includes(ov) || ['auto', 'scroll'].includes(bov);
  const overflows = m.scrollWidth > m.clientWidth + 2 || box.scrollWidth > box.clientWidth + 2;
  return {label: (box.id || (box.querySelector('.eqno') || {}).textContent || m.textContent.slice(0, 40)),
          overflows: overflows, scrollable: scrollable};
});
const imgs = Array.from(document.querySelectorAll('.cell_output img, .rlvr-dashboard img'))
  .filter(i => i.offsetParent !== null && i.naturalWidth > 0)
  .map(i => ({src: (i.getAttribute('src') || '').slice(0, 60), scale: i.getBoundingClientRect().width / i.naturalWidth,
               fits: i.getBoundingClientRect().width <= i.parentElement.getBoundingClientRect().width + 1}));
// A slider's description must show whole: nothing of its text hidden past its box.
const labels = Array.from(document.querySelectorAll('.widget-label'))
  .filter(l => l.offsetParent !== null && l.textContent.trim())
  .map(l => ({text: l.textContent.trim(), clipped: l.scrollWidth > l.clientWidth + 1 || l.scrollHeight > l.clientHeight + 1}));
const svgs = Array.from(document.querySelectorAll('svg.rlvr-panel')).map(s => s.getBoundingClientRect().width);
return {page: page, wide: wide.slice(0, 10), eqs: eqs, imgs: imgs, svgs: svgs, labels: labels};
"""


def _check_layout(browser, doc, width):
    got = browser.execute_script(_LAYOUT)
    page = got["page"]
    assert page["scrollWidth"] <= page["vw"] + 1, (
        f"{doc} at {width} px: the page scrolls sideways ({page['scrollWidth']} > {page['vw']}): {got['wide']}"
    )
    assert not got["wide"], f"{doc} at {width} px: elements wider than the viewport: {got['wide']}"
    clipped = [e["label"] for e in got["eqs"] if e["overflows"] and not e["scrollable"]]
    assert not clipped, f"{doc} at {width} px: display equations cut off: {clipped}"
    # Long equations are written over several lines, so none needs its scroll box, even on a phone.
    squeezed = [e["label"] for e in got["eqs"] if e["overflows"]]
    assert not squeezed, f"{doc} at {width} px: display equations wider than the text column: {squeezed}"
    # Every figure fits its column whole, at both widths, and its text stays >= 9 px.
    overflowing = [i["src"] for i in got["imgs"] if not i["fits"]]
    assert not overflowing, f"{doc} at {width} px: figures wider than their column: {overflowing[:3]}"
    # (The chapters' figures; the labs draw theirs with plain pyplot at notebook sizes, see issue 25.)
    small = [i for i in got["imgs"] if i["scale"] < MIN_IMG_SCALE and doc.startswith("book/")]
    assert not small, f"{doc} at {width} px: figures shrunk below a 9 px text size: {small[:3]}"
    clipped_labels = [lb["text"] for lb in got["labels"] if lb["clipped"]]
    assert not clipped_labels, f"{doc} at {width} px: slider labels cut off: {clipped_labels}"
    tiny = [wd for wd in got["svgs"] if wd * SVG_FONT / SVG_WIDTH < 9.0]
    assert not tiny, f"{doc} at {width} px: redrawn panels with text under 9 px (widths {tiny})"
    return got


@pytest.mark.parametrize("doc", _pages())
def test_page_fits_phone_and_desktop_widths(site, browser, doc):
    browser.get(f"{site}/{doc}.html")
    _wait_for_widgets(browser)
    problems = []
    for width in WIDTHS:
        _screenshot(browser, doc, width)  # first, so the artifact exists when a check fails
        try:
            _check_layout(browser, doc, width)
        except AssertionError as exc:
            problems.append(str(exc).split("\nassert")[0])
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert not problems, "\n".join(problems)


def _wait_for_widgets(browser, seconds=45):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = browser.execute_script(_WIDGET_STATE)
        live = browser.execute_script("return (window.rlvrDashboards || []).length")
        done = len(state["rendered"]) >= state["views"] and all(r["img"] > 0 for r in state["rendered"])
        if (
            done
            and live >= len(state["rendered"])
            and browser.execute_script("return document.readyState") == "complete"
        ):
            return state
        time.sleep(0.3)
    return browser.execute_script(_WIDGET_STATE)


def _library_numbers(kind, params, fixed):
    """The readout rlvr_lab's own Dashboard shows for ``params`` (the dashboard built as on the page)."""
    from rlvr_lab.figures import widgets

    make = getattr(widgets, f"{kind}_explorer")
    accepted = inspect.signature(make).parameters
    d = make(**{k: v for k, v in {**fixed, **params}.items() if k in accepted})
    return {label: (value, d._format(label, value)) for label, value in d.numbers.items()}


_MOVE = """
const idx = arguments[0];
const root = document.querySelector('.rlvr-dashboard[data-rlvr-index="' + idx + '"]');
const ctl = root.querySelector('.rlvr-ctl');
const handle = ctl.querySelector('.noUi-handle');
handle.scrollIntoView({block: 'center'});
return [handle, Array.from(ctl.classList).filter(c => c.startsWith('rlvr-ctl-'))[0].slice(9)];
"""


@pytest.mark.parametrize("doc", _pages())
def test_sliders_recompute_on_the_static_page(site, browser, doc):
    from selenium.webdriver.common.keys import Keys

    browser.get(f"{site}/{doc}.html")
    state = _wait_for_widgets(browser)
    dashboards = browser.execute_script("return window.rlvrDashboards || []")
    # every saved widget view on the page is a dashboard, and every one must be wired to recompute
    assert len(dashboards) == state["views"] == len(state["rendered"]), (
        f"{doc}: {state['views']} saved dashboards, {len(state['rendered'])} rendered, {len(dashboards)} wired"
    )
    for idx, dash in enumerate(dashboards):
        before = dict(dash["params"])
        handle, name = browser.execute_script(_MOVE, idx)
        handle.send_keys(Keys.ARROW_RIGHT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            dash = browser.execute_script("return window.rlvrDashboards[arguments[0]]", idx)
            if dash["updates"] > 0:
                break
            time.sleep(0.2)
        if dash["params"][name] == before[name]:  # the slider sat at its maximum: move it down instead
            handle.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)
            time.sleep(0.5)
            dash = browser.execute_script("return window.rlvrDashboards[arguments[0]]", idx)
        assert dash["updates"] > 0 and dash["params"][name] != before[name], (
            f"{doc}: moving {dash['kind']}'s {name} slider recomputed nothing"
        )
        shown = browser.execute_script(
            """
            const root = document.querySelector('.rlvr-dashboard[data-rlvr-index="' + arguments[0] + '"]');
            const ctl = root.querySelector('.rlvr-ctl');
            const cells = Array.from(root.querySelectorAll('table.rlvr-readout[data-rlvr] tr')).map(tr =>
                [tr.children[0].textContent, tr.children[1].getAttribute('data-value'), tr.children[1].textContent]);
            const img = root.querySelector('img');
            return {slider: ctl.querySelector('.widget-readout').textContent, cells: cells,
                    panels: root.querySelectorAll('.rlvr-live-figure svg.rlvr-panel').length,
                    marks: Array.from(root.querySelectorAll('.rlvr-live-figure .rlvr-mark-label')).map(t => t.textContent),
                    pngHidden: img ? getComputedStyle(img).display === 'none' : true};
        """,
            idx,
        )
        # the value the widget itself shows beside the slider agrees with what was recomputed
        assert math.isclose(
            float(shown["slider"].replace(",", "")), dash["params"][name], rel_tol=0.01, abs_tol=0.006
        ), f"{doc}: {name} slider shows {shown['slider']}, recomputed at {dash['params'][name]}"
        want = _library_numbers(dash["kind"], dash["params"], _fixed(browser, idx))
        assert [c[0] for c in shown["cells"]] == list(want), f"{doc}: {dash['kind']} readout labels differ"
        for label, raw, text in shown["cells"]:
            value, text_want = want[label]
            assert text == text_want, f"{doc}: {dash['kind']} {label} shows {text!r}, rlvr_lab gives {text_want!r}"
            if isinstance(value, float) and math.isfinite(value):
                assert math.isclose(float(raw), value, rel_tol=1e-9, abs_tol=1e-15), f"{doc}: {label} {raw} != {value}"
        assert shown["panels"] >= 1 and shown["pngHidden"] and shown["marks"], (
            f"{doc}: {dash['kind']}'s figure was not redrawn"
        )
        KINDS_MOVED.add(dash["kind"])


def _fixed(browser, idx):
    import json

    spec = browser.execute_script(
        """
        const root = document.querySelector('.rlvr-dashboard[data-rlvr-index="' + arguments[0] + '"]');
        return root.querySelector('table.rlvr-readout[data-rlvr]').getAttribute('data-rlvr');""",
        idx,
    )
    return json.loads(spec)["fixed"]


def test_all_nine_dashboards_were_moved():
    from rlvr_lab.figures import widgets

    if not KINDS_MOVED:
        pytest.skip("run with the per-page slider tests (they record which dashboards moved)")
    assert KINDS_MOVED == {make().kind for make in widgets.ALL}, KINDS_MOVED


# ---- every control of every dashboard, against rlvr_lab -------------------------------------------------
# Each control is slid one step from its saved value, to both ends (Home, End) and typed into (a value inside
# its range, then its saved value again). After every action all the dashboard's numbers are compared with
# rlvr_lab's compute at the values the controls hold: the moved control's new value (10 ** position for a
# log slider, the typed number as typed), every other control unchanged.
ACTIONS_CHECKED: list = []

_STATE = """
const root = document.querySelector('.rlvr-dashboard[data-rlvr-index="' + arguments[0] + '"]');
const spec = JSON.parse(root.querySelector('table.rlvr-readout[data-rlvr]').getAttribute('data-rlvr'));
const ctls = {};
root.querySelectorAll('.rlvr-ctl').forEach(c => {
  const name = Array.from(c.classList).filter(k => k.startsWith('rlvr-ctl-'))[0].slice(9);
  ctls[name] = {readout: c.querySelector('.widget-readout').textContent,
                position: parseFloat(c.querySelector('.noUi-target').noUiSlider.get())};
});
const cells = Array.from(root.querySelectorAll('table.rlvr-readout[data-rlvr] tr')).map(tr =>
    [tr.children[0].textContent, tr.children[1].getAttribute('data-value'), tr.children[1].textContent]);
return {spec: spec, ctls: ctls, cells: cells, updates: window.rlvrDashboards[arguments[0]].updates,
        params: window.rlvrDashboards[arguments[0]].params};
"""

_CONTROL = """
const root = document.querySelector('.rlvr-dashboard[data-rlvr-index="' + arguments[0] + '"]');
const ctl = root.querySelector('.rlvr-ctl-' + arguments[1]);
const el = ctl.querySelector(arguments[2]);
el.scrollIntoView({block: 'center'});
return el;
"""


def _typed_value(control):
    """A value to type into ``control``'s readout: inside its range, away from the saved value."""
    import ipywidgets as w

    if isinstance(control, w.FloatLogSlider):
        lo, hi = control.base**control.min, control.base**control.max
        for v in (0.05, 0.3, 2.0, 0.002):
            if lo < v < hi and not math.isclose(v, control.value):
                return v, repr(v)
    lo, hi = control.min, control.max
    v = lo + 0.37 * (hi - lo)
    if isinstance(control, w.IntSlider):
        v = int(round(v)) if int(round(v)) != control.value else int(round(v)) + 1
        return v, str(v)
    v = round(round(v / control.step) * control.step, 10)
    if math.isclose(v, control.value):
        v = round(v + control.step, 10)
    return v, repr(v)


def _from_position(control, position):
    import ipywidgets as w

    if isinstance(control, w.FloatLogSlider):
        return control.base**position
    if isinstance(control, w.IntSlider):
        return int(round(position))
    return round(round(position / control.step) * control.step, 10)


def _readout_shows(control, text, value):
    """The widget's readout ``text`` is ``value`` in the readout's format (d3 keeps trailing zeros)."""
    import ipywidgets as w

    got = float(text.replace(",", ""))
    if isinstance(control, w.IntSlider):
        return got == value
    return math.isclose(got, float(format(value, control.readout_format)), rel_tol=1e-12, abs_tol=1e-12)


def _compare(browser, idx, dash, want_params, what):
    """Mismatches between the page and rlvr_lab at ``want_params`` after action ``what``."""
    state = browser.execute_script(_STATE, idx)
    bad = []
    for name, value in want_params.items():
        held = state["params"][name]
        if not math.isclose(held, value, rel_tol=1e-12, abs_tol=1e-15):
            bad.append(f"{what}: {name} computed at {held!r}, the control holds {value!r}")
        if not _readout_shows(dash.controls[name], state["ctls"][name]["readout"], value):
            bad.append(f"{what}: {name} readout shows {state['ctls'][name]['readout']}, holds {value!r}")
    numbers = dash._compute(**want_params)
    labels = [c[0] for c in state["cells"]]
    if labels != list(numbers):
        return bad + [f"{what}: readout labels {labels} != {list(numbers)}"]
    for label, raw, text in state["cells"]:
        value = numbers[label]
        if text != dash._format(label, value):
            bad.append(f"{what}: {label} shows {text!r}, rlvr_lab {dash._format(label, value)!r}")
        elif isinstance(value, float) and math.isfinite(value):
            if not math.isclose(float(raw), value, rel_tol=1e-9, abs_tol=1e-15):
                bad.append(f"{what}: {label} = {raw}, rlvr_lab {value!r}")
    ACTIONS_CHECKED.append(what)
    return bad


_PANELS = """
const root = document.querySelector('.rlvr-dashboard[data-rlvr-index="' + arguments[0] + '"]');
const box = root.querySelector('.rlvr-live-figure');
return {labels: (box.getAttribute('data-eq') || '').split(' ').filter(x => x),
        titles: Array.from(box.querySelectorAll('svg.rlvr-panel')).map(s => s.getAttribute('aria-label'))};
"""


def _panel_equations(browser, idx, what):
    """The redrawn panels cite equations by label: each number shown is the rendered number of one of them."""
    from rlvr_lab import equations

    got = browser.execute_script(_PANELS, idx)
    numbers = {equations.number(label) for label in got["labels"]}
    shown = [int(n) for t in got["titles"] for n in re.findall(r"\b[Ee]qs? \((\d+)\)", t)]
    if not shown or not set(shown) <= numbers:
        return [f"{what}: panels {got['titles']} cite {shown}, their labels {got['labels']} are {sorted(numbers)}"]
    return []


def _await_update(browser, idx, before, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if browser.execute_script("return window.rlvrDashboards[arguments[0]].updates", idx) > before:
            return True
        time.sleep(0.03)
    return False


@pytest.mark.parametrize("doc", _pages())
def test_every_control_of_every_dashboard_matches_rlvr_lab(site, browser, doc):
    from selenium.webdriver.common.keys import Keys

    from rlvr_lab.figures import widgets

    browser.get(f"{site}/{doc}.html")
    _wait_for_widgets(browser)
    count = browser.execute_script("return (window.rlvrDashboards || []).length")
    if not count:
        pytest.skip(f"{doc} has no dashboard")
    problems = []
    for idx in range(count):
        state = browser.execute_script(_STATE, idx)
        spec = state["spec"]
        make = getattr(widgets, f"{spec['kind']}_explorer")
        accepted = inspect.signature(make).parameters
        dash = make(**{k: v for k, v in {**spec["fixed"], **spec["params"]}.items() if k in accepted})
        want = dict(spec["params"])
        for name, control in dash.controls.items():
            typed, text = _typed_value(control)
            moves = [("step", Keys.ARROW_LEFT if math.isclose(want[name], control.max) else Keys.ARROW_RIGHT)]
            moves += [
                ("lowest", Keys.HOME),
                ("highest", Keys.END),
                ("typed", typed),
                ("typed back", spec["params"][name]),
            ]
            for how, key in moves:
                before = browser.execute_script("return window.rlvrDashboards[arguments[0]].updates", idx)
                if how.startswith("typed"):
                    box = browser.execute_script(_CONTROL, idx, name, ".widget-readout")
                    box.click()
                    box.send_keys(Keys.CONTROL, "a")
                    box.send_keys(text if how == "typed" else repr(key), Keys.ENTER)
                else:
                    browser.execute_script(_CONTROL, idx, name, ".noUi-handle").send_keys(key)
                if not _await_update(browser, idx, before):
                    problems.append(f"{spec['kind']} {name} {how}: nothing recomputed")
                    continue
                if how.startswith("typed"):
                    want[name] = key
                else:
                    position = browser.execute_script(_STATE, idx)["ctls"][name]["position"]
                    want[name] = _from_position(control, position)
                problems += _compare(browser, idx, dash, want, f"{doc} {spec['kind']} {name} {how}")
        problems += _panel_equations(browser, idx, f"{doc} {spec['kind']}")
    assert not problems, f"{len(problems)} mismatches:\n" + "\n".join(problems[:30])


def test_dashboard_actions_were_compared():
    if not ACTIONS_CHECKED:
        pytest.skip("run with the per-page dashboard tests (they record each action compared)")
    print(f"{len(ACTIONS_CHECKED)} slider moves and typed values compared with rlvr_lab")
    assert len(ACTIONS_CHECKED) >= 5 * 40
