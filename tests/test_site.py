"""The website as a reader sees it: a real (headless) Chromium over the freshly built site.

A loopback HTTP server serves ``_build/html``; Chromium loads every page with every request to
another host blocked and recorded (the network is, in effect, off). For each page: no failed
request, no request leaving localhost, no console error, every plotly figure drawn, every widget
panel rendered; a screenshot goes to ``_build/screenshots/``. On the OMWU page the slider is
moved and the figure must change.

Chromium comes from Debian (``apt-get install chromium``), driven through playwright's Python API
with ``executable_path``: no browser is downloaded. Without Chromium these tests skip with that
hint, except under CI (``CI`` set), where they fail.

The tests that need the built site or a browser are marked ``book`` (``tests/conftest.py`` marks every test that
uses the ``built_book`` or ``browser`` fixture): ``make test-site`` and CI's book step run them; ``make test`` runs
this file's other tests (the vendored assets, the notebook copies, the references).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from explorables import colab

from .conftest import CHAPTERS, PAGE_WEIGHTS, ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = ROOT / "_build" / "screenshots"
#: each page's screenshot in SCREENSHOTS is its first screen; EXPLORABLES_FULL_SCREENSHOTS=1 takes whole pages
#: (Chromium then rasterises pages up to about 36,000 px tall: measured, under load, 5-9 s a page against 0.2-0.6 s,
#: about 40% of the page loads' time). No check reads these pictures: they are for a reader of the test run.
FULL_SCREENSHOTS = os.environ.get("EXPLORABLES_FULL_SCREENSHOTS") == "1"
#: desktop pages loading at once in :func:`visits` (their waits for the network to settle overlap)
DESKTOP_AT_ONCE = 2
PAGE_BUDGET_BYTES = 3 * 1024 * 1024  # per chapter page, everything it loads (plotly.js included)
#: how long a Playwright wait without its own ``timeout=`` may take (Playwright's default is 30 s). When the site
#: tests ran inside make test, beside the other tests (before issue 38 moved them to make test-site), and under
#: load a page's ``load`` event took longer than 30 s (load average ~13 on 2 cores: 15 site tests errored in
#: ``visits``): a slow page is not a broken one, so this bound only catches a hang (issue 38: no test depends on
#: the machine's speed).
PAGE_WAIT_MS = 600_000


def _launch(p):
    """Chromium for the site tests; every context it opens waits up to :data:`PAGE_WAIT_MS` by default."""
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    new_context = browser.new_context

    def patient_context(*args, **kwargs):
        context = new_context(*args, **kwargs)
        context.set_default_timeout(PAGE_WAIT_MS)
        return context

    browser.new_context = patient_context
    return browser


# --- things that need no browser -----------------------------------------------------------------


def test_vendored_assets_match_their_checksums():
    vendor = ROOT / "book" / "_static" / "third_party"
    listed = {}
    for line in (vendor / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    skip = ("README.md", "SHA256SUMS")
    on_disk = {str(p.relative_to(vendor)) for p in vendor.rglob("*") if p.is_file() and p.name not in skip}
    assert on_disk == set(listed), "SHA256SUMS must list exactly the vendored files"
    for name, digest in listed.items():
        assert hashlib.sha256((vendor / name).read_bytes()).hexdigest() == digest, f"{name} changed"


def test_the_vendored_plotly_bundle_is_the_plotly_packages_version(tmp_path):
    from explorables import sphinx_ext

    static = ROOT / "book" / "_static"
    assert sphinx_ext.plotly_js_version(static / sphinx_ext.PLOTLY_JS) == sphinx_ext.plotly_js_version(
        sphinx_ext.PLOTLY_PACKAGE_JS
    )
    sphinx_ext.check_plotly_bundle(static)
    older = tmp_path / sphinx_ext.PLOTLY_JS
    older.parent.mkdir(parents=True)
    older.write_text("/**\n* plotly.js (cartesian - minified) v1.0.0\n*/")
    with pytest.raises(RuntimeError, match=r"1\.0\.0 but the installed plotly package has"):
        sphinx_ext.check_plotly_bundle(tmp_path)


@pytest.mark.book
def test_every_trace_on_the_site_is_one_the_served_bundle_draws(built_book):
    """The site serves plotly's cartesian bundle (sphinx_ext.PLOTLY_TRACES); a figure with another
    trace type (e.g. scatter3d, parcoords) would be blank. Trace types are read from every
    ``Plotly.newPlot`` call's data and frames (the template's defaults for all types are not traces)."""
    from explorables import sphinx_ext

    used: dict[str, set[str]] = {}
    calls = 0
    for page in built_book.rglob("*.html"):
        for call in re.findall(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*\{", page.read_text(), re.S):
            calls += 1
            for trace in json.loads(call):
                used.setdefault(trace.get("type", "scatter"), set()).add(page.name)
    assert calls >= 19
    missing = {kind: sorted(pages) for kind, pages in used.items() if kind not in sphinx_ext.PLOTLY_TRACES}
    assert not missing, f"trace types the served plotly bundle lacks: {missing}"


@pytest.mark.book
def test_exercises_and_equations_carry_the_same_chapter_relative_numbers_on_the_site_and_in_the_notebooks(
    built_book,
):
    """A teacher's "exercise 3.2" or "equation (16.1)" means the same thing on the website, in the
    notebook (the committed copy in ``notebooks/``) and in print (which prints the site)."""
    for chapter in CHAPTERS:
        number = int(chapter.stem[:2])
        page = (built_book / "book" / f"{chapter.stem}.html").read_text()
        title = r'<p class="admonition-title"><span class="caption-number">Exercise (\d+\.\d+)'
        site_exercises = re.findall(title, page)
        site_equations = re.findall(r'<span class="eqno">\((\d+\.\d+)\)', page)
        cells = json.loads((ROOT / "notebooks" / f"{chapter.stem}.ipynb").read_text())["cells"]
        text = "\n".join("".join(cell["source"]) for cell in cells)
        nb_exercises = list(dict.fromkeys(re.findall(r"\*\*Exercise (\d+\.\d+)", text)))
        nb_equations = list(dict.fromkeys(re.findall(r"\\tag\{(\d+\.\d+)\}", text)))
        assert site_exercises, chapter.stem
        expected = [f"{number}.{k}" for k in range(1, len(site_exercises) + 1)]
        assert site_exercises == expected == nb_exercises, chapter.stem
        assert site_equations == [f"{number}.{k}" for k in range(1, len(site_equations) + 1)], chapter.stem
        assert nb_equations == site_equations, chapter.stem


def test_colab_notebooks_are_in_sync_with_chapters():
    for chapter in CHAPTERS:
        committed = ROOT / "notebooks" / f"{chapter.stem}.ipynb"
        assert committed.exists(), f"missing {committed.name}: run 'make notebooks'"
        assert committed.read_text() == colab.render(colab.colab_notebook(chapter)), (
            f"{committed.name} is stale: run 'make notebooks'"
        )


def test_references_and_text_hold_no_internal_notes():
    """A reader sees neither placeholder authors nor the book's own working notes."""
    bib = (ROOT / "book" / "references.bib").read_text()
    for internal in ("Authors of", "paper list", "working title", "research notes"):
        assert internal.lower() not in bib.lower(), f"references.bib shows an internal note: {internal!r}"
    for chapter in CHAPTERS:
        assert "research notes" not in chapter.read_text().lower(), f"{chapter.name} cites notes readers cannot see"


