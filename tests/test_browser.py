"""The built book in a real browser: headless Chromium opens every page of the site and finds no
JavaScript error or failed request, every saved widget rendered (its DOM present, sized, with its
figure loaded), every figure loaded, and no request leaving the site. Screenshots of every page are
kept in artifacts/screenshots/."""

import base64
import functools
import http.server
import shutil
import threading
import time

import pytest

from book_site import ROOT, build_book, shared_dir, toc_files

pytestmark = [pytest.mark.slow, pytest.mark.book, pytest.mark.browser]

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
                None)
DRIVER = shutil.which("chromedriver")
SHOTS = ROOT / "artifacts" / "screenshots"
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--window-size=1280,1000"]


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    book = build_book(shared_dir(tmp_path_factory))
    assert book.returncode == 0, "the book did not build; see tests/test_book_build.py"
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
    _screenshot(browser, doc)

    errors = browser.execute_script("return window.__rlvrErrors || []")
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors and not severe, f"{doc}: JavaScript errors {errors + severe}"

    # Every saved widget view was rendered by the html-manager: present, sized, with sliders, text and figure.
    assert len(state["rendered"]) == state["views"], f"{doc}: {state['views']} widget views, " \
                                                     f"{len(state['rendered'])} dashboards rendered"
    for r in state["rendered"]:
        assert r["w"] > 300 and r["h"] > 200 and r["text"] > 40 and r["sliders"] >= 1, f"{doc}: blank widget {r}"
        assert r["img"] > 0, f"{doc}: a dashboard figure did not load"

    figures = browser.execute_script(_FIGURES)
    broken = [f for f in figures if not (f["complete"] and f["w"] > 0)]
    assert not broken, f"{doc}: figures that did not load: {broken}"

    origins = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    outside = [u for u in origins if not u.startswith(site) and not u.startswith("data:")]
    assert not outside, f"{doc}: requests leaving the site (no CDN allowed): {outside[:5]}"


def _screenshot(browser, doc):
    """Full-page PNG: widen the viewport to the page's height, capture, restore."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = min(int(browser.execute_script("return document.documentElement.scrollHeight")), 16000)
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": False})
    try:
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    (SHOTS / (doc.replace("/", "__") + ".png")).write_bytes(base64.b64decode(shot["data"]))
