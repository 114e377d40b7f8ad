"""The book as one PDF, printed from the built website: ``python -m explorables.printing``.

Each page of the built site (``_build/html``, or the student edition's) is opened in a headless
Chromium (Debian's ``/usr/bin/chromium``, driven by playwright; no browser is downloaded) over a
local HTTP server, waits until its plotly figures, widgets and MathJax have drawn, and is printed
with the book's print stylesheet (``book/_static/explorables.css``: folded boxes open, no fold
buttons). pypdf joins the pages in the order of ``_toc.yml`` and adds a bookmark per part and
page. So the PDF shows exactly what the website shows, numbers in place and figures as drawn, with
no network at any step.

The instructor edition's PDF therefore prints the solutions (open) and the instructor notes; the
student edition's has neither, because its pages have neither.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import io
import shutil
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TOC = ROOT / "_toc.yml"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking")
#: resolves once MathJax has typeset the page (or at once where it has no MathJax)
_WAIT_FOR_MATH = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
}"""


@dataclass(frozen=True)
class PrintedPage:
    """One page of the book: its file in the built site (``book/03-omwu.html``) and its part."""

    path: str
    part: str


def book_pages(toc: Path = TOC) -> list[PrintedPage]:
    """The root page, then every page of every part of ``_toc.yml``, in the table of contents' order."""
    data = yaml.safe_load(toc.read_text())
    if not isinstance(data, dict) or "root" not in data:
        raise ValueError(f"{toc}: a jb-book table of contents needs a 'root' entry")
    pages = [PrintedPage(f"{data['root']}.html", "")]
    for part in data.get("parts", []):
        for entry in part.get("chapters", []):
            if "file" in entry:
                pages.append(PrintedPage(f"{entry['file']}.html", str(part.get("caption", ""))))
    return pages


def chromium_path() -> str:
    """Debian's Chromium (``apt-get install -y chromium``); ``FileNotFoundError`` says how to get it."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        raise FileNotFoundError("Chromium not found: install it with 'apt-get install -y chromium' to print the book")
    return found


@contextmanager
def _serve(folder: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def print_book(
    html: Path, out: Path, pages: Sequence[PrintedPage] | None = None, title: str = "NeurIPS 2026 Explorables"
) -> int:
    """Print the pages of the built site ``html`` (default: all of :func:`book_pages`, in its order)
    into one PDF ``out`` with a bookmark per part and page; returns the number of PDF pages.

    ``ValueError`` when ``html`` lacks one of the pages (it is not a built site of this book).
    """
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    html = Path(html)
    pages = book_pages() if pages is None else list(pages)
    if not pages:
        raise ValueError("pages must name at least one page to print")
    missing = [p.path for p in pages if not (html / p.path).is_file()]
    if missing:
        raise ValueError(f"html must be a built site of the book holding every page to print; missing {missing[:3]}")
    writer = PdfWriter()
    parts: dict[str, object] = {}
    with _serve(html) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))
        try:
            for page_info in pages:
                # a fresh context per page: long pages printed one after another in one context came out
                # cut short (three chapters of the executed book lost their last third)
                context = browser.new_context(viewport={"width": 900, "height": 1200})
                page = context.new_page()
                page.goto(f"{url}/{page_info.path}", wait_until="networkidle")
                page.evaluate(_WAIT_FOR_MATH)
                page.emulate_media(media="print")
                page.wait_for_timeout(500)  # the print layout (open boxes, figures resized) settles
                heading = page.locator("h1").first
                name = heading.inner_text().strip().rstrip("#").strip() if heading.count() else page_info.path
                pdf = page.pdf(format="A4", print_background=True,
                               margin={"top": "14mm", "bottom": "14mm", "left": "12mm", "right": "12mm"})  # fmt: skip
                context.close()
                first = len(writer.pages)
                writer.append(PdfReader(io.BytesIO(pdf)), import_outline=False)
                parent = None
                if page_info.part:
                    if page_info.part not in parts:
                        parts[page_info.part] = writer.add_outline_item(title=page_info.part, page_number=first)
                    parent = parts[page_info.part]
                writer.add_outline_item(title=name, page_number=first, parent=parent)
        finally:
            browser.close()
    writer.add_metadata({"/Title": title})
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as handle:
        writer.write(handle)
    return len(writer.pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m explorables.printing", description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the built site, e.g. _build/html")
    parser.add_argument("out", type=Path, help="the PDF to write, e.g. _build/pdf/explorables-instructor.pdf")
    parser.add_argument("--title", default="NeurIPS 2026 Explorables", help="the PDF's title")
    args = parser.parse_args(argv)
    try:
        n = print_book(args.html, args.out, title=args.title)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{args.out}: {n} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
