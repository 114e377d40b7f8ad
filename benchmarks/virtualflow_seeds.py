"""Inner seeds for the gate "room" (issue 42, sixteenth pass): the book preset run with 12 inner seeds on each
tuning base, then every candidate's verdicts read on prefixes / disjoint blocks of those inner seeds.

Rule: ``benchmarks/virtualflow_room_rule3.md`` (committed before this ran). An inner seed's part depends only on the
base seed, that inner seed and the preset's fields (not on how many seeds run), so the run with inner seeds 0-11 holds
bit for bit the parts of a run with seeds (0, ..., n-1), and a block (6, ..., 11) is another draw of a six-seed run.

    PYTHONPATH=src nice -n 5 .venv/bin/python benchmarks/virtualflow_seeds.py --bases 140 141 142 143 144 \
        --out benchmarks/virtualflow_seeds.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.virtualflow import claims as vc
from explorables.virtualflow.experiment import VirtualFlowConfig, VirtualFlowResults, aggregate, run

#: candidate -> blocks of inner seeds read as one run each (today's 5 is the reference, not a candidate)
BLOCKS = {
    5: [tuple(range(0, 5)), tuple(range(5, 10))],
    6: [tuple(range(0, 6)), tuple(range(6, 12))],
    8: [tuple(range(0, 8))],
    10: [tuple(range(0, 10))],
}


def read_block(full: VirtualFlowResults, seeds: tuple[int, ...]) -> dict:
    cfg = full.config.replace(seeds=seeds)
    summary = {f"seed_{s}": full.summary[f"seed_{s}"] for s in seeds}
    summary["aggregate"] = aggregate(cfg, [summary[f"seed_{s}"] for s in seeds])
    rows = apply_gates(vc.claims(VirtualFlowResults(cfg, summary, full.curves)))
    room = vc.per_seed(VirtualFlowResults(cfg, summary, full.curves), "sisdr/supervised")
    pseudo = vc.per_seed(VirtualFlowResults(cfg, summary, full.curves), "sisdr/pseudo")
    return {
        "seeds": list(seeds),
        "room_per_seed": [a - b for a, b in zip(room, pseudo, strict=True)],
        "rows": {(r.name or r.claim[:40]): [r.outcome, r.measured[:160]] for r in rows},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bases", type=int, nargs="+", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    out = json.loads(args.out.read_text()) if args.out.exists() else {}
    for base in args.bases:
        if str(base) in out:
            continue
        start = time.perf_counter()
        cfg = VirtualFlowConfig.preset("book", seed=base).replace(seeds=tuple(range(12)))
        full = run(cfg)
        out[str(base)] = {str(n): [read_block(full, b) for b in blocks] for n, blocks in BLOCKS.items()}
        out[str(base)]["seconds"] = round(time.perf_counter() - start, 1)
        args.out.write_text(json.dumps(out, indent=1) + "\n")
        print(f"base {base} done in {out[str(base)]['seconds']} s", flush=True)
        for n in BLOCKS:
            for blk in out[str(base)][str(n)]:
                print(f"  n={n} seeds {blk['seeds'][0]}-{blk['seeds'][-1]}: room {blk['rows']['room'][0]} "
                      f"{blk['rows']['room'][1]}; useful {blk['rows']['useful'][0]}; physical "
                      f"{blk['rows']['physical'][0]}; curved {blk['rows']['curved'][0]}; headroom "
                      f"{blk['rows']['headroom'][0]}", flush=True)


if __name__ == "__main__":
    main()
