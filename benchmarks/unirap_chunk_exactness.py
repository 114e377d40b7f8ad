"""Does a chunk of a unirap ensemble train its members bit for bit as the whole ensemble does?

``PYTHONPATH=src python benchmarks/unirap_chunk_exactness.py PART BASE_SEED STEPS "[0,14,28]" ...``: trains the book
preset's ``PART`` ensemble (``pretrain``: 38 rows, ``unified``: 28) for ``STEPS`` Adam steps of its own schedule, once
whole and once in the given consecutive chunks (each an ensemble of its own, from the same initial rows), on one
thread, and prints for each cut list whether every trained weight and every loss value is equal bit for bit
(``benchmarks/unirap_parallel.md``)."""

from __future__ import annotations

import ast
import itertools
import sys

import numpy as np
import torch

from explorables.unirap import UniRAPConfig
from explorables.unirap.experiment import make_model, member_schedule, members_of, phase_steps, training_pool
from explorables.unirap.training import train


def main() -> None:
    torch.set_num_threads(1)
    part, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    cfg = UniRAPConfig.preset("book", seed=seed)
    pool = training_pool(cfg)
    members = members_of(cfg, part)
    plans = [member_schedule(cfg, m) for m in members]
    starts = [0] * len(members)
    first = phase_steps(cfg)
    rows = slice(0, steps) if part == "pretrain" else slice(first, first + steps)
    if part == "pretrain":
        plans, members = plans * cfg.phase1_starts, members * cfg.phase1_starts
        starts = [k for k in range(cfg.phase1_starts) for _ in range(len(members) // cfg.phase1_starts)]
    idx = torch.as_tensor(np.stack([i[rows] for i, _ in plans], 1))
    w = torch.as_tensor(np.stack([x[rows] for _, x in plans], 1))
    arch, seeds, n = tuple(m.arch for m in members), [m.seed for m in members], len(members)
    whole = make_model(cfg, seeds, arch, starts)
    init = {k: v.clone() for k, v in whole.state_dict().items()}
    curve = train(whole, pool, idx, w, lr=cfg.lr)
    trained = whole.state_dict()
    print(f"{part}, base seed {seed}, {steps} steps, {n} rows")
    for cuts in (ast.literal_eval(c) for c in sys.argv[4:]):
        differ: set[str] = set()
        for a, b in itertools.pairwise(cuts):
            sub = make_model(cfg, seeds[a:b], arch[a:b], starts[a:b])
            sub.load_state_dict({k: v[a * (v.shape[0] // n) : b * (v.shape[0] // n)] for k, v in init.items()})
            c = train(sub, pool, idx[:, a:b].contiguous(), w[:, a:b].contiguous(), lr=cfg.lr)
            if not np.array_equal(c, curve[:, a:b]):
                differ.add("loss")
            for k, v in sub.state_dict().items():
                per = trained[k].shape[0] // n
                if not torch.equal(v, trained[k][a * per : b * per]):
                    differ.add(k)
        print(cuts, "bit for bit" if not differ else f"differs ({len(differ)} tensors, e.g. {sorted(differ)[:3]})")


if __name__ == "__main__":
    main()
