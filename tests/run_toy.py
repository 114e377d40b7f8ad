"""Entry point for the runner tests: the real CLI with the toy experiment registered as ``toy``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorables.chapters import CHAPTERS, Chapter
from explorables.cli import main

CHAPTERS["toy"] = Chapter(0, "toy", "toy training (tests only)", package="tests.toy_training")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