def test_site_pages_reference_no_cdn(built_book):
    for page in built_book.rglob("*.html"):
        html = page.read_text()
        for cdn in ("cdn.jsdelivr.net/npm/@jupyter", "cdnjs.cloudflare.com", "cdn.plot.ly", "mathjax@3"):
            assert f'src="https://{cdn}' not in html, f"{page.name} loads {cdn}"


# --- the browser ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site_url(built_book, request):
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    # the page loads whose results are data (the phone's checks, the printed chapters) start now in a
    # second browser, beside the main thread's desktop loads (:class:`BrowserJobs`)
    wanted = {name for item in request.session.items for name in BACKGROUND if name in item.fixturenames}
    jobs = None
    if wanted and Path(CHROMIUM).exists():
        jobs = BrowserJobs({f"{name}-{i}": functools.partial(work, url=url) for name, works in BACKGROUND.items()
                            if name in wanted for i, work in enumerate(works)})
        _JOBS[url] = jobs
    yield url
    if jobs is not None:
        jobs.finish()
        del _JOBS[url]
    server.shutdown()
    server.server_close()


class BrowserJobs:
    """Browser work whose result is data (no live page), done beside the main thread's page loads,
    each work in a thread with a Chromium of its own (Playwright's sync API belongs to the thread that
    started it). The works mostly wait (for a page's network to settle, for the figures to be fitted,
    for a figure to show whether it moves on its own, for a tap's effect), so on two cores several
    series of loads take about as long as the longest. A work's exception is raised where its result
    is asked for.
    """

    def __init__(self, works: dict):
        self._done = {name: threading.Event() for name in works}
        self._results: dict[str, tuple[bool, object]] = {}
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(name, work), daemon=True,
                                          name=f"site-browser-{name}") for name, work in works.items()]
        for thread in self._threads:
            thread.start()

    def _run(self, name: str, work) -> None:
        try:
            if self._stop.is_set():
                return
            from playwright.sync_api import sync_playwright

            with sync_playwright() as p:
                browser = _launch(p)
                try:
                    self._results[name] = (True, work(browser))
                finally:
                    browser.close()
        except BaseException as error:  # raised in the test that asks for it
            self._results.setdefault(name, (False, error))
        finally:
            self._results.setdefault(name, (False, RuntimeError(f"{name}: stopped before it ran")))
            self._done[name].set()

    def result(self, name: str):
        if not self._done[name].wait(timeout=3600):
            pytest.fail(f"the background browser work {name!r} did not finish within an hour")
        ok, value = self._results[name]
        if not ok:
            raise value
        return value

    def finish(self) -> None:
        """Skip the works not begun (a session stopped early) and wait for those running."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=600)


#: the running :class:`BrowserJobs` of each served site (one per module, keyed by its URL)
_JOBS: dict[str, BrowserJobs] = {}


def _background(name: str, browser, site_url: str) -> list:
    """The results of the background works of fixture ``name`` (:data:`BACKGROUND`), in order, or the
    works done here if none runs."""
    jobs = _JOBS.get(site_url)
    results = []
    for i, work in enumerate(BACKGROUND[name]):
        key = f"{name}-{i}"
        results.append(work(browser, url=site_url) if jobs is None or key not in jobs._done else jobs.result(key))
    return results


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output readable
        pass


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        message = "Chromium not found: install it with 'apt-get install -y chromium' to run the browser tests"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _launch(p)
        yield browser
        browser.close()


def _pages(html_root: Path) -> list[str]:
    pages = sorted(str(p.relative_to(html_root)) for p in (html_root / "book").glob("*.html"))
    return ["index.html", *pages, "genindex.html", "search.html"]


class PageVisit:
    """Loads one page, recording what a reader's browser would do."""

    def __init__(self, browser, url: str, *, settle: bool = True):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.external: list[str] = []
        self.failed: list[str] = []
        self.console_errors: list[str] = []
        self.bodies: dict[str, bytes] = {}
        self.checks: dict = {}  # a chapter's fit and figure-text checks at this width (see :func:`desktop_checks`)
        self.page.route("**/*", self._route)
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        self.page.on("response", self._response)
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)))
        # "load" waits for every inline script (plotly draws synchronously while the page parses);
        # then let late requests (fonts, MathJax) settle. With settle=False the navigation only starts:
        # several pages then load at once, and :meth:`settle` waits for this one.
        self.page.goto(url, wait_until="commit")
        if settle:
            self.settle()

    def settle(self) -> None:
        self.page.wait_for_load_state("load")
        self.page.wait_for_load_state("networkidle")
        self.settled = time.monotonic()

    def _route(self, route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith("data:") or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.external.append(route.request.url)
            route.abort()

    def _response(self, response):
        if response.status >= 400:
            self.failed.append(f"{response.url} (HTTP {response.status})")
        try:
            self.bodies[response.url] = response.body()
        except Exception:  # redirects and aborted requests have no body
            pass

    def weight(self, *, compressed: bool = True, own_only: bool = False) -> int:
        """Bytes this page loads.

        ``compressed``: as a gzip-serving host (GitHub Pages, Netlify, nginx) would send them;
        ``own_only``: only what is not under ``_static/`` (the page and its own images), i.e.
        what the chapter itself adds on top of the theme's shared, cached assets.
        """
        total = 0
        for url, body in self.bodies.items():
            path = urlparse(url).path
            if own_only and "/_static/" in path:
                continue
            total += len(gzip.compress(body, 6)) if compressed else len(body)
        return total

    def close(self):
        self.context.close()


@pytest.fixture(scope="module")
def visits(browser, site_url, built_book):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    out = {}
    names = _pages(built_book)
    for start in range(0, len(names), DESKTOP_AT_ONCE):
        # the pages of a batch load at once (each in its own renderer), then are checked one by one
        batch = {name: PageVisit(browser, f"{site_url}/{name}", settle=False)
                 for name in names[start:start + DESKTOP_AT_ONCE]}
        for name, visit in batch.items():
            visit.settle()
            out[name] = visit
    for name, visit in out.items():
        # MathJax and the widget manager finish; figure-widths.js and narrow-screens.js run after the figures
        # draw: at least 600 ms after the page's network settled
        visit.page.wait_for_timeout(max(0.0, 600 - 1000 * (time.monotonic() - visit.settled)))
        stem = Path(name).stem
        if stem in CHAPTER_STEMS:  # the desktop half of the fit and figure-text checks, on this same load
            visit.checks = desktop_checks(visit.page, stem)
        visit.page.screenshot(path=SCREENSHOTS / f"{stem}.png", full_page=FULL_SCREENSHOTS)
    PAGE_WEIGHTS.clear()
    PAGE_WEIGHTS.append("KB: page itself (raw) | all it loads, plotly.js included (raw) | (gzipped)")
    for n, v in out.items():
        PAGE_WEIGHTS.append(
            f"  {n:32s} {v.weight(compressed=False, own_only=True) / 1024:7.0f} | "
            f"{v.weight(compressed=False) / 1024:7.0f} | {v.weight() / 1024:7.0f}"
        )
    (ROOT / "_build" / "page-weights.txt").write_text("\n".join(PAGE_WEIGHTS) + "\n")
    yield out
    for visit in out.values():
        visit.close()


def test_no_request_leaves_localhost_and_none_fails(visits):
    for name, visit in visits.items():
        assert not visit.external, f"{name} tried to reach the network: {visit.external}"
        assert not visit.failed, f"{name} had failed requests: {visit.failed}"


def test_no_console_errors(visits):
    for name, visit in visits.items():
        assert not visit.console_errors, f"{name} logged errors: {visit.console_errors}"


def test_every_plotly_figure_has_drawn(visits, built_book):
    for name, visit in visits.items():
        figures = visit.page.locator(".js-plotly-plot")
        expected = (built_book / name).read_text().count("Plotly.newPlot(")
        assert figures.count() == expected, f"{name}: {figures.count()} of {expected} plotly figures drew"
        for i in range(figures.count()):
            figure = figures.nth(i)
            assert figure.locator("svg.main-svg").count() > 0, f"{name}: figure {i} has no SVG"
            traces = figure.evaluate("gd => gd._fullData.filter(t => t.visible === true).length")
            # image traces draw an <image> in .imagelayer, heatmaps one in their .hm group
            drawn = figure.locator(".trace, .imagelayer image, .hm image").count()
            assert traces > 0 and drawn > 0, f"{name}: figure {i} drew no traces"


def test_every_widget_panel_has_rendered(visits):
    for name, visit in visits.items():
        page = visit.page
        views = page.locator('script[type="application/vnd.jupyter.widget-view+json"]').count()
        if not views:
            continue
        assert page.locator(".jupyter-widgets").count() >= views, f"{name}: widget views did not render"
        assert page.locator(".widget-slider, .widget-hslider").count() > 0, f"{name}: no slider controls"
        assert page.locator(".jupyter-widgets img").count() > 0, f"{name}: the lab's picture is missing"


def test_chapter_pages_stay_under_the_weight_budget(visits):
    """3 MB per chapter page, plotly.js aside: what a reader downloads (gzip, as hosts serve it),
    and what the chapter itself adds uncompressed (its HTML, figure data and images)."""
    for name, visit in visits.items():
        if Path(name).stem[:2].isdigit():
            assert visit.weight() <= PAGE_BUDGET_BYTES, f"{name} transfers {visit.weight() / 2**20:.2f} MB"
            own = visit.weight(compressed=False, own_only=True)
            assert own <= PAGE_BUDGET_BYTES, f"{name} itself weighs {own / 2**20:.2f} MB"


def test_math_is_typeset_locally(visits):
    page = visits["book/03-omwu.html"].page
    assert page.locator("mjx-container").count() > 5


def test_glued_numbers_read_as_part_of_their_sentence(visits):
    """A glued value has its paragraph's weight (myst-nb's default bold made whole paragraphs bold)."""
    for name, visit in visits.items():
        bold = visit.page.evaluate(
            """() => [...document.querySelectorAll('span.pasted-text')].filter(
                   e => getComputedStyle(e).fontWeight !== getComputedStyle(e.parentElement).fontWeight
               ).map(e => e.textContent.slice(0, 40))"""
        )
        assert not bold, f"{name}: glued values in another weight than their text: {bold[:5]}"


def test_printed_output_is_never_cut_off(visits):
    """No printed line hides its end behind a scroll bar at 1280 px (routing's 'LPs solved' value was)."""
    for name, visit in visits.items():
        clipped = visit.page.evaluate(
            """() => [...document.querySelectorAll('div.cell_output pre')].filter(
                   e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60))"""
        )
        assert not clipped, f"{name}: printed output wider than the page: {clipped[:3]}"


def test_live_lab_labels_are_not_truncated(visits):
    for name, visit in visits.items():
        cut = visit.page.evaluate(
            """() => [...document.querySelectorAll('.widget-label')].filter(
                   e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""
        )
        assert not cut, f"{name}: live-lab labels cut off: {cut}"


# Text boxes of every drawn plotly figure that overlap each other or stick out of the figure.
FIGURE_TEXT_PROBLEMS = """
() => {
  const out = [];
  const sel = '.gtitle, .g-gtitle text, .xtitle, .ytitle, .annotation-text, .legendtext, .infolayer .annotation text';
  for (const plot of document.querySelectorAll('.js-plotly-plot')) {
    const box = plot.getBoundingClientRect();
    if (box.width === 0) continue;
    const texts = [...plot.querySelectorAll(sel)]
      .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0);
    const rects = texts.map(t => [t.textContent.trim().slice(0, 30), t.getBoundingClientRect()]);
    for (const [name, r] of rects) {
      if (r.left < box.left - 2 || r.right > box.right + 2 || r.top < box.top - 2 || r.bottom > box.bottom + 2)
        out.push(`clipped: "${name}"`);
    }
    for (let i = 0; i < rects.length; i++) for (let j = i + 1; j < rects.length; j++) {
      const a = rects[i][1], b = rects[j][1];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 2 && h > 2) out.push(`overlap: "${rects[i][0]}" / "${rects[j][0]}"`);
    }
  }
  return out;
}
"""


@pytest.mark.parametrize("width", [400, 1280])
def test_figures_never_overlap_or_clip_their_text(visits, phone, width):
    """Titles, axis titles, subplot titles and legends of every figure, at phone and desktop width
    (book/_static/figure-widths.js stacks the panels of a figure too wide for the column, moves
    titles and legends, and wraps long titles). Read on the same page loads as the fit checks."""
    found = _checks_at(visits, phone, width)
    problems = {stem: f["text"][:4] for stem, f in found.items() if f["text"]}
    assert not problems, f"figure text overlaps or is clipped at {width} px: {problems}"
    if width == 400:
        assert (SCREENSHOTS / "figure-400px.png").exists()


def test_launch_buttons_on_every_chapter(visits):
    url, branch = colab.repository()
    repo = url.removeprefix("https://github.com/")
    for chapter in CHAPTERS:
        html = visits[f"book/{chapter.stem}.html"].page.content()
        # Binder and Colab open the notebook copy, from the one repository setting
        assert f"mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/notebooks/{chapter.stem}.ipynb" in html
        assert f"colab.research.google.com/github/{repo}/blob/{branch}/notebooks/{chapter.stem}.ipynb" in html
        assert f"{url}" in html  # the repository button
        assert "user-redirect/git-pull" not in html  # no hub configured: no JupyterHub button
        # no Live Code (needs a CDN); look for Thebe's markup and scripts, not the bare word, which
        # can turn up by chance inside a figure's base64-encoded data
        assert "initThebeSBT()" not in html and not re.search(r"thebe[-_.a-z]*\.js|thebe-launch|class=\"thebe", html)
        assert f"_sources/book/{chapter.stem}.ipynb" in html and f"_sources/book/{chapter.stem}.md" in html


def test_clicking_every_header_button_makes_no_outside_request(browser, site_url):
    """Open every dropdown in the header (launch, download, ...) with the network off: the page
    itself requests nothing outside (the buttons inside are links, followed only by a reader)."""
    chapter = CHAPTERS[0].stem
    visit = PageVisit(browser, f"{site_url}/book/{chapter}.html")
    try:
        page = visit.page
        toggles = page.locator(".article-header-buttons .dropdown-toggle")
        assert toggles.count() >= 2  # launch and download
        for i in range(toggles.count()):
            toggles.nth(i).click()
            page.wait_for_timeout(300)
        assert page.locator("text=Live Code").count() == 0
        page.screenshot(path=SCREENSHOTS / f"{chapter}-launch-menu.png")
        page.wait_for_load_state("networkidle")
        assert not visit.external, f"clicking the header buttons reached the network: {visit.external}"
        assert not visit.failed and not visit.console_errors
    finally:
        visit.close()


@pytest.mark.parametrize("width", [400, 900])
def test_navigation_menus_open_on_phones_and_tablets(browser, site_url, width):
    """The visible menu button opens the chapter list, and the contents button the page contents
    (both themes bind only the first, hidden, toggle: book/_static/sidebar-toggles.js)."""
    chapter = CHAPTERS[0].stem
    context = browser.new_context(viewport={"width": width, "height": 850})
    try:
        page = context.new_page()
        page.goto(f"{site_url}/book/{chapter}.html", wait_until="load")
        for toggle, dialog in [(".primary-toggle", "#pst-primary-sidebar-modal"),
                               (".secondary-toggle", "#pst-secondary-sidebar-modal")]:
            visible = page.locator(f"{toggle}:visible")
            assert visible.count() >= 1, f"no visible {toggle} at {width} px"
            visible.first.click()
            page.wait_for_timeout(300)
            assert page.locator(dialog).evaluate("d => d.open"), f"{toggle} did not open {dialog} at {width} px"
            assert page.locator(f"{dialog} a").first.is_visible()
            if toggle == ".primary-toggle":
                page.screenshot(path=SCREENSHOTS / f"phone-menu-{width}px.png")
            page.keyboard.press("Escape")
            page.wait_for_timeout(200)
            assert not page.locator(dialog).evaluate("d => d.open")
    finally:
        context.close()


def test_sidebar_button_hides_the_chapter_list_on_wide_screens(browser, site_url):
    chapter = CHAPTERS[0].stem
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{site_url}/book/{chapter}.html", wait_until="load")
        sidebar = page.locator("#pst-primary-sidebar")
        assert sidebar.is_visible()
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_timeout(300)
        assert not sidebar.is_visible(), "the sidebar button did not hide the chapter list at 1280 px"
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_timeout(300)
        assert sidebar.is_visible()
    finally:
        context.close()


def test_citations_link_to_their_own_pages_bibliography(built_book):
    """A paper cited by several chapters (bibtex.duplicate_citation is silenced in _config.yml):
    every citation link on a chapter page points into that page, never to another chapter."""
    for chapter in CHAPTERS:
        html = (built_book / "book" / f"{chapter.stem}.html").read_text()
        cites = re.findall(r'<span class="bibtex-citation"[^>]*>.*?</span>', html, re.S)
        links = [href for c in cites for href in re.findall(r'href="([^"]+)"', c)]
        away = [h for h in links if not h.startswith("#")]
        assert not away, f"{chapter.stem}: citations link to other pages: {away[:3]}"


def test_downloaded_notebooks_read_as_plain_jupyter_markdown(built_book):
    """The .ipynb download: the executed chapter, MyST converted, glued numbers in the text."""
    import nbformat

    from explorables import notebooks

    for chapter in CHAPTERS:
        nb = nbformat.read(built_book / "_sources" / "book" / f"{chapter.stem}.ipynb", as_version=4)
        assert notebooks.myst_left(nb) == [], f"{chapter.stem}.ipynb shows MyST-only syntax"
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert not re.search(r"\[`\w+`\](?!\()", text), f"{chapter.stem}.ipynb: a glued value is not in the text"
        source = chapter.read_text()
        if "solution-start" in source or ":class: dropdown" in source:
            assert "## Solutions" in text
        assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "outputs were dropped"


def test_omwu_slider_changes_the_figure(visits):
    page = visits["book/03-omwu.html"].page
    figure = page.locator(".js-plotly-plot").first
    figure.scroll_into_view_if_needed()
    visible = "gd => gd._fullData.map((t, i) => t.visible === true ? i : -1).filter(i => i >= 0).join(',')"
    before_traces = figure.evaluate(visible)
    active = "gd => gd.layout.sliders[0].steps[gd.layout.sliders[0].active].label"
    before_label = figure.evaluate(active)
    rail = figure.locator(".slider-container .slider-rail-touch-rect")
    box = rail.bounding_box()
    page.mouse.click(box["x"] + 3, box["y"] + box["height"] / 2)  # the first step: the largest delta
    page.wait_for_timeout(300)
    after_traces = figure.evaluate(visible)
    after_label = figure.evaluate(active)
    assert after_traces != before_traces, "moving the slider did not change the visible traces"
    assert after_label != before_label and after_label == "0.5"
    page.screenshot(path=SCREENSHOTS / "03-omwu-slider-moved.png")


# --- JupyterLab, as `make lab`, Binder and the Colab copy show a chapter ------------------------------

LAB_CHAPTER = "03-omwu"  # the worked example; run at SCALE = "smoke" to keep the test short


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """A real JupyterLab on loopback, serving a folder with one chapter's notebook copy."""
    folder = tmp_path_factory.mktemp("lab")
    settings = folder / ".settings"
    # render every cell (no windowing), and no news or update checks (they would go online)
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}')
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}')
    import nbformat

    source = ROOT / "notebooks" / f"{LAB_CHAPTER}.ipynb"
    if not source.exists():
        pytest.skip(f"no {source.name}")
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        if "parameters" in cell.metadata.get("tags", []):
            cell.source = 'SCALE = "smoke"'
    notebook = folder / source.name
    nbformat.write(nb, notebook)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "explorables-test"
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings)}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
               "--LabApp.news_url=", "--ServerApp.allow_root=True"]
    log = open(folder / "lab.log", "w")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        import urllib.request

        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"JupyterLab did not start:\n{(folder / 'lab.log').read_text()[-3000:]}")
                time.sleep(1)
        yield f"{base}/lab/tree/{notebook.name}?token={token}", nb
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_jupyterlab_runs_a_chapter_with_numbers_shown_and_solutions_folded(browser, jupyterlab):
    url, nb = jupyterlab
    visit = PageVisit(browser, url)
    page = visit.page
    try:
        page.set_default_timeout(60_000)
        page.locator(".jp-Notebook .jp-Cell").first.wait_for()
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
        page.screenshot(path=SCREENSHOTS / "jupyterlab-opened.png")
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        run_all = page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))

        def started() -> bool:  # a queued cell shows [*], a finished one its number
            prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
            return any("*" in p or re.search(r"\[\d+\]", p) for p in prompts)

        # "Run All Cells" acts on the current notebook: under load (a CI run) a click could land before the
        # notebook was current and queue nothing (seen once: every prompt still empty after 480 s). So the
        # notebook is focused first, and the command is given again until a cell is queued.
        for _ in range(4):
            page.locator(".jp-Notebook .jp-Cell").first.click()
            for _ in range(5):  # a menu opened while JupyterLab is still settling can close again: reopen it
                page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
                try:
                    run_all.wait_for(state="visible", timeout=10_000)
                    break
                except PlaywrightTimeout:
                    page.keyboard.press("Escape")
            run_all.click()
            queued_by = time.monotonic() + 30
            while time.monotonic() < queued_by and not started():
                page.wait_for_timeout(1000)
            if started():
                break
        else:
            page.screenshot(path=SCREENSHOTS / "jupyterlab-not-started.png")
            pytest.fail("Run All Cells queued no cell in four tries (screenshot jupyterlab-not-started.png)")
        # cells whose input is folded (hide-input on the site) show no prompt
        n_shown = sum(c.cell_type == "code" and not c.metadata.get("jupyter", {}).get("source_hidden")
                      for c in nb.cells)
        deadline = time.monotonic() + 480
        while time.monotonic() < deadline:  # every code cell has its execution count: done
            prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
            numbered = [p for p in prompts if re.search(r"\[\d+\]", p)]
            if len(numbered) >= n_shown and not any("*" in p for p in prompts):
                break
            page.wait_for_timeout(2000)
        else:
            pytest.fail(f"the chapter did not finish running: {prompts}")
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t]
        assert not tracebacks, tracebacks[:1]
        # numbers: each glue call printed "name = value" under the cell that computes it
        glued = page.locator(".jp-OutputArea-output", has_text=re.compile(r"^\w+ = [-+\d.,e]+", re.M))
        page.screenshot(path=SCREENSHOTS / "jupyterlab-after-run.png")
        assert glued.count() > 0, "no glued value printed under its cell"
        glued.first.scroll_into_view_if_needed()
        assert glued.first.is_visible(), "the first glued value is not visible"
        # no raw MyST anywhere in the rendered text
        rendered = "\n".join(page.locator(".jp-RenderedMarkdown").all_inner_texts())
        for raw in ("{glue", "{cite", "```{", "{eq}", "{doc}"):
            assert raw not in rendered, f"JupyterLab shows raw MyST: {raw}"
        assert "$$" not in rendered, "raw $$ math in the rendered text"
        assert page.locator(".jp-RenderedMarkdown mjx-container").count() > 0, "no typeset math"
        # numbers in the text: every live paragraph has its numbers in place after "Run all"
        live_cells = [c for c in nb.cells if "live-text" in c.metadata.get("tags", [])]
        names = {n for c in live_cells for n in re.findall(r"\[`(\w+)`\]", c.source)}
        assert names, "the chapter has no live text cells"
        left = sorted(n for n in names if f"[{n}]" in rendered)
        assert not left, f"the text still names numbers instead of showing them: {left[:5]}"
        live = page.locator(".jp-OutputArea-output[data-mime-type='text/markdown']")
        assert live.count() > 0, "no live text paragraph rendered"
        live.first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "jupyterlab-numbers-in-text.png")
        # solutions: folded under their headings at the end
        folded = [i for i, c in enumerate(nb.cells) if c.metadata.get("jp-MarkdownHeadingCollapsed")]
        cells = page.locator(".jp-Notebook .jp-Cell")
        assert folded and cells.count() == len(nb.cells)
        headings = [cells.nth(i) for i in folded]
        for heading in headings:
            assert "jp-MarkdownHeadingCollapsed" in heading.get_attribute("class"), "a solution is not folded"
        hidden = cells.nth(folded[0] + 1)
        assert not hidden.is_visible(), f"the solution is visible: {nb.cells[folded[0] + 1].source[:60]!r}"
        glued.first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "jupyterlab-glued-number.png")
        headings[-1].scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "jupyterlab-solutions-folded.png")
        # and it unfolds on a click (JupyterLab shows a heading's fold button while the pointer is over it)
        headings[0].scroll_into_view_if_needed()
        headings[0].hover()
        headings[0].locator(".jp-collapseHeadingButton").click()
        hidden.wait_for(state="visible", timeout=10_000)
        page.screenshot(path=SCREENSHOTS / "jupyterlab-solution-unfolded.png")
        assert not visit.external, f"JupyterLab reached the network: {visit.external}"
    finally:
        visit.close()


