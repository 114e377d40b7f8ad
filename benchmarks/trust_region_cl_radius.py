"""Chapter 12: does a projection onto the trust region (P1), or that and a bounded multiplier (P2), stop the dual
ascent's runaway so that the radius check and every gate pass?

Follows benchmarks/trust_region_cl_radius_rule.md (committed before this script ran): on fresh tuning base seeds
105-109 only (never the book's 0-4), the book preset with each candidate's code (module switches of
``continual``); per run the words of every check and gate (claims are recorded, never read by the decision) and the
largest multiplier of any TR-CL or control member at the end of any task. P2 runs only if P1 fails. Writes
``benchmarks/trust_region_cl_radius.json`` and prints the pick.

    PYTHONPATH=src nice -n 5 python benchmarks/trust_region_cl_radius.py
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from explorables.core.tables import apply_gates
from explorables.trust_region_cl import TrustRegionCLConfig, continual
from explorables.trust_region_cl import experiment as ex
from explorables.trust_region_cl.claims import claims

CANDIDATES: dict[str, dict] = {"P1": {"PROJECT": True, "DUAL_MAX": math.inf},
                               "P2": {"PROJECT": True, "DUAL_MAX": 1e5}}  # fmt: skip
BASE_SEEDS = (105, 106, 107, 108, 109)
RUNAWAY = 1e5
OUT = Path(__file__).with_suffix(".json")


def one(name: str, switches: dict, base: int) -> dict:
    for k, v in switches.items():
        setattr(continual, k, v)
    seen = {}
    train = ex.train_sequence

    def spy(*args, **kwargs):
        record = train(*args, **kwargs)
        seen["mult"] = record.multipliers[1:].cpu()
        seen["constrained"] = [m.method in ("trcl", "trcl_iso") for m in args[4]]
        return record

    ex.train_sequence = spy
    try:
        cfg = TrustRegionCLConfig.preset("book", seed=base)
        wall = time.time()
        results = ex.run(cfg)
        wall = time.time() - wall
    finally:
        ex.train_sequence = train
    rows = apply_gates(claims(results))
    cols = [i for i, c in enumerate(seen["constrained"]) if c]
    mult = seen["mult"][:, cols]
    seq = results.summary["sequence"]["methods"]
    return {
        "candidate": name, "switches": {k: str(v) for k, v in switches.items()}, "base_seed": base,
        "wall_s_under_load": round(wall, 1), "words": {r.claim: r.outcome for r in rows},
        "kinds": {r.claim: r.kind for r in rows}, "names": {r.claim: r.name for r in rows},
        "max_multiplier": float(mult.max()), "finite": bool(mult.isfinite().all()),
        "at_bound": int((mult >= switches["DUAL_MAX"]).sum()),
        "trcl_distance_ratio": seq["trcl"]["distance_ratio"]["per_seed"],
        "trcl_multiplier": seq["trcl"]["multiplier"]["per_seed"],
    }  # fmt: skip


def passes(r: dict) -> bool:
    ok_words = all(w.startswith("pass") for c, w in r["words"].items() if r["kinds"][c] in ("gate", "check"))
    bounded = r["finite"] and (r["max_multiplier"] <= RUNAWAY or math.isfinite(float(r["switches"]["DUAL_MAX"])))
    return ok_words and bounded


def main() -> None:
    runs = json.loads(OUT.read_text())["runs"] if OUT.is_file() else []
    pick = None
    for name, switches in CANDIDATES.items():
        for base in BASE_SEEDS:
            if not any(r["candidate"] == name and r["base_seed"] == base for r in runs):
                runs.append(one(name, switches, base))
                OUT.write_text(json.dumps({"runs": runs}, indent=1))
            r = next(r for r in runs if r["candidate"] == name and r["base_seed"] == base)
            print(f"{name} base={base}: wall {r['wall_s_under_load']} s (under load); max lambda "
                  f"{r['max_multiplier']:.4g} (at bound {r['at_bound']}); ratio "
                  f"{min(r['trcl_distance_ratio']):.3f}..{max(r['trcl_distance_ratio']):.3f}; "
                  + ", ".join(f"{r['names'][c] or k}:{w.split(':')[0]}" for c, w in r["words"].items()
                              if (k := r["kinds"][c]) in ("gate", "check")), flush=True)  # fmt: skip
        ok = all(passes(r) for r in runs if r["candidate"] == name)
        print(f"{name}: {'passes' if ok else 'fails'}", flush=True)
        if ok:
            pick = name
            break
    print(f"pick: {pick or 'none (keep the committed code)'}")


if __name__ == "__main__":
    main()
