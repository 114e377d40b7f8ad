"""Two chapters at a time in the book build (``make book``, ``make test-site``): a Sphinx extension.

myst-nb executes the chapters one after another while Sphinx reads them (``execute_notebooks:
cache``), so a cold build keeps one core busy for the sum of the chapters' times. This extension
starts one helper process (``EXPLORABLES_BOOK_JOBS=2``, the default; ``1`` turns it off) that
executes chapters from the *end* of Sphinx's reading order while Sphinx executes them from the
start, and hands each result to jupyter-cache just before Sphinx reads that chapter, so myst-nb
finds it there ("Using cached notebook"). The two meet in the middle: each chapter is executed
once, by whichever side claims it first.

The result is the build a serial one gives:

* The helper executes myst-nb's own notebook (read here with myst-nb's reader, its configuration,
  kernel aliases and per-notebook overrides, :func:`_prepare`) with the call myst-nb makes
  (``single_nb_execution``: the chapter's folder as working directory, the configured timeout and
  ``allow_errors``), and the cache record is written as myst-nb writes it (:func:`_store`).
* The helper executes the source Sphinx will read: the file after every ``source-read`` handler
  (emitted here for each chapter, :func:`_start`). A result is stored only if the notebook myst-nb
  will read (rebuilt from the source *after* every ``source-read`` handler) has the cache key the
  helper executed; so the key myst-nb looks up is the one stored, by construction.
* A chapter the helper could not execute (a failing cell, a dead kernel, a crashed helper) is not
  stored: Sphinx then executes it itself, as it would have anyway, and fails the build the usual
  way (``raise_on_error``). Only then is a chapter executed twice.

All cache writes happen in the Sphinx process (the helper only executes), so the jupyter-cache
database has one writer. The helper is a child of the build and reaps its kernels, so the build's
CPU time (``os.wait4`` in ``tests/conftest.py``) and its process group include it.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
from contextlib import nullcontext
from pathlib import Path, PurePosixPath
from typing import Any

ENV = "EXPLORABLES_BOOK_JOBS"


def _jobs() -> int:
    try:
        return max(1, int(os.environ.get(ENV, "2")))
    except ValueError:
        return 2


def _prepare(env: Any, docname: str, text: str) -> tuple[Any, Any, Any, str] | None:
    """myst-nb's notebook for ``docname`` from its source ``text``, as ``myst_nb.sphinx_.Parser.parse``
    and ``create_client`` build it: ``(notebook, nb_config, read_fmt, path)``, or ``None`` where myst-nb
    would not execute it through the cache."""
    import re

    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    path = env.doc2path(docname)
    nb_config = env.mystnb_config
    reader = create_nb_reader(path, env.myst_config, nb_config, text)
    if reader is None:
        return None
    notebook = reader.read(text)
    kernel_name = notebook.metadata.get("kernelspec", {}).get("name", None)
    if kernel_name is not None and nb_config.kernel_rgx_aliases:
        for rgx, alias in nb_config.kernel_rgx_aliases.items():
            if re.fullmatch(rgx, kernel_name):
                notebook.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        try:
            nb_config = nb_config.copy(**overrides)
        except Exception:
            return None  # myst-nb warns and keeps its configuration: leave such a page to it
    if nb_config.execution_mode != "cache" or not Path(path).is_file():
        return None
    for pattern in nb_config.execution_excludepatterns or ():
        if PurePosixPath(Path(path).as_posix()).match(pattern):
            return None
    if not any(cell["cell_type"] == "code" for cell in notebook.cells):
        return None
    return notebook, nb_config, reader.read_fmt, path


def _cache(nb_config: Any) -> Any:
    from jupyter_cache import get_cache

    return get_cache(nb_config.execution_cache_path or ".jupyter_cache")  # as NotebookClientCache


def _key(cache: Any, notebook: Any) -> str:
    return cache.create_hashed_notebook(notebook)[1]


def _store(cache: Any, path: str, read_fmt: Any, executed: Any, seconds: float) -> None:
    """Write an executed notebook into the cache as ``NotebookClientCache.start_client`` does."""
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.cache.db import NbProjectRecord

    if read_fmt is not None:
        stage_record = cache.add_nb_to_project(str(path), read_data=read_fmt)
    else:
        stage_record = cache.add_nb_to_project(str(path))
    NbProjectRecord.remove_tracebacks([stage_record.pk], cache.db)
    cache.cache_notebook_bundle(
        CacheBundleIn(executed, stage_record.uri, data={"execution_seconds": seconds}),
        check_validity=False,
        overwrite=True,
    )


class _Helper:
    """The helper process and the thread that feeds it chapters from the end of the reading order."""

    def __init__(self, jobs: dict[str, tuple], order: list[str], folder: Path):
        self.jobs = jobs  # docname -> (notebook, nb_config, read_fmt, path, key)
        self.pending = [d for d in order if d in jobs]  # in Sphinx's reading order
        self.taken: set[str] = set()  # by the helper
        self.results: dict[str, tuple | None] = {}
        self.cond = threading.Condition()
        self.folder = folder
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "explorables.book_jobs"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.thread = threading.Thread(target=self._feed, daemon=True, name="book-jobs")
        self.thread.start()

    def _feed(self) -> None:
        docname = None
        try:
            while True:
                with self.cond:
                    if not self.pending:
                        return
                    docname = self.pending.pop()
                    self.taken.add(docname)
                notebook, nb_config, _, path, _ = self.jobs[docname]
                job = self.folder / f"job{len(self.taken)}.pickle"
                with job.open("wb") as handle:
                    cwd = None if nb_config.execution_in_temp else str(Path(path).parent)  # None: a temporary one
                    pickle.dump((notebook, cwd, nb_config.execution_timeout,
                                 nb_config.execution_allow_errors), handle)
                self.proc.stdin.write(f"{job}\n")
                self.proc.stdin.flush()
                answer = self.proc.stdout.readline().strip()
                if not answer:
                    raise RuntimeError("the helper process ended")
                with open(answer, "rb") as handle:
                    result = pickle.load(handle)
                with self.cond:
                    self.results[docname] = result
                    self.cond.notify_all()
                docname = None
        except Exception:
            with self.cond:
                if docname is not None:
                    self.results[docname] = None
                for rest in self.pending:  # Sphinx executes whatever the helper did not
                    self.taken.discard(rest)
                self.pending.clear()
                self.cond.notify_all()
        finally:
            self.close()

    def close(self) -> None:
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass

    def claim(self, docname: str) -> tuple | None:
        """Called as Sphinx is about to read ``docname``: the helper's result for it (executed
        notebook, seconds), or ``None`` (Sphinx executes it: it was not the helper's, or failed)."""
        with self.cond:
            if docname in self.pending:
                self.pending.remove(docname)  # Sphinx's own
                return None
            if docname not in self.taken:
                return None
            while docname not in self.results:
                self.cond.wait()
            return self.results.pop(docname)

    def stop(self) -> None:
        with self.cond:
            self.pending.clear()
        if self.proc.poll() is None and self.thread.is_alive():
            self.proc.kill()  # the build ended before the helper did (an error elsewhere)
        self.close()
        self.thread.join(timeout=60)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _start(app: Any, env: Any, docnames: list[str]) -> None:
    """``env-before-read-docs``: collect the chapters that are not in the cache; start the helper."""
    if _jobs() < 2 or app.parallel > 1 or getattr(app, "_explorables_book_jobs", None) is not None:
        return
    nb_config = getattr(env, "mystnb_config", None)
    if nb_config is None or nb_config.execution_mode != "cache":
        return
    cache = _cache(nb_config)
    jobs = {}
    for docname in docnames:
        path = env.doc2path(docname)
        try:
            text = Path(path).read_text(encoding=app.config.source_encoding)
        except (OSError, UnicodeError):
            continue
        # the source Sphinx will read: what every ``source-read`` handler makes of the file (e.g.
        # explorables.sphinx_ext's scale line); ``_take_over`` is one of them and does nothing yet
        source = [text]
        app.events.emit("source-read", docname, source)
        text = source[0]
        prepared = _prepare(env, docname, text)
        if prepared is None:
            continue
        try:
            cache.match_cache_notebook(prepared[0])
            continue  # cached already
        except KeyError:
            pass
        jobs[docname] = (*prepared, _key(cache, prepared[0]))
    if len(jobs) < 2:
        return
    folder = Path(tempfile.mkdtemp(prefix="explorables-book-jobs-"))
    app._explorables_book_jobs = _Helper(jobs, docnames, folder)


def _take_over(app: Any, docname: str, source: list[str]) -> None:
    """``source-read`` (after every other handler): store the helper's result for this chapter."""
    helper = getattr(app, "_explorables_book_jobs", None)
    if helper is None:
        return
    result = helper.claim(docname)
    if result is None:
        return
    executed, seconds, error = result
    if executed is None:
        from sphinx.util import logging

        logging.getLogger(__name__).info(f"{docname}: the helper did not execute it ({error}); executing it here")
        return
    prepared = _prepare(app.env, docname, source[0])
    _, _, read_fmt, path, key = helper.jobs[docname]
    if prepared is None:
        return
    cache = _cache(prepared[1])
    if _key(cache, prepared[0]) != key or prepared[3] != path:
        return  # the source changed after scheduling: Sphinx executes what it reads
    _store(cache, path, read_fmt, executed, seconds)


def _finish(app: Any, exception: Exception | None) -> None:
    helper = getattr(app, "_explorables_book_jobs", None)
    if helper is not None:
        helper.stop()
        app._explorables_book_jobs = None


def setup(app: Any) -> dict:
    app.connect("env-before-read-docs", _start, priority=900)  # after any handler reordered the list
    app.connect("source-read", _take_over, priority=900)  # after any handler changed the source
    app.connect("build-finished", _finish)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def _serve() -> None:
    """The helper process: read a job file's path per line, execute it, answer the result file's path."""
    from jupyter_cache.executors.utils import single_nb_execution

    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else printed goes to the build's log, not into the answers
    for line in sys.stdin:
        job = Path(line.strip())
        with job.open("rb") as handle:
            notebook, cwd, timeout, allow_errors = pickle.load(handle)
        try:
            with tempfile.TemporaryDirectory() if cwd is None else nullcontext(cwd) as folder:
                result = single_nb_execution(notebook, cwd=os.path.abspath(folder), timeout=timeout,
                                             allow_errors=allow_errors, meta_override=True)
            answer = (None, result.time, repr(result.err)) if result.err is not None else (result.nb, result.time, None)
        except Exception as exc:  # a dead kernel, ...: Sphinx executes the chapter itself
            answer = (None, 0.0, repr(exc))
        out = job.with_suffix(".done")
        with out.open("wb") as handle:
            pickle.dump(answer, handle)
        answers.write(f"{out}\n")
        answers.flush()


if __name__ == "__main__":
    _serve()
