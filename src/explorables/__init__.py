"""NeurIPS 2026 Explorables: the package behind the book.

One subpackage per chapter (``explorables.<slug>``), a small shared core
(:mod:`explorables.core`), and a command line (``python -m explorables``).

Importing the package sets torch's and BLAS's thread count to the CPUs this process may use
(:mod:`explorables.core.threads`; override with ``EXPLORABLES_THREADS``).
"""

__version__ = "0.1.0"


def _forget_working_directory() -> None:
    # ``python -m explorables`` puts the working directory first on sys.path, so a file there named
    # like a module that torch or numpy imports later (``doctest.py``, ``inspect.py``) would run
    # instead of it. While ``-m`` locates this package sys.argv[0] is "-m": drop the working directory
    # then (the package itself is already found; the console script ``explorables`` never adds it).
    import os
    import sys

    if sys.argv[:1] == ["-m"]:
        here = os.getcwd()
        sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]


_forget_working_directory()


def _configure_threads() -> None:
    # explorables.core's __init__ imports torch; load only core/threads.py, so that the thread
    # count is in the environment before torch and BLAS start their thread pools.
    import importlib.util
    import sys
    from pathlib import Path

    name = "explorables.core.threads"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / "core" / "threads.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    sys.modules[name].configure()


_configure_threads()