PRINT_PROBLEMS = """() => {
  const shown = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
                        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.opacity !== '0'; };
  const out = [];
  document.querySelectorAll('.admonition.dropdown, .admonition.toggle').forEach(box => {
    const body = [...box.children].filter(c => !c.classList.contains('admonition-title'));
    if (body.length && !body.some(shown)) out.push('folded: ' + box.textContent.trim().slice(0, 40));
  });
  document.querySelectorAll('button.toggle-button, details > summary').forEach(el => {
    if (shown(el)) out.push('button: ' + el.textContent.trim().slice(0, 40));
  });
  document.querySelectorAll('pre').forEach(pre => {
    if (shown(pre) && pre.scrollWidth > pre.clientWidth + 2) out.push('cut code: ' + pre.textContent.slice(0, 40));
  });
  return out;
}"""


def printed_chapters(browser, url: str) -> dict:
    """Every chapter page in print media (what :data:`PRINT_PROBLEMS` finds on each) and the first one
    printed to a PDF (its first bytes and its number of pages)."""
    context = browser.new_context(viewport={"width": 900, "height": 1000})
    problems, pdf = {}, None
    try:
        for chapter in CHAPTERS:
            page = context.new_page()
            page.goto(f"{url}/book/{chapter.stem}.html", wait_until="load")
            page.emulate_media(media="print")
            # the print styles apply on the next frames: wait for two of them, not for a clock
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            found = page.evaluate(PRINT_PROBLEMS)
            if found:
                problems[chapter.stem] = found[:4]
            if chapter == CHAPTERS[0]:
                printed = page.pdf(format="A4", print_background=True)
                pdf = (printed[:4], len(re.findall(rb"/Type\s*/Page[^s]", printed)))
            page.close()
    finally:
        context.close()
    return {"problems": problems, "pdf": pdf}


