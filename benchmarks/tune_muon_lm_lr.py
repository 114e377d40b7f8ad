"""Choose chapter 16's language-model Muon steps on tuning base seed 100, never on the book's base seeds 0-4.
Writes ``data/muon_lm_lr_tuning.json`` (:data:`~explorables.muon.experiment.LM_TUNING_TABLE`), which the
chapter's folded "how criteria were set" box cites and a test checks the book preset against.

The rule, fixed before this ran (:func:`~explorables.muon.experiment.tune_lm_lrs`): the book's language model,
the book's ``lm_seeds`` run seeds of the tuning base seed; the switch ("Muon, then AdamW") gets its Muon step
from ``LM_LR_GRID`` jointly with its hand-over share from ``LM_SWITCH_FRACTIONS``; each decayed-step Muon
(cosine, linear to 0, warmup-stable-decay) gets its peak step from the same ``LM_LR_GRID``; a pick minimises
the mean final validation loss over the draws; the book's decayed baseline is the decayed schedule with the
lowest tuning loss at its pick. About 8 minutes on one quiet core.

    PYTHONPATH=src python benchmarks/tune_muon_lm_lr.py
"""

from __future__ import annotations

import json
from pathlib import Path

from explorables.muon import MuonConfig
from explorables.muon.experiment import LM_TUNING_TABLE, tune_lm_lrs

OUT = Path(__file__).resolve().parents[1] / LM_TUNING_TABLE


def main() -> None:
    out = tune_lm_lrs(MuonConfig.preset("book"))
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("picks", "baseline", "tuning_loss", "seconds")}, indent=1))


if __name__ == "__main__":
    main()
