"""Book preset of tomato_mp on one tuning base seed with overrides; prints timings and each
row's word (benchmarks/tomato_mp_draws.md).

Usage: ``PYTHONPATH=src python benchmarks/tomato_mp_draws.py 100 '{"n_seeds": 8}'``.
"""
import json
import sys
import time
from dataclasses import replace

from explorables.core.verdicts import first_word
from explorables.tomato_mp import claims as C
from explorables.tomato_mp.experiment import TomatoMPConfig, run

kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
cfg = replace(TomatoMPConfig.preset("book"), seed=int(sys.argv[1]), **kw)
t = time.time()
c = time.process_time()
r = run(cfg)
print("wall", round(time.time()-t,1), "cpu(main)", round(time.process_time()-c,1), r.summary.get("timings"))
for row in C.claims(r):
    print(row.kind, first_word(row.verdict), "|", row.claim[:50], "|", row.measured[:160])
