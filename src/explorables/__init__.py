"""NeurIPS 2026 Explorables: the package behind the book.

One subpackage per chapter (``explorables.<slug>``), a small shared core
(:mod:`explorables.core`), and a command line (``python -m explorables``).
"""

__version__ = "0.1.0"