@pytest.fixture(scope="module")
def printed(browser, site_url) -> dict:
    """:func:`printed_chapters`, loaded in the background browser (:class:`BrowserJobs`)."""
    (found,) = _background("printed", browser, site_url)
    return found


def test_a_printed_chapter_shows_its_folded_boxes_and_no_buttons(printed):
    """Printing a chapter from the browser (book/_static/explorables.css, @media print): solutions,
    instructor notes and criteria boxes print open, no fold button or "show code" summary is left,
    and no code line runs off the paper; the whole page prints to a PDF."""
    head, n_pages = printed["pdf"]
    assert head == b"%PDF" and n_pages >= 5
    assert not printed["problems"], f"printed chapters hide content or show buttons: {printed['problems']}"


# --- every chapter fits a desktop and a phone (issue 51: figures, claims, phone bugs, autoplay) ------

#: chapters whose screenshots at 1280 and 400 px go to _build/screenshots/ (a grid, a wide figure, a phone bug)
SCREENSHOT_CHAPTERS = ("03-omwu", "12-trust_region_cl", "08-stable_nde")

# What one page shows at the viewport's width: the text column's width; the figures wider than it
# (their SVG or their div; book/_static/figure-widths.js stacks panels to fit); how far the page
# scrolls sideways and the elements that stick out of it; the elements matching `selector` (the
# claims tables' verdict cells, book/_static/narrow-screens.js) and those not fully within the
# viewport's width or cut off by a scrolling or clipping box around them.
PAGE_FIT = """(selector) => {
  const root = document.documentElement;
  const column = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const cs = getComputedStyle(column);
  const width = column.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  const right = column.getBoundingClientRect().left + parseFloat(cs.paddingLeft) + width;
  const label = el => (el.id || el.className.baseVal || el.className || el.tagName).toString().slice(0, 40);
  const wide = [];
  document.querySelectorAll('.js-plotly-plot').forEach((gd, i) => {
    const svg = gd.querySelector('svg.main-svg');
    const w = Math.max(gd.getBoundingClientRect().width, svg ? svg.getBoundingClientRect().width : 0);
    const r = Math.max(gd.getBoundingClientRect().right, svg ? svg.getBoundingClientRect().right : 0);
    if (w > width + 1 || r > right + 1) wide.push(`figure ${i}: ${Math.round(w)} px in ${Math.round(width)}`);
  });
  const overflow = root.scrollWidth - root.clientWidth;
  const sticking = [];
  if (overflow > 0) {
    for (const el of document.querySelectorAll('body *')) {
      const r = el.getBoundingClientRect();
      if (r.right > root.clientWidth + 1 && r.width > 0 && !sticking.some(s => s.el.contains(el))) {
        sticking.push({el, text: `${el.tagName.toLowerCase()}.${label(el)} (${Math.round(r.right)} px): ` +
                                 (el.textContent || '').trim().slice(0, 40)});
      }
      if (sticking.length >= 5) break;
    }
  }
  const cut = el => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.left < -1 || r.right > root.clientWidth + 1) return true;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (s.overflowX !== 'visible') {
        const b = a.getBoundingClientRect();
        if (r.left < b.left - 1 || r.right > b.right + 1) return true;
      }
    }
    return false;
  };
  const marked = [...document.querySelectorAll(selector)];
  // formulas that run past the column without a scroll bar of their own (narrow-screens.js gives one)
  const mathCut = [...document.querySelectorAll('mjx-container')].filter(m => {
    const r = m.getBoundingClientRect();
    return r.width > 0 && r.right > right + 1 && !(m.scrollWidth > m.clientWidth + 1);
  }).map(m => m.textContent.slice(0, 30));
  return {column: Math.round(width), figures: document.querySelectorAll('.js-plotly-plot').length, wide, overflow,
          sticking: sticking.map(s => s.text), verdicts: marked.length, mathCut,
          verdictsCut: marked.filter(cut).map(el => el.textContent.trim().slice(0, 40))};
}"""

