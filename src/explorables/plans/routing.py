"""Plan of routing's ``paper`` preset: RRT data generation, and the read-outs' training and scoring at one and two
hops."""

from __future__ import annotations

import torch

from ..core.plan import Part, parameter_count
from ..routing.experiment import _reader
from ..routing.model import FFN_KINDS
from ..routing.rrt import make_rrt
from ..routing.train import accuracy, train_model

#: sequences per data step (the generator runs on the CPU; the plan times a chunk and scales by count)
DATA_CHUNK = 10_000


def parts(cfg, *, dry: bool = False) -> tuple[list[Part], str, str]:
    chunk = 500 if dry else DATA_CHUNK
    found = []
    for hops in (1, 2):
        common = dict(length=cfg.n_tokens, vocab=cfg.vocab_size, hops=hops, beta=cfg.beta, head_seed=cfg.seed)
        total = cfg.n_train + cfg.n_validation + cfg.n_test
        batch = 8 if dry else cfg.batch_size
        data = make_rrt(max(batch, 64), generator=torch.Generator().manual_seed(0), **common)

        def data_step(common=common):
            return make_rrt(chunk, generator=torch.Generator().manual_seed(1), **common)

        found.append(Part(f"data, {hops} hop{'s' * (hops > 1)}", f"{DATA_CHUNK:,} RRT sequences generated on the CPU",
                          data_step, steps=-(-total // DATA_CHUNK) * len(cfg.seeds), runs_on="cpu", precision="fp64",
                          operations=None, note=f"{total:,} sequences per seed, {len(cfg.seeds)} seeds"
                          + (f"; dry: {chunk} sequences" if dry else "")))
        # the data set a train_model() call holds (train, validation and test sequences of this hop count)
        tensors = [data.keys, data.pointers, data.query, data.label, *data.alphas]
        per_sequence = sum(t[0].numel() * t.element_size() for t in tensors)
        resident = per_sequence * total
        n_variants = len(FFN_KINDS) + (2 + (hops == 1) if cfg.use_controls else 0)
        model = _reader(cfg, hops)

        def train_loop(k: int, model=model, data=data, batch=batch):
            return lambda: train_model(model, data, data, steps=k, batch=batch, lr=cfg.lr, seed=cfg.seed)

        found.append(Part(f"train, {hops} hop{'s' * (hops > 1)}",
                          f"one AdamW step of a {hops + cfg.n_extra_layers}-layer read-out on {cfg.batch_size} "
                          "sequences", None, step_loop=train_loop, steps=cfg.n_steps * n_variants * len(cfg.seeds),
                          parameters=parameter_count(model), resident_bytes=resident,
                          note=f"the {total:,} sequences counted as resident memory ({per_sequence} B each); "
                          f"{n_variants} models (FFN kinds and controls) x {len(cfg.seeds)} seeds; the optimiser "
                          "and the final scoring train_model() builds once per call cancel in the difference"))
        # accuracy() scores in chunks of 4,096 sequences with autograd on (no torch.no_grad): one chunk's forward
        # keeps its graph, 8 x a training batch's activations
        n_scored = 64 if dry else 4096
        scored = make_rrt(n_scored, generator=torch.Generator().manual_seed(2), **common)
        n_chunks = -(-cfg.n_test // 4096) + -(-cfg.n_validation // 4096)  # the test set (train_model), validation

        def score(model=model, scored=scored):
            return accuracy(model, scored)

        found.append(Part(f"score, {hops} hop{'s' * (hops > 1)}", "one chunk of 4,096 sequences through a read-out "
                          "(accuracy(), autograd on)", score, steps=n_chunks * n_variants * len(cfg.seeds),
                          parameters=parameter_count(model), resident_bytes=resident,
                          note=f"the test and validation sets ({n_chunks} chunks) of every model; the same resident "
                          "sequences" + (f"; dry: {n_scored} sequences" if dry else "")))
    paper_scale = ("partly: the paper's RRT task with learned routing, a 256-wide model and 1,000,000 training "
                   "sequences; its BERT survey needs a local checkpoint (bert_checkpoint)")
    return found, paper_scale, ""
