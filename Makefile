# The README's commands. Each creates .venv and installs requirements.txt on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: help install book student test test-site quick lint lab serve bench notebooks clean

help:
	@echo "make book   execute every chapter; build the website (instructor edition), the student edition and both PDFs"
	@echo "make student  the student edition (no solutions, no instructor notes) into _build/student"
	@echo "make test   lint and every test but the site's: unit, property, oracle, resume, contract, fuzz tests, and"
	@echo "            every page executed from a cold kernel at the smoke scale (no website build, no browser)"
	@echo "make test-site  build the website and the student edition at the smoke scale, then the browser tests"
	@echo "            (EXPLORABLES_BOOK_SCALE=book make test-site: at the book scale, as make book and CI's second step do)"
	@echo "make quick  the edit loop (a few minutes): lint and the unit tests, without the site build, the browser,"
	@echo "            the book jobs, the paper plans, the contract's smoke runs, the fuzz or the slowest tests"
	@echo "make lab    JupyterLab on the chapters as notebooks (as Binder and Colab show them)"
	@echo "make serve  serve _build/html on http://$(HOST):$(PORT)"
	@echo "make bench  chapter execution time, live-lab latency, kernel speed (benchmarks/README.md)"
	@echo "make notebooks  regenerate the Colab copies notebooks/*.ipynb after editing a chapter"

$(STAMP): requirements.txt requirements-nodeps.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-nodeps.txt
	touch $(STAMP)

install: $(STAMP)

# Both editions and their PDFs. The student edition reuses the website's execution cache; the PDFs
# are the built pages printed by Debian's Chromium (apt-get install -y chromium), no network.
# Chapters execute two at a time (explorables.book_jobs; EXPLORABLES_BOOK_JOBS=1 for one at a time).
book: $(STAMP)
	$(BIN)/jupyter-book build . --warningiserror --keep-going
	EXPLORABLES_EDITION=student $(BIN)/jupyter-book build . --path-output _build/student --warningiserror --keep-going
	@if command -v chromium >/dev/null 2>&1; then \
	  $(BIN)/python -m explorables.printing _build/html _build/pdf/explorables-instructor.pdf --title "NeurIPS 2026 Explorables (instructor edition)" && \
	  $(BIN)/python -m explorables.printing _build/student/_build/html _build/pdf/explorables-student.pdf --title "NeurIPS 2026 Explorables (student edition)"; \
	else echo "Chromium not found: the PDFs were not printed (apt-get install -y chromium, then make book again)"; fi
	@echo "The website (instructor edition) is in $(CURDIR)/_build/html (open _build/html/index.html, or run 'make serve');"
	@echo "the student edition in _build/student/_build/html; both PDFs in _build/pdf."

# The student edition: the same executed chapters (it reuses make book's execution cache) without
# solutions or instructor notes. The website from `make book` is the instructor edition.
student: $(STAMP)
	EXPLORABLES_EDITION=student $(BIN)/jupyter-book build . --path-output _build/student --warningiserror --keep-going
	@echo "The student edition is in $(CURDIR)/_build/student/_build/html"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

# Every test but those marked `book` (the website build, the student edition and the browser tests: make
# test-site). It executes every page from a cold kernel at the smoke scale (tests/test_pages.py: each
# chapter's `SCALE = "book"` line becomes "smoke", as in explorables.sphinx_ext), in two pytest processes
# (tests/conftest.py). CI (.ci/run) runs make test, then the book-marked tests at the book scale (the
# site make book publishes) and the slow dry paper plans make test skips (tests/test_plan.py SLOW_DRY_PLANS).
test: lint
	$(BIN)/python -m pytest -m "not book"

# The tests marked `book`: the website build (every chapter executed at the smoke scale, unless
# EXPLORABLES_BOOK_SCALE=book), the student edition, and the browser tests on them (tests/test_book.py,
# tests/test_site.py, tests/test_teaching.py). CI's second step runs them at the book scale.
test-site: $(STAMP)
	$(BIN)/python -m pytest -m book

# The edit loop: lint, then the unit tests without the site build and its browser tests, the book jobs, the paper
# plans, the contract tests' smoke runs, the API and command-line fuzz (and its call recording), the subprocess
# kill-and-resume runs and the slowest chapter tests (the `slow` marker: tests/conftest.py QUICK_SKIPPED_FILES,
# tests/slow_tests.txt). make test runs all of them; run it before you push.
quick: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	EXPLORABLES_API_FUZZ=0 $(BIN)/python -m pytest -m "not book and not slow" -q --durations=10

LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
LAB_DIR      := _build/lab

lab: $(STAMP)
	@# the chapters as readers get them (plain Jupyter Markdown, solutions folded), freshly
	@# converted into $(LAB_DIR) so that running them never touches the committed notebooks/
	$(BIN)/python -m explorables.colab --out $(LAB_DIR)
	@# the .md sources (book/) still open as notebooks too, for authors (jupytext)
	mkdir -p $(LAB_SETTINGS)
	echo '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}}}' > $(LAB_SETTINGS)/overrides.json
	$(BIN)/jupyter lab --notebook-dir=. --ServerApp.default_url=/lab/tree/$(LAB_DIR) $(if $(filter 0,$(shell id -u)),--allow-root,)

serve:
	@test -d _build/html || { echo "no site yet: run 'make book' first"; exit 1; }
	$(PYTHON) -m http.server --directory _build/html --bind $(HOST) $(PORT)

notebooks: $(STAMP)
	$(BIN)/python -m explorables.colab

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --write benchmarks/README.md

clean:
	rm -rf _build runs .pytest_cache .ruff_cache
