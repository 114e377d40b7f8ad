"""Choose chapter 16's number of language-model seeds (``lm_seeds``) on tuning base seed 100, never on the book's
base seeds 0-4. Writes ``data/muon_lm_tuning.json``, which the chapter's folded "how criteria were set" box cites.

The rule, fixed before this ran: train the book's language model (every schedule) on ``MAX_SEEDS`` run seeds of the
tuning base seed; for each candidate ``n`` in ``CANDIDATES``, take the first ``n`` seeds and the 95% t-interval of
(a) the LM-room gate's quantity (worst - best schedule's final validation loss, paired per seed) and (b) the LM
claim's (Muon - "Muon, then AdamW"); pick the smallest ``n`` whose two half-widths are both at most
``LM_ROOM / 5`` nats (a fifth of the gate's threshold), and at most ``BUDGET_MAX`` (the chapter's time budget).

    PYTHONPATH=src python benchmarks/tune_muon_lm.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from explorables.core.verdicts import interval
from explorables.muon import MuonConfig
from explorables.muon.claims import LM_ROOM
from explorables.muon.experiment import _language_model

TUNING_BASE_SEED = 100
MAX_SEEDS = 8
CANDIDATES = (3, 4, 5, 6, 8)
BUDGET_MAX = 5
OUT = Path(__file__).resolve().parents[1] / "data" / "muon_lm_tuning.json"


def main() -> None:
    t = time.time()
    cfg = MuonConfig.preset("book", seed=TUNING_BASE_SEED, lm_seeds=MAX_SEEDS)
    summary, _ = _language_model(cfg, None)
    v = {k: np.asarray(x) for k, x in summary["final_val_loss_by_seed"].items()}
    rows = []
    for n in CANDIDATES:
        means = {k: float(x[:n].mean()) for k, x in v.items()}
        worst, best = max(means, key=means.get), min(means, key=means.get)
        room, claim = interval(v[worst][:n] - v[best][:n]), interval(v["muon"][:n] - v["muon_then_adamw"][:n])
        rows.append({
            "n": n, "worst": worst, "best": best,
            "room": [room.mean, room.low, room.high], "room_half_width": room.half_width,
            "claim": [claim.mean, claim.low, claim.high], "claim_half_width": claim.half_width,
        })  # fmt: skip
    ok = [r["n"] for r in rows if max(r["room_half_width"], r["claim_half_width"]) <= LM_ROOM / 5]
    pick = min(min(ok), BUDGET_MAX) if ok else BUDGET_MAX
    record = {
        "base_seed": TUNING_BASE_SEED, "run_seeds": summary["run_seeds"], "n_lm_steps": cfg.n_lm_steps,
        "held_out_chars": summary["held_out_chars"], "rule": f"smallest n with both 95% half-widths <= LM_ROOM / 5 = "
        f"{LM_ROOM / 5:g} nats, at most {BUDGET_MAX}", "final_val_loss_by_seed": summary["final_val_loss_by_seed"],
        "candidates": rows, "meets_rule": ok, "lm_seeds": pick, "seconds": round(time.time() - t, 1),
    }  # fmt: skip
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("candidates", "meets_rule", "lm_seeds", "seconds")}, indent=1))


if __name__ == "__main__":
    main()