# Each figure's state: the slider's step, the visible traces, the title, the first points of each
# trace, and whether plotly is animating; what changes without input is an animation.
FIGURE_STATES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const data = gd._fullData || [];
  const td = gd._transitionData || {};
  return JSON.stringify({
    sliders: ((gd._fullLayout || {}).sliders || []).map(s => s.active),
    visible: data.map(t => t.visible),
    title: gd.layout && gd.layout.title && gd.layout.title.text,
    points: data.map(t => t.x && t.x.length ? [t.x.length, t.x[0], t.y && t.y[0]] : null),
    animating: !!((td._frameQueue && td._frameQueue.length) || td._animationRaf),
  });
})"""


def page_fit(page, selector: str = ".verdict") -> dict:
    """What a loaded page shows at its viewport's width (see :data:`PAGE_FIT`)."""
    return page.evaluate(PAGE_FIT, selector)


def frames_advancing(page, wait_ms: int = 2000) -> list[int]:
    """The figures on a loaded page whose frames move on their own over ``wait_ms`` (no input)."""
    before = page.evaluate(FIGURE_STATES)
    page.wait_for_timeout(wait_ms)
    after = page.evaluate(FIGURE_STATES)
    return [i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b or json.loads(b)["animating"]]


def open_at_width(context, url: str):
    """A page of ``context`` at ``url``, once its figures are drawn and fitted and its math typeset."""
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(600)  # figure-widths.js and narrow-screens.js run after the figures draw
    return page


