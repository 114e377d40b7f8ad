"""The tomato_mp page executed cold with the groups' sd of A (0.6, as committed) and B (1.0), back to back:
wall, kernel CPU-s and the projections of benchmarks/tomato_mp_spread2_rule.md (criterion 3).

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_spread2_page.py`` (edits the field default in the working
tree for B's run and restores it).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from run import chapter_run  # noqa: E402

# the kernel starts in book/ and inherits this environment: an absolute path, so it imports this checkout
os.environ["PYTHONPATH"] = str(ROOT / "src")

SRC = ROOT / "src/explorables/tomato_mp/experiment.py"
FIELD = 'param(\n        {}, Positive(), "sd of the four groups'
OLD, NEW = FIELD.format("0.6"), FIELD.format("1.0")
PAGE = ROOT / "book/19-tomato_mp.md"
QUIET_RATIO, LATEST_QUIET_S = 28.3 / 36.1, 42.0

text = SRC.read_text()
cands = sys.argv[1:] or ["A", "B"]
out = {}
try:
    for cand in cands:
        if cand == "B":
            assert OLD in text
            SRC.write_text(text.replace(OLD, NEW))
        else:
            SRC.write_text(text)
        out[cand] = r = chapter_run(PAGE)
        print(
            f"{cand}: wall {r['wall_s']:.1f} s (under load), kernel CPU {r['cpu_s']:.1f} s, "
            f"peak {r['peak_mb']:.0f} MB, P1 {r['cpu_s'] * QUIET_RATIO:.1f} s",
            flush=True,
        )
finally:
    SRC.write_text(text)
if "A" in out and "B" in out:
    print(
        f"P2 = {LATEST_QUIET_S} x {out['B']['cpu_s']:.1f} / {out['A']['cpu_s']:.1f} = "
        f"{LATEST_QUIET_S * out['B']['cpu_s'] / out['A']['cpu_s']:.1f} s"
    )
