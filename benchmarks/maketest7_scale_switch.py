"""The smoke and the book builds never take each other's pages (issue 38, ch/maketest7).

A two-page project with ``explorables.sphinx_ext`` (written by the mini-project helper of
``tests/test_book_jobs.py``), built at smoke, book, smoke, book into the same output folder and execution
cache. Each page must show the scale of the build, and each scale must execute once (then come from its own
cache record); ``EXPLORABLES_BOOK_SCALE=paper`` must be refused. Run from the repository root:
``.venv/bin/python benchmarks/maketest7_scale_switch.py`` (exit 1 on a failure).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_book_jobs import write_project  # noqa: E402

PAGE = """
# Toy

```{code-cell} ipython3
:tags: [parameters]

SCALE = "book"
```

```{code-cell} ipython3
import os
with open(os.environ["RUNS_LOG"], "a") as log:
    log.write(SCALE + "\\n")
print("executed at", SCALE)
```
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        pages = {"book/01-toy": PAGE, "book/02-toy": PAGE}  # chapter docnames: the scale handler rewrites them
        src = write_project(
            work / "src",
            ["explorables.sphinx_ext"],
            pages,
            f"html_static_path = {[str(ROOT / 'book' / '_static')]!r}\n",
        )
        html, runs = src / "_build" / "html", work / "runs.log"
        env = {
            **os.environ,
            "RUNS_LOG": str(runs),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
        }

        def build(scale: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(html)],
                env={**env, "EXPLORABLES_BOOK_SCALE": scale},
                capture_output=True,
                text=True,
            )

        for scale in ("smoke", "book", "smoke", "book"):
            done = build(scale)
            shown = sorted(
                {m for page in pages for m in re.findall(r"executed at [a-z]+", (html / f"{page}.html").read_text())}
            )
            executed = runs.read_text().split()
            print(f"{scale} build: pages show {shown}; kernels so far: {executed}")
            if done.returncode != 0 or shown != [f"executed at {scale}"]:
                print(f"FAIL: the {scale} build (exit {done.returncode}) shows {shown}\n{done.stderr[-3000:]}")
                return 1
        if executed != ["smoke", "smoke", "book", "book"]:
            print("FAIL: a scale executed twice or not at all")
            return 1
        if build("paper").returncode == 0:
            print("FAIL: EXPLORABLES_BOOK_SCALE=paper was accepted")
            return 1
    print("OK: each build shows its own scale, each scale executed once, paper refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