def screenshot_chapter(page, stem: str, width: int, folder: Path) -> list[Path]:
    """The page's first figure and its claims table, at this width, as a reader sees them."""
    folder.mkdir(parents=True, exist_ok=True)
    shots = []
    for what, selector in (("figure", ".js-plotly-plot"), ("claims", ".claims-table")):
        target = page.locator(selector).first
        if target.count():
            # its top, just below the page header
            target.evaluate("e => { e.scrollIntoView({block: 'start'}); window.scrollBy(0, -70); }")
            page.wait_for_timeout(200)
            shots.append(folder / f"{stem}-{width}px-{what}.png")
            page.screenshot(path=shots[-1])
    return shots


CHAPTER_STEMS = tuple(c.stem for c in CHAPTERS)

#: the phone: a touch screen 400 px wide (the fit, figure-text, autoplay and slider-tap checks share its loads)
PHONE = {"viewport": {"width": 400, "height": 900}, "has_touch": True, "is_mobile": True}


def desktop_checks(page, stem: str) -> dict:
    """On a chapter page loaded at desktop width (1280 px, :class:`PageVisit`): :func:`page_fit`, the
    figure text problems (:data:`FIGURE_TEXT_PROBLEMS`), and screenshots of :data:`SCREENSHOT_CHAPTERS`.
    Autoplay does not depend on the width; it is checked once, on the phone (:func:`phone_checks`)."""
    fit = page_fit(page)
    fit["text"] = page.evaluate(FIGURE_TEXT_PROBLEMS)
    if stem in SCREENSHOT_CHAPTERS:
        screenshot_chapter(page, stem, 1280, SCREENSHOTS)
        page.evaluate("() => window.scrollTo(0, 0)")
    return fit


