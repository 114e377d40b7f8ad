"""Summary of benchmarks/ucca_search_tuning.jsonl under the decision rule of benchmarks/ucca_search_rule.md."""

import json
import sys

import numpy as np

from explorables.ucca.claims import RECOVERY_FRACTION

path = sys.argv[1] if len(sys.argv) > 1 else "benchmarks/ucca_search_tuning.jsonl"
recs = [json.loads(line) for line in open(path)]
names = [k for k in recs[0] if isinstance(recs[0][k], dict)]
GROUPS = (("clustered + breast cancer", ("clustered", "breast_cancer")), ("gaussian + wine", ("gaussian", "wine")))


def tag(r: dict) -> str:
    return f"{r['dataset'][:2]}{r['base']}/{r['inner']}"


for group, sets in GROUPS:
    rs = [r for r in recs if r["dataset"] in sets]
    if not rs:
        continue
    print(f"{group}: {len(rs)} fits")
    for n in names:
        miss = [tag(r) for r in rs if r[n]["search_miss"]]
        score = [tag(r) for r in rs if r[n]["score"] < RECOVERY_FRACTION * r["oracle"]]
        caused = [tag(r) for r in rs if r[n]["search_miss"] and r[n]["score"] < RECOVERY_FRACTION * r["oracle"]]
        nofaq = [tag(r) for r in rs if r[n]["no_faq"] < RECOVERY_FRACTION * r["oracle"]]
        cpu = np.median([r[n]["cpu"] for r in rs])
        print(f"  {n}: median CPU {cpu:.2f} s; search misses {len(miss)} {miss}; score misses {len(score)} {score} "
              f"(search-caused {len(caused)} {caused}); FAQ-off score misses {len(nofaq)} {nofaq}")  # fmt: skip