def phone_checks(page, stem: str) -> dict:
    """On a chapter page loaded on :data:`PHONE`: :func:`page_fit`, the figure text problems, the figures
    that animate without input (:func:`frames_advancing`), screenshots, and last (it moves them) a tap
    near one end of every figure slider's rail, a reader's thumb: the sliders that did not move
    (08-stable_nde's, while its page was wider than the phone)."""
    fit = page_fit(page)
    fit["text"] = page.evaluate(FIGURE_TEXT_PROBLEMS)
    fit["animating"] = frames_advancing(page)
    if stem in SCREENSHOT_CHAPTERS:
        screenshot_chapter(page, stem, 400, SCREENSHOTS)
    if stem == CHAPTER_STEMS[0]:
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / "figure-400px.png")
    fit["untapped"] = slider_tap_fails(page)
    return fit


def slider_tap_fails(page) -> list[str]:
    """Tap near the end of every figure slider's rail farther from its step; the figures whose slider stayed."""
    failed = []
    figures = page.locator(".js-plotly-plot")
    for i in range(figures.count()):
        figure = figures.nth(i)
        # a slider a reader can move: shown, with two steps or more (a preset with one value of the swept
        # parameter, e.g. the smoke scale, keeps plotly's slider hidden: there is no rail to tap)
        movable = ("gd => ((gd._fullLayout || {}).sliders || []).some(s => s.visible !== false"
                   " && (s.steps || []).length > 1)")
        if not figure.evaluate(movable):
            continue
        rail = figure.locator(".slider-container .slider-rail-touch-rect").first
        rail.scroll_into_view_if_needed()
        page.wait_for_timeout(200)
        box = rail.bounding_box()
        active = "gd => gd._fullLayout.sliders[0].active"
        before = figure.evaluate(active)
        # the end farther from the current step
        x = box["x"] + 4 if before > 0 else box["x"] + box["width"] - 4
        page.touchscreen.tap(x, box["y"] + box["height"] / 2)
        page.wait_for_timeout(400)
        if figure.evaluate(active) == before:
            failed.append(f"figure {i} (slider stayed on step {before})")
    return failed


def phone_pages(browser, url: str, stems: tuple[str, ...] = CHAPTER_STEMS) -> dict[str, dict]:
    """Each chapter page of ``stems`` loaded once on :data:`PHONE`, with :func:`phone_checks` run on it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(**PHONE)
    found = {}
    try:
        for stem in stems:
            page = open_at_width(context, f"{url}/book/{stem}.html")
            found[stem] = phone_checks(page, stem)
            page.close()
    finally:
        context.close()
    return found


@pytest.fixture(scope="module")
def phone(browser, site_url) -> dict[str, dict]:
    """:func:`phone_pages`, loaded in the background browser (:class:`BrowserJobs`) while the main
    thread loads the desktop pages (:func:`visits`): the chapters in two halves, each in a browser of its own."""
    found = {}
    for half in _background("phone", browser, site_url):
        found.update(half)
    assert list(found) == list(CHAPTER_STEMS)
    return found


#: the works :class:`BrowserJobs` runs, each in a thread and a browser of its own, when a collected test
#: asks for the fixture of the same name (the key)
BACKGROUND = {
    "phone": [functools.partial(phone_pages, stems=CHAPTER_STEMS[: len(CHAPTER_STEMS) // 2]),
              functools.partial(phone_pages, stems=CHAPTER_STEMS[len(CHAPTER_STEMS) // 2:])],
    "printed": [printed_chapters],
}


def _checks_at(visits, phone, width: int) -> dict[str, dict]:
    if width == 400:
        return phone
    assert width == 1280, width
    return {stem: visits[f"book/{stem}.html"].checks for stem in CHAPTER_STEMS}


@pytest.mark.parametrize("width", [400, 1280])
def test_every_chapter_fits_the_screen_with_its_verdicts_visible_and_no_figure_playing(visits, phone, width):
    """At 1280 and 400 px, on every chapter page: no figure wider than the text column (panels
    stack, book/_static/figure-widths.js), no sideways scrolling at 400 px, no formula cut off at
    the column's edge (a wide one scrolls, book/_static/narrow-screens.js), every claims verdict
    within the screen's width (cards below 600 px, book/_static/narrow-screens.js), and (on the
    phone; it does not depend on the width) no figure that moves without input (plotly.py's
    autoplay; sphinx_ext.NO_AUTOPLAY)."""
    found = _checks_at(visits, phone, width)
    wide = {stem: f["wide"] for stem, f in found.items() if f["wide"]}
    assert not wide, f"figures wider than the text column at {width} px: {wide}"
    if width <= 600:
        overflow = {stem: (f["overflow"], f["sticking"]) for stem, f in found.items() if f["overflow"] > 0}
        assert not overflow, f"pages scroll sideways at {width} px: {overflow}"
    math = {stem: f["mathCut"] for stem, f in found.items() if f["mathCut"]}
    assert not math, f"formulas cut off at the column's edge at {width} px: {math}"
    no_verdict = [stem for stem, f in found.items() if not f["verdicts"]]
    assert not no_verdict, f"no claims verdict found (class 'verdict') on {no_verdict}"
    cut = {stem: f["verdictsCut"][:3] for stem, f in found.items() if f["verdictsCut"]}
    assert not cut, f"claims verdicts outside the screen's width at {width} px: {cut}"
    playing = {stem: f["animating"] for stem, f in found.items() if f.get("animating")}
    assert not playing, f"figures that animate without input at {width} px: {playing}"
    for stem in SCREENSHOT_CHAPTERS:
        assert (SCREENSHOTS / f"{stem}-{width}px-figure.png").exists()


def test_figure_sliders_answer_a_tap_on_a_phone(phone):
    """A tap on a slider's rail moves it, at 400 px on a touch screen, on every chapter page."""
    failed = {stem: f["untapped"] for stem, f in phone.items() if f["untapped"]}
    assert not failed, f"sliders that a tap does not move at 400 px: {failed}"
